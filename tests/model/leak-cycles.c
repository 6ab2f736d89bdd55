/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/model/leak-cycles.c: connect/disconnect cycles against one
 * nbdkit serving an rbdx image, watching the server process for leaks.
 *
 * Usage: leak-cycles URI PID CYCLES SECONDS RSS-BOUND-MIB
 *   URI             the export (nbdkit's socket)
 *   PID             the nbdkit process serving it
 *   CYCLES          connect/disconnect cycles after the warm-up
 *   SECONDS         fail if the cycles take longer
 *   RSS-BOUND-MIB   fail if the resident set grew by more than this
 *                   from the warmed-up baseline to the end
 *
 * Each cycle: connect (libnbd), WRITE 4 KiB with FUA, READ it back and
 * compare, BLOCK_STATUS, FLUSH, NBD_CMD_DISC, close.  The server
 * (/proc/PID/status VmRSS and Threads, entries of /proc/PID/fd) is
 * sampled before the first connection (the baseline for threads and
 * file descriptors: with no connection open rbdx holds no rados_t, no
 * image and no thread), after a warm-up of 20 cycles with the server
 * idle again (the baseline for RSS: the allocator's arenas and librados'
 * one-time state exist from then on), with 4 connections open at once
 * (per-connection threads and memory), every 100 cycles, and at the end
 * once the server has closed the last connection.  Threads and file
 * descriptors must return exactly to the first baseline; RSS may grow
 * by at most RSS-BOUND-MIB.
 *
 * "Idle again" is decided by waiting (up to 60 s) until the thread and
 * fd counts are back at the baseline: nbdkit closes a connection (and
 * rbdx its librados client) after the client has gone, asynchronously.
 *
 * Exit 0 on success, 1 on failure (the samples are printed first).
 */
#include <dirent.h>
#include <unistd.h>

#include "nbd-check.h"

struct sample {
  long rss_kib, threads, fds;
};

static int pid;

static void
sample (struct sample *s)
{
  char path[64], line[256];
  FILE *f;
  DIR *d;

  snprintf (path, sizeof path, "/proc/%d/status", pid);
  f = fopen (path, "r");
  if (!f)
    FAIL ("the server (pid %d) is gone: %m", pid);
  s->rss_kib = s->threads = -1;
  while (fgets (line, sizeof line, f)) {
    sscanf (line, "VmRSS: %ld", &s->rss_kib);
    sscanf (line, "Threads: %ld", &s->threads);
  }
  fclose (f);
  if (s->rss_kib < 0 || s->threads < 0)
    FAIL ("%s has no VmRSS or Threads line", path);

  snprintf (path, sizeof path, "/proc/%d/fd", pid);
  d = opendir (path);
  if (!d)
    FAIL ("open %s: %m", path);
  s->fds = 0;
  while (readdir (d))
    s->fds++;
  closedir (d);
  s->fds -= 2;                  /* . and .. */
}

static void
show (const char *what, const struct sample *s)
{
  printf ("leak-cycles: %-34s RSS %7.1f MiB, %3ld threads, %3ld fds\n", what,
          s->rss_kib / 1024.0, s->threads, s->fds);
}

/* Wait up to 60 s until the server has as many threads and fds as
 * BASE; returns false if it never does. */
static bool
settle (const struct sample *base, struct sample *s)
{
  double end = now_s () + 60;

  for (;;) {
    sample (s);
    if (s->threads == base->threads && s->fds == base->fds)
      return true;
    if (now_s () > end)
      return false;
    usleep (50 * 1000);
  }
}

static struct nbd_handle *
open_conn (const char *uri, unsigned long n)
{
  struct nbd_handle *h = nbd_create ();

  if (!h)
    FAIL ("nbd_create: %s", nbd_get_error ());
  OK (nbd_add_meta_context (h, LIBNBD_CONTEXT_BASE_ALLOCATION));
  if (nbd_connect_uri (h, uri) == -1)
    FAIL ("cycle %lu: connect: %s", n, nbd_get_error ());
  return h;
}

static int
extent_cb (void *user_data, const char *metacontext, uint64_t offset,
           uint32_t *entries, size_t nr_entries, int *error)
{
  return 0;
}

/* A few requests on H, at a place of its own per cycle N. */
static void
requests (struct nbd_handle *h, unsigned long n)
{
  unsigned char buf[4096], got[4096];
  uint64_t size = (uint64_t) nbd_get_size (h);
  uint64_t off = (n * 4096) % (size - 4096);
  nbd_extent_callback ecb = { .callback = extent_cb };

  fill_pattern (buf, sizeof buf, off, (unsigned) n);
  OK (nbd_pwrite (h, buf, sizeof buf, off, LIBNBD_CMD_FLAG_FUA));
  OK (nbd_pread (h, got, sizeof got, off, 0));
  SAME (got, buf, sizeof buf, off, "read back in a cycle");
  OK (nbd_block_status (h, 1 * MiB, off & ~(MiB - 1), ecb, 0));
  OK (nbd_flush (h, 0));
}

static void
cycle (const char *uri, unsigned long n)
{
  struct nbd_handle *h = open_conn (uri, n);

  requests (h, n);
  OK (nbd_shutdown (h, 0));
  nbd_close (h);
}

#define MIN_CYCLES 200

int
main (int argc, char *argv[])
{
  struct sample s0, s1, open4, mid, end;
  struct nbd_handle *hs[4];
  unsigned long cycles, n, i;
  double limit, t0, bound_mib;
  const char *uri;
  char what[64];

  check_args (argv, argc == 6, "URI PID CYCLES SECONDS RSS-BOUND-MIB");
  uri = argv[1];
  pid = atoi (argv[2]);
  cycles = strtoul (argv[3], NULL, 0);
  limit = atof (argv[4]);
  bound_mib = atof (argv[5]);
  setvbuf (stdout, NULL, _IOLBF, 0);

  sample (&s0);
  show ("before the first connection", &s0);

  for (n = 0; n < 20; n++)
    cycle (uri, n);
  if (!settle (&s0, &s1)) {
    show ("60 s after the warm-up", &s1);
    FAIL ("after 20 cycles the server keeps %ld threads and %ld fds more "
          "than before the first connection", s1.threads - s0.threads,
          s1.fds - s0.fds);
  }
  show ("after 20 warm-up cycles, idle", &s1);

  for (i = 0; i < 4; i++) {
    hs[i] = open_conn (uri, i);
    requests (hs[i], i);
  }
  sample (&open4);
  show ("with 4 connections open", &open4);
  printf ("leak-cycles: per open connection: %.1f threads, %.1f MiB, "
          "%.1f fds\n", (open4.threads - s1.threads) / 4.0,
          (open4.rss_kib - s1.rss_kib) / 4.0 / 1024.0,
          (open4.fds - s1.fds) / 4.0);
  for (i = 0; i < 4; i++) {
    OK (nbd_shutdown (hs[i], 0));
    nbd_close (hs[i]);
  }

  /* SECONDS bounds the test's time, not the server's speed: on a loaded
   * machine fewer cycles fit, and the checks below run on those done,
   * as long as there are MIN_CYCLES of them (a leaked context per cycle
   * would still be hundreds of MiB, a leaked fd or thread exact). */
  t0 = now_s ();
  for (n = 0; n < cycles; n++) {
    if (now_s () - t0 > limit) {
      if (n < MIN_CYCLES)
        FAIL ("only %lu of %lu cycles in %.0f s (at least %d needed)", n,
              cycles, limit, MIN_CYCLES);
      printf ("leak-cycles: %.0f s reached after %lu of %lu cycles; "
              "checking those\n", limit, n, cycles);
      cycles = n;
      break;
    }
    cycle (uri, 20 + n);
    if ((n + 1) % 100 == 0) {
      sample (&mid);
      snprintf (what, sizeof what, "after %lu cycles (%.0f s)", n + 1,
                now_s () - t0);
      show (what, &mid);
    }
  }
  printf ("leak-cycles: %lu cycles in %.1f s (%.1f ms each)\n", cycles,
          now_s () - t0, (now_s () - t0) * 1000 / (double) cycles);

  if (!settle (&s0, &end)) {
    show ("60 s after the last cycle", &end);
    FAIL ("the server kept %ld threads and %ld fds more than before the "
          "first connection", end.threads - s0.threads, end.fds - s0.fds);
  }
  show ("after the cycles, idle", &end);
  printf ("leak-cycles: RSS grew by %.1f MiB over %lu cycles (bound %.0f "
          "MiB); threads and fds back at %ld and %ld\n",
          (end.rss_kib - s1.rss_kib) / 1024.0, cycles, bound_mib,
          end.threads, end.fds);
  if ((end.rss_kib - s1.rss_kib) / 1024.0 > bound_mib)
    FAIL ("RSS grew by %.1f MiB over %lu cycles, more than %.0f MiB",
          (end.rss_kib - s1.rss_kib) / 1024.0, cycles, bound_mib);
  return 0;
}

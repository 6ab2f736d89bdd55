/* SPDX-License-Identifier: BSD-3-Clause */
/* c06-hangup: case C06 in tests/README.md: clients that queue
 * many reads, one of which fails, and hang up at once (no NBD_CMD_DISC,
 * the socket just closes while the server still works on the requests
 * and sends their replies).  The server must survive and serve others.
 *
 * Usage: c06-hangup hangup URI ROUNDS BADOFF
 *          Opens ROUNDS connections first, prints "ready" and waits for a
 *          line on stdin (the caller shrinks the image meanwhile, so that
 *          BADOFF is inside the size these connections negotiated but
 *          past the image's current end: rbdx's pread callback itself
 *          fails it with EINVAL).  Then, connection by connection: 32
 *          reads of 64 KiB queued with nbd_aio_pread, the 2nd at BADOFF
 *          and one past the negotiated end (client strict mode off:
 *          nbdkit fails it before the plugin), then nbd_close without
 *          shutdown, after 0, 1, 2 or 3 ms (round % 4) so the hang-up
 *          falls before, during or after the replies.
 *        c06-hangup reader URI STOPFILE BYTE LIMIT
 *          Reads 64 KiB blocks in [0, LIMIT) in a loop until STOPFILE
 *          exists (at most 120 s); every read must succeed and every byte
 *          be BYTE (hex).  Prints how many reads it did.
 */
#include "nbd-check.h"

#include <unistd.h>

#define RLEN (64 * KiB)
#define NREADS 32

static int
hangup (const char *uri, int rounds, uint64_t badoff)
{
  struct nbd_handle **hs = calloc ((size_t) rounds, sizeof *hs);
  static unsigned char bufs[NREADS + 1][RLEN];
  char line[64], name[32];
  int r, i;

  if (!hs)
    FAIL ("out of memory");
  for (r = 0; r < rounds; r++) {
    snprintf (name, sizeof name, "hangup-%d", r);
    hs[r] = connect_named (uri, name);
    OK (nbd_set_strict_mode (hs[r], 0));
    if (badoff + RLEN > (uint64_t) nbd_get_size (hs[r]))
      FAIL ("BADOFF %" PRIu64 " is not inside the export", badoff);
  }
  printf ("ready\n");
  fflush (stdout);
  if (!fgets (line, sizeof line, stdin))
    FAIL ("no go from the caller");

  for (r = 0; r < rounds; r++) {
    struct nbd_handle *h = hs[r];
    uint64_t size = (uint64_t) nbd_get_size (h);

    for (i = 0; i < NREADS; i++) {
      uint64_t off = i == 1 ? badoff : (uint64_t) i * RLEN;
      if (nbd_aio_pread (h, bufs[i], RLEN, off, NBD_NULL_COMPLETION, 0) == -1)
        FAIL ("round %d: aio read %d: %s", r, i, nbd_get_error ());
    }
    if (nbd_aio_pread (h, bufs[NREADS], RLEN, size, NBD_NULL_COMPLETION,
                       0) == -1)
      FAIL ("round %d: aio read past the end: %s", r, nbd_get_error ());
    if (r % 4)
      usleep ((useconds_t) (r % 4) * 1000);
    nbd_close (h);        /* hang up: no DISC, replies unread */
  }
  free (hs);
  printf ("%s: %d connections hung up with %d reads queued each\n",
          check_prog, rounds, NREADS + 1);
  return 0;
}

static int
reader (const char *uri, const char *stopfile, int byte, uint64_t limit)
{
  static unsigned char buf[RLEN];
  struct nbd_handle *h = connect_named (uri, "reader");
  double end = now_s () + 120;
  uint64_t n = 0, off;
  char what[64];

  while (access (stopfile, F_OK) != 0) {
    if (now_s () > end)
      FAIL ("the stop file did not appear within 120 s");
    off = (n * 7 % (limit / RLEN)) * RLEN;
    if (nbd_pread (h, buf, RLEN, off, 0) == -1)
      FAIL ("read %" PRIu64 " at %" PRIu64 " failed while other clients "
            "hung up: %s (errno %s)", n, off, nbd_get_error (),
            errname (nbd_get_errno ()));
    snprintf (what, sizeof what, "read %" PRIu64, n);
    ALL (buf, byte, RLEN, off, what);
    n++;
  }
  printf ("%s: reader did %" PRIu64 " reads without an error\n", check_prog,
          n);
  OK (nbd_shutdown (h, 0));
  nbd_close (h);
  return 0;
}

int
main (int argc, char *argv[])
{
  check_name (argv[0]);
  if (argc == 5 && strcmp (argv[1], "hangup") == 0)
    return hangup (argv[2], atoi (argv[3]), strtoull (argv[4], NULL, 0));
  if (argc == 6 && strcmp (argv[1], "reader") == 0)
    return reader (argv[2], argv[3], (int) strtol (argv[4], NULL, 16),
                   strtoull (argv[5], NULL, 0));
  fprintf (stderr, "usage: %s hangup URI ROUNDS BADOFF\n"
           "       %s reader URI STOPFILE BYTE LIMIT\n", check_prog,
           check_prog);
  return 2;
}

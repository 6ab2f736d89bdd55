/* SPDX-License-Identifier: BSD-3-Clause */
/* c03-disconnect-inflight: case C03 in tests/README.md: a client
 * with 64 writes in flight disconnects (NBD_CMD_DISC); every write the
 * server received before the DISC must be done (NBD doc/proto.md,
 * NBD_CMD_DISC: the server handles outstanding requests first).
 *
 * Usage: c03-disconnect-inflight write URI STATUS-FILE
 *          64 nbd_aio_pwrite of 64 KiB, each with its own pattern, at
 *          offsets spread over 128 MiB (32 objects, half the writes
 *          crossing an object boundary), none waited for; then
 *          NBD_CMD_DISC right behind them, reading replies until the
 *          server closes; STATUS-FILE records per write whether it was
 *          acknowledged ('0'), refused with NBD_ESHUTDOWN ('S'),
 *          refused with another error ('E') or never answered ('?'),
 *          and STATUS-FILE.eshutdown lists the offsets of the 'S'
 *          writes, one per line.
 *        c03-disconnect-inflight read URI STATUS-FILE
 *          a new connection reads the 64 regions: every acknowledged
 *          write must be there, and every region of a write refused
 *          with NBD_ESHUTDOWN must still be all zero (the image must
 *          be new), as it is when the request never reached the
 *          plugin.  Exit 1 on any loss, on any write refused with
 *          another error or never answered, or on a refused write that
 *          changed its region.  Exit 3 when all that holds but some
 *          writes were refused with NBD_ESHUTDOWN: nbdkit's core
 *          answers requests it read before the DISC with ESHUTDOWN
 *          when another worker has already seen the DISC (nbdkit
 *          server/protocol.c), although the NBD spec has the server
 *          handle outstanding requests first; the caller proves from
 *          nbdkit's debug log that those writes never reached the
 *          plugin.
 * The image must be at least 129 MiB.
 */
#include "nbd-check.h"

#define NWRITES 64
#define WLEN (64 * KiB)

/* Write i starts 64 KiB after (2 i) MiB for even i and 32 KiB before
 * (2 i + 2) MiB for odd i: no two writes overlap, and every odd write
 * crosses a 4 MiB object boundary. */
static uint64_t
offset_of (int i)
{
  return i % 2 ? (uint64_t) (i + 1) * 2 * MiB - 32 * KiB
               : (uint64_t) i * 2 * MiB + 64 * KiB;
}

static void
pattern (unsigned char *buf, int i)
{
  size_t k;

  for (k = 0; k < WLEN; k++)
    buf[k] = (unsigned char) (i * 37 + 11 + (k / 512) * 7 + (k % 512 == 0));
}

/* Per write: '?' no reply seen, '0' acknowledged, 'S' NBD_ESHUTDOWN,
 * 'E' another error (its errno in errs). */
static char status[NWRITES + 1];
static int errs[NWRITES];

static int
write_done (void *user_data, int *error)
{
  intptr_t i = (intptr_t) user_data;

  errs[i] = *error;
  status[i] = !*error ? '0' : *error == ESHUTDOWN ? 'S' : 'E';
  return 1;
}

static void
save_status (const char *path)
{
  char path2[4096];
  FILE *f = fopen (path, "w");
  int i;

  if (!f || fprintf (f, "%s\n", status) < 0 || fclose (f) != 0)
    FAIL ("cannot write %s", path);
  snprintf (path2, sizeof path2, "%s.eshutdown", path);
  f = fopen (path2, "w");
  if (!f)
    FAIL ("cannot write %s", path2);
  for (i = 0; i < NWRITES; i++)
    if (status[i] == 'S')
      fprintf (f, "%" PRIu64 "\n", offset_of (i));
  if (fclose (f) != 0)
    FAIL ("cannot write %s", path2);
}

static void
load_status (const char *path)
{
  FILE *f = fopen (path, "r");

  if (!f || !fgets (status, sizeof status, f))
    FAIL ("cannot read %s", path);
  fclose (f);
}

int
main (int argc, char *argv[])
{
  static unsigned char bufs[NWRITES][WLEN], got[WLEN];
  struct nbd_handle *h;
  char what[80];
  int i, acked = 0, shutdown = 0, refused = 0, unknown = 0;

  check_args (argv, argc == 4, "write|read URI STATUS-FILE");
  h = connect_named (argv[2], argv[1]);
  if ((uint64_t) nbd_get_size (h) < offset_of (NWRITES - 1) + WLEN)
    FAIL ("the export is too small: %" PRId64 " bytes", nbd_get_size (h));

  if (strcmp (argv[1], "write") == 0) {
    memset (status, '?', NWRITES);
    for (i = 0; i < NWRITES; i++) {
      nbd_completion_callback cb = { .callback = write_done,
                                     .user_data = (void *) (intptr_t) i };

      pattern (bufs[i], i);
      if (nbd_aio_pwrite (h, bufs[i], WLEN, offset_of (i), cb, 0) == -1)
        FAIL ("aio write %d: %s", i, nbd_get_error ());
    }
    printf ("%s: %d writes queued, %d in flight at the disconnect\n",
            check_prog, NWRITES, nbd_aio_in_flight (h));
    /* NBD_CMD_DISC goes out right behind the queued writes; then keep
     * reading replies until the server closes, to learn which writes
     * it acknowledged. */
    OK (nbd_aio_disconnect (h, 0));
    while (!nbd_aio_is_closed (h) && !nbd_aio_is_dead (h))
      if (nbd_poll (h, 10000) == -1)
        break;
    save_status (argv[3]);
    for (i = 0; i < NWRITES; i++)
      if (status[i] == 'E')
        printf ("%s: write %d (offset %" PRIu64 ") was refused with %s\n",
                check_prog, i, offset_of (i), errname (errs[i]));
    printf ("%s: replies: %s\n", check_prog, status);
    nbd_close (h);
    return 0;
  }

  if (strcmp (argv[1], "read") != 0)
    FAIL ("unknown mode %s", argv[1]);
  load_status (argv[3]);
  for (i = 0; i < NWRITES; i++) {
    pattern (bufs[i], i);
    OK (nbd_pread (h, got, WLEN, offset_of (i), 0));
    if (status[i] == '0') {
      acked++;
      snprintf (what, sizeof what, "acknowledged write %d of 64 is lost", i);
      SAME (got, bufs[i], WLEN, offset_of (i), what);
    }
    else if (status[i] == 'S') {
      shutdown++;
      snprintf (what, sizeof what, "write %d, refused with ESHUTDOWN, "
                "changed its region", i);
      ALL (got, 0, WLEN, offset_of (i), what);
    }
    else
      status[i] == 'E' ? refused++ : unknown++;
  }
  printf ("%s: %d acknowledged writes read back; %d refused with "
          "ESHUTDOWN (regions untouched), %d refused with other errors, "
          "%d without reply\n", check_prog, acked, shutdown, refused,
          unknown);
  OK (nbd_shutdown (h, 0));
  nbd_close (h);
  if (refused || unknown)
    FAIL ("%d outstanding writes were refused with errors other than "
          "ESHUTDOWN and %d never answered: the server must handle every "
          "request it read before NBD_CMD_DISC", refused, unknown);
  /* 3: every acknowledged write is there; some were refused with
   * ESHUTDOWN (the caller checks that nbdkit's core did it). */
  return shutdown ? 3 : 0;
}

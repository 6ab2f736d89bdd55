/* c03-disconnect-inflight: case C03 of the shared cases README: a client
 * with 64 writes in flight disconnects (NBD_CMD_DISC); every write the
 * server received before the DISC must be done (NBD doc/proto.md,
 * NBD_CMD_DISC: the server handles outstanding requests first).
 *
 * Usage: c03-disconnect-inflight write URI
 *          64 nbd_aio_pwrite of 64 KiB, each with its own pattern, at
 *          offsets spread over 128 MiB (32 objects, half the writes
 *          crossing an object boundary), none waited for; then
 *          nbd_shutdown (DISC after the queued writes) and nbd_close at
 *          once.  The replies are never looked at.
 *        c03-disconnect-inflight read URI
 *          a new connection reads the 64 regions: each holds its pattern.
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

int
main (int argc, char *argv[])
{
  static unsigned char bufs[NWRITES][WLEN], got[WLEN];
  struct nbd_handle *h;
  char what[32];
  int i;

  check_args (argv, argc == 3, "write|read URI");
  h = connect_named (argv[2], argv[1]);
  if ((uint64_t) nbd_get_size (h) < offset_of (NWRITES - 1) + WLEN)
    FAIL ("the export is too small: %" PRId64 " bytes", nbd_get_size (h));

  if (strcmp (argv[1], "write") == 0) {
    for (i = 0; i < NWRITES; i++) {
      pattern (bufs[i], i);
      if (nbd_aio_pwrite (h, bufs[i], WLEN, offset_of (i),
                          NBD_NULL_COMPLETION, 0) == -1)
        FAIL ("aio write %d: %s", i, nbd_get_error ());
    }
    printf ("%s: %d writes queued, %d in flight at the disconnect\n",
            check_prog, NWRITES, nbd_aio_in_flight (h));
    /* DISC goes out after the queued writes; no reply is waited for. */
    OK (nbd_shutdown (h, 0));
    nbd_close (h);
    return 0;
  }

  if (strcmp (argv[1], "read") != 0)
    FAIL ("unknown mode %s", argv[1]);
  for (i = 0; i < NWRITES; i++) {
    pattern (bufs[i], i);
    OK (nbd_pread (h, got, WLEN, offset_of (i), 0));
    snprintf (what, sizeof what, "write %d of 64 is lost", i);
    SAME (got, bufs[i], WLEN, offset_of (i), what);
  }
  printf ("%s: all %d patterns read back\n", check_prog, NWRITES);
  OK (nbd_shutdown (h, 0));
  nbd_close (h);
  return 0;
}

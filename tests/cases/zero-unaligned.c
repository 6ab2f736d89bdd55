/* SPDX-License-Identifier: BSD-3-Clause */
/* zero-unaligned: case C08 in tests/README.md.
 *
 * An 8 MiB image filled with 0x78.  WRITE_ZEROES of 65024 bytes at
 * offset 0 without NO_HOLE (so holes are allowed), then read: bytes
 * [0, 65024) are zero and everything else is still 0x78 (a server that
 * rounds the range to its discard granularity, or skips a partial one,
 * fails here).  Then WRITE_ZEROES with FAST_ZERO (NBD doc/proto.md
 * "NBD_CMD_FLAG_FAST_ZERO"): it either succeeds fast and zeroes
 * exactly its range, or fails fast with NBD_ENOTSUP and changes
 * nothing; never slow.  Both with holes allowed and with NO_HOLE.
 *
 * Usage: zero-unaligned URI OUT
 *   Writes the expected image to OUT for comparison with `rbd export`.
 */
#include "nbd-check.h"

#define SIZE (8 * MiB)
#define FAST_LIMIT 2.0          /* seconds: "fast" on a loaded CI host */

/* WRITE_ZEROES with FAST_ZERO (plus EXTRA flags) of [OFF, OFF+LEN):
 * success or ENOTSUP, under FAST_LIMIT; the shadow follows. */
static void
fast_zero (struct nbd_handle *h, unsigned char *shadow, uint64_t off,
           uint64_t len, uint32_t extra, const char *what)
{
  double t = now_s (), dt;
  int r = nbd_zero (h, len, off, LIBNBD_CMD_FLAG_FAST_ZERO | extra);
  int e = r == -1 ? nbd_get_errno () : 0;

  dt = now_s () - t;
  if (r == -1 && e != ENOTSUP)
    FAIL ("%s: failed with %s (%s), expected success or ENOTSUP", what,
          errname (e), nbd_get_error ());
  if (dt > FAST_LIMIT)
    FAIL ("%s: took %.2f s (%s): FAST_ZERO must not be slow", what, dt,
          r == 0 ? "succeeded" : "ENOTSUP");
  fprintf (stderr, "zero-unaligned: %s: %s in %.3f s\n", what,
           r == 0 ? "zeroed" : "ENOTSUP", dt);
  if (r == 0)
    memset (shadow + off, 0, len);
  ALIVE (h);
}

int
main (int argc, char *argv[])
{
  struct nbd_handle *h;
  unsigned char *shadow;

  check_args (argv, argc == 3, "URI OUT");
  h = connect_to (argv[1], false);
  EQ (nbd_get_size (h), SIZE);
  EQ (nbd_can_zero (h), 1);

  shadow = xmalloc (SIZE);
  memset (shadow, 0x78, SIZE);
  verify_range (h, shadow, 0, SIZE, "the image before WRITE_ZEROES");

  /* WRITE_ZEROES 65024 @ 0, no flags. */
  OK (nbd_zero (h, 65024, 0, 0));
  memset (shadow, 0, 65024);
  verify_range (h, shadow, 0, SIZE, "after WRITE_ZEROES of 65024 bytes at 0");

  /* FAST_ZERO: the next unaligned 65024 bytes; a whole 4 MiB object;
   * and with NO_HOLE (zeros must be written: ENOTSUP is the honest
   * answer, success only if fast). */
  EQ (nbd_can_fast_zero (h), 1);
  fast_zero (h, shadow, 65024, 65024, 0, "FAST_ZERO 65024 @ 65024");
  verify_range (h, shadow, 0, SIZE, "after FAST_ZERO 65024 @ 65024");
  fast_zero (h, shadow, 4 * MiB, 4 * MiB, 0, "FAST_ZERO 4 MiB @ 4 MiB");
  verify_range (h, shadow, 0, SIZE, "after FAST_ZERO of an object");
  fast_zero (h, shadow, 3 * MiB + 5, 100000, LIBNBD_CMD_FLAG_NO_HOLE,
             "NO_HOLE|FAST_ZERO 100000 @ 3 MiB+5");
  verify_range (h, shadow, 0, SIZE, "after NO_HOLE|FAST_ZERO");

  OK (nbd_flush (h, 0));
  save_file (argv[2], shadow, SIZE);
  OK (nbd_shutdown (h, 0));
  nbd_close (h);
  free (shadow);
  return 0;
}

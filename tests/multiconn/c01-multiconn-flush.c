/* SPDX-License-Identifier: BSD-3-Clause */
/* c01-multiconn-flush: case C01 in tests/README.md, i.e. what
 * NBD multi-conn promises (NBD doc/proto.md, NBD_FLAG_CAN_MULTI_CONN: a
 * FLUSH or FUA reply on one connection makes every completed write
 * visible to all connections of the export).
 *
 * Usage: c01-multiconn-flush URI EXPECT_MC
 *
 * Opens three connections A, B, C to URI and asserts nbd_can_multi_conn
 * equals EXPECT_MC (0 or 1) on each.
 *
 * EXPECT_MC=1, over 8 rounds at offsets in different objects:
 *   1. A writes 4 KiB of a byte at OFF; B reads (anything is allowed
 *      before the flush); A flushes; B must read the byte.
 *   2. C reads OFF (warms any cache); A writes a new byte; B flushes
 *      (B wrote nothing itself); C must read the new byte.
 *   3. A writes with FUA; B and C must read it at once.
 *   4. A writes zeroes (NBD_CMD_WRITE_ZEROES) over OFF; C flushes; B
 *      must read zeros.
 * EXPECT_MC=0 (cache on, or writers that pass the lock around): only what
 * holds on one connection is checked: FUA writes and flushes succeed on
 * A and on B, and each reads back its own write.
 */
#include "nbd-check.h"

#define LEN (4 * KiB)

static unsigned char buf[LEN], pat[LEN];

static void
expect_byte (struct nbd_handle *h, const char *who, uint64_t off, int byte,
             const char *step)
{
  char what[160];

  OK (nbd_pread (h, buf, LEN, off, 0));
  snprintf (what, sizeof what, "%s: %s reads at %" PRIu64, step, who, off);
  ALL (buf, byte, LEN, off, what);
}

static void
write_byte (struct nbd_handle *h, uint64_t off, int byte, uint32_t flags)
{
  memset (pat, byte, LEN);
  OK (nbd_pwrite (h, pat, LEN, off, flags));
}

int
main (int argc, char *argv[])
{
  struct nbd_handle *a, *b, *c;
  int expect, round, early_new = 0;

  check_args (argv, argc == 3, "URI EXPECT_MC");
  expect = atoi (argv[2]);
  a = connect_named (argv[1], "A");
  b = connect_named (argv[1], "B");
  c = connect_named (argv[1], "C");
  EQ (nbd_can_multi_conn (a), expect);
  EQ (nbd_can_multi_conn (b), expect);
  EQ (nbd_can_multi_conn (c), expect);
  EQ (nbd_can_flush (a), 1);
  EQ (nbd_can_fua (a), 1);

  if (!expect) {
    write_byte (a, 0, 0x11, LIBNBD_CMD_FLAG_FUA);
    OK (nbd_flush (a, 0));
    expect_byte (a, "A", 0, 0x11, "no multi-conn, FUA write");
    write_byte (b, 8 * MiB, 0x22, LIBNBD_CMD_FLAG_FUA);
    OK (nbd_flush (b, 0));
    OK (nbd_flush (c, 0));
    expect_byte (b, "B", 8 * MiB, 0x22, "no multi-conn, FUA write");
    write_byte (a, 4 * MiB, 0x33, 0);
    OK (nbd_flush (a, 0));
    expect_byte (a, "A", 4 * MiB, 0x33, "no multi-conn, write+flush");
  }
  else {
    for (round = 0; round < 8; round++) {
      /* 4 MiB objects by default: every round in another object, and
       * not always object-aligned. */
      uint64_t off = (uint64_t) round * 4 * MiB + (round % 2) * 12288;
      int x = 0xaa + round;    /* 0xAA in the first round, as in C01 */

      /* 1: write on A, read on B, flush on A, read on B. */
      write_byte (a, off, x, 0);
      OK (nbd_pread (b, buf, LEN, off, 0));
      early_new += first_diff (buf, x, LEN) < 0;
      OK (nbd_flush (a, 0));
      expect_byte (b, "B", off, x, "C01 write A, flush A");

      /* 2: write on A, flush on B, read on C. */
      expect_byte (c, "C", off, x, "C01 variant, before");
      write_byte (a, off, x ^ 0x0f, 0);
      OK (nbd_flush (b, 0));
      expect_byte (c, "C", off, x ^ 0x0f, "C01 variant write A, flush B");

      /* 3: FUA write on A: visible on B and C without a flush. */
      write_byte (a, off, x ^ 0x50, LIBNBD_CMD_FLAG_FUA);
      expect_byte (b, "B", off, x ^ 0x50, "FUA write on A");
      expect_byte (c, "C", off, x ^ 0x50, "FUA write on A");

      /* 4: write zeroes on A, flush on C, read on B. */
      OK (nbd_zero (a, LEN, off, 0));
      OK (nbd_flush (c, 0));
      expect_byte (b, "B", off, 0, "write zeroes A, flush C");
    }
    printf ("%s: multi-conn held for 8 rounds (B saw A's write before "
            "the flush in %d of 8)\n", check_prog, early_new);
  }

  OK (nbd_shutdown (c, 0));
  OK (nbd_shutdown (b, 0));
  OK (nbd_shutdown (a, 0));
  nbd_close (c);
  nbd_close (b);
  nbd_close (a);
  return 0;
}

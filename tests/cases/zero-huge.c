/* SPDX-License-Identifier: BSD-3-Clause */
/* zero-huge: case C09 in tests/README.md.
 *
 * An 8 GiB sparse image.  Write 512 bytes of 0x55 at 3 GiB;
 * WRITE_ZEROES of length 0xFFFFF000 at 0; then TRIM of 0xFFFFF000 at
 * 4 GiB.  The 512 bytes at 3 GiB must read as zero, with no overflow of
 * the 32-bit length (markers just past the end of each range keep
 * their data, markers inside the zeroed range are zero) and no
 * disconnect.
 *
 * Usage: zero-huge URI
 */
#include "nbd-check.h"

#define SIZE     (8 * GiB)
#define LEN      UINT64_C (0xFFFFF000)

struct marker { uint64_t off; int byte; bool zeroed; const char *what; };

/* Each marker reads as zeros if ZEROED, else still as its BYTE. */
static void
check_markers (struct nbd_handle *h, const struct marker *m, size_t n)
{
  unsigned char buf[512], want[512];
  size_t i;

  for (i = 0; i < n; i++) {
    memset (want, m[i].zeroed ? 0 : m[i].byte, sizeof want);
    OK (nbd_pread (h, buf, sizeof buf, m[i].off, 0));
    SAME (buf, want, sizeof buf, m[i].off, m[i].what);
  }
}

int
main (int argc, char *argv[])
{
  const struct marker m[] = {
    { 3 * GiB, 0x55, true, "512 bytes at 3 GiB (the case)" },
    { 0, 0x11, true, "start of the zeroed range" },
    { LEN - 512, 0x22, true, "last 512 bytes of the zeroed range" },
    { LEN, 0x66, false, "just past the zeroed range" },
    { 4 * GiB - 512, 0x77, false, "just before the trimmed range" },
    { 4 * GiB + LEN, 0x88, false, "just past the trimmed range" },
  };
  const size_t n = sizeof m / sizeof m[0];
  unsigned char buf[512];
  struct nbd_handle *h;
  double t;
  size_t i;

  check_args (argv, argc == 2, "URI");
  h = connect_to (argv[1], false);
  EQ (nbd_get_size (h), SIZE);

  for (i = 0; i < n; i++) {
    memset (buf, m[i].byte, sizeof buf);
    OK (nbd_pwrite (h, buf, sizeof buf, m[i].off, 0));
  }

  t = now_s ();
  OK (nbd_zero (h, LEN, 0, 0));
  fprintf (stderr, "zero-huge: WRITE_ZEROES 0xFFFFF000 @ 0 took %.2f s\n",
           now_s () - t);
  ALIVE (h);
  check_markers (h, m, n);

  t = now_s ();
  OK (nbd_trim (h, LEN, 4 * GiB, 0));
  fprintf (stderr, "zero-huge: TRIM 0xFFFFF000 @ 4 GiB took %.2f s\n",
           now_s () - t);
  ALIVE (h);
  /* TRIM may leave data in its range; outside it nothing may change. */
  check_markers (h, m, n);

  OK (nbd_flush (h, 0));
  EQ (nbd_get_size (h), SIZE);
  OK (nbd_shutdown (h, 0));
  nbd_close (h);
  return 0;
}

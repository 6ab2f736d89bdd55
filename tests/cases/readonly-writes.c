/* SPDX-License-Identifier: BSD-3-Clause */
/* readonly-writes: case C13 in tests/README.md.
 *
 * On a read-only export (image@snap, or nbdkit -r), with libnbd's
 * strict mode off so the requests are sent anyway: the handshake shows
 * read-only; WRITE of 64 KiB at 0 (plain and FUA), TRIM and
 * WRITE_ZEROES (plain and NO_HOLE) each get NBD_EPERM (NBD doc/proto.md:
 * "NBD_EPERM ... write to a read-only export"), the server consumes the
 * write payload (the next request on the connection is parsed
 * correctly), and a read after each still works and returns the
 * unchanged data.
 *
 * Usage: readonly-writes URI
 */
#include "nbd-check.h"

#define LEN (64 * KiB)

static struct nbd_handle *h;
static unsigned char before[LEN], buf[LEN], wbuf[LEN];

static void
read_unchanged (const char *after)
{
  char what[128];

  ALIVE (h);
  OK (nbd_pread (h, buf, LEN, 0, 0));
  snprintf (what, sizeof what, "READ after a refused %s", after);
  SAME (buf, before, LEN, 0, what);
}

int
main (int argc, char *argv[])
{
  check_args (argv, argc == 2, "URI");
  h = connect_to (argv[1], false);
  EQ (nbd_is_read_only (h), 1);
  OK (nbd_set_strict_mode (h, 0));
  OK (nbd_pread (h, before, LEN, 0, 0));

  fill_pattern (wbuf, LEN, 0, 9);
  ERR (nbd_pwrite (h, wbuf, LEN, 0, 0), EPERM);
  read_unchanged ("WRITE");
  ERR (nbd_pwrite (h, wbuf, LEN, 0, LIBNBD_CMD_FLAG_FUA), EPERM);
  read_unchanged ("WRITE+FUA");
  ERR (nbd_trim (h, LEN, 0, 0), EPERM);
  read_unchanged ("TRIM");
  ERR (nbd_zero (h, LEN, 0, 0), EPERM);
  read_unchanged ("WRITE_ZEROES");
  ERR (nbd_zero (h, LEN, 0, LIBNBD_CMD_FLAG_NO_HOLE), EPERM);
  read_unchanged ("WRITE_ZEROES+NO_HOLE");
  /* A write whose payload is bigger than a socket buffer. */
  {
    size_t big = 8 * MiB;
    unsigned char *p = xmalloc (big);

    memset (p, 0xab, big);
    ERR (nbd_pwrite (h, p, big, 0, 0), EPERM);
    free (p);
  }
  read_unchanged ("8 MiB WRITE");

  /* FLUSH is not a write: allowed on a read-only export. */
  OK (nbd_flush (h, 0));
  read_unchanged ("nothing (after FLUSH)");

  OK (nbd_shutdown (h, 0));
  nbd_close (h);
  return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* bounds: case C12 in tests/README.md.
 *
 * With libnbd's strict mode off (so the requests reach the server):
 * a read of 4096 bytes at size-2048 gets NBD_EINVAL, a write of 4096
 * bytes at size-2048 gets NBD_ENOSPC (NBD doc/proto.md "Request
 * message": past the end, EINVAL for reads, ENOSPC for writes) and its
 * payload is consumed without writing any of it, a read of length 0 is
 * answered (success or NBD_EINVAL) - none of them disconnects - and a
 * read of 512 bytes at size-512 then succeeds.
 *
 * Usage: bounds URI
 */
#include "nbd-check.h"

int
main (int argc, char *argv[])
{
  unsigned char tail[2048], buf[4096], wbuf[4096];
  struct nbd_handle *h;
  int64_t size;
  int r;

  check_args (argv, argc == 2, "URI");
  h = connect_to (argv[1], false);
  OK (nbd_set_strict_mode (h, 0));
  size = nbd_get_size (h);
  if (size < 8192)
    FAIL ("export too small: %" PRId64, size);

  /* The last 2048 bytes, to prove the failed write left them alone. */
  fill_pattern (tail, sizeof tail, size - 2048, 7);
  OK (nbd_pwrite (h, tail, sizeof tail, size - 2048, 0));

  ERR (nbd_pread (h, buf, 4096, size - 2048, 0), EINVAL);
  ALIVE (h);

  memset (wbuf, 0xee, sizeof wbuf);
  ERR (nbd_pwrite (h, wbuf, 4096, size - 2048, 0), ENOSPC);
  ALIVE (h);
  OK (nbd_pread (h, buf, 2048, size - 2048, 0));
  SAME (buf, tail, 2048, size - 2048, "tail after the refused write");

  r = nbd_pread (h, buf, 0, 0, 0);
  if (r == -1 && nbd_get_errno () != EINVAL)
    FAIL ("read of length 0: %s (%s), expected success or EINVAL",
          errname (nbd_get_errno ()), nbd_get_error ());
  fprintf (stderr, "bounds: read of length 0: %s\n",
           r == 0 ? "success" : "EINVAL");
  ALIVE (h);

  OK (nbd_pread (h, buf, 512, size - 512, 0));
  SAME (buf, tail + 1536, 512, size - 512, "read of the last 512 bytes");
  ALIVE (h);

  OK (nbd_shutdown (h, 0));
  nbd_close (h);
  return 0;
}

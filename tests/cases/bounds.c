/* SPDX-License-Identifier: BSD-3-Clause */
/* bounds: out-of-bounds requests (case C12 in tests/README.md), and the same bounds
 * where only rbdx's own checks can stop a request.
 *
 * With libnbd's strict mode off (so the requests reach the server),
 * SIZE being the image's size:
 *   - a read of 4096 bytes at SIZE-2048, and one at SIZE + 1 MiB, get
 *     NBD_EINVAL; writes and WRITE_ZEROES there get NBD_ENOSPC, a
 *     BLOCK_STATUS NBD_EINVAL and a TRIM the TRIM errno (NBD doc/proto.md
 *     "Error values": past the end, EINVAL for reads, trims and block
 *     status, ENOSPC for writes and write zeroes); a refused write's
 *     payload is consumed without writing any of it;
 *   - a read of length 0 is answered (success or NBD_EINVAL);
 *   - none of them disconnects, and a read of 512 bytes at SIZE-512
 *     then succeeds.
 *
 * Usage: bounds [--trim-errno NAME] URI
 *          SIZE is the export size: nbdkit's own checks stop the
 *          requests before the plugin sees them.
 *        bounds [--trim-errno NAME] --image-size SIZE URI
 *          for an export served with advertise_size=max: nbdkit lets
 *          every offset through, and only rbdx's checks against the
 *          image's size stop them; BLOCK_STATUS crossing the end is
 *          answered up to the end only.
 *        bounds [--trim-errno NAME] --shrink IMAGE NEWSIZE URI
 *          write the last 2048 bytes, then `rbd resize --allow-shrink`
 *          IMAGE to NEWSIZE (bytes) while the connection stays open;
 *          at once, with no wait (case C68), a write of 4096 bytes crossing
 *          NEWSIZE gets NBD_ENOSPC and a read there NBD_EINVAL (librbd
 *          knows the new end on every handle once `rbd resize` has
 *          returned, whether or not rbdx's update thread has run yet);
 *          once a read past NEWSIZE fails (rbdx learns of the resize
 *          through its update watch; waited for up to 30 s) the checks
 *          above run with SIZE = NEWSIZE: the connection still has the
 *          old size, so again only rbdx's checks stop them.
 * --trim-errno: the error a TRIM past the end must get (default EINVAL,
 * as the NBD spec says).
 */
#include <unistd.h>

#include "nbd-check.h"

static int
extent_cb (void *user_data, const char *metacontext, uint64_t offset,
           uint32_t *entries, size_t nr_entries, int *error)
{
  uint64_t *covered = user_data;
  size_t i;

  for (i = 0; i < nr_entries; i += 2)
    *covered += entries[i];
  return 0;
}

/* Every kind of request past SIZE (crossing it at SIZE-2048, and wholly
 * past it at SIZE + 1 MiB), each refused with its error, the connection
 * alive after each. */
static void
past_the_end (struct nbd_handle *h, uint64_t size, int trim_errno)
{
  const uint64_t at[2] = { size - 2048, size + MiB };
  unsigned char buf[4096], wbuf[4096];
  nbd_extent_callback ecb = { .callback = extent_cb };
  uint64_t covered;
  int i;

  memset (wbuf, 0xee, sizeof wbuf);
  for (i = 0; i < 2; i++) {
    fprintf (stderr, "bounds: requests of 4096 bytes at %" PRIu64
             " (image size %" PRIu64 ")\n", at[i], size);
    ERR (nbd_pread (h, buf, 4096, at[i], 0), EINVAL);
    ALIVE (h);
    ERR (nbd_pwrite (h, wbuf, 4096, at[i], 0), ENOSPC);
    ALIVE (h);
    ERR (nbd_pwrite (h, wbuf, 4096, at[i], LIBNBD_CMD_FLAG_FUA), ENOSPC);
    ALIVE (h);
    ERR (nbd_zero (h, 4096, at[i], 0), ENOSPC);
    ALIVE (h);
    ERR (nbd_trim (h, 4096, at[i], 0), trim_errno);
    ALIVE (h);
  }
  /* Block status: wholly past the end is an error; crossing the end,
   * an answer that may stop at the end but never go past it. */
  covered = 0;
  ecb.user_data = &covered;
  ERR (nbd_block_status (h, 4096, size + MiB, ecb, 0), EINVAL);
  ALIVE (h);
  if (nbd_get_size (h) > (int64_t) size) {
    covered = 0;
    OK (nbd_block_status (h, 4096, size - 2048, ecb, 0));
    if (covered == 0 || covered > 2048)
      FAIL ("block status of 4096 bytes at size-2048 covered %" PRIu64
            " bytes, expected 1 to 2048", covered);
    ALIVE (h);
  }
}

int
main (int argc, char *argv[])
{
  unsigned char tail[2048], buf[4096];
  const char *image = NULL;
  struct nbd_handle *h;
  uint64_t size = 0;
  int trim_errno = EINVAL, r, i = 1;
  bool shrink = false;

  check_name (argv[0]);
  while (i < argc - 1 && strncmp (argv[i], "--", 2) == 0) {
    if (strcmp (argv[i], "--trim-errno") == 0 && i + 2 < argc) {
      trim_errno = errno_of (argv[i + 1]);
      i += 2;
    }
    else if (strcmp (argv[i], "--image-size") == 0 && i + 2 < argc) {
      size = strtoull (argv[i + 1], NULL, 0);
      i += 2;
    }
    else if (strcmp (argv[i], "--shrink") == 0 && i + 3 < argc) {
      shrink = true;
      image = argv[i + 1];
      size = strtoull (argv[i + 2], NULL, 0);
      i += 3;
    }
    else
      break;
  }
  check_args (argv, i == argc - 1,
              "[--trim-errno NAME] [--image-size SIZE | --shrink IMAGE "
              "NEWSIZE] URI");
  h = connect_to (argv[i], false);
  OK (nbd_set_strict_mode (h, 0));
  if (size == 0 || shrink) {
    int64_t s = nbd_get_size (h);
    if (shrink && (uint64_t) s <= size)
      FAIL ("export of %" PRId64 " bytes cannot shrink to %" PRIu64, s, size);
    if (!shrink)
      size = (uint64_t) s;
  }
  if (size < 8192)
    FAIL ("image too small: %" PRIu64, size);

  /* The last 2048 bytes (after the shrink), to prove the failed writes
   * left them alone. */
  fill_pattern (tail, sizeof tail, size - 2048, 7);
  OK (nbd_pwrite (h, tail, sizeof tail, size - 2048, 0));

  if (shrink) {
    char cmd[1024];
    double end;

    /* Something past the new end that must never come back as data. */
    memset (buf, 0xdd, sizeof buf);
    OK (nbd_pwrite (h, buf, sizeof buf, size + MiB, 0));
    snprintf (cmd, sizeof cmd, "rbd resize --allow-shrink --no-progress "
              "--size %" PRIu64 "B '%s'", size, image);
    if (system (cmd) != 0)
      FAIL ("%s failed", cmd);
    memset (buf, 0xee, sizeof buf);
    ERR (nbd_pwrite (h, buf, sizeof buf, size - 2048, 0), ENOSPC);
    ALIVE (h);
    ERR (nbd_pread (h, buf, sizeof buf, size - 2048, 0), EINVAL);
    ALIVE (h);
    end = now_s () + 30;
    while (nbd_pread (h, buf, 4096, size + MiB, 0) == 0) {
      if (now_s () > end)
        FAIL ("30 s after the shrink to %" PRIu64 " a read at %" PRIu64
              " still succeeds", size, size + MiB);
      usleep (100 * 1000);
    }
    fprintf (stderr, "bounds: shrunk to %" PRIu64 " bytes; the connection "
             "still has %" PRId64 "\n", size, nbd_get_size (h));
  }

  past_the_end (h, size, trim_errno);
  OK (nbd_pread (h, buf, 2048, size - 2048, 0));
  SAME (buf, tail, 2048, size - 2048, "tail after the refused writes");

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

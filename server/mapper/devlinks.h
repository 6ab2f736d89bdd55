/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/devlinks.h: stable names for mapped images, the devlinks.
 *
 * Like krbd's /dev/rbd/POOL/IMAGE (made by Ceph's udev rule), every device
 * mapped from an image spec gets a symbolic link
 * /dev/rbdx/POOL/[NAMESPACE/]IMAGE[@SNAP] -> /dev/nbdN, so attach code
 * (os-brick style) can find a volume by name.  The mapper calls such a
 * symlink a devlink, as udev does (its DEVLINKS property); a plain "link"
 * is one of the kernel's NBD connections (NBD_CMD_LINK_DEAD).  The
 * supervisor makes the devlink once the device is usable and removes it
 * when it unmaps, only while it still points at its own device.  $RBDX_DEV_DIR replaces /dev/rbdx
 * (tests).  Not thread-safe (one supervisor per device).
 */
#ifndef RBDX_SERVER_DEVLINKS_H
#define RBDX_SERVER_DEVLINKS_H

#include <stddef.h>

/** The devlink's path for canonical image spec @p spec, into @p buf.
 *  @return 0; -EINVAL when @p spec is empty, starts with '/', or has an
 *  empty, "." or ".." component between '/' and '@' (it would name a path
 *  outside the link directory; rbdx_spec_parse refuses such specs first);
 *  -ENAMETOOLONG. */
int rbdx_devlink_path (const char *spec, char *buf, size_t len);

/** Make (or replace) the devlink of @p spec to /dev/nbd@p index, creating
 *  its directories.  @return 0 or -errno. */
int rbdx_devlink_add (const char *spec, int index);

/** Remove the devlink of @p spec if it points at /dev/nbd@p index, and the
 *  directories it leaves empty.  Never fails. */
void rbdx_devlink_remove (const char *spec, int index);

#endif

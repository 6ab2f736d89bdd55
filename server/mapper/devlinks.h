/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/devlinks.h: stable names for mapped images, the devlinks.
 *
 * Like krbd's /dev/rbd/POOL/IMAGE (made by Ceph's udev rule), every device
 * mapped from an image spec gets a symbolic link
 * /dev/rbdx/POOL/[NAMESPACE/]IMAGE[@SNAP] -> /dev/nbdN, so attach code
 * (os-brick style) can find a volume by name.  The mapper calls such a
 * symlink a devlink, as udev does (its DEVLINKS property); a plain "link"
 * is one of the kernel's NBD connections (NBD_CMD_LINK_DEAD).  The
 * supervisor makes the devlink once the device is usable, never over
 * another live mapping's (a second mapping of the name, e.g. read-only
 * beside read-write, gets none: its path is /dev/nbdN), and removes it
 * when it unmaps, only while it still points at its own device.
 * $RBDX_DEV_DIR replaces /dev/rbdx (tests).  Not thread-safe (one
 * supervisor per device; maps hold the mapper's lock, mapped.h).
 */
#ifndef RBDX_SERVER_DEVLINKS_H
#define RBDX_SERVER_DEVLINKS_H

#include <stdbool.h>
#include <stddef.h>

/** The devlink's path for canonical image spec @p spec, into @p buf.
 *  @return 0; -EINVAL when @p spec is empty, starts with '/', or has an
 *  empty, "." or ".." component between '/' and '@' (it would name a path
 *  outside the link directory; rbdx_spec_parse refuses such specs first);
 *  -ENAMETOOLONG. */
int rbdx_devlink_path (const char *spec, char *buf, size_t len);

/** Make the devlink of @p spec to /dev/nbd@p index, creating its
 *  directories.  A devlink that is there already is kept when it points
 *  at /dev/nbd@p index (0) or when @p live (if not NULL) says the device
 *  it points at, /dev/nbdM, is a live mapping of @p spec (-EEXIST): a
 *  mapping's devlink is never taken over by another one (its user holds
 *  the name as the device's path, os-brick for a VM's life); one left by
 *  a mapping that is gone is replaced (atomically, by rename).  Anything
 *  else at the path (a directory: an image named like a namespace of its
 *  pool whose volumes are mapped; a file) is left alone: -EEXIST; a path
 *  through a devlink (a volume of a namespace named like a mapped image):
 *  -ENOTDIR; a name too long for the file system: -ENAMETOOLONG.
 *  @return 0 (the devlink points at the device) or -errno (no devlink of
 *  this mapping: rbdx_devlink_points_at says which). */
int rbdx_devlink_add (const char *spec, int index,
                      bool (*live) (int index, const char *spec));

/** Whether the devlink of @p spec is there and points at /dev/nbd@p index
 *  (a symlink reading exactly "/dev/nbdN"): only then is it this
 *  mapping's device's name. */
bool rbdx_devlink_points_at (const char *spec, int index);

/** Remove the devlink of @p spec if it points at /dev/nbd@p index, and the
 *  directories it leaves empty.  Never fails. */
void rbdx_devlink_remove (const char *spec, int index);

#endif

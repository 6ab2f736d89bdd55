/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/teardown.h: the one way a mapping is taken down.
 *
 * Used by the device's supervisor when it unmaps (SIGTERM from `rbdx
 * unmap`, or the device disconnected by someone else) and by `rbdx unmap`
 * itself when the supervisor is gone: disconnect the device, then forget
 * the mapping (its /dev/rbdx devlink and its state file).  Stopping the
 * server is the caller's (the supervisor stops its child; `rbdx unmap`
 * signals a server that outlived its supervisor).  Not thread-safe.
 */
#ifndef RBDX_SERVER_TEARDOWN_H
#define RBDX_SERVER_TEARDOWN_H

#include <stdbool.h>
#include <sys/types.h>

#include "netlink.h"

/** NBD_CMD_DISCONNECT of /dev/nbd@p index through @p nl, then wait up to
 *  @p wait_s seconds (in steps of 0.1 s) for the kernel to report it
 *  disconnected (state.h, rbdx_device_connected).
 *  @return 0, or the negative errno of the disconnect command
 *          (rbdx_nl_disconnect). */
int rbdx_teardown_disconnect (struct rbdx_nl *nl, int index, double wait_s);

/** Forget the mapping of /dev/nbd@p index from @p target: remove its
 *  /dev/rbdx devlink (image specs only; devlinks.h: only while it points at
 *  this device) and its state file, the latter only while it names
 *  supervisor @p owner (the kernel may have given the device number to
 *  another mapping meanwhile); @p owner 0: whichever.  @p target "" is
 *  unknown (no devlink to remove).  Never fails. */
void rbdx_teardown_forget (int index, const char *target, pid_t owner);

#endif

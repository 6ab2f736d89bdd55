/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx plugin: creating librados cluster handles from the options.
 *
 * librados facts relied on (checked on Ceph 16.2.15, see server/core/DESIGN.md):
 * rados_create2 and rados_conf_* start no threads; rados_connect starts
 * about twelve.  A process must not fork after rados_connect, so
 * rbdx_cluster_configure may run before nbdkit forks, rbdx_cluster_connect
 * only in .get_ready (shut down again) or after the fork.
 */
#ifndef RBDX_CLUSTER_H
#define RBDX_CLUSTER_H

#include <stddef.h>

#include <rados/librados.h>

#include "rbdx/options.h"

/** Default for client_mount_timeout in seconds unless the user sets
 * ceph.client_mount_timeout (Ceph's own default is 300 s, far too long
 * for an NBD client waiting on a handshake). */
#define RBDX_MOUNT_TIMEOUT_S "30"

/** Default for rados_osd_op_timeout in seconds on the handle of a
 * start-up probe (rbdx_cluster_connect_probe) unless the user sets
 * ceph.rados_osd_op_timeout; connections that serve keep Ceph's default
 * (0: wait for ever).  OSDs of Ceph 17 and later refuse the connection
 * of a cephx id that has no OSD caps at all, and librados retries it
 * without end (seen with Ceph 18.2.7: the messenger logs
 * "handle_auth_bad_method ... (13) Permission denied" every few hundred
 * ms and the operation never completes), where Ceph 16.2 answered each
 * operation with EPERM.  Without a bound the probe, and so the start of
 * the server, would hang instead of naming the caps. */
#define RBDX_PROBE_OSD_TIMEOUT_S "20"

/** Create an unconnected cluster handle configured from @p o.
 *
 * Order: conf file (conf=, else Ceph's default search, honouring
 * $CEPH_CONF), $CEPH_ARGS, keyring= and mon_host=, rbdx's defaults
 * (rbd_cache=false, client_mount_timeout), then every ceph.NAME=VALUE
 * in the order given, so the user's ceph.* win.
 *
 * @param out  receives the handle; the caller owns it and releases it
 *             with rados_shutdown.  Untouched on error.
 * @param err  a one-line message naming the bad parameter on error.
 * @return 0; -EINVAL when conf= cannot be parsed or a ceph.* option is
 *         unknown (-ENOENT from librados) or has a bad value; other
 *         negative errno from rados_create2.
 * Thread-safe: uses only its own handle.  Starts no threads. */
int rbdx_cluster_configure (const struct rbdx_options *o, rados_t *out,
                            char *err, size_t errlen);

/** rbdx_cluster_configure followed by rados_connect.
 * @return 0, or the negative errno of the failing step with a message
 *         naming the cephx id and monitors in @p err (-ENOENT: no key
 *         for the id in the keyring, -EACCES/-EPERM: the key was
 *         refused, -ETIMEDOUT: no monitor answered).
 * Starts librados threads: never call before nbdkit forks except to
 * probe and shut down again. */
int rbdx_cluster_connect (const struct rbdx_options *o, rados_t *out,
                          char *err, size_t errlen);

/** rbdx_cluster_connect for a start-up probe: as that, and OSD
 * operations on the handle fail with -ETIMEDOUT after
 * RBDX_PROBE_OSD_TIMEOUT_S unless @p o sets ceph.rados_osd_op_timeout.
 * Same ownership, errors and thread rules as rbdx_cluster_connect. */
int rbdx_cluster_connect_probe (const struct rbdx_options *o, rados_t *out,
                                char *err, size_t errlen);

/** Open an I/O context on @p pool, in namespace @p ns when not NULL
 * (rados_ioctx_set_namespace: images in a namespace are not found
 * without it).
 * @param io   receives the context (rados_ioctx_destroy it); untouched
 *             on error.
 * @return 0; -ENOENT for a missing pool or namespace (message names
 *         it); other negative errno from librados/librbd.
 * Thread-safe for distinct @p io. */
int rbdx_cluster_open_pool (rados_t c, const char *pool, const char *ns,
                            rados_ioctx_t *io, char *err, size_t errlen);

#endif /* RBDX_CLUSTER_H */

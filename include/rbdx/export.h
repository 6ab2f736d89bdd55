/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: what an export is, decided once for both front ends (the
 * nbdkit plugin and the mapper's built-in engine): the checks made
 * before serving, the size an export advertises and what it can do.
 * Each front end only translates: the plugin into nbdkit's .can_*
 * answers (nbdkit-plugin(3)), the engine into NBD transmission flags
 * (NBD doc/proto.md, "Transmission flags").
 */
#ifndef RBDX_EXPORT_H
#define RBDX_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbdx/conn.h"
#include "rbdx/options.h"

/** Before serving, starting no thread (nbdkit forks after this): the
 * final checks of the parameters (rbdx_options_complete), whether this
 * librbd can load the encryption asked for (rbdx_encryption_check:
 * several specs need rbd_encryption_load2), and a cluster handle
 * configured from them and shut down again, so a bad conf file or
 * ceph.* option is refused now, not at the first connection.
 * @param err  a one-line message on error ("out of memory" too).
 * @return 0, or the negative errno of rbdx_options_complete,
 *         rbdx_encryption_check or rbdx_cluster_configure.  Once, before
 *         any connection. */
int rbdx_export_configure (struct rbdx_options *o, char *err, size_t errlen);

/** Prove, before serving, that what @p o names can be served: the
 * image (exactly identity= when given: rbdx_conn_probe), or with pool=
 * and no image the pool (and namespace) reachable.  Everything it
 * connected is shut down again (a host that forks does so after this:
 * cluster.h).
 * @return 0, or the negative errno of the failing step, with a message
 *         in @p err.  Thread-safe. */
int rbdx_export_probe (const struct rbdx_options *o, char *err,
                       size_t errlen);

/** What an export served by one connection can do.  A read-only
 * export (a snapshot, or opened read-only) can do no write, FUA, trim
 * or zero; flush is always accepted (a no-op then).  With notrim=true
 * (rbd-nbd's --notrim: Ceph src/tools/rbd_nbd/rbd-nbd.cc leaves out
 * NBD_FLAG_SEND_TRIM) there is no trim, and every zero is written with
 * its allocation kept, so a fast zero always fails with ENOTSUP. */
struct rbdx_export_caps {
  bool write;        /**< writes at all (else: read-only). */
  bool flush;        /**< NBD_CMD_FLUSH. */
  bool fua;          /**< NBD_CMD_FLAG_FUA, natively (librbd's FUA). */
  bool trim;         /**< NBD_CMD_TRIM (rbd_aio_discard). */
  bool zero;         /**< NBD_CMD_WRITE_ZEROES (rbd_aio_write_zeroes). */
  bool fast_zero;    /**< NBD_CMD_FLAG_FAST_ZERO: without NO_HOLE librbd
                          zeroes by removing or truncating objects. */
  bool extents;      /**< block status (rbd_diff_iterate2), for a front
                          end that has structured replies. */
  bool multi_conn;   /**< NBD_FLAG_CAN_MULTI_CONN (conn.h). */
};

/** Fill @p caps for @p conn (as it was opened; it does not change).
 * Thread-safe. */
void rbdx_export_caps (const struct rbdx_conn *conn,
                       struct rbdx_export_caps *caps);

/** The size, bytes, that @p conn's export states in the handshake: the
 * image's at open, or with advertise_size=max on a head image the
 * largest (RBDX_ADVERTISE_MAX_BYTES: the client follows the real size
 * through size_file=; each request is still bounded by the image's
 * current size, request.h).  Thread-safe. */
uint64_t rbdx_export_size (const struct rbdx_options *o,
                           const struct rbdx_conn *conn);

#endif /* RBDX_EXPORT_H */

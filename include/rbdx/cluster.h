/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: creating librados cluster handles from the options.
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

/** Threads of one rados client (Ceph 16 option names; `ceph config help
 * NAME`).  Every connection has its own client, so the pools Ceph sizes
 * for a whole process's I/O are sized here for one connection's queue:
 *
 * - ms_async_op_threads (Ceph: 3, "msgr-worker-N"): the messenger's
 *   event loops.  Each socket to an OSD or monitor is served by one of
 *   them; one connection's requests are carried by one loop, and N
 *   connections still get N loops of their own.  Saves 2 threads.  A
 *   shared Ceph context (cct.h), whose loops serve every connection,
 *   gets RBDX_SHARED_MS_ASYNC_OP_THREADS instead.
 * - librados_thread_count (Ceph: 2, "io_context_pool"): the Objecter's
 *   completion pool; librbd's callbacks are short.  Saves 1 thread.
 *
 * Not reducible by configuration in Ceph 16 (measured with
 * tests/bench/cost): log, service, ms_dispatch, ms_local, ceph_timer,
 * 4 x safe_timer, taskfin_librbd and tp_librbd (rbd_op_threads, already
 * 1).  Half of them (log, service, msgr-worker, tp_librbd,
 * taskfin_librbd, 2 safe_timer) belong to the client's CephContext and
 * exist once per server with ceph_context=shared (cct.h; the default
 * where Ceph has the fix of its observer deadlock, not on Ceph 16).
 * A user who wants Ceph's values back gives ceph.ms_async_op_threads=3
 * ceph.librados_thread_count=2 (or sets them in the conf file). */
#define RBDX_MS_ASYNC_OP_THREADS "1"
#define RBDX_LIBRADOS_THREAD_COUNT "1"

/** ms_async_op_threads ("msgr-worker-N") of a shared context, set while
 * the option still has Ceph's default (as the client defaults above):
 * all its clients' sockets are served by these (measured:
 * tests/bench/results/20261202-cost-context/report.md). */
#define RBDX_SHARED_MS_ASYNC_OP_THREADS "2"

/** log_max_recent (Ceph: 500 for a client, "log_max_recent" in `ceph
 * config help`): how many recent log entries, down to each subsystem's
 * gather level (debug_X=L/G: G), the client's log keeps in memory.  A
 * process that did not come through Ceph's global_init (a librados
 * user such as rbdx) registers no assert context, so a failed assert does
 * not dump them (Ceph src/common/assert.cc); only an admin socket's
 * "log dump" can read them (give ceph.log_max_recent=500 for that).
 * Set to 1: 0.24 MiB less per connection at 64 connections
 * (tests/bench/cost, 1.75 -> 1.51 MiB).  Entries at or below the log
 * level (debug_X=L) are still written to the log as they happen. */
#define RBDX_LOG_MAX_RECENT "1"

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
 * (rbd_cache=false, client_mount_timeout, and the thread pools and
 * log_max_recent above where the conf file and $CEPH_ARGS left Ceph's
 * default), then every
 * ceph.NAME=VALUE
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

/** Set Ceph option @p name on @p c to rbdx's @p value, but only where
 * neither the user nor Ceph's configuration chose it: not when @p o
 * sets it (ceph.NAME=, applied after this and so always winning), and
 * only while it still has Ceph's built-in default @p ceph_default (as
 * rados_conf_get prints it: "true"/"false" for a bool), so a value from
 * the conf file or $CEPH_ARGS stays.
 * @return 1 when set; 0 when left (the user sets it, it has another
 *         value, or this Ceph does not know it: rados_conf_get fails);
 *         the negative errno of rados_conf_set.
 * Thread-safety: as rados_conf_set on @p c (a handle the caller alone
 * configures). */
int rbdx_cluster_set_default (const struct rbdx_options *o, rados_t c,
                              const char *name, const char *ceph_default,
                              const char *value);

/** rbdx_cluster_configure followed by rados_connect.
 * @return 0, or the negative errno of the failing step with a message
 *         naming the cephx id and monitors in @p err (-ENOENT: no key
 *         for the id in the keyring, -EACCES/-EPERM: the key was
 *         refused, -ETIMEDOUT: no monitor answered).
 * Starts librados threads: never call before nbdkit forks except to
 * probe and shut down again. */
int rbdx_cluster_connect (const struct rbdx_options *o, rados_t *out,
                          char *err, size_t errlen);

/** rbdx_cluster_configure for a shared Ceph context (cct.h): the same,
 * but ms_async_op_threads is RBDX_SHARED_MS_ASYNC_OP_THREADS where the
 * conf file, $CEPH_ARGS and ceph.* leave Ceph's default.  Same
 * ownership, errors and thread rules as rbdx_cluster_configure. */
int rbdx_cluster_configure_shared (const struct rbdx_options *o,
                                   rados_t *out, char *err, size_t errlen);

/** rados_connect @p c, a handle configured from @p o.
 * @return 0, or as rbdx_cluster_connect (message in @p err); @p c is
 *         not shut down on error.  Starts librados threads. */
int rbdx_cluster_connect_handle (const struct rbdx_options *o, rados_t c,
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

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: ceph_context= (see server/core/DESIGN.md, "One Ceph context").
 *
 * A Ceph client (rados_t, librados' RadosClient: monitor session,
 * messenger, Objecter, io_context_pool, ms_dispatch/ms_local, ceph_timer,
 * 2 safe_timers) lives on a Ceph context (CephContext: configuration,
 * log, service thread, the messenger's worker threads, librbd's thread
 * pool and timer, 2 safe_timers).  With ceph_context=shared every client
 * of one server's options is made on one context
 * (rados_create_with_context); each keeps its own RadosClient, I/O
 * context and image handle.
 *
 * Ceph releases before the fix of https://github.com/ceph/ceph/pull/53568
 * ("common: resolve config proxy deadlock using refcounted pointers";
 * backports https://github.com/ceph/ceph/pull/54373, first in 18.2.4,
 * and https://github.com/ceph/ceph/pull/54374, first in 17.2.8, per
 * Ceph's release notes; none for 16) deadlock on a shared context:
 * ConfigProxy::remove_observer waits, holding the configuration lock, for
 * a notification (handle_conf_change) that needs that lock.  Every
 * client's connect and shutdown adds and removes observers on the shared
 * context and every monitor configuration push notifies them.
 */
#ifndef RBDX_CCT_H
#define RBDX_CCT_H

#include <stdbool.h>
#include <stddef.h>

#include <rados/librados.h>

#include "rbdx/options.h"


/** Whether the Ceph library in this process has the fix of the
 * configuration observer deadlock (PR 53568 or a backport: 17.2.8+,
 * 18.2.4+, 19+).
 *
 * Source of the release: libceph-common's ceph_version_to_str() (Ceph
 * src/common/version.h: the "MAJOR.MINOR.PATCH" the library was built
 * as; $ceph_debug_version_for_testing replaces it), found with dlsym in
 * the objects librados loaded.  The symbol is not public API: when it
 * cannot be found or parsed the answer is false (no shared context).
 *
 * @param release  receives the release text found, or "unknown"
 *                 (NUL-terminated when @p len > 0); may be NULL.
 * Thread-safe; looks once per process.  Starts no threads. */
bool rbdx_cct_fixed (char *release, size_t len);

/** Whether clients of @p o are made on one shared context: shared for
 * ceph_context=shared, per connection for ceph_context=connection,
 * rbdx_cct_fixed for ceph_context=auto.  Thread-safe. */
bool rbdx_cct_shared (const struct rbdx_options *o);

/** The check of ceph_context= before a server serves: logs (debug) what
 * auto chose and why.
 * @return 0; -ENOTSUP for ceph_context=shared on a Ceph without the fix,
 *         with a message in @p err naming the release and the upstream
 *         fault.  Thread-safe. */
int rbdx_cct_check (const struct rbdx_options *o, char *err, size_t errlen);

/** A connected client of its own on @p o's shared context, which is
 * made (rbdx_cluster_configure, plus RBDX_SHARED_MS_ASYNC_OP_THREADS) by
 * the first such client and goes with the last one's rbdx_cct_release.
 * @return 0, or as rbdx_cluster_connect (message in @p err); -ENOMEM.
 * Release with rbdx_cct_release.  Thread-safe. */
int rbdx_cct_connect (const struct rbdx_options *o, rados_t *out,
                      char *err, size_t errlen);

/** If @p c came from rbdx_cct_connect: shut it down (and the shared
 * context with the last client on it) and return true; else false and
 * @p c is untouched.  Nothing may be in flight on @p c.  Thread-safe. */
bool rbdx_cct_release (rados_t c);

#endif /* RBDX_CCT_H */

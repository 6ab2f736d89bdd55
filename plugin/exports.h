/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx plugin: export names: what NBD_OPT_LIST offers and which image an
 * export name asked for with NBD_OPT_GO / NBD_OPT_INFO means.
 *
 * An export name is an image spec (include/rbdx/spec.h).  librbd's API
 * accepts image names the spec grammar cannot express (with '/', '@' or
 * control characters; the rbd CLI refuses to create them); such images
 * are left out of the list, since a name the list offers must open with
 * NBD_OPT_GO, and nbdkit's debug log says which were left out.
 */
#ifndef RBDX_EXPORTS_H
#define RBDX_EXPORTS_H

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "rbdx/budget.h"
#include "rbdx/options.h"

/** Longest canonical export name, in bytes including the NUL. */
#define RBDX_EXPORT_MAX (RBDX_SPEC_MAX + 8)

/** Longest wait, in seconds, of a pool-mode NBD_OPT_LIST for the
 * listing before it (listings run one at a time, see
 * rbdx_exports_list).  Above client_mount_timeout (RBDX_MOUNT_TIMEOUT_S),
 * so one listing whose monitors do not answer does not fail the next. */
#define RBDX_LIST_WAIT_S 60

/** Fill @p exports for NBD_OPT_LIST: the default image (@p canon), or in
 * pool mode every addressable image of the pool (snapshots are not
 * listed; IMAGE@SNAP may still be asked for).
 *
 * In pool mode the listing needs a Ceph client (rbdx_cluster_acquire,
 * as a connection's, given back before returning; after nbdkit's fork
 * only), and a flood of listers must not make one
 * each: listings run one at a time (a process-wide lock, waited for at
 * most RBDX_LIST_WAIT_S seconds), and the one listing counts as a
 * connection in @p budget (max_connections=) while its client exists.
 * So at most one listing client exists, and never more clients than
 * the budget allows.
 *
 * Interns nothing: nbdkit calls .list_exports before any context of the
 * connection exists, where nbdkit_*_intern appends to one process-wide
 * list without a lock (nbdkit 1.42 server/public.c, add_intern: the
 * context's connection, else global_interns), so concurrent listers
 * corrupted the heap.  nbdkit_add_export copies name and description.
 * @return 0; -1 after nbdkit_error: the pool or namespace cannot be
 *         listed (the message names it; errno as left by nbdkit), the
 *         budget is spent (errno EMFILE, rate-limited message naming
 *         max_connections=), or the wait for the listing before timed
 *         out (errno EAGAIN, rate-limited message).  Thread-safe. */
int rbdx_exports_list (const struct rbdx_options *o, const char *canon,
                       struct rbdx_budget *budget,
                       struct nbdkit_exports *exports);

/** Which image does export name @p name mean?  "" and @p canon are the
 * default image; in pool mode any image of the pool (and namespace),
 * given as IMAGE[@SNAP] or with its pool.
 * @param spec  filled (caller frees with rbdx_spec_free) on success.
 * @return 0, or -1 after nbdkit_error saying why (a refused name is
 *         logged rate-limited, rbdx_error_limited: past the limit -1
 *         comes without a message).  Thread-safe. */
int rbdx_export_resolve (const struct rbdx_options *o, const char *canon,
                         const char *name, struct rbdx_spec *spec);

/** Write "Ceph RBD image NAME" into @p buf of @p len bytes (truncated
 * to fit, always NUL-terminated when @p len > 0).
 * @return @p buf.  Thread-safe, allocates nothing (interning, where
 * wanted, is the caller's: only from a callback with a connection's
 * context, see rbdx_exports_list). */
const char *rbdx_export_describe (const char *name, char *buf, size_t len);

#endif /* RBDX_EXPORTS_H */

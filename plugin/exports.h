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

#include "rbdx/options.h"

/** Longest canonical export name, in bytes including the NUL. */
#define RBDX_EXPORT_MAX (RBDX_SPEC_MAX + 8)

/** Fill @p exports for NBD_OPT_LIST: the default image (@p canon), or in
 * pool mode every addressable image of the pool (snapshots are not
 * listed; IMAGE@SNAP may still be asked for).  Connects to the cluster
 * (after nbdkit's fork only).
 * @return 0, or -1 after nbdkit_error naming the pool.  Thread-safe. */
int rbdx_exports_list (const struct rbdx_options *o, const char *canon,
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

/** "Ceph RBD image NAME", interned for the connection's lifetime. */
const char *rbdx_export_describe (const char *name);

#endif /* RBDX_EXPORTS_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the ancestors of a clone beyond its parent, and whether
 * their own parent links are still the ones its handle opened with
 * (server/core/ancestors.c).
 *
 * librbd opens a clone's parent, and the parent's parent, once, with
 * the clone (read-only handles without a header watch) and keeps that
 * chain: nothing refreshes it when an ancestor changes.  For a clone of
 * a clone (P@s -> M, M@t -> G), `rbd flatten M` copies P's data into M
 * (its snapshots too, with deep-flatten), after which P@s has no child
 * and `rbd snap rm P@s` and `rbd rm P` delete P's objects; G's handle
 * still reads M@t as it was opened (its object map says the objects
 * are not in M) and falls through to P's deleted objects: zeros where
 * G holds P's data (seen with Ceph 16.2.15, a watched handle of G, the
 * admin id; case C79 in tests/README.md).  G's own header does not
 * change, so G's watch says nothing.
 *
 * So a context of a clone records, at open, each ancestor that itself
 * has a parent (M above; P has none) with that ancestor's parent link,
 * and headpoll.h compares the links again on its checks.  An ancestor
 * without a parent cannot lose data under its children: its snapshot
 * is protected (clone v1) or kept in the trash (clone v2) while a child
 * uses it.  A link that changed between the handle's open and this
 * record (a flatten within those milliseconds) is not noticed.
 */
#ifndef RBDX_ANCESTORS_H
#define RBDX_ANCESTORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

/** At most this many ancestors are recorded (the first ones from the
 * clone); links further up are not compared. */
#define RBDX_ANCESTORS_MAX 16

/** One ancestor that has a parent: its image (by pool id, namespace,
 * image id and snapshot id) and its parent link as a blob only
 * compared byte for byte.  Owned by its struct rbdx_ancestors. */
struct rbdx_ancestor {
  rados_ioctx_t io;          /**< its pool and namespace. */
  int64_t pool_id;
  char *ns;
  char *image_id;
  uint64_t snap_id;
  char *link;
  size_t link_len;
};

/** The recorded ancestors of one clone; zero-initialised = none. */
struct rbdx_ancestors {
  unsigned n;
  struct rbdx_ancestor *a;
};

/** Record the ancestors of @p image (a clone or not) that have a
 * parent, walking up from its parent (rbd_get_parent) through each
 * ancestor's header (cls rbd.parent_get and parent_overlap_get, one
 * round trip each), with I/O contexts made from @p io's cluster.  An
 * image without a parent, or whose parent has none, records nothing.
 * @return 0; a negative errno of librbd or the cluster (nothing
 * recorded then).  Blocks for the round trips.  Thread-safe. */
int rbdx_ancestors_find (struct rbdx_ancestors *an, rados_ioctx_t io,
                         rbd_image_t image);

/** Read every recorded ancestor's parent link again (one round trip
 * each, in order).  @return 0 if all are as recorded; -ENOLINK if one
 * differs or its header is gone (`rbd flatten`, a shrink of that
 * ancestor's head below what it maps); another negative errno when
 * the cluster did not answer (nothing is known).  Thread-safe. */
int rbdx_ancestors_check (const struct rbdx_ancestors *an);

/** Whether @p a and @p b recorded the same ancestors and links. */
bool rbdx_ancestors_equal (const struct rbdx_ancestors *a,
                           const struct rbdx_ancestors *b);

/** Free what @p an holds (its I/O contexts too); @p an is then empty. */
void rbdx_ancestors_free (struct rbdx_ancestors *an);

/** Read @p image_id's parent link as of @p snap (LIBRADOS_SNAP_HEAD for
 * the head) into one read operation @p op: cls rbd.parent_get and
 * rbd.parent_overlap_get, both allowed to fail (their results are part
 * of the link).  After rados_read_op_operate, rbdx_link_pack makes the
 * blob from @p l.  Not thread-safe on one @p l. */
struct rbdx_link_read {
  char in[8];
  char *par, *ovl;
  size_t plen, vlen;
  int prval, vrval;
};
void rbdx_link_add (rados_read_op_t op, uint64_t snap,
                    struct rbdx_link_read *l);

/** The blob of @p l (malloc'd, *@p len bytes) and @p l's buffers freed.
 * @return 0 or -ENOMEM (buffers freed either way). */
int rbdx_link_pack (struct rbdx_link_read *l, char **blob, size_t *len);

/** Free @p l's buffers without packing (an operation that failed). */
void rbdx_link_discard (struct rbdx_link_read *l);

#endif /* RBDX_ANCESTORS_H */

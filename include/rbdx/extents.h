/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: turning librbd's diff callbacks into NBD extents.
 *
 * rbd_diff_iterate2(whole_object=1) reports whole objects, which may
 * start before the requested offset and end after its end, and says
 * nothing about ranges never written.  NBD (doc/proto.md, "BLOCK_STATUS")
 * wants extents that start exactly at the requested offset, in order
 * and without gaps.  This walker clips and fills the gaps with holes.
 * Pure logic: unit tested in tests/unit/test-extents.c.
 */
#ifndef RBDX_EXTENTS_H
#define RBDX_EXTENTS_H

#include <stdbool.h>
#include <stdint.h>

/** Receives each extent in order; return 0 or a negative errno to stop. */
typedef int (*rbdx_extent_fn) (void *arg, uint64_t offset, uint64_t length,
                               bool hole);

/** State of one walk over [pos, end). */
struct rbdx_extent_walk {
  uint64_t pos;        /**< bytes: next offset owed to fn. */
  uint64_t end;        /**< bytes: end of the requested range. */
  rbdx_extent_fn fn;
  void *arg;
};

/** Start a walk over [offset, offset+length). */
void rbdx_extent_walk_init (struct rbdx_extent_walk *w, uint64_t offset,
                            uint64_t length, rbdx_extent_fn fn, void *arg);

/** Feed one reported range (bytes) that is data (@p exists) or a hole.
 * Ranges must come in ascending order; parts before the walk's
 * position or after its end are dropped, a gap before it becomes a hole.
 * @return 0 or fn's negative errno. */
int rbdx_extent_walk_add (struct rbdx_extent_walk *w, uint64_t offset,
                          uint64_t length, bool exists);

/** Report what is left up to the end as a hole.  @return 0 or fn's error. */
int rbdx_extent_walk_finish (struct rbdx_extent_walk *w);

#endif /* RBDX_EXTENTS_H */

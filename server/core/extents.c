/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: extent clipping and gap filling (see extents.h). */
#include "rbdx/extents.h"

void
rbdx_extent_walk_init (struct rbdx_extent_walk *w, uint64_t offset,
                       uint64_t length, rbdx_extent_fn fn, void *arg)
{
  w->pos = offset;
  w->end = offset + length;
  w->fn = fn;
  w->arg = arg;
}

int
rbdx_extent_walk_add (struct rbdx_extent_walk *w, uint64_t offset,
                      uint64_t length, bool exists)
{
  uint64_t start = offset, stop = offset + length;
  int r;

  /* Once the walk has reached its end, a range straddling the end
   * would otherwise clip to a zero-length extent. */
  if (stop <= w->pos || start >= w->end || length == 0 || w->pos >= w->end)
    return 0;
  if (start < w->pos)
    start = w->pos;
  if (stop > w->end)
    stop = w->end;
  if (start > w->pos) {
    r = w->fn (w->arg, w->pos, start - w->pos, true);
    if (r < 0)
      return r;
  }
  r = w->fn (w->arg, start, stop - start, !exists);
  if (r < 0)
    return r;
  w->pos = stop;
  return 0;
}

int
rbdx_extent_walk_finish (struct rbdx_extent_walk *w)
{
  int r = 0;

  if (w->pos < w->end)
    r = w->fn (w->arg, w->pos, w->end - w->pos, true);
  w->pos = w->end;
  return r;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/resize.c: the resize decisions, pure: what a new export
 * size means for the device (see resize.h). */
#include "resize.h"

enum rbdx_resize_action
rbdx_resize_from_file (uint64_t dev_size, uint64_t file_size)
{
  if (!file_size)
    return RBDX_RESIZE_UNKNOWN;
  return file_size == dev_size ? RBDX_RESIZE_NOTHING : RBDX_RESIZE_SET;
}

enum rbdx_resize_action
rbdx_resize_from_export (uint64_t dev_size, uint64_t grow_to, uint64_t export_size)
{
  if (export_size == dev_size || export_size == grow_to)
    return RBDX_RESIZE_NOTHING;
  return export_size < dev_size ? RBDX_RESIZE_SET : RBDX_RESIZE_GROW;
}

bool
rbdx_resize_must_retire (const struct rbdx_copy *c, uint64_t new_size)
{
  return c->size < new_size && !c->retiring;
}

bool
rbdx_resize_growth_done (uint64_t grow_to, const struct rbdx_copy *copies, size_t n,
                         unsigned conns, unsigned dead)
{
  size_t big = 0;

  for (size_t i = 0; i < n; i++)
    if (copies[i].size >= grow_to)
      big++;
  return big >= conns && !dead;
}

uint32_t
rbdx_kernel_block_size (uint32_t min_block)
{
  if (min_block > RBDX_KERNEL_BLOCK_SIZE && min_block <= RBDX_KERNEL_BLOCK_SIZE_MAX &&
      !(min_block & (min_block - 1)))
    return min_block;
  return RBDX_KERNEL_BLOCK_SIZE;
}

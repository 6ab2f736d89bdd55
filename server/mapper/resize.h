/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/resize.h: what to do when the export's size changes, decided.
 *
 * The kernel's NBD driver takes a new device size with
 * NBD_CMD_RECONFIGURE (NBD_ATTR_SIZE_BYTES), but nbdkit bounds each
 * connection by the size it negotiated (server/mapper/README.md):
 *  - image spec: the mapper's own server advertises the largest size on
 *    every connection and publishes the image's size in a file
 *    (size_file=); any change of that value is set at once;
 *  - NBD URI: the server is asked for its size; a shrink is set at once;
 *    growth first retires every connection negotiated at a smaller size
 *    (the supervisor shuts its copy down for writing, the kernel counts
 *    the link dead and gets a socket negotiated at the new size), and the
 *    new size is set once the device has all its connections at it.
 * Also the logical block size the kernel is given.
 *
 * Pure functions: no I/O, thread-safe.
 */
#ifndef RBDX_SERVER_RESIZE_H
#define RBDX_SERVER_RESIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "relink.h"

/** Logical block size given to the kernel: 512 bytes, as rbd-nbd does, so
 *  partition tables and 512-byte I/O keep working. */
#define RBDX_KERNEL_BLOCK_SIZE 512
/** The largest the kernel's NBD driver accepts (the page size). */
#define RBDX_KERNEL_BLOCK_SIZE_MAX 4096

enum rbdx_resize_action {
  RBDX_RESIZE_NOTHING,   /**< the device has that size, or growth runs */
  RBDX_RESIZE_UNKNOWN,   /**< no size published: resizes cannot be followed */
  RBDX_RESIZE_SET,       /**< set the device's size to the new one now */
  RBDX_RESIZE_GROW,      /**< retire the smaller connections first
                              (rbdx_resize_must_retire), then
                              rbdx_resize_growth_done */
};

/** Image spec: the device has @p dev_size bytes, the size file says
 *  @p file_size (0: no file or no number in it).
 *  @return NOTHING, UNKNOWN or SET. */
enum rbdx_resize_action rbdx_resize_from_file (uint64_t dev_size, uint64_t file_size);

/** NBD URI: the device has @p dev_size bytes, growth to @p grow_to runs
 *  (0: none), the server now says @p export_size.
 *  @return NOTHING, SET (a shrink; the caller ends any growth) or GROW. */
enum rbdx_resize_action rbdx_resize_from_export (uint64_t dev_size, uint64_t grow_to,
                                                 uint64_t export_size);

/** Whether copy @p c must be retired for growth to @p new_size: it was
 *  negotiated at a smaller size and is not retiring already. */
bool rbdx_resize_must_retire (const struct rbdx_copy *c, uint64_t new_size);

/** Whether growth to @p grow_to can be finished (the size set): at least
 *  @p conns of the @p n copies negotiated @p grow_to or more, and no dead
 *  link (@p dead) is waiting for a socket. */
bool rbdx_resize_growth_done (uint64_t grow_to, const struct rbdx_copy *copies, size_t n,
                              unsigned conns, unsigned dead);

/** The logical block size for an export whose minimum block size is
 *  @p min_block bytes (NBD_INFO_BLOCK_SIZE; 0 or 1 when none was stated):
 *  min_block when it is a power of two above RBDX_KERNEL_BLOCK_SIZE and at
 *  most RBDX_KERNEL_BLOCK_SIZE_MAX (a LUKS2 image's 4096-byte sectors),
 *  else RBDX_KERNEL_BLOCK_SIZE. */
uint32_t rbdx_kernel_block_size (uint32_t min_block);

#endif

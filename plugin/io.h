/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx plugin: the data path of an NBD connection, one function per NBD
 * command, called by nbdkit (rbdx.c's plugin struct) with the
 * connection's struct rbdx_conn as the handle.
 *
 * Each request is checked against the export's constraints (block size
 * constraints of NBD doc/proto.md; the crypto sector with encryption;
 * the image's current end, EINVAL for reads and trims past it, ENOSPC
 * for writes and zeroes), waits for the image's QoS (qos.h), goes to the
 * right librbd context (the connection's own for reads and block status,
 * the writer's for the rest, conn.h), and is counted (metrics.h).  A
 * cluster error is logged at error level and answered with the NBD
 * error of errors.c's table.  Thread-safe: nbdkit calls these from many
 * worker threads of a connection at once.
 */
#ifndef RBDX_IO_H
#define RBDX_IO_H

#include <stdint.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "rbdx/options.h"

/** nbdkit's .pread, .pwrite, .flush, .trim, .zero and .extents. */
int rbdx_io_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
                   uint32_t flags);
int rbdx_io_pwrite (void *handle, const void *buf, uint32_t count,
                    uint64_t offset, uint32_t flags);
int rbdx_io_flush (void *handle, uint32_t flags);
int rbdx_io_trim (void *handle, uint32_t count, uint64_t offset,
                  uint32_t flags);
int rbdx_io_zero (void *handle, uint32_t count, uint64_t offset,
                  uint32_t flags);
int rbdx_io_extents (void *handle, uint32_t count, uint64_t offset,
                     uint32_t flags, struct nbdkit_extents *extents);

#endif /* RBDX_IO_H */

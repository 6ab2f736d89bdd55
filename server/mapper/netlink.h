/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/netlink.h: the Linux NBD driver's generic netlink interface
 * ("nbd" family, linux/nbd-netlink.h), spoken through libnl-genl-3.
 *
 * Facts relied on (Linux 6.1, drivers/block/nbd.c):
 *  - NBD_CMD_CONNECT takes the sockets (NBD_ATTR_SOCKETS), the size, the
 *    block size, the server's transmission flags, the I/O timeout and the
 *    dead-connection timeout; without NBD_ATTR_INDEX the kernel picks (or
 *    creates) a free device and answers with its NBD_ATTR_INDEX.  A device
 *    that is already connected gives -EBUSY.
 *  - NBD_CMD_RECONFIGURE puts each given socket into the first *dead*
 *    connection slot; a socket for which no slot is dead is dropped
 *    silently.  NBD_ATTR_SIZE_BYTES there changes the device's size.
 *  - A connection that dies (server gone, I/O timeout) is multicast once
 *    on the "nbd_mc_group" group as NBD_CMD_LINK_DEAD with NBD_ATTR_INDEX.
 *    With a dead-connection timeout, requests wait that long for a
 *    reconfigure instead of failing.
 *  - Every command needs CAP_SYS_ADMIN.
 *
 * Errors are negative errno values: the kernel's own error (from the
 * netlink ACK) where there was one, else -ENOENT when the family is
 * missing (no nbd driver loaded), else -EIO for a libnl failure.
 * Not thread-safe: one struct rbdx_nl per thread.
 */
#ifndef RBDX_SERVER_NETLINK_H
#define RBDX_SERVER_NETLINK_H

#include <stdint.h>
#include <stddef.h>

struct rbdx_nl;

/** What NBD_CMD_CONNECT is told about the export and the device. */
struct rbdx_nl_config {
  int index;                  /**< device number, or -1: the kernel picks */
  uint64_t size;              /**< bytes */
  uint64_t block_size;        /**< bytes, a power of two 512..4096 */
  uint64_t server_flags;      /**< NBD_FLAG_* transmission flags */
  uint64_t io_timeout;        /**< seconds, 0 = the kernel's default */
  uint64_t dead_conn_timeout; /**< seconds, 0 = fail I/O at once */
  const char *backend;        /**< NBD_ATTR_BACKEND_IDENTIFIER, or NULL */
};

/** Open a netlink socket and resolve the "nbd" family.
 *  @return 0, -ENOENT (the kernel has no nbd driver loaded), -ENOMEM, -EIO. */
int rbdx_nl_open (struct rbdx_nl **out);

/** Also join the "nbd_mc_group" multicast group (for LINK_DEAD events).
 *  Use a separate handle from the one sending commands.
 *  @return 0 or -EIO. */
int rbdx_nl_subscribe (struct rbdx_nl *nl);

/** The socket's file descriptor, for poll(2).  Owned by @p nl. */
int rbdx_nl_fd (struct rbdx_nl *nl);

void rbdx_nl_close (struct rbdx_nl *nl);

/** NBD_CMD_CONNECT with @p nfds negotiated sockets (the kernel takes its
 *  own reference; the caller still owns @p fds).
 *  @param index_out  the device number used.
 *  @return 0 or a negative errno (-EBUSY: device already connected). */
int rbdx_nl_connect (struct rbdx_nl *nl, const struct rbdx_nl_config *cfg,
                     const int *fds, size_t nfds, int *index_out);

/** NBD_CMD_RECONFIGURE of device @p index: hand over @p nfds sockets for
 *  dead slots (may be 0) and, when @p size is not 0, set the size (bytes).
 *  @p backend must match the one given at connect (or be NULL).
 *  @return 0 or a negative errno (-EINVAL: not connected, or backend
 *  mismatch). */
int rbdx_nl_reconfigure (struct rbdx_nl *nl, int index, const char *backend,
                         const int *fds, size_t nfds, uint64_t size);

/** NBD_CMD_DISCONNECT of device @p index (the kernel sends NBD_CMD_DISC on
 *  each connection and shuts them down).  @return 0 or a negative errno. */
int rbdx_nl_disconnect (struct rbdx_nl *nl, int index);

/** Read the pending multicast messages of a subscribed handle without
 *  blocking and count the NBD_CMD_LINK_DEAD events for device @p index.
 *  @return the count (>= 0) or -EIO. */
int rbdx_nl_read_link_dead (struct rbdx_nl *nl, int index);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/common/nbd-wire.h: the NBD wire constants the built-in engine
 * (server/engine/) speaks, from the NBD protocol (NetworkBlockDevice/nbd
 * doc/proto.md).  Prefixed RBDX_NBD_ so that they never clash with
 * <linux/nbd.h>, which the mapper includes.
 */
#ifndef RBDX_SERVER_COMMON_NBD_WIRE_H
#define RBDX_SERVER_COMMON_NBD_WIRE_H

/* "Oldstyle negotiation": "NBDMAGIC", this magic, the size (64 bits),
 * 32 bits of flags (the transmission flags in the low 16), 124 zero
 * bytes. */
#define RBDX_NBD_INIT_MAGIC       "NBDMAGIC"
#define RBDX_NBD_OLDSTYLE_MAGIC   0x00420281861253ULL
#define RBDX_NBD_OLDSTYLE_SIZE    152

/* "Request message" and "Simple reply message". */
#define RBDX_NBD_REQUEST_MAGIC    0x25609513u
#define RBDX_NBD_REPLY_MAGIC      0x67446698u
#define RBDX_NBD_REQUEST_SIZE     28
#define RBDX_NBD_REPLY_SIZE       16

/* "Request types". */
enum {
  RBDX_NBD_CMD_READ = 0, RBDX_NBD_CMD_WRITE = 1, RBDX_NBD_CMD_DISC = 2,
  RBDX_NBD_CMD_FLUSH = 3, RBDX_NBD_CMD_TRIM = 4,
  RBDX_NBD_CMD_WRITE_ZEROES = 6,
};

/* "Command flags". */
#define RBDX_NBD_CMD_FLAG_FUA        (1 << 0)
#define RBDX_NBD_CMD_FLAG_NO_HOLE    (1 << 1)
#define RBDX_NBD_CMD_FLAG_DF         (1 << 2)
#define RBDX_NBD_CMD_FLAG_REQ_ONE    (1 << 3)
#define RBDX_NBD_CMD_FLAG_FAST_ZERO  (1 << 4)

/* "Transmission flags". */
#define RBDX_NBD_FLAG_HAS_FLAGS          (1 << 0)
#define RBDX_NBD_FLAG_READ_ONLY          (1 << 1)
#define RBDX_NBD_FLAG_SEND_FLUSH         (1 << 2)
#define RBDX_NBD_FLAG_SEND_FUA           (1 << 3)
#define RBDX_NBD_FLAG_SEND_TRIM          (1 << 5)
#define RBDX_NBD_FLAG_SEND_WRITE_ZEROES  (1 << 6)
#define RBDX_NBD_FLAG_CAN_MULTI_CONN     (1 << 8)
#define RBDX_NBD_FLAG_SEND_FAST_ZERO     (1 << 11)

#endif /* RBDX_SERVER_COMMON_NBD_WIRE_H */

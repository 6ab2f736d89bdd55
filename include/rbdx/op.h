/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the operations a request carries out, with their names:
 * one enum and one name table for the request checks, the context's
 * requests (ctx.h), the metrics (metrics.h) and the error logs
 * (errors.h) of both front ends.  Pure: no state.
 */
#ifndef RBDX_OP_H
#define RBDX_OP_H

/** What a request does (NBD doc/proto.md, "Request types": READ,
 * WRITE, TRIM, WRITE_ZEROES, FLUSH, BLOCK_STATUS). */
enum rbdx_op {
  RBDX_OP_READ, RBDX_OP_WRITE, RBDX_OP_TRIM, RBDX_OP_ZERO, RBDX_OP_FLUSH,
  RBDX_OP_BLOCK_STATUS, RBDX_OP_N
};

/** The names of @p op: @p label for the metrics file's op label (read,
 * write, trim, zero, flush, block_status), else the words of logs and
 * messages ("write zeroes", "block status").  "request" for a value
 * out of range.  Thread-safe. */
static inline const char *
rbdx_op_name (enum rbdx_op op, int label)
{
  static const char *const names[RBDX_OP_N][2] = {
    [RBDX_OP_READ] = { "read", "read" },
    [RBDX_OP_WRITE] = { "write", "write" },
    [RBDX_OP_TRIM] = { "trim", "trim" },
    [RBDX_OP_ZERO] = { "write zeroes", "zero" },
    [RBDX_OP_FLUSH] = { "flush", "flush" },
    [RBDX_OP_BLOCK_STATUS] = { "block status", "block_status" },
  };

  return (unsigned) op < RBDX_OP_N ? names[op][label ? 1 : 0] : "request";
}

#endif /* RBDX_OP_H */

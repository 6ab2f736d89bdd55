/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: request checks (see request.h). */
#include <errno.h>
#include <inttypes.h>

#include "rbdx/log.h"

#include "rbdx/request.h"

/* Smaller or unaligned requests would make librbd read, decrypt, modify
 * and write a crypto sector, racing another connection's write to the
 * same sector. */
uint32_t
rbdx_request_min_block (const struct rbdx_ctx *ctx)
{
  return ctx->crypto_sector ? ctx->crypto_sector : RBDX_MIN_BLOCK;
}

int
rbdx_request_check (struct rbdx_ctx *ctx, enum rbdx_op op, uint32_t count,
                    uint64_t offset, bool fast_zero, bool may_hole)
{
  const char *name = rbdx_op_name (op, 0);
  uint32_t s = rbdx_request_min_block (ctx);
  bool data = op == RBDX_OP_READ || op == RBDX_OP_WRITE;

  /* Thick zeroing (NO_HOLE, or notrim=true) writes real zeros: no
   * faster than a write. */
  if (op == RBDX_OP_ZERO && fast_zero && (!may_hole || ctx->notrim))
    return ENOTSUP;
  /* nbdkit 1.32 lets reads and writes through up to 64 MiB: answered
   * with NBD_EINVAL, as the spec allows, rather than a 64 MiB buffer. */
  if (data && count > RBDX_MAX_BLOCK) {
    rbdx_debug ("rbdx: %s: %s of %" PRIu32 " bytes is over the maximum "
                "block size %d", ctx->name, name, count, RBDX_MAX_BLOCK);
    return EINVAL;
  }
  if (op == RBDX_OP_FLUSH)
    return 0;
  if (op != RBDX_OP_BLOCK_STATUS && s > 1 &&
      (offset % s != 0 || count % s != 0)) {
    rbdx_debug ("rbdx: %s: %s of %" PRIu32 " bytes at %" PRIu64 " is not "
                "aligned to the %" PRIu32 "-byte crypto sector", ctx->name,
                name, count, offset, s);
    return EINVAL;
  }
  /* The image shrank after the client negotiated its size, or
   * advertise_size=max: the client's doing, so only a debug line. */
  if (!rbdx_ctx_inside (ctx, op == RBDX_OP_BLOCK_STATUS ? 1 : count, offset)) {
    rbdx_debug ("rbdx: %s: %s of %" PRIu32 " bytes at %" PRIu64 " is past "
                "the image's current end", ctx->name, name, count, offset);
    return op == RBDX_OP_WRITE || op == RBDX_OP_ZERO ? ENOSPC : EINVAL;
  }
  return 0;
}

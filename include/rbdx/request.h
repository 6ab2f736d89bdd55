/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the checks every NBD request passes before it reaches
 * librbd, shared by the nbdkit plugin's data path (io.c) and the
 * mapper's built-in engine (server/engine/reader.c), so both answer a
 * request the same way.
 *
 * NBD doc/proto.md: "Block size constraints" (a request over the
 * maximum or not a multiple of the minimum may be refused with
 * NBD_EINVAL) and "Error values" (a read or trim past the end is
 * EINVAL, a write or write-zeroes ENOSPC).
 */
#ifndef RBDX_REQUEST_H
#define RBDX_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "rbdx/ctx.h"
#include "rbdx/op.h"
#include "rbdx/options.h"

/* Block size constraints.  librbd takes byte-granular requests and does
 * no read-modify-write of its own, so the minimum is 1 (the crypto
 * sector with encryption_format=); 4 KiB is what clients should
 * prefer; the maximum keeps one request well inside nbdkit's 64 MiB
 * limit and bounds the engine's buffer per request. */
#define RBDX_MIN_BLOCK   1
#define RBDX_PREF_BLOCK  4096
#define RBDX_MAX_BLOCK   (32 * 1024 * 1024)

/** The minimum block size of an export served by @p ctx, bytes: the
 * crypto sector of the encryption loaded on it (what was loaded, so
 * encryption_format=luks gets the detected format's; the same for every
 * context of one image), else RBDX_MIN_BLOCK.  Both front ends advertise
 * it.  Thread-safe. */
uint32_t rbdx_request_min_block (const struct rbdx_ctx *ctx);

/** Check a request of @p op over [offset, offset+count) on @p ctx (the
 * context it will go to), as the image is now (ctx->cur_size).  Writes
 * a debug line naming the fault.  The one check of the image's end per
 * request: the context's requests (ctx.h) make none.
 * @param fast_zero  a WRITE_ZEROES with NBD_CMD_FLAG_FAST_ZERO.
 * @param may_hole   a WRITE_ZEROES without NBD_CMD_FLAG_NO_HOLE.
 * @return 0; EINVAL (over the maximum block size, not aligned to the
 *         crypto sector, or a read, trim or block status past the end);
 *         ENOSPC (a write or write-zeroes past the end); ENOTSUP (a fast
 *         zero that must write real zeros: NO_HOLE, or notrim=true).  Positive errno
 *         values, as the NBD error.  Thread-safe. */
int rbdx_request_check (struct rbdx_ctx *ctx, enum rbdx_op op,
                        uint32_t count, uint64_t offset, bool fast_zero,
                        bool may_hole);

#endif /* RBDX_REQUEST_H */

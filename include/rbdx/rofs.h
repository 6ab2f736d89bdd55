/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: writes that librbd failed as read-only (EROFS), and the
 * handle that stays so after the image became writable again.
 *
 * librbd decides at a refresh of the image whether a handle may write
 * (not when the image is non-primary after `rbd mirror image demote`,
 * nor while it is a migration source) and then fails every write with
 * EROFS at its first dispatch layer, before the layers that would
 * refresh the image.  A handle that refreshed while `rbd mirror image
 * promote` was under way (on the header update of the promote's primary
 * snapshot, before the promote cleared the image's non-primary flag,
 * which it does without a notification) kept failing every write for
 * as long as writes were tried, while a handle opened after the promote
 * wrote (Ceph 16.2.15; case C78 in tests/README.md).
 *
 * So a context whose writes fail with EROFS has its update thread
 * (updates.h) notify the image header with an empty message, at most
 * once a second: librbd (ImageWatcher::handle_notify) and the kernel
 * client (rbd_watch_cb in drivers/block/rbd.c) take an empty
 * notification for a header update, the form older clients sent, so
 * every handle of the image refreshes before its next request, this
 * one too.  While the image is still read-only the refresh finds it so
 * and writes keep failing; after the promote the next write succeeds.
 * The price: while writes fail so, each second one notification that
 * every watcher of the image (other clients, rbd-mirror) answers with a
 * refresh, a header read each.
 */
#ifndef RBDX_ROFS_H
#define RBDX_ROFS_H

#include <sys/types.h>

#include "rbdx/ctx.h"
#include "rbdx/op.h"

/** Note the result of a write-type request (write, zero, trim, flush)
 * of @p ctx: @p r is librbd's (bytes or a negative errno).  -EROFS sets
 * ctx->write_rofs and, at most once a second and only for a context
 * with an update watch, starts an update pass (rbdx_updates_note) that
 * calls rbdx_rofs_refresh; a write, zero or trim that succeeded clears
 * ctx->write_rofs.  Never waits: safe on librbd's completion threads.
 * Thread-safe. */
void rbdx_rofs_result (struct rbdx_ctx *ctx, enum rbdx_op op, ssize_t r);

/** From the context's update pass (ctx.c), before it refreshes the
 * image: if a write failed with EROFS since the last notification and
 * that was at least a second ago, notify the image header (empty
 * message, rados_notify2, up to 5 s for the watchers' answers) so that
 * librbd refreshes every handle of the image.  A failed notification
 * is logged at error level (at most once a second, as the attempts).
 * Only from the update pass of @p ctx (not concurrent with itself). */
void rbdx_rofs_refresh (struct rbdx_ctx *ctx);

#endif /* RBDX_ROFS_H */

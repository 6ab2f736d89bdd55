/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: writes librbd failed as read-only (see rofs.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "rbdx/log.h"

#include "rbdx/clock.h"
#include "rbdx/rofs.h"
#include "rbdx/updates.h"

#define SECOND_NS 1000000000ull

void
rbdx_rofs_result (struct rbdx_ctx *ctx, enum rbdx_op op, ssize_t r)
{
  uint64_t now, last;

  if (r >= 0) {
    if (op != RBDX_OP_FLUSH && atomic_load (&ctx->write_rofs))
      atomic_store (&ctx->write_rofs, false);
    return;
  }
  if (r != -EROFS)
    return;
  atomic_store (&ctx->write_rofs, true);
  atomic_store (&ctx->rofs_retry, true);
  if (!ctx->watching)
    return;
  /* Not a pass per failed write: a client that keeps writing to a
   * non-primary image would keep the update thread busy. */
  now = rbdx_clock_ns ();
  last = atomic_load (&ctx->rofs_note_ns);
  if (last && now - last < SECOND_NS)
    return;
  if (atomic_compare_exchange_strong (&ctx->rofs_note_ns, &last, now))
    rbdx_updates_note (&ctx->upd);
}

void
rbdx_rofs_refresh (struct rbdx_ctx *ctx)
{
  char oid[sizeof "rbd_header." + RBDX_IMAGE_ID_MAX];
  uint64_t now = rbdx_clock_ns ();
  int r;

  /* Not for a header update without a failed write (the notification's
   * own among them), nor twice in a second: the next EROFS starts a
   * pass again. */
  if (!atomic_load (&ctx->write_rofs) || !atomic_load (&ctx->rofs_retry) ||
      (ctx->rofs_kick_ns && now - ctx->rofs_kick_ns < SECOND_NS))
    return;
  atomic_store (&ctx->rofs_retry, false);
  ctx->rofs_kick_ns = now;
  snprintf (oid, sizeof oid, "rbd_header.%s", ctx->ident.image_id);
  /* A watcher that does not answer (a client gone without closing)
   * holds this pass for the 5 s. */
  r = rados_notify2 (ctx->io, oid, "", 0, 5000, NULL, NULL);
  if (r < 0)
    rbdx_error ("rbdx: %s: cannot notify the image header after its "
                "writes failed as read-only: %s", ctx->name, strerror (-r));
  else
    rbdx_debug ("rbdx: %s: image header notified after its writes failed "
                "as read-only", ctx->name);
}

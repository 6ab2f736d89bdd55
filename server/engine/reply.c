/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/reply.c: what librbd's callback runs for an engine
 * connection (reply.h): a request's completion and its reply.
 *
 * librbd's callback writes the reply itself with a non-blocking send
 * under the connection's lock; whatever the socket does not take is
 * queued, and the reader thread (reader.c), woken through the eventfd,
 * writes the rest when the socket has room.  So a full socket never
 * blocks librbd's callback thread, and replies never interleave.  The
 * eventfd is written only when the reader must act (queued output, or it
 * waits for requests to end): a write per reply would be the hand-off
 * the engine avoids.
 *
 * A write with FUA on a context with a cache (rbd_cache forced on) is
 * followed by a flush, which the callback hands back to the reader
 * thread (a librbd callback must not submit and wait).
 */
#include <string.h>

#include "rbdx/errors.h"
#include "rbdx/metrics.h"

#include "econn.h"
#include "reply.h"

/* The end of a request: the reply goes out, or is queued.  Any thread. */
void
econn_reply (struct ereq *rq, int nbd_err)
{
  struct econn *ec = rq->ec;
  bool queued = false;

  if (!rq->uncounted)
    rbdx_metrics_end (&ec->conn->metrics, rq->op, rq->bytes, rq->t0, nbd_err);
  else
    rbdx_metrics_forget (&ec->conn->metrics);   /* out of in flight, too */
  put32 (rq->hdr, RBDX_NBD_REPLY_MAGIC);
  put32 (rq->hdr + 4, (uint32_t) nbd_err);
  put64 (rq->hdr + 8, rq->handle);
  if (rq->op == RBDX_OP_READ && nbd_err == 0) {
    memcpy (rq->buf, rq->hdr, RBDX_NBD_REPLY_SIZE);   /* header before the data */
    rq->out = rq->buf;
    rq->out_len = RBDX_NBD_REPLY_SIZE + rq->bytes;
  }
  else {
    rq->out = rq->hdr;
    rq->out_len = RBDX_NBD_REPLY_SIZE;
  }

  pthread_mutex_lock (&ec->lock);
  if (!ec->dead && (ec->out_head || !econn_send_some (ec, rq))) {
    rq->next = NULL;
    if (ec->out_tail)
      ec->out_tail->next = rq;
    else
      ec->out_head = rq;
    ec->out_tail = rq;
    queued = true;
  }
  else
    econn_retire (ec, rq);
  /* Wake the reader only when it has to act: queued output, or it waits
   * for room in flight or to end (an eventfd write per reply would cost
   * a wake-up per request, the hand-off this engine avoids).  Still
   * under the lock: once the reader sees nothing in flight it may free
   * ec, so ec must not be touched after the unlock. */
  if (queued || ec->want_wake)
    econn_wake (ec);
  pthread_mutex_unlock (&ec->lock);
  if (!queued)
    ereq_free (rq);
}

/* librbd's callback (or the submitting thread for a request refused
 * before librbd). */
static void
aio_done (struct rbdx_aio *a, int r)
{
  struct ereq *rq = (struct ereq *) a;
  struct econn *ec = rq->ec;

  if (rq->gated) {            /* the write is out of librbd */
    rq->gated = false;
    rbdx_quiesce_write_end (ec->conn->gate);
  }
  if (r < 0) {
    rbdx_log_request_error (a->ctx->name, rbdx_op_name (rq->op, 0), a->offset,
                            a->count, r);
    econn_reply (rq, rbdx_nbd_error (rq->op, r));
    return;
  }
  /* FUA on a cached context: the flush is submitted by the reader. */
  if ((rq->flags & RBDX_NBD_CMD_FLAG_FUA) && a->op != RBDX_OP_FLUSH &&
      a->ctx->cache_on) {
    pthread_mutex_lock (&ec->lock);
    rq->next = ec->deferred;
    ec->deferred = rq;
    econn_wake (ec);
    pthread_mutex_unlock (&ec->lock);
    return;
  }
  econn_reply (rq, 0);
}

void
econn_submit (struct econn *ec, struct ereq *rq, struct rbdx_ctx *ctx)
{
  rq->aio.done = aio_done;
  rbdx_ctx_aio (ctx, &rq->aio);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/reply.c: the reply side of an engine connection
 * (engine-conn.h).
 *
 * librbd's callback writes the reply itself with a non-blocking send
 * under the connection's send lock; whatever the socket does not take is
 * queued, and the reader thread, woken through the eventfd, writes the
 * rest when the socket has room.  So a full socket never blocks librbd's
 * callback thread, and replies never interleave.  The eventfd is written
 * only when the reader must act (queued output, or it waits for requests
 * to end): a write per reply would be the hand-off the engine avoids.
 *
 * A write with FUA on a context with a cache (rbd_cache forced on) is
 * followed by a flush, which the callback hands back to the reader
 * thread (a librbd callback must not submit and wait).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "econn.h"

void
econn_wake (struct econn *ec)
{
  uint64_t one = 1;
  ssize_t r = write (ec->efd, &one, sizeof one);
  (void) r;                   /* a full counter wakes the reader anyway */
}

void
ereq_free (struct ereq *rq)
{
  free (rq->buf);
  free (rq);
}

/* Send what the socket takes now; under ec->lock.  true when all of
 * @p rq went out (or the socket is dead). */
static bool
send_some (struct econn *ec, struct ereq *rq)
{
  while (rq->out_off < rq->out_len) {
    ssize_t n = send (ec->fd, rq->out + rq->out_off, rq->out_len - rq->out_off,
                      MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return false;
      ec->dead = true;
      return true;
    }
    rq->out_off += (size_t) n;
  }
  return true;
}

/* A request leaves the in-flight count once its reply is wholly sent
 * (or dropped with a dead socket), so queued replies count against the
 * in-flight limit and a client that reads no replies stops the reader.
 * Under ec->lock. */
static void
retire (struct econn *ec, struct ereq *rq)
{
  ec->inflight--;
  ec->inflight_bytes -= rq->mem;
}

/* The end of a request: the reply goes out, or is queued.  Any thread. */
void
econn_reply (struct ereq *rq, int nbd_err)
{
  struct econn *ec = rq->ec;
  bool queued = false;

  if (!rq->uncounted)
    rbdx_metrics_end (&ec->conn->metrics, rq->op, rq->bytes, rq->t0, nbd_err);
  put32 (rq->hdr, NBD_REPLY_MAGIC);
  put32 (rq->hdr + 4, (uint32_t) nbd_err);
  put64 (rq->hdr + 8, rq->handle);
  if (rq->op == RBDX_OP_READ && nbd_err == 0) {
    memcpy (rq->buf, rq->hdr, NBD_REPLY_SIZE);   /* header before the data */
    rq->out = rq->buf;
    rq->out_len = NBD_REPLY_SIZE + rq->bytes;
  }
  else {
    rq->out = rq->hdr;
    rq->out_len = NBD_REPLY_SIZE;
  }

  pthread_mutex_lock (&ec->lock);
  if (!ec->dead && (ec->out_head || !send_some (ec, rq))) {
    rq->next = NULL;
    if (ec->out_tail)
      ec->out_tail->next = rq;
    else
      ec->out_head = rq;
    ec->out_tail = rq;
    queued = true;
  }
  else
    retire (ec, rq);
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

static const char *
op_name (enum rbdx_op op)
{
  switch (op) {
  case RBDX_OP_READ: return "read";
  case RBDX_OP_WRITE: return "write";
  case RBDX_OP_TRIM: return "trim";
  case RBDX_OP_ZERO: return "write zeroes";
  case RBDX_OP_FLUSH: return "flush";
  default: return "request";
  }
}

/* librbd's callback (or the submitting thread for a request refused
 * before librbd). */
static void
aio_done (struct rbdx_aio *a, int r)
{
  struct ereq *rq = (struct ereq *) a;
  struct econn *ec = rq->ec;

  if (r < 0) {
    rbdx_log_request_error (a->ctx->name, op_name (rq->op), a->offset,
                            a->count, r);
    econn_reply (rq, rbdx_nbd_error (r));
    return;
  }
  /* FUA on a cached context: the flush is submitted by the reader. */
  if ((rq->flags & NBD_CMD_FLAG_FUA) && a->op != RBDX_AIO_FLUSH &&
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

/* Flushes owed for FUA (aio_done), submitted from the reader thread. */
void
econn_run_deferred (struct econn *ec)
{
  struct ereq *list, *rq;

  pthread_mutex_lock (&ec->lock);
  list = ec->deferred;
  ec->deferred = NULL;
  pthread_mutex_unlock (&ec->lock);
  while ((rq = list)) {
    list = rq->next;
    rq->aio.op = RBDX_AIO_FLUSH;
    econn_submit (ec, rq, ec->conn->wctx);
  }
}

/* Write queued output while the socket takes it; reader thread. */
void
econn_flush_output (struct econn *ec)
{
  struct ereq *done = NULL, *rq;

  pthread_mutex_lock (&ec->lock);
  while ((rq = ec->out_head) && send_some (ec, rq)) {
    ec->out_head = rq->next;
    if (!ec->out_head)
      ec->out_tail = NULL;
    retire (ec, rq);
    rq->next = done;
    done = rq;
  }
  if (ec->dead) {
    while ((rq = ec->out_head)) {
      ec->out_head = rq->next;
      retire (ec, rq);
      rq->next = done;
      done = rq;
    }
    ec->out_tail = NULL;
  }
  pthread_mutex_unlock (&ec->lock);
  while ((rq = done)) {
    done = rq->next;
    ereq_free (rq);
  }
}

/* Wait until the socket is readable (when @p want_in), the eventfd
 * fires, queued output can move or @p timeout_ms passed (-1: no limit);
 * does the output and deferred work.  @return false when the socket
 * failed. */
bool
econn_wait_io (struct econn *ec, bool want_in, int timeout_ms)
{
  struct pollfd p[2];
  bool out, dead;
  uint64_t v;

  pthread_mutex_lock (&ec->lock);
  out = ec->out_head != NULL;
  dead = ec->dead;
  pthread_mutex_unlock (&ec->lock);
  /* A dead socket is left out: its POLLHUP would make this spin while
   * requests finish in librbd. */
  p[0].fd = dead ? -1 : ec->fd;
  p[0].events = (short) ((want_in ? POLLIN : 0) | (out ? POLLOUT : 0));
  p[0].revents = 0;
  p[1].fd = ec->efd;
  p[1].events = POLLIN;
  if (poll (p, 2, timeout_ms) < 0 && errno != EINTR)
    return false;
  if (p[1].revents & POLLIN) {
    ssize_t r = read (ec->efd, &v, sizeof v);
    (void) r;
  }
  /* The peer is gone (and no data is wanted): nothing can be sent. */
  if (!want_in && (p[0].revents & (POLLHUP | POLLERR))) {
    pthread_mutex_lock (&ec->lock);
    ec->dead = true;
    pthread_mutex_unlock (&ec->lock);
  }
  econn_run_deferred (ec);
  if (out || (p[0].revents & (POLLOUT | POLLHUP | POLLERR)))
    econn_flush_output (ec);
  pthread_mutex_lock (&ec->lock);
  dead = ec->dead;
  pthread_mutex_unlock (&ec->lock);
  return !dead && !(p[0].revents & POLLNVAL);
}

/* Read exactly @p len bytes into @p buf (the rest of a write's payload).
 * @return false on EOF or error. */
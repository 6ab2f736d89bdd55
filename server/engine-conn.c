/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine-conn.c: the request side of an engine connection
 * (engine.h, engine-conn.h).
 *
 * A reader thread per connection reads what the socket has, parses every
 * complete request in its buffer and submits each with rbdx_ctx_aio
 * (QoS may make it sleep first: back-pressure on this connection only);
 * the replies are engine-reply.c's.  When the client disconnects, the
 * socket fails or the engine stops, the reader waits until every request
 * in flight was answered, then closes the connection.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine.h"
#include "engine-conn.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct econn *reg;
static atomic_bool stopping;

bool
rbdx_engine_stopping (void)
{
  return atomic_load (&stopping);
}

uint16_t
rbdx_engine_flags (const struct rbdx_conn *conn)
{
  uint16_t f = RBDX_NBD_FLAG_HAS_FLAGS | RBDX_NBD_FLAG_SEND_FLUSH |
               RBDX_NBD_FLAG_SEND_FUA;

  if (conn->ctx->readonly)
    f |= RBDX_NBD_FLAG_READ_ONLY;
  else
    f |= RBDX_NBD_FLAG_SEND_TRIM | RBDX_NBD_FLAG_SEND_WRITE_ZEROES |
         RBDX_NBD_FLAG_SEND_FAST_ZERO;
  if (conn->multi_conn)
    f |= RBDX_NBD_FLAG_CAN_MULTI_CONN;
  return f;
}
static bool
read_full (struct econn *ec, unsigned char *buf, size_t len)
{
  while (len > 0) {
    ssize_t n = recv (ec->fd, buf, len, MSG_DONTWAIT);
    if (n > 0) {
      buf += n;
      len -= (size_t) n;
      continue;
    }
    if (n == 0)
      return false;
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return false;
    if (!econn_wait_io (ec, true))
      return false;
  }
  return true;
}

static bool
room (struct econn *ec)
{
  bool ok;

  pthread_mutex_lock (&ec->lock);
  ok = ec->inflight < MAX_INFLIGHT && ec->inflight_bytes < MAX_INFLIGHT_BYTES;
  ec->want_wake = !ok;
  pthread_mutex_unlock (&ec->lock);
  return ok;
}

static void
account (struct econn *ec, struct ereq *rq)
{
  pthread_mutex_lock (&ec->lock);
  ec->inflight++;
  ec->inflight_bytes += rq->bytes;
  pthread_mutex_unlock (&ec->lock);
}

/* Refuse @p rq with @p nbd_err before librbd (the checks of request.h,
 * a read-only export, an unknown command). */
static void
refuse (struct ereq *rq, int nbd_err)
{
  econn_reply (rq, nbd_err);
}

/* One request, header already parsed; for a write, the payload is in
 * rq->buf.  Reader thread. */
static void
dispatch (struct econn *ec, struct ereq *rq, uint16_t type, uint64_t offset,
          uint32_t count)
{
  struct rbdx_conn *c = ec->conn;
  bool write = type != NBD_CMD_READ && type != NBD_CMD_FLUSH;
  struct rbdx_ctx *ctx = type == NBD_CMD_READ ? c->rctx : c->wctx;
  int e;

  rq->aio.offset = offset;
  rq->aio.count = count;
  rq->aio.fua = rq->flags & NBD_CMD_FLAG_FUA;
  rq->aio.may_hole = !(rq->flags & NBD_CMD_FLAG_NO_HOLE);
  account (ec, rq);
  if (write && c->ctx->readonly) {
    refuse (rq, EPERM);
    return;
  }
  if (type == NBD_CMD_FLUSH) {
    rq->aio.op = RBDX_AIO_FLUSH;
    if (c->ctx->readonly)
      refuse (rq, 0);
    else
      econn_submit (ec, rq, ctx);
    return;
  }
  e = rbdx_request_check (ctx, rq->op, count, offset,
                          rq->flags & NBD_CMD_FLAG_FAST_ZERO,
                          rq->aio.may_hole);
  if (e) {
    refuse (rq, e);
    return;
  }
  if (rbdx_qos_wait (c->qos, write, count, &c->metrics.qos_wait_ns) < 0) {
    refuse (rq, ESHUTDOWN);
    return;
  }
  econn_submit (ec, rq, ctx);
}

/* Parse one request at @p p (NBD_REQUEST_SIZE bytes).  A write's
 * payload: the @p avail bytes after the header, then the socket.
 * @return bytes of @p p consumed, 0 to stop (disconnect, bad request,
 * socket failure). */
static size_t
handle (struct econn *ec, const unsigned char *p, size_t avail)
{
  uint16_t flags = (uint16_t) (p[4] << 8 | p[5]);
  uint16_t type = (uint16_t) (p[6] << 8 | p[7]);
  uint64_t handle = get64 (p + 8), offset = get64 (p + 16);
  uint32_t count = get32 (p + 24);
  struct ereq *rq;
  size_t used = NBD_REQUEST_SIZE, have;

  if (get32 (p) != NBD_REQUEST_MAGIC) {
    rbdx_error ("rbdx: %s: bad request magic 0x%08" PRIx32 ": closing the "
                "connection", ec->conn->ctx->name, get32 (p));
    return 0;
  }
  if (type == NBD_CMD_DISC)
    return 0;
  /* A write's payload must be taken off the socket whatever the answer:
   * a payload over the maximum block size cannot be, so the connection
   * ends (the kernel never sends one: its request size limit is lower). */
  if (type == NBD_CMD_WRITE && count > RBDX_MAX_BLOCK) {
    rbdx_error ("rbdx: %s: write of %" PRIu32 " bytes is over the maximum "
                "block size: closing the connection", ec->conn->ctx->name,
                count);
    return 0;
  }
  rq = calloc (1, sizeof *rq);
  if (!rq)
    return 0;
  rq->ec = ec;
  rq->handle = handle;
  rq->flags = flags;
  rq->t0 = rbdx_metrics_begin (&ec->conn->metrics);
  switch (type) {
  case NBD_CMD_READ: rq->op = RBDX_OP_READ; rq->aio.op = RBDX_AIO_READ; break;
  case NBD_CMD_WRITE: rq->op = RBDX_OP_WRITE; rq->aio.op = RBDX_AIO_WRITE; break;
  case NBD_CMD_FLUSH: rq->op = RBDX_OP_FLUSH; rq->aio.op = RBDX_AIO_FLUSH; break;
  case NBD_CMD_TRIM: rq->op = RBDX_OP_TRIM; rq->aio.op = RBDX_AIO_DISCARD; break;
  case NBD_CMD_WRITE_ZEROES: rq->op = RBDX_OP_ZERO; rq->aio.op = RBDX_AIO_ZERO; break;
  default:
    /* Not advertised (NBD_CMD_CACHE, NBD_CMD_BLOCK_STATUS without
     * structured replies, ...): NBD_EINVAL. */
    rq->op = RBDX_OP_READ;
    account (ec, rq);
    refuse (rq, EINVAL);
    return used;
  }
  if (type == NBD_CMD_READ) {
    if (count <= RBDX_MAX_BLOCK) {
      rq->buf = malloc (NBD_REPLY_SIZE + (size_t) count);
      if (!rq->buf) {
        account (ec, rq);
        refuse (rq, ENOMEM);
        return used;
      }
      rq->aio.buf = rq->buf + NBD_REPLY_SIZE;
      rq->bytes = count;
    }
  }
  else if (type == NBD_CMD_WRITE) {
    rq->buf = malloc (count ? count : 1);
    if (!rq->buf) {
      free (rq);
      return 0;
    }
    have = avail < count ? avail : count;
    memcpy (rq->buf, p + NBD_REQUEST_SIZE, have);
    used += have;
    if (have < count && !read_full (ec, rq->buf + have, count - have)) {
      ereq_free (rq);
      return 0;
    }
    rq->aio.buf = rq->buf;
    rq->bytes = count;
  }
  else
    rq->bytes = type == NBD_CMD_FLUSH ? 0 : count;
  /* The reply of a refused read must not carry data: bytes stays the
   * metrics' count, out_len is set by reply(). */
  dispatch (ec, rq, type, offset, count);
  return used;
}

/* The reader thread: read, parse, submit; at the end wait until every
 * request was answered, then close. */
static void *
reader (void *arg)
{
  struct econn *ec = arg;
  unsigned char *buf = malloc (RECV_BUF);
  size_t have = 0;
  bool go = buf != NULL;

  while (go) {
    ssize_t n;
    size_t off = 0;

    if (!room (ec)) {
      go = econn_wait_io (ec, false);
      continue;
    }
    n = recv (ec->fd, buf + have, RECV_BUF - have, MSG_DONTWAIT);
    if (n == 0)
      break;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        go = econn_wait_io (ec, true);
        continue;
      }
      break;
    }
    have += (size_t) n;
    while (go && have - off >= NBD_REQUEST_SIZE) {
      const unsigned char *p = buf + off;
      /* A write: its payload is read here whole, so the buffer only
       * ever holds headers and small payloads. */
      size_t used = handle (ec, p, have - off - NBD_REQUEST_SIZE);
      if (used == 0)
        go = false;
      off += used;
    }
    memmove (buf, buf + off, have - off);
    have -= off;
  }
  free (buf);

  /* Let nothing more in, answer what is in flight, then close. */
  shutdown (ec->fd, SHUT_RD);
  for (;;) {
    bool idle;

    pthread_mutex_lock (&ec->lock);
    ec->want_wake = true;
    idle = ec->inflight == 0 && ec->deferred == NULL &&
           (ec->out_head == NULL || ec->dead);
    pthread_mutex_unlock (&ec->lock);
    if (idle)
      break;
    if (!econn_wait_io (ec, false)) {
      pthread_mutex_lock (&ec->lock);
      ec->dead = true;
      pthread_mutex_unlock (&ec->lock);
      econn_flush_output (ec);      /* frees what was queued */
    }
  }
  econn_flush_output (ec);
  pthread_mutex_lock (&ec->lock);
  ec->closed = true;
  close (ec->fd);
  pthread_mutex_unlock (&ec->lock);
  rbdx_conn_close (ec->conn);
  ec->conn = NULL;
  atomic_store (&ec->finished, true);
  return NULL;
}

/* Join and free connections whose thread is done; with @p all, wait
 * for every one. */
static void
reap (bool all)
{
  struct econn **pp, *ec;

  pthread_mutex_lock (&reg_lock);
  pp = &reg;
  while ((ec = *pp)) {
    if (all || atomic_load (&ec->finished)) {
      *pp = ec->next;
      pthread_join (ec->thread, NULL);
      close (ec->efd);
      pthread_mutex_destroy (&ec->lock);
      free (ec);
    }
    else
      pp = &ec->next;
  }
  pthread_mutex_unlock (&reg_lock);
}

int
rbdx_engine_serve (int fd, struct rbdx_conn *conn)
{
  struct econn *ec;
  int r;

  reap (false);
  ec = calloc (1, sizeof *ec);
  if (!ec)
    return -ENOMEM;
  ec->fd = fd;
  ec->conn = conn;
  ec->efd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (ec->efd < 0) {
    r = -errno;
    free (ec);
    return r;
  }
  pthread_mutex_init (&ec->lock, NULL);
  pthread_mutex_lock (&reg_lock);
  r = -pthread_create (&ec->thread, NULL, reader, ec);
  if (r == 0) {
    ec->next = reg;
    reg = ec;
  }
  pthread_mutex_unlock (&reg_lock);
  if (r < 0) {
    close (ec->efd);
    pthread_mutex_destroy (&ec->lock);
    free (ec);
  }
  return r;
}

void
rbdx_engine_stop_all (void)
{
  struct econn *ec;

  atomic_store (&stopping, true);
  pthread_mutex_lock (&reg_lock);
  for (ec = reg; ec; ec = ec->next) {
    pthread_mutex_lock (&ec->lock);
    if (!ec->closed)
      shutdown (ec->fd, SHUT_RD);
    pthread_mutex_unlock (&ec->lock);
    econn_wake (ec);
  }
  pthread_mutex_unlock (&reg_lock);
  reap (true);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine-conn.c: one connection of the built-in engine (engine.h).
 *
 * A reader thread per connection reads what the socket has, parses every
 * complete request in its buffer and submits each with rbdx_ctx_aio
 * (QoS may make it sleep first: back-pressure on this connection only).
 * librbd's callback writes the reply itself with a non-blocking send
 * under the connection's send lock; whatever the socket does not take
 * is queued, and the reader thread, woken through an eventfd, writes
 * the rest when the socket has room.  So a full socket never blocks
 * librbd's callback thread, and replies never interleave.
 *
 * A write with FUA on a context with a cache (rbd_cache forced on) is
 * followed by a flush, which the callback hands back to the reader
 * thread (a librbd callback must not submit and wait).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rbdx/core.h"

#include "engine.h"

/* NBD doc/proto.md, "Request message" and "Simple reply message". */
#define NBD_REQUEST_MAGIC 0x25609513u
#define NBD_REPLY_MAGIC   0x67446698u
#define NBD_REQUEST_SIZE  28
#define NBD_REPLY_SIZE    16
enum {
  NBD_CMD_READ = 0, NBD_CMD_WRITE = 1, NBD_CMD_DISC = 2, NBD_CMD_FLUSH = 3,
  NBD_CMD_TRIM = 4, NBD_CMD_WRITE_ZEROES = 6,
};
#define NBD_CMD_FLAG_FUA       (1 << 0)
#define NBD_CMD_FLAG_NO_HOLE   (1 << 1)
#define NBD_CMD_FLAG_FAST_ZERO (1 << 4)

#define RECV_BUF (256 * 1024)
/* In flight per connection before the reader stops reading: the kernel
 * sends at most its queue depth (128) anyway; this bounds memory when a
 * client sends large writes. */
#define MAX_INFLIGHT 256
#define MAX_INFLIGHT_BYTES (128u * 1024 * 1024)

struct econn;

struct ereq {
  struct rbdx_aio aio;        /* first: the callback's argument */
  struct econn *ec;
  struct ereq *next;          /* output queue or deferred list */
  enum rbdx_op op;
  uint64_t handle;            /* the client's cookie, echoed */
  uint16_t flags;
  uint64_t t0;                /* rbdx_metrics_begin */
  uint32_t bytes;             /* for the metrics and in-flight count */
  unsigned char *out;         /* reply: header (+ data for a read) */
  size_t out_len, out_off;
  unsigned char hdr[NBD_REPLY_SIZE];
  unsigned char *buf;         /* read: out; write: the payload */
};

struct econn {
  int fd;
  int efd;                    /* wakes the reader: output, deferred, done */
  struct rbdx_conn *conn;
  pthread_t thread;
  struct econn *next;         /* registry (lock below) */
  pthread_mutex_t lock;       /* out queue, deferred, counters, dead */
  struct ereq *out_head, *out_tail;
  struct ereq *deferred;
  unsigned inflight;
  uint64_t inflight_bytes;
  bool dead;                  /* the socket failed: replies are dropped */
  bool want_wake;             /* the reader waits for requests to end */
  bool closed;                /* fd closed (stop_all must not touch it) */
  atomic_bool finished;       /* the thread is done with everything */
};

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

static void
put32 (unsigned char *p, uint32_t v)
{
  p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v;
}

static void
put64 (unsigned char *p, uint64_t v)
{
  put32 (p, v >> 32);
  put32 (p + 4, (uint32_t) v);
}

static uint32_t
get32 (const unsigned char *p)
{
  return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 |
         (uint32_t) p[2] << 8 | p[3];
}

static uint64_t
get64 (const unsigned char *p)
{
  return (uint64_t) get32 (p) << 32 | get32 (p + 4);
}

static void
wake (struct econn *ec)
{
  uint64_t one = 1;
  ssize_t r = write (ec->efd, &one, sizeof one);
  (void) r;                   /* a full counter wakes the reader anyway */
}

static void
free_req (struct ereq *rq)
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

/* The end of a request: the reply goes out (or is queued) and the
 * request leaves the in-flight count.  Any thread. */
static void
reply (struct ereq *rq, int nbd_err)
{
  struct econn *ec = rq->ec;
  bool queued = false, need;

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
  ec->inflight--;
  ec->inflight_bytes -= rq->bytes;
  /* Wake the reader only when it has to act: queued output, or it waits
   * for room in flight or to end (an eventfd write per reply would cost
   * a wake-up per request, the hand-off this engine avoids). */
  need = queued || ec->want_wake;
  pthread_mutex_unlock (&ec->lock);
  if (!queued)
    free_req (rq);
  if (need)
    wake (ec);
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
    reply (rq, rbdx_nbd_error (r));
    return;
  }
  /* FUA on a cached context: the flush is submitted by the reader. */
  if ((rq->flags & NBD_CMD_FLAG_FUA) && a->op != RBDX_AIO_FLUSH &&
      a->ctx->cache_on) {
    pthread_mutex_lock (&ec->lock);
    rq->next = ec->deferred;
    ec->deferred = rq;
    pthread_mutex_unlock (&ec->lock);
    wake (ec);
    return;
  }
  reply (rq, 0);
}

static void
submit (struct econn *ec, struct ereq *rq, struct rbdx_ctx *ctx)
{
  rq->aio.done = aio_done;
  rbdx_ctx_aio (ctx, &rq->aio);
}

/* Flushes owed for FUA (aio_done), submitted from the reader thread. */
static void
run_deferred (struct econn *ec)
{
  struct ereq *list, *rq;

  pthread_mutex_lock (&ec->lock);
  list = ec->deferred;
  ec->deferred = NULL;
  pthread_mutex_unlock (&ec->lock);
  while ((rq = list)) {
    list = rq->next;
    rq->aio.op = RBDX_AIO_FLUSH;
    submit (ec, rq, ec->conn->wctx);
  }
}

/* Write queued output while the socket takes it; reader thread. */
static void
flush_output (struct econn *ec)
{
  struct ereq *done = NULL, *rq;

  pthread_mutex_lock (&ec->lock);
  while ((rq = ec->out_head) && send_some (ec, rq)) {
    ec->out_head = rq->next;
    if (!ec->out_head)
      ec->out_tail = NULL;
    rq->next = done;
    done = rq;
  }
  if (ec->dead) {
    while ((rq = ec->out_head)) {
      ec->out_head = rq->next;
      rq->next = done;
      done = rq;
    }
    ec->out_tail = NULL;
  }
  pthread_mutex_unlock (&ec->lock);
  while ((rq = done)) {
    done = rq->next;
    free_req (rq);
  }
}

/* Wait until the socket is readable (when @p want_in), the eventfd
 * fires or queued output can move; does the output and deferred work.
 * @return false when the socket failed. */
static bool
wait_io (struct econn *ec, bool want_in)
{
  struct pollfd p[2];
  bool out;
  uint64_t v;

  pthread_mutex_lock (&ec->lock);
  out = ec->out_head != NULL;
  pthread_mutex_unlock (&ec->lock);
  p[0].fd = ec->fd;
  p[0].events = (short) ((want_in ? POLLIN : 0) | (out ? POLLOUT : 0));
  p[1].fd = ec->efd;
  p[1].events = POLLIN;
  if (poll (p, 2, -1) < 0 && errno != EINTR)
    return false;
  if (p[1].revents & POLLIN) {
    ssize_t r = read (ec->efd, &v, sizeof v);
    (void) r;
  }
  run_deferred (ec);
  if (out || (p[0].revents & POLLOUT))
    flush_output (ec);
  pthread_mutex_lock (&ec->lock);
  out = ec->dead;
  pthread_mutex_unlock (&ec->lock);
  return !out && !(p[0].revents & POLLNVAL);
}

/* Read exactly @p len bytes into @p buf (the rest of a write's payload).
 * @return false on EOF or error. */
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
    if (!wait_io (ec, true))
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
  reply (rq, nbd_err);
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
      submit (ec, rq, ctx);
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
  submit (ec, rq, ctx);
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
      free_req (rq);
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
      go = wait_io (ec, false);
      continue;
    }
    n = recv (ec->fd, buf + have, RECV_BUF - have, MSG_DONTWAIT);
    if (n == 0)
      break;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        go = wait_io (ec, true);
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
    if (!wait_io (ec, false)) {
      pthread_mutex_lock (&ec->lock);
      ec->dead = true;
      pthread_mutex_unlock (&ec->lock);
      flush_output (ec);      /* frees what was queued */
    }
  }
  flush_output (ec);
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
    wake (ec);
  }
  pthread_mutex_unlock (&reg_lock);
  reap (true);
}

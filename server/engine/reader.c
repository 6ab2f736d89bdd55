/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/reader.c: an engine connection's reader thread
 * (reader.h): it parses each complete request in its buffer and submits
 * it (one the quiesce gate holds or QoS delays waits in pending.c: the
 * reader never sleeps on it); librbd's callback writes the replies
 * (reply.c), what the socket did not take is written here.  At the end
 * it waits for every request in flight to be answered, then closes the
 * connection. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rbdx/errors.h"
#include "rbdx/export.h"
#include "rbdx/log.h"
#include "rbdx/qos.h"
#include "rbdx/request.h"

#include "econn.h"
#include "pending.h"
#include "reader.h"
#include "reply.h"
#include "stopping.h"

/* At a connection's end: how often the reader checks for the engine's
 * stop, and how long a stopping engine keeps replies no client reads. */
#define WAIT_SLICE_MS 100
#define STOP_GRACE_MS 5000

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
    rq->aio.op = RBDX_OP_FLUSH;
    econn_submit (ec, rq, ec->conn->wctx);
  }
}

/* Write queued replies while the socket takes them (dropped once it failed). */
static void
flush_output (struct econn *ec)
{
  struct ereq *done = NULL, *rq;

  pthread_mutex_lock (&ec->lock);
  while ((rq = ec->out_head) && econn_send_some (ec, rq)) {
    ec->out_head = rq->next;
    if (!ec->out_head)
      ec->out_tail = NULL;
    econn_retire (ec, rq);
    rq->next = done;
    done = rq;
  }
  if (ec->dead) {
    while ((rq = ec->out_head)) {
      ec->out_head = rq->next;
      econn_retire (ec, rq);
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
 * then do the output and deferred work.  @return false when the socket
 * failed. */
static bool
wait_io (struct econn *ec, bool want_in, int timeout_ms)
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
  run_deferred (ec);
  if (out || (p[0].revents & (POLLOUT | POLLHUP | POLLERR)))
    flush_output (ec);
  pthread_mutex_lock (&ec->lock);
  dead = ec->dead;
  pthread_mutex_unlock (&ec->lock);
  return !dead && !(p[0].revents & POLLNVAL);
}

/* May another request be taken?  @p inflight: how many are in flight. */
static bool
room (struct econn *ec, unsigned *inflight)
{
  bool ok;

  pthread_mutex_lock (&ec->lock);
  *inflight = ec->inflight;
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
  ec->inflight_bytes += rq->mem;
  pthread_mutex_unlock (&ec->lock);
}

/* The checks nbdkit makes before a request reaches the plugin (its
 * server/protocol.c; NBD doc/proto.md, "Request types" and "Error
 * values"), for the commands and flags this engine advertises (simple
 * replies only: no DF, no block status).  Range and block size checks
 * are request.h's.  @return 0 or the NBD error. */
static int
protocol_check (const struct econn *ec, uint16_t type, uint16_t flags,
                uint64_t offset, uint32_t count)
{
  bool ro = ec->conn->ctx->readonly;
  struct rbdx_export_caps caps;

  switch (type) {
  case RBDX_NBD_CMD_READ: case RBDX_NBD_CMD_WRITE: case RBDX_NBD_CMD_TRIM:
  case RBDX_NBD_CMD_WRITE_ZEROES:
    if (count == 0)
      return type == RBDX_NBD_CMD_WRITE || type == RBDX_NBD_CMD_WRITE_ZEROES
             ? ENOSPC : EINVAL;
    break;
  case RBDX_NBD_CMD_FLUSH:
    if (offset != 0 || count != 0)
      return EINVAL;
    break;
  default:
    return EINVAL;            /* not advertised: CACHE, BLOCK_STATUS, ... */
  }
  if (flags & ~(RBDX_NBD_CMD_FLAG_FUA | RBDX_NBD_CMD_FLAG_NO_HOLE |
                RBDX_NBD_CMD_FLAG_FAST_ZERO))
    return EINVAL;            /* unknown, DF, REQ_ONE */
  if ((flags & (RBDX_NBD_CMD_FLAG_NO_HOLE | RBDX_NBD_CMD_FLAG_FAST_ZERO)) &&
      type != RBDX_NBD_CMD_WRITE_ZEROES)
    return EINVAL;
  if ((type == RBDX_NBD_CMD_READ || type == RBDX_NBD_CMD_WRITE) &&
      count > RBDX_MAX_BLOCK)
    return EINVAL;            /* block size constraints: the maximum */
  if (ro && (type == RBDX_NBD_CMD_WRITE || type == RBDX_NBD_CMD_TRIM ||
             type == RBDX_NBD_CMD_WRITE_ZEROES))
    return EPERM;
  if (ro && (flags & RBDX_NBD_CMD_FLAG_FUA))
    return EINVAL;            /* FUA is not advertised read-only */
  /* Not advertised with notrim=true (rbdx_export_caps): as nbdkit
   * answers a TRIM its plugin cannot do. */
  rbdx_export_caps (ec->conn, &caps);
  if (type == RBDX_NBD_CMD_TRIM && !caps.trim)
    return EINVAL;
  return 0;
}

/* One request that passed protocol_check; for a write, the payload is
 * in rq->buf.  Reader thread. */
static void
dispatch (struct econn *ec, struct ereq *rq, uint16_t type, uint64_t offset,
          uint32_t count)
{
  struct rbdx_conn *c = ec->conn;
  bool write = type != RBDX_NBD_CMD_READ && type != RBDX_NBD_CMD_FLUSH;
  struct rbdx_ctx *ctx = type == RBDX_NBD_CMD_READ ? c->rctx : c->wctx;
  uint64_t gen;
  int64_t wait;
  int e;

  rq->aio.offset = offset;
  rq->aio.count = count;
  rq->aio.fua = rq->flags & RBDX_NBD_CMD_FLAG_FUA;
  rq->aio.may_hole = !(rq->flags & RBDX_NBD_CMD_FLAG_NO_HOLE);
  if (type == RBDX_NBD_CMD_FLUSH) {
    if (c->ctx->readonly)
      econn_reply (rq, 0);    /* nothing was written */
    else
      econn_submit (ec, rq, ctx);
    return;
  }
  e = rbdx_request_check (ctx, rq->op, count, offset,
                          rq->flags & RBDX_NBD_CMD_FLAG_FAST_ZERO,
                          rq->aio.may_hole);
  if (e) {
    econn_reply (rq, e);
    return;
  }
  wait = rbdx_qos_reserve (c->qos, write, count, &c->metrics.qos_wait_ns,
                           &gen);
  if (wait > 0 && !econn_stopping ())
    epending_delay (ec, rq, ctx, wait, write, gen);
  else
    epending_submit (ec, rq, ctx);
}

/* Read a write's payload; delayed and held requests go on meanwhile. */
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
    epending_run (ec, econn_stopping ());
    if (!wait_io (ec, true, epending_due_ms (ec)))
      return false;
  }
  return true;
}

/* Take @p len bytes of a refused write's payload off the socket: the
 * @p avail after the header, then the socket.  @return bytes of the
 * buffer used, or (size_t) -1 when the socket failed. */
static size_t
discard (struct econn *ec, size_t len, size_t avail)
{
  unsigned char scratch[65536];
  size_t used = avail < len ? avail : len;

  len -= used;
  while (len > 0) {
    size_t n = len < sizeof scratch ? len : sizeof scratch;
    if (!read_full (ec, scratch, n))
      return (size_t) -1;
    len -= n;
  }
  return used;
}

/* Parse one request at @p p (RBDX_NBD_REQUEST_SIZE bytes).  A write's
 * payload: the @p avail bytes after the header, then the socket.
 * @return bytes of @p p consumed, 0 to stop (disconnect, bad magic,
 * socket failure). */
static size_t
handle (struct econn *ec, const unsigned char *p, size_t avail)
{
  uint16_t flags = (uint16_t) (p[4] << 8 | p[5]);
  uint16_t type = (uint16_t) (p[6] << 8 | p[7]);
  uint64_t handle = get64 (p + 8), offset = get64 (p + 16);
  uint32_t count = get32 (p + 24);
  struct ereq *rq;
  size_t used = RBDX_NBD_REQUEST_SIZE, have;
  int e;

  if (get32 (p) != RBDX_NBD_REQUEST_MAGIC) {
    rbdx_error ("rbdx: %s: bad request magic 0x%08" PRIx32 ": closing the "
                "connection", ec->conn->ctx->name, get32 (p));
    return 0;
  }
  if (type == RBDX_NBD_CMD_DISC)
    return 0;
  rq = calloc (1, sizeof *rq);
  if (!rq)
    return 0;
  rq->ec = ec;
  rq->handle = handle;
  rq->flags = flags;
  rq->t0 = rbdx_metrics_begin (&ec->conn->metrics);
  switch (type) {
  case RBDX_NBD_CMD_WRITE: rq->op = RBDX_OP_WRITE; rq->aio.op = RBDX_OP_WRITE; break;
  case RBDX_NBD_CMD_FLUSH: rq->op = RBDX_OP_FLUSH; rq->aio.op = RBDX_OP_FLUSH; break;
  case RBDX_NBD_CMD_TRIM: rq->op = RBDX_OP_TRIM; rq->aio.op = RBDX_OP_TRIM; break;
  case RBDX_NBD_CMD_WRITE_ZEROES: rq->op = RBDX_OP_ZERO; rq->aio.op = RBDX_OP_ZERO; break;
  default: rq->op = RBDX_OP_READ; rq->aio.op = RBDX_OP_READ; break;
  }
  /* In flight from here.  Only reads and writes hold a buffer: a trim
   * or a zero of gigabytes takes no memory and no room. */
  rq->bytes = type == RBDX_NBD_CMD_FLUSH ? 0 : count;
  rq->mem = type == RBDX_NBD_CMD_READ || type == RBDX_NBD_CMD_WRITE ? count : 0;
  account (ec, rq);
  e = protocol_check (ec, type, flags, offset, count);
  if (e) {
    /* A write's payload is taken off the socket whatever the answer. */
    if (type == RBDX_NBD_CMD_WRITE) {
      size_t d = discard (ec, count, avail);
      if (d == (size_t) -1) {
        rq->uncounted = true;
        econn_reply (rq, e);  /* not sent: the socket failed */
        return 0;
      }
      used += d;
    }
    rq->uncounted = true;
    econn_reply (rq, e);
    return used;
  }
  if (type == RBDX_NBD_CMD_READ) {
    rq->buf = malloc (RBDX_NBD_REPLY_SIZE + (size_t) count);
    if (!rq->buf) {
      econn_reply (rq, ENOMEM);
      return used;
    }
    rq->aio.buf = rq->buf + RBDX_NBD_REPLY_SIZE;
  }
  else if (type == RBDX_NBD_CMD_WRITE) {
    unsigned char *b = malloc (count);

    have = avail < count ? avail : count;
    if (!b) {
      size_t d = discard (ec, count, avail);
      econn_reply (rq, ENOMEM);
      return d == (size_t) -1 ? 0 : used + d;
    }
    memcpy (b, p + RBDX_NBD_REQUEST_SIZE, have);
    used += have;
    rq->buf = b;
    if (have < count && !read_full (ec, b + have, count - have)) {
      rq->uncounted = true;
      econn_reply (rq, EIO);  /* the client is gone: never sent */
      return 0;
    }
    rq->aio.buf = b;
  }
  dispatch (ec, rq, type, offset, count);
  return used;
}

static struct rbdx_log_limit dropped_log = RBDX_LOG_LIMIT_INIT;

void *
econn_reader (void *arg)
{
  struct econn *ec = arg;
  unsigned char *buf = malloc (RECV_BUF);
  size_t have = 0, off = 0;
  bool go = buf != NULL, drained = false;

  epending_init (ec);
  while (go) {
    unsigned inflight;
    ssize_t n;

    /* A reply's send failed (the client is gone: econn_send_some set
     * dead, maybe in this thread's own refusal of a request): stop
     * reading.  wait_io leaves a dead socket out of its poll, and with
     * no timeout would wait for ever on an eventfd nothing writes. */
    pthread_mutex_lock (&ec->lock);
    go = !ec->dead;
    pthread_mutex_unlock (&ec->lock);
    if (!go)
      break;

    epending_run (ec, econn_stopping ());
    /* The in-flight limit holds per request, not per buffer: a buffer
     * may hold thousands of headers.  Delayed requests count. */
    if (!room (ec, &inflight)) {
      /* Reading nothing more, but a client that reads no replies keeps
       * the room full: when the engine stops, the drain below gives it
       * STOP_GRACE_MS like any other. */
      if (econn_stopping ())
        break;
      go = wait_io (ec, false, epending_due_ms (ec));
      continue;
    }
    if (have - off >= RBDX_NBD_REQUEST_SIZE) {
      /* A write's payload is read here whole, so the buffer only ever
       * holds headers and small payloads. */
      size_t used = handle (ec, buf + off, have - off - RBDX_NBD_REQUEST_SIZE);
      if (used == 0)
        break;
      off += used;
      continue;
    }
    memmove (buf, buf + off, have - off);
    have -= off;
    off = 0;
    /* Socket emptied, at most one request in flight: a QD1 client
     * waits for its reply, so poll first and save the recv that would
     * return EAGAIN (PERF.md, "The reader's EAGAIN"). */
    if (drained && inflight <= 1) {
      drained = false;
      go = wait_io (ec, true, epending_due_ms (ec));
      continue;
    }
    drained = false;
    n = recv (ec->fd, buf + have, RECV_BUF - have, MSG_DONTWAIT);
    if (n == 0)
      break;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        go = wait_io (ec, true, epending_due_ms (ec));
        continue;
      }
      break;
    }
    drained = (size_t) n < RECV_BUF - have;
    have += (size_t) n;
  }
  free (buf);

  /* Let nothing more in, answer what is in flight, then close.  Replies
   * (queued ones count as in flight) go out while the client reads
   * them; when the engine stops, a client that reads nothing gets
   * STOP_GRACE_MS, then its queued replies are dropped.  Requests still
   * in librbd are always waited for: their buffers are librbd's.  What
   * QoS delays goes at its time (NBD_CMD_DISC: the outstanding requests
   * are answered first; all at once only when the engine stops), what
   * the quiesce gate holds when it opens; once the socket is dead
   * (wait_io, here without waiting first) both are dropped unsent. */
  shutdown (ec->fd, SHUT_RD);
  (void) wait_io (ec, false, 0);
  unsigned dropped = 0;
  for (int waited = 0;;) {
    bool idle, drop = false;
    int due;

    pthread_mutex_lock (&ec->lock);
    ec->want_wake = true;
    idle = ec->inflight == 0 && ec->deferred == NULL;
    pthread_mutex_unlock (&ec->lock);
    if (idle)
      break;
    pthread_mutex_lock (&ec->lock);
    drop = ec->dead;
    pthread_mutex_unlock (&ec->lock);
    if (drop && (ec->delayed || ec->held))
      dropped += epending_drop (ec);
    epending_run (ec, econn_stopping ());
    due = epending_due_ms (ec);
    drop = false;
    if (!wait_io (ec, false, due >= 0 && due < WAIT_SLICE_MS ? due : WAIT_SLICE_MS))
      drop = true;
    else if (econn_stopping () && (waited += WAIT_SLICE_MS) > STOP_GRACE_MS)
      drop = true;
    if (drop) {
      pthread_mutex_lock (&ec->lock);
      ec->dead = true;
      pthread_mutex_unlock (&ec->lock);
      flush_output (ec);      /* drops what was queued */
    }
  }
  flush_output (ec);
  if (dropped)
    rbdx_error_limited (&dropped_log, "rbdx-engine: a client left with %u "
                        "requests not yet sent to the cluster (delayed by "
                        "QoS or held by quiesce): dropped, none was "
                        "acknowledged", dropped);
  pthread_mutex_lock (&ec->lock);
  ec->closed = true;
  close (ec->fd);
  pthread_mutex_unlock (&ec->lock);
  rbdx_quiesce_waiter_cancel (ec->conn->gate, &ec->qwait);
  rbdx_conn_close (ec->conn);
  ec->conn = NULL;
  atomic_store (&ec->finished, true);
  return NULL;
}

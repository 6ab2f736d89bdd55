/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/econn.h: the built-in engine's connection, the struct
 * shared by its reader thread (reader.c: reading, parsing, submitting,
 * writing queued replies; pending.c: the requests it holds or delays)
 * and librbd's callback (reply.c: completions and replies), with the
 * small helpers both use (inline here, so that neither calls into the
 * other's file).
 * Private to the engine; see engine.h for what it does and why.
 */
#ifndef RBDX_SERVER_ENGINE_ECONN_H
#define RBDX_SERVER_ENGINE_ECONN_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rbdx/conn.h"
#include "rbdx/ctx.h"
#include "rbdx/op.h"
#include "common/nbd-wire.h"

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
  uint32_t bytes;             /* the request's length, for the metrics */
  uint32_t mem;               /* its buffer (reads and writes), for the
                                 in-flight memory limit */
  bool uncounted;             /* refused by the protocol checks: nbdkit
                                 refuses these before the plugin, so the
                                 metrics do not count them either */
  bool gated;                 /* counted by the quiesce gate (quiesce.h):
                                 aio_done ends it */
  uint64_t due_ns;            /* delayed by QoS until then (CLOCK_MONOTONIC) */
  struct rbdx_ctx *target;    /* where a delayed request goes */
  uint64_t qos_gen;           /* delayed under these limits
                                 (rbdx_qos_generation) */
  bool qos_write;             /* delayed as a write-type request */
  unsigned char *out;         /* reply: header (+ data for a read) */
  size_t out_len, out_off;
  unsigned char hdr[RBDX_NBD_REPLY_SIZE];
  unsigned char *buf;         /* read: out; write: the payload */
};

struct econn {
  int fd;
  int efd;                    /* wakes the reader: output, deferred, done */
  struct rbdx_conn *conn;
  pthread_t thread;
  struct econn *next;         /* registry (conns.c's lock) */
  pthread_mutex_t lock;       /* out queue, deferred, counters, dead */
  struct ereq *out_head, *out_tail;
  struct ereq *deferred;
  struct ereq *delayed;       /* waiting for QoS, by due_ns; reader only */
  uint64_t qos_seen;          /* rbdx_qos_generation run_due last saw */
  struct ereq *held, *held_tail;  /* writes held by a quiesce, in order;
                                     reader only */
  struct rbdx_quiesce_waiter qwait;  /* wakes the reader when they may go */
  unsigned inflight;
  uint64_t inflight_bytes;    /* sum of mem in flight */
  bool dead;                  /* the socket failed: replies are dropped */
  bool want_wake;             /* the reader waits for requests to end */
  bool closed;                /* fd closed (stop_all must not touch it) */
  atomic_bool finished;       /* the thread is done with everything */
};

/* Big-endian fields of the wire format. */
static inline void
put32 (unsigned char *p, uint32_t v)
{
  p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v;
}

static inline void
put64 (unsigned char *p, uint64_t v)
{
  put32 (p, v >> 32);
  put32 (p + 4, (uint32_t) v);
}

static inline uint32_t
get32 (const unsigned char *p)
{
  return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 |
         (uint32_t) p[2] << 8 | p[3];
}

static inline uint64_t
get64 (const unsigned char *p)
{
  return (uint64_t) get32 (p) << 32 | get32 (p + 4);
}

/** Wake the reader thread (its eventfd).  Any thread. */
static inline void
econn_wake (struct econn *ec)
{
  uint64_t one = 1;
  ssize_t r = write (ec->efd, &one, sizeof one);
  (void) r;                   /* a full counter wakes the reader anyway */
}

/** Free a request and its buffer.  Any thread. */
static inline void
ereq_free (struct ereq *rq)
{
  free (rq->buf);
  free (rq);
}

/** Send what of @p rq's reply the socket takes now, without blocking.
 * Under ec->lock.  @return true when all of it went out (or the socket
 * failed: then ec->dead is set). */
static inline bool
econn_send_some (struct econn *ec, struct ereq *rq)
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

/** @p rq leaves the in-flight count (its reply was wholly sent, or
 * dropped with a dead socket), so queued replies count against the
 * in-flight limit and a client that reads no replies stops the reader.
 * Under ec->lock. */
static inline void
econn_retire (struct econn *ec, struct ereq *rq)
{
  ec->inflight--;
  ec->inflight_bytes -= rq->mem;
}

#endif

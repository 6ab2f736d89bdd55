/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/pending.c: requests parsed but not submitted yet
 * (pending.h): held by the image's quiesce gate or delayed by QoS. */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rbdx/clock.h"
#include "rbdx/qos.h"
#include "rbdx/quiesce.h"

#include "econn.h"
#include "pending.h"
#include "reply.h"

/* Quiesce (quiesce.h): a write, trim or zero is submitted once the
 * image's gate lets it pass; while writes are held it waits in ec->held
 * (in order: once one waits, later ones queue behind it), reads and
 * flushes go on, and the gate's waiter wakes the reader when they may
 * go.  Reader thread. */
static void
held_wake (void *arg)
{
  econn_wake (arg);
}

static bool
gated_op (enum rbdx_op op)
{
  return op == RBDX_OP_WRITE || op == RBDX_OP_TRIM || op == RBDX_OP_ZERO;
}

void
epending_submit (struct econn *ec, struct ereq *rq, struct rbdx_ctx *ctx)
{
  if (gated_op (rq->op) && ec->conn->gate) {
    if (ec->held || !rbdx_quiesce_write_try (ec->conn->gate, &ec->qwait)) {
      rq->target = ctx;
      rq->next = NULL;
      if (ec->held_tail)
        ec->held_tail->next = rq;
      else
        ec->held = rq;
      ec->held_tail = rq;
      return;
    }
    rq->gated = true;
  }
  econn_submit (ec, rq, ctx);
}

/* Submit the held writes the gate lets pass now. */
void
epending_run_held (struct econn *ec)
{
  struct ereq *rq;

  while ((rq = ec->held) &&
         rbdx_quiesce_write_try (ec->conn->gate, &ec->qwait)) {
    ec->held = rq->next;
    if (!ec->held)
      ec->held_tail = NULL;
    rq->gated = true;
    econn_submit (ec, rq, rq->target);
  }
}

/* QoS: a request that must wait is kept, in order of its due time, and
 * submitted by the reader when due; the reader never sleeps, so later
 * requests (a read behind a throttled write) and replies keep moving. */
void
epending_delay (struct econn *ec, struct ereq *rq, struct rbdx_ctx *ctx,
                int64_t ns, bool write, uint64_t gen)
{
  struct ereq **pp = &ec->delayed;

  rq->target = ctx;
  rq->qos_write = write;
  rq->qos_gen = gen;
  rq->due_ns = rbdx_clock_ns () + (uint64_t) ns;
  while (*pp && (*pp)->due_ns <= rq->due_ns)
    pp = &(*pp)->next;
  rq->next = *pp;
  *pp = rq;
}

/* New limits (rbdx_qos_generation): what waits under the old ones is
 * reserved again, so a limit removed or raised lets it go now.  A
 * request already due has waited out its charge: it stays, to be sent
 * now, not charged a second time. */
static void
requeue_stale (struct econn *ec)
{
  struct rbdx_qos *q = ec->conn->qos;
  uint64_t gen = rbdx_qos_generation (q), t = rbdx_clock_ns (), got;
  struct ereq *rq, **pp = &ec->delayed, *stale = NULL, **tail = &stale;
  int64_t ns;

  ec->qos_seen = gen;
  while ((rq = *pp))               /* in order: reserved again in order */
    if (rq->qos_gen == gen || rq->due_ns <= t)
      pp = &rq->next;
    else {
      *pp = rq->next;
      rq->next = NULL;
      *tail = rq;
      tail = &rq->next;
    }
  while ((rq = stale)) {
    stale = rq->next;
    /* not waited: off the metrics */
    atomic_fetch_sub (&ec->conn->metrics.qos_wait_ns, rq->due_ns - t);
    ns = rbdx_qos_reserve (q, rq->qos_write, rq->aio.count,
                           &ec->conn->metrics.qos_wait_ns, &got);
    epending_delay (ec, rq, rq->target, ns, rq->qos_write, got);
  }
}

/* Submit the delayed requests that are due (all of them with @p all: the
 * engine stops). */
static void
run_due (struct econn *ec, bool all)
{
  struct ereq *rq;
  uint64_t t;

  if (!all && ec->delayed && rbdx_qos_generation (ec->conn->qos) != ec->qos_seen)
    requeue_stale (ec);
  t = ec->delayed ? rbdx_clock_ns () : 0;
  while ((rq = ec->delayed) && (all || rq->due_ns <= t)) {
    ec->delayed = rq->next;
    epending_submit (ec, rq, rq->target);
  }
}

/* How long the reader may wait before a delayed request is due (ms,
 * rounded up; -1: none is delayed). */
int
epending_due_ms (const struct econn *ec)
{
  uint64_t t;

  if (!ec->delayed)
    return -1;
  t = rbdx_clock_ns ();
  /* At least every RBDX_QOS_RECHECK_NS: run_due sees new limits. */
  return ec->delayed->due_ns <= t ? 0
         : ec->delayed->due_ns - t > RBDX_QOS_RECHECK_NS
         ? (int) (RBDX_QOS_RECHECK_NS / 1000000)
         : (int) ((ec->delayed->due_ns - t + 999999) / 1000000);
}

void
epending_init (struct econn *ec)
{
  ec->qwait.wake = held_wake;
  ec->qwait.arg = ec;
}

void
epending_run (struct econn *ec, bool all)
{
  run_due (ec, all);
  epending_run_held (ec);
}

/* Answer @p rq NBD_EIO into the void (the socket is dead); the time it
 * did not wait comes off the metrics.  @return 1, to count it. */
static unsigned
drop_one (struct econn *ec, struct ereq *rq, uint64_t t)
{
  if (rq->due_ns > t)
    atomic_fetch_sub (&ec->conn->metrics.qos_wait_ns, rq->due_ns - t);
  econn_reply (rq, EIO);
  return 1;
}

unsigned
epending_drop (struct econn *ec)
{
  uint64_t t = rbdx_clock_ns ();
  unsigned n = 0;
  struct ereq *rq;

  while ((rq = ec->delayed)) {
    ec->delayed = rq->next;
    n += drop_one (ec, rq, t);
  }
  while ((rq = ec->held)) {      /* never counted by the gate */
    ec->held = rq->next;
    rq->due_ns = 0;
    n += drop_one (ec, rq, t);
  }
  ec->held_tail = NULL;
  return n;
}

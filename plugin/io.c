/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx plugin: the data path of an NBD connection (see io.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "rbdx/conn.h"
#include "rbdx/ctx.h"
#include "rbdx/errors.h"
#include "io.h"
#include "rbdx/metrics.h"
#include "rbdx/qos.h"
#include "rbdx/request.h"

/* The errno of the request this thread is answering, for the metrics:
 * every error rbdx hands nbdkit goes through set_error. */
static __thread int req_err;

static void
set_error (int e)
{
  req_err = e;
  nbdkit_set_error (e);
}

/* End of a request: count it (metrics.h) and pass its result on. */
static int
done (struct rbdx_conn *conn, enum rbdx_op op, uint64_t bytes, uint64_t t0,
      int r)
{
  rbdx_metrics_end (&conn->metrics, op, bytes, t0,
                    r < 0 ? (req_err ? req_err : EIO) : 0);
  return r;
}

/* A request the cluster (or rbdx, for a fenced client or a removed
 * snapshot) could not carry out: logged at error level, rate-limited
 * (errors.h), and answered with the NBD error of errors.c's table. */
static int
failed_as (struct rbdx_ctx *ctx, enum rbdx_op op, const char *what,
           uint32_t count, uint64_t offset, int neg)
{
  rbdx_log_request_error (ctx->name, what, offset, count, neg);
  set_error (rbdx_nbd_error (op, neg));
  return -1;
}

static int
cluster_failed (struct rbdx_ctx *ctx, enum rbdx_op op, uint32_t count,
                uint64_t offset, int neg)
{
  return failed_as (ctx, op, rbdx_op_name (op, 0), count, offset, neg);
}

/* The checks of request.h: false to go on, else the NBD error is set. */
static bool
refused (struct rbdx_ctx *ctx, enum rbdx_op op, uint32_t count,
         uint64_t offset, uint32_t flags)
{
  int e = rbdx_request_check (ctx, op, count, offset,
                              flags & NBDKIT_FLAG_FAST_ZERO,
                              flags & NBDKIT_FLAG_MAY_TRIM);
  if (e)
    set_error (e);
  return e != 0;
}

/* Wait for the request's share of the QoS limits (qos.h).  nbdkit ends
 * the sleep early (nbdkit_nanosleep: -1, ESHUTDOWN) when it shuts down,
 * when the client hangs up and when it sent NBD_CMD_DISC alike (nbdkit
 * server/public.c: the connection's status pipe and POLLRDHUP on its
 * socket), which the plugin cannot tell apart.  The request then fails
 * unsent with NBD_ESHUTDOWN, the one case where that is the right
 * answer: carried out later, a write of a client that left could land
 * over a newer one it sent again elsewhere (case C39).  nbdkit logs each
 * early end at error level; once one ended, the connection's later
 * waits fail at once, so a client cannot write a line per request.
 * @return true to go on. */
static bool
qos_pass (struct rbdx_conn *conn, bool write, uint32_t count)
{
  if (!atomic_load (&conn->client_left) &&
      rbdx_qos_wait (conn->qos, write, count, &conn->metrics.qos_wait_ns) == 0)
    return true;
  atomic_store (&conn->client_left, true);
  set_error (ESHUTDOWN);
  return false;
}

/* Pass the image's quiesce gate (quiesce.h), held while quiesced.  A
 * write, trim or zero that was held and whose client left meanwhile is
 * not sent: it was never acknowledged, and carried out once the hold
 * ends it could land after a newer write of the same blocks, sent again
 * through another connection by a client that gave this one up (C39).
 * nbdkit_nanosleep with no time to sleep fails at once when the
 * client's socket hung up, another thread saw NBD_CMD_DISC or nbdkit
 * shuts down (nbdkit's server/public.c polls for these; the QoS waits
 * end the same way).  @return false with the NBD error set. */
static bool
gate_pass (struct rbdx_conn *conn)
{
  if (!rbdx_quiesce_write_begin (conn->gate) || nbdkit_nanosleep (0, 0) == 0)
    return true;
  rbdx_quiesce_write_end (conn->gate);
  set_error (ESHUTDOWN);
  return false;
}

/* FUA with a cache forced on (ceph.rbd_cache=true or an image-level
 * setting): make the request durable with a flush. */
static int
fua_flush (struct rbdx_ctx *ctx, uint32_t flags)
{
  int r;

  if (!(flags & NBDKIT_FLAG_FUA) || !ctx->cache_on)
    return 0;
  r = rbdx_ctx_flush (ctx);
  return r < 0 ? failed_as (ctx, RBDX_OP_FLUSH, "flush for FUA", 0, 0, r) : 0;
}

static int
do_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
            uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  int r;

  if (refused (conn->rctx, RBDX_OP_READ, count, offset, flags))
    return -1;
  if (!qos_pass (conn, false, count))
    return -1;
  r = rbdx_ctx_read (conn->rctx, buf, count, offset);
  return r < 0 ? cluster_failed (conn->rctx, RBDX_OP_READ, count, offset, r)
               : 0;
}

static int
do_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
             uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  int r;

  if (refused (conn->wctx, RBDX_OP_WRITE, count, offset, flags))
    return -1;
  if (!qos_pass (conn, true, count))
    return -1;
  if (!gate_pass (conn))
    return -1;
  r = rbdx_ctx_write (conn->wctx, buf, count, offset, flags & NBDKIT_FLAG_FUA);
  rbdx_quiesce_write_end (conn->gate);
  if (r < 0)
    return cluster_failed (conn->wctx, RBDX_OP_WRITE, count, offset, r);
  return fua_flush (conn->wctx, flags);
}

static int
do_flush (void *handle, uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  int r = rbdx_ctx_flush (conn->wctx);

  return r < 0 ? cluster_failed (conn->wctx, RBDX_OP_FLUSH, 0, 0, r) : 0;
}

static int
do_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  int r;

  if (refused (conn->wctx, RBDX_OP_TRIM, count, offset, flags))
    return -1;
  if (!qos_pass (conn, true, count))
    return -1;
  if (!gate_pass (conn))
    return -1;
  r = rbdx_ctx_discard (conn->wctx, count, offset);
  rbdx_quiesce_write_end (conn->gate);
  if (r < 0)
    return cluster_failed (conn->wctx, RBDX_OP_TRIM, count, offset, r);
  return fua_flush (conn->wctx, flags);
}

static int
do_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  bool may_hole = flags & NBDKIT_FLAG_MAY_TRIM;
  int r;

  if (refused (conn->wctx, RBDX_OP_ZERO, count, offset, flags))
    return -1;
  if (!qos_pass (conn, true, count))
    return -1;
  if (!gate_pass (conn))
    return -1;
  r = rbdx_ctx_zero (conn->wctx, count, offset, may_hole);
  rbdx_quiesce_write_end (conn->gate);
  if (r < 0)
    return cluster_failed (conn->wctx, RBDX_OP_ZERO, count, offset, r);
  return fua_flush (conn->wctx, flags);
}

static int
add_extent (void *arg, uint64_t offset, uint64_t length, bool hole)
{
  uint32_t type = hole ? NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO : 0;
  return nbdkit_add_extent (arg, offset, length, type) < 0 ? -errno : 0;
}

static int
do_extents (void *handle, uint32_t count, uint64_t offset, uint32_t flags,
              struct nbdkit_extents *extents)
{
  struct rbdx_conn *conn = handle;
  int r;

  if (refused (conn->rctx, RBDX_OP_BLOCK_STATUS, count, offset, flags))
    return -1;
  r = rbdx_ctx_extents (conn->rctx, count, offset, add_extent, extents);
  return r < 0 ? cluster_failed (conn->rctx, RBDX_OP_BLOCK_STATUS, count,
                                offset, r) : 0;
}

int
rbdx_io_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
            uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  uint64_t t0 = rbdx_metrics_begin (&conn->metrics);

  req_err = 0;
  return done (conn, RBDX_OP_READ, count, t0,
               do_pread (conn, buf, count, offset, flags));
}

int
rbdx_io_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
             uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  uint64_t t0 = rbdx_metrics_begin (&conn->metrics);

  req_err = 0;
  return done (conn, RBDX_OP_WRITE, count, t0,
               do_pwrite (conn, buf, count, offset, flags));
}

int
rbdx_io_flush (void *handle, uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  uint64_t t0 = rbdx_metrics_begin (&conn->metrics);

  req_err = 0;
  return done (conn, RBDX_OP_FLUSH, 0, t0, do_flush (conn, flags));
}

int
rbdx_io_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  uint64_t t0 = rbdx_metrics_begin (&conn->metrics);

  req_err = 0;
  return done (conn, RBDX_OP_TRIM, count, t0,
               do_trim (conn, count, offset, flags));
}

int
rbdx_io_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  uint64_t t0 = rbdx_metrics_begin (&conn->metrics);

  req_err = 0;
  return done (conn, RBDX_OP_ZERO, count, t0,
               do_zero (conn, count, offset, flags));
}

int
rbdx_io_extents (void *handle, uint32_t count, uint64_t offset, uint32_t flags,
              struct nbdkit_extents *extents)
{
  struct rbdx_conn *conn = handle;
  uint64_t t0 = rbdx_metrics_begin (&conn->metrics);

  req_err = 0;
  return done (conn, RBDX_OP_BLOCK_STATUS, count, t0,
               do_extents (conn, count, offset, flags, extents));
}


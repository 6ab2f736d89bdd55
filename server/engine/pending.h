/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/pending.h: the requests an engine connection's reader
 * has parsed but may not submit yet (pending.c): writes, trims and
 * zeroes the image's quiesce gate holds (quiesce.h), and requests QoS
 * delays (qos.h).  Both wait in lists of the struct econn (econn.h);
 * nothing here sleeps.  Reader thread only, like those lists.
 */
#ifndef RBDX_SERVER_ENGINE_PENDING_H
#define RBDX_SERVER_ENGINE_PENDING_H

#include <stdbool.h>
#include <stdint.h>

#include "econn.h"

/** Set up @p ec's quiesce waiter, so that a gate that opens wakes the
 * reader (econn_wake).  Once, before the first epending_submit. */
void epending_init (struct econn *ec);

/** Submit @p rq to @p ctx (econn_submit, reply.h: the request is then
 * answered through econn_reply), unless the connection has a quiesce
 * gate and @p rq is a write, trim or zero that the gate holds now, or
 * one is held already: then @p rq waits in ec->held, in order, for
 * epending_run_held.  rq->gated is set once the gate counted it; its
 * target and next are overwritten. */
void epending_submit (struct econn *ec, struct ereq *rq,
                      struct rbdx_ctx *ctx);

/** Keep @p rq, which QoS reserved under limits generation @p gen
 * (rbdx_qos_generation) and as a write-type request if @p write, in
 * ec->delayed until @p ns (> 0) nanoseconds from now; epending_run then
 * passes it to epending_submit for @p ctx (so the gate may still hold
 * it). */
void epending_delay (struct econn *ec, struct ereq *rq, struct rbdx_ctx *ctx,
                     int64_t ns, bool write, uint64_t gen);

/** Submit the delayed requests that are due, or all of them with @p all
 * (the engine stops, the client still reading), then the held
 * ones the gate lets pass.  Without @p all, if the limits changed since
 * (rbdx_qos_generation), the delayed requests not yet due are reserved
 * again first, so a limit removed or raised lets them go now; the time
 * they did not wait is taken off the connection's qos_wait_ns. */
void epending_run (struct econn *ec, bool all);

/** Submit the held writes, trims and zeroes the gate lets pass now (the
 * delayed requests are left alone). */
void epending_run_held (struct econn *ec);

/** @return how long the reader may wait for input before a delayed
 * request is due: ms, rounded up, at most RBDX_QOS_RECHECK_NS / 1000000
 * ms so that new limits are seen; 0 if one is due now; -1 if none is
 * delayed. */
int epending_due_ms (const struct econn *ec);

/** Once the connection's socket is dead (no reply can be sent), drop
 * every request not yet sent to librbd: those QoS delays and the writes,
 * trims and zeroes the quiesce gate holds.  Each is answered NBD_EIO into
 * the void (counted as an error of its op), never submitted.  None was
 * acknowledged, so the NBD spec leaves its effect undefined; carried out
 * later it could land after a newer write of the same blocks by another
 * connection (a kernel client that timed this one out and sent its
 * requests again elsewhere), and a closed client's reads would bypass
 * the image's QoS or hold its connection until due.  Reader thread.
 * @return how many were dropped. */
unsigned epending_drop (struct econn *ec);

#endif

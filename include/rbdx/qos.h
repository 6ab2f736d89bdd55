/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: QoS limits for an image as a whole, whatever the number of
 * connections.
 *
 * librbd enforces rbd_qos_* per image handle, so N connections (each with
 * its own handle) would get N times the limit the operator set (measured
 * on Ceph 16.2.15: 805 IOPS through 4 connections against
 * rbd_qos_iops_limit=200).  rbdx therefore reads the limits in effect for
 * the image (rbd_config_image_list: image metadata over pool metadata over
 * client configuration, librbd's own precedence), applies the qos.*
 * parameters over them, and makes every connection's requests pass one
 * set of token buckets per image identity (qosbucket.h) before they reach
 * librbd.  librbd's per-handle throttles stay in place but never bind
 * below the shared ones (each handle gets at most the whole limit); and
 * since they hold the image's own value per handle, a shared limit above
 * it would let N handles through at N times it: qos.* therefore only
 * lowers an image's limit (rbdx_qos_limit_lower, qosbucket.h), and a
 * value that asks for more is logged at error level.
 *
 * Counting, as librbd's QoS dispatch does (librbd/io/QosImageDispatch:
 * discard and write-same pass their length to the byte throttles): every
 * read, write, trim and zero is one I/O (iops, and read_iops or
 * write_iops) and counts its length in bytes (bps, and read_bps or
 * write_bps).  Flush and block status are not limited.  Values are read
 * as Ceph reads them ("1M" is 1000000: rbd_qos_* are unsigned options
 * with SI suffixes, rbdx_parse_ceph_uint).
 *
 * The limits follow `rbd config image set/remove` while the image is
 * served: the update watch of every head context calls rbdx_qos_refresh.
 */
#ifndef RBDX_QOS_H
#define RBDX_QOS_H

#include <stdbool.h>
#include <stdint.h>

#include <rbd/librbd.h>

#include "rbdx/options.h"
#include "rbdx/identity.h"

struct rbdx_qos;

/** Take a reference on the QoS state of image @p ident, creating it on
 * first use from @p image's configuration and @p o's qos.* parameters.
 * @p o must stay valid until the last rbdx_qos_put.
 * @return 0, -ENOMEM, or the negative errno of rbd_config_image_list.
 * Thread-safe. */
int rbdx_qos_get (const struct rbdx_options *o, const struct rbdx_ident *ident,
                  rbd_image_t image, struct rbdx_qos **out);

/** Drop a reference (NULL is a no-op).  Thread-safe. */
void rbdx_qos_put (struct rbdx_qos *q);

/** Read the image's limits again (after a header update); changed limits
 * start from empty buckets.  Thread-safe (any thread, also librbd's). */
void rbdx_qos_refresh (struct rbdx_qos *q, rbd_image_t image);

/** A number that changes whenever the limits of @p q change
 * (rbdx_qos_refresh found new ones): a request delayed under the old
 * limits is reserved again under the new ones, so a limit removed or
 * raised while it waits lets it go within RBDX_QOS_RECHECK_NS, not
 * after the delay the old limit gave (seconds to days for a large
 * request under a low bps limit).  0 for NULL.  Thread-safe. */
uint64_t rbdx_qos_generation (struct rbdx_qos *q);

/** How often a delayed request looks at rbdx_qos_generation: 250 ms. */
#define RBDX_QOS_RECHECK_NS (250 * UINT64_C (1000000))

/** Reserve the tokens of a request (@p write or a read of @p bytes) in
 * every bucket that applies, and say how long it must wait before it is
 * sent (the delay is also added to @p waited_ns when not NULL): for a
 * host that schedules the request itself instead of sleeping.  When
 * @p gen is not NULL it receives the rbdx_qos_generation of the buckets
 * charged, read under the same lock as the charge (with no limit set
 * nothing is charged and it is read without the lock; 0 when @p q is
 * NULL): a host that compares
 * it with a later rbdx_qos_generation re-reserves a request only if it
 * was charged under limits since replaced (reading the generation
 * before this call instead could charge it twice in the new buckets).
 * @return the delay in ns, 0 to send it now.  Thread-safe. */
int64_t rbdx_qos_reserve (struct rbdx_qos *q, bool write, uint64_t bytes,
                          _Atomic uint64_t *waited_ns, uint64_t *gen);

/** Wait (sleeping this nbdkit worker thread with nbdkit_nanosleep, which
 * nbdkit interrupts when it shuts down or the client goes away) until a
 * request of @p bytes, a write-type one when @p write, may go to librbd;
 * the time waited is added to @p *waited_ns (NULL: not counted).
 * Returns at once when the image has no limit.  Sleeps in slices of
 * RBDX_QOS_RECHECK_NS; when the limits changed meanwhile the request is
 * reserved again under the new ones (the time not slept is taken off
 * @p *waited_ns).
 * @return 0, or -1 with errno set (ESHUTDOWN: nbdkit is shutting down, the
 *         request must not be sent).  Thread-safe. */
int rbdx_qos_wait (struct rbdx_qos *q, bool write, uint64_t bytes,
                   _Atomic uint64_t *waited_ns);

#endif /* RBDX_QOS_H */

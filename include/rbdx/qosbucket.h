/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: token buckets for QoS limits shared by every connection of an
 * image.  Pure logic over a caller-given clock (nanoseconds), unit tested
 * in tests/unit/test-qosbucket.c; server/core/qos.c adds the lock, the clock
 * and the sleeping.
 *
 * A bucket holds at most `capacity` tokens and gains `rate` tokens per
 * second.  A request of `cost` tokens reserves them at once (FIFO, so
 * every waiter gets its turn in order and connections share fairly) and
 * may proceed once the bucket's balance, after all reservations so far,
 * is no longer negative.  The state is the single time `full_at` at which
 * the bucket would be full again: balance(now) = capacity -
 * rate * max(0, full_at - now).  A new bucket starts empty, so from any
 * start at most rate * T tokens pass in T seconds.
 *
 * librbd's own limits (rbd_qos_*_limit, *_burst, *_burst_seconds; Ceph
 * 16.2 doc "rbd config ref") have the same meaning: a sustained rate, and
 * a burst of up to `burst` per second for `burst_seconds`, here a
 * capacity of burst * burst_seconds tokens (of one second of the rate
 * when no burst is set).
 */
#ifndef RBDX_QOSBUCKET_H
#define RBDX_QOSBUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct rbdx_qos_bucket {
  uint64_t rate;       /**< tokens per second; 0: no limit. */
  uint64_t capacity;   /**< tokens. */
  int64_t full_at;     /**< ns on the caller's clock. */
};

/** Set the limit: @p rate tokens/s, @p burst tokens/s for @p burst_s
 * seconds (0: no burst).  A new limit starts from an empty bucket.
 * Not thread-safe (the caller holds its lock). */
void rbdx_qos_bucket_set (struct rbdx_qos_bucket *b, uint64_t rate,
                          uint64_t burst, uint64_t burst_s, int64_t now_ns);

/** How long (ns) a request of @p cost tokens arriving at @p now_ns must
 * wait if it reserves its tokens now; 0 when the bucket has no limit.
 * Pure: use rbdx_qos_bucket_take to commit. */
int64_t rbdx_qos_bucket_delay (const struct rbdx_qos_bucket *b,
                               uint64_t cost, int64_t now_ns);

/** Reserve @p cost tokens at @p now_ns (after rbdx_qos_bucket_delay).
 * Not thread-safe. */
void rbdx_qos_bucket_take (struct rbdx_qos_bucket *b, uint64_t cost,
                           int64_t now_ns);

/** One kind's limit as librbd states it: @c limit per second (0: none),
 * a @c burst per second (0: none; at or below @c limit: none) for
 * @c burst_s seconds. */
struct rbdx_qos_limit {
  uint64_t limit, burst, burst_s;
};

/** Which parts of an override were given (qos.NAME_limit=, _burst=,
 * _burst_seconds=). */
struct rbdx_qos_given {
  bool limit, burst, burst_s;
};

/** Apply override @p want (the parts @p given) to @p img, the image's own
 * limit of one kind, into @p out, so that the result never lets more
 * through than @p img does: where the image has a limit, an override
 * can lower it (a lower rate, a smaller burst, fewer burst seconds) but
 * not raise or remove it (a limit of 0 or above the image's keeps the
 * image's; a burst rate above the image's peak rate, or a burst
 * capacity above the image's, is cut to the image's).  Where the image
 * has none, the override is taken as given.  Why: librbd applies the
 * image's value to each handle, so a raised shared limit would let N
 * connections through at N times the image's limit.
 * @return true when the override asked for more than @p img allows (so
 * the caller can say so).  Pure; thread-safe. */
bool rbdx_qos_limit_lower (const struct rbdx_qos_limit *img,
                           const struct rbdx_qos_limit *want,
                           struct rbdx_qos_given given,
                           struct rbdx_qos_limit *out);

#endif /* RBDX_QOSBUCKET_H */

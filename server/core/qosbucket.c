/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: QoS token buckets (see qosbucket.h). */
#include <stdint.h>

#include "rbdx/qosbucket.h"

#define NS 1000000000

/* Every time span is kept below this (about 146 years), so sums of a few
 * spans and a clock value never overflow int64_t. */
#define SPAN_MAX (INT64_MAX / 4)

/* ns it takes the bucket to gain @tokens (rate > 0), saturated. */
static int64_t
span (const struct rbdx_qos_bucket *b, uint64_t tokens)
{
  unsigned __int128 ns = (unsigned __int128) tokens * NS / b->rate;
  return ns > SPAN_MAX ? SPAN_MAX : (int64_t) ns;
}

void
rbdx_qos_bucket_set (struct rbdx_qos_bucket *b, uint64_t rate,
                     uint64_t burst, uint64_t burst_s, int64_t now_ns)
{
  unsigned __int128 cap = (unsigned __int128) burst * burst_s;

  b->rate = rate;
  b->capacity = burst > rate && burst_s
    ? (cap > UINT64_MAX ? UINT64_MAX : (uint64_t) cap) : rate;
  b->full_at = rate ? now_ns + span (b, b->capacity) : now_ns;
}

int64_t
rbdx_qos_bucket_delay (const struct rbdx_qos_bucket *b, uint64_t cost,
                       int64_t now_ns)
{
  int64_t full_at, ready;

  if (!b->rate)
    return 0;
  full_at = (b->full_at > now_ns ? b->full_at : now_ns) + span (b, cost);
  ready = full_at - span (b, b->capacity);
  return ready > now_ns ? (ready - now_ns > SPAN_MAX ? SPAN_MAX : ready - now_ns)
                        : 0;
}

void
rbdx_qos_bucket_take (struct rbdx_qos_bucket *b, uint64_t cost,
                      int64_t now_ns)
{
  if (b->rate) {
    b->full_at = (b->full_at > now_ns ? b->full_at : now_ns) + span (b, cost);
    /* An absurd backlog (limits near 0 with huge requests) stays bounded. */
    if (b->full_at - now_ns > SPAN_MAX)
      b->full_at = now_ns + SPAN_MAX;
  }
}

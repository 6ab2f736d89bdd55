/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx: QoS token buckets (see qosbucket.h). */
#include "qosbucket.h"

#define NS 1000000000

/* ns it takes the bucket to gain @tokens (rate > 0). */
static int64_t
span (const struct rbdx_qos_bucket *b, uint64_t tokens)
{
  /* tokens <= 2^35 (32 GiB) keeps tokens * NS inside 2^65: split. */
  return (int64_t) (tokens / b->rate * NS +
                    (tokens % b->rate) * NS / b->rate);
}

void
rbdx_qos_bucket_set (struct rbdx_qos_bucket *b, uint64_t rate,
                     uint64_t burst, uint64_t burst_s, int64_t now_ns)
{
  b->rate = rate;
  b->capacity = burst > rate && burst_s ? burst * burst_s : rate;
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
  return ready > now_ns ? ready - now_ns : 0;
}

void
rbdx_qos_bucket_take (struct rbdx_qos_bucket *b, uint64_t cost,
                      int64_t now_ns)
{
  if (b->rate)
    b->full_at = (b->full_at > now_ns ? b->full_at : now_ns) + span (b, cost);
}

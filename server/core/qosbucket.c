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

/* The rate a limit lets through at its peak, and how many tokens its
 * bucket holds (as rbdx_qos_bucket_set reads them). */
static uint64_t
peak (const struct rbdx_qos_limit *l)
{
  return l->burst > l->limit && l->burst_s ? l->burst : l->limit;
}

static unsigned __int128
tokens (const struct rbdx_qos_limit *l)
{
  return l->burst > l->limit && l->burst_s
    ? (unsigned __int128) l->burst * l->burst_s : l->limit;
}

bool
rbdx_qos_limit_lower (const struct rbdx_qos_limit *img,
                      const struct rbdx_qos_limit *want,
                      struct rbdx_qos_given given,
                      struct rbdx_qos_limit *out)
{
  bool capped = false;

  *out = *img;
  if (given.limit)
    out->limit = want->limit;
  if (given.burst)
    out->burst = want->burst;
  if (given.burst_s)
    out->burst_s = want->burst_s;
  if (!img->limit)
    return false;
  if (!out->limit || out->limit > img->limit) {
    capped = given.limit;
    out->limit = img->limit;
  }
  if (peak (out) > peak (img)) {
    capped = true;
    out->burst = peak (img);
  }
  if (tokens (out) > tokens (img)) {
    /* Here the burst is active (a plain limit holds at most img's). */
    capped = true;
    out->burst_s = (uint64_t) (tokens (img) / out->burst);
    if (!out->burst_s)
      out->burst = 0;
  }
  return capped;
}

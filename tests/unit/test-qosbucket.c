/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: QoS token buckets (include/rbdx/qosbucket.h).
 *
 * Proves, on a simulated clock, that a bucket starts empty, lets at most
 * rate * T tokens through in T seconds whatever the request pattern,
 * allows the configured burst after idling, serves requests in the order
 * they reserved, and that rate 0 means no limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rbdx/qosbucket.h"

#define S 1000000000LL

/* Greedy clients: each request starts when the previous one may run.
 * Returns how many requests of @cost ran within [0, secs). */
static uint64_t
greedy (struct rbdx_qos_bucket *b, uint64_t cost, int64_t secs)
{
  int64_t now = 0, d;
  uint64_t n = 0;

  for (;;) {
    d = rbdx_qos_bucket_delay (b, cost, now);
    if (now + d >= secs * S)
      return n;
    rbdx_qos_bucket_take (b, cost, now);
    now += d;
    n++;
  }
}

static void
test_rate (void **state)
{
  struct rbdx_qos_bucket b;

  rbdx_qos_bucket_set (&b, 200, 0, 1, 0);
  assert_in_range (greedy (&b, 1, 10), 1990, 2000);
  /* Bytes: 1 MiB/s in 64 KiB requests. */
  rbdx_qos_bucket_set (&b, 1 << 20, 0, 1, 0);
  assert_in_range (greedy (&b, 65536, 10), 159, 160);
}

static void
test_starts_empty_and_bursts (void **state)
{
  struct rbdx_qos_bucket b;

  rbdx_qos_bucket_set (&b, 100, 0, 1, 0);
  /* The first request waits one emission interval (10 ms). */
  assert_int_equal (rbdx_qos_bucket_delay (&b, 1, 0), S / 100);
  /* After 5 idle seconds the bucket is full: 100 tokens at once, and the
   * 101st waits. */
  for (int i = 0; i < 100; i++) {
    assert_int_equal (rbdx_qos_bucket_delay (&b, 1, 5 * S), 0);
    rbdx_qos_bucket_take (&b, 1, 5 * S);
  }
  assert_int_equal (rbdx_qos_bucket_delay (&b, 1, 5 * S), S / 100);
  /* A burst of 300/s for 2 s: 600 tokens after idling. */
  rbdx_qos_bucket_set (&b, 100, 300, 2, 0);
  for (int i = 0; i < 600; i++) {
    assert_int_equal (rbdx_qos_bucket_delay (&b, 1, 100 * S), 0);
    rbdx_qos_bucket_take (&b, 1, 100 * S);
  }
  assert_true (rbdx_qos_bucket_delay (&b, 1, 100 * S) > 0);
}

static void
test_fifo (void **state)
{
  struct rbdx_qos_bucket b;
  int64_t last = -1, d;

  /* Ten requests arriving at once get increasing, evenly spaced turns. */
  rbdx_qos_bucket_set (&b, 10, 0, 1, 0);
  for (int i = 0; i < 10; i++) {
    d = rbdx_qos_bucket_delay (&b, 1, 0);
    rbdx_qos_bucket_take (&b, 1, 0);
    assert_true (d > last);
    assert_int_equal (d, (i + 1) * (S / 10));
    last = d;
  }
}

/* Limits at the ends of the range never overflow into absurd waits. */
static void
test_huge (void **state)
{
  struct rbdx_qos_bucket b;

  rbdx_qos_bucket_set (&b, 100000000, 1000000000000000000ULL, 1, 0);
  assert_true (rbdx_qos_bucket_delay (&b, 4096, 0) < S);
  rbdx_qos_bucket_set (&b, 1, 10000000000ULL, 10000000000ULL, 0);
  assert_true (rbdx_qos_bucket_delay (&b, 1, 0) <= 2 * S);
  rbdx_qos_bucket_set (&b, UINT64_MAX, UINT64_MAX, UINT64_MAX, 0);
  assert_true (rbdx_qos_bucket_delay (&b, UINT64_MAX, 0) <= 2 * S);
  /* A huge request on a tiny limit waits long, but a bounded time, and
   * the bucket stays usable. */
  rbdx_qos_bucket_set (&b, 1, 0, 1, 0);
  assert_true (rbdx_qos_bucket_delay (&b, UINT64_MAX, 0) > 0);
  rbdx_qos_bucket_take (&b, UINT64_MAX, 0);
  assert_true (rbdx_qos_bucket_delay (&b, 1, 0) > 0);
  assert_true (rbdx_qos_bucket_delay (&b, 1, 0) <= INT64_MAX / 4);
}

static void
test_unlimited (void **state)
{
  struct rbdx_qos_bucket b;

  rbdx_qos_bucket_set (&b, 0, 0, 1, 0);
  for (int i = 0; i < 1000; i++) {
    assert_int_equal (rbdx_qos_bucket_delay (&b, 1 << 20, 0), 0);
    rbdx_qos_bucket_take (&b, 1 << 20, 0);
  }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_rate),
    cmocka_unit_test (test_starts_empty_and_bursts),
    cmocka_unit_test (test_fifo),
    cmocka_unit_test (test_huge),
    cmocka_unit_test (test_unlimited),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: QoS token buckets (include/rbdx/qosbucket.h).
 *
 * Proves, on a simulated clock, that a bucket starts empty, lets at most
 * rate * T tokens through in T seconds whatever the request pattern,
 * allows the configured burst after idling, serves requests in the order
 * they reserved, and that rate 0 means no limit.  And that a qos.*
 * override lowers an image's limit, never raises or removes it
 * (rbdx_qos_limit_lower).
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

/* An override lowers what the image allows and never raises it: the
 * tester's case (image 100 IOPS, qos.iops_limit=1000 or 0 gave 4
 * connections 400) keeps 100. */
static void
test_lower_only (void **state)
{
  const struct rbdx_qos_limit img = { 100, 0, 1 }, none = { 0, 0, 1 };
  const struct rbdx_qos_given lim = { true, false, false },
                              all = { true, true, true }, nothing = { 0 };
  struct rbdx_qos_limit out;

  (void) state;
  /* Raised or removed: the image's limit holds, and the caller is told. */
  assert_true (rbdx_qos_limit_lower (&img, &(struct rbdx_qos_limit) { 1000, 0, 1 },
                                     lim, &out));
  assert_int_equal (out.limit, 100);
  assert_true (rbdx_qos_limit_lower (&img, &(struct rbdx_qos_limit) { 0, 0, 1 },
                                     lim, &out));
  assert_int_equal (out.limit, 100);
  /* Lowered: taken, nothing to say; the same value is no raise. */
  assert_false (rbdx_qos_limit_lower (&img, &(struct rbdx_qos_limit) { 40, 0, 1 },
                                      lim, &out));
  assert_int_equal (out.limit, 40);
  assert_false (rbdx_qos_limit_lower (&img, &(struct rbdx_qos_limit) { 100, 0, 1 },
                                      lim, &out));
  /* No override: the image's. */
  assert_false (rbdx_qos_limit_lower (&img, &none, nothing, &out));
  assert_true (out.limit == 100 && out.burst == 0);
  /* An image without a limit takes the override as given. */
  assert_false (rbdx_qos_limit_lower (&none, &(struct rbdx_qos_limit) { 500, 900, 3 },
                                      all, &out));
  assert_true (out.limit == 500 && out.burst == 900 && out.burst_s == 3);
  assert_false (rbdx_qos_limit_lower (&none, &none, nothing, &out));
  assert_int_equal (out.limit, 0);
}

/* Bursts: no faster peak and no bigger bucket than the image's. */
static void
test_lower_bursts (void **state)
{
  const struct rbdx_qos_limit flat = { 100, 0, 1 }, bursty = { 100, 300, 2 };
  const struct rbdx_qos_given all = { true, true, true },
                              burst = { false, true, true };
  struct rbdx_qos_limit out;

  (void) state;
  /* A burst over an image without one: cut to no burst. */
  assert_true (rbdx_qos_limit_lower (&flat, &(struct rbdx_qos_limit) { 0, 500, 5 },
                                     burst, &out));
  assert_true (out.limit == 100 && out.burst <= out.limit);
  /* A lower limit may burst up to the image's rate for one second's
   * worth of it (the image's bucket holds 100). */
  assert_true (rbdx_qos_limit_lower (&flat, &(struct rbdx_qos_limit) { 50, 500, 5 },
                                     all, &out));
  assert_true (out.limit == 50 && out.burst == 100 && out.burst_s == 1);
  /* Within the image's burst: as given. */
  assert_false (rbdx_qos_limit_lower (&bursty, &(struct rbdx_qos_limit) { 80, 200, 2 },
                                      all, &out));
  assert_true (out.limit == 80 && out.burst == 200 && out.burst_s == 2);
  /* A faster burst: its rate cut to the image's 300, its seconds to the
   * image's 600 tokens. */
  assert_true (rbdx_qos_limit_lower (&bursty, &(struct rbdx_qos_limit) { 80, 1000, 10 },
                                     all, &out));
  assert_true (out.limit == 80 && out.burst == 300 && out.burst_s == 2);
  /* A longer burst at a lower rate: no more tokens than the image's. */
  assert_true (rbdx_qos_limit_lower (&bursty, &(struct rbdx_qos_limit) { 80, 200, 10 },
                                     all, &out));
  assert_true (out.burst == 200 && out.burst_s == 3);
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
    cmocka_unit_test (test_lower_only),
    cmocka_unit_test (test_lower_bursts),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

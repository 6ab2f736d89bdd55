/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx: the one monotonic clock every part reads (pure, header only).
 *
 * CLOCK_MONOTONIC (clock_gettime(2)): not changed by setting the time
 * of day, so deadlines, rate-limit windows, QoS schedules and latency
 * measurements never jump.  Header only, so that the core, the engine
 * and the mapper (which takes no library of the core's but its pure
 * headers, HACKING.md "The house") all read the same clock the same
 * way.
 */
#ifndef RBDX_CLOCK_H
#define RBDX_CLOCK_H

#include <stdint.h>
#include <time.h>

/** Nanoseconds on CLOCK_MONOTONIC (since an unspecified start, the
 * boot on Linux; 64 bits last 584 years).  clock_gettime cannot fail
 * for CLOCK_MONOTONIC on Linux with a valid pointer.  Thread-safe,
 * async-signal-safe. */
static inline uint64_t
rbdx_clock_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

#endif /* RBDX_CLOCK_H */

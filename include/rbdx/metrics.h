/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: request metrics, per connection and per image, written for
 * Prometheus (node_exporter's textfile collector reads *.prom files).
 *
 * Cheap on the request path: each connection counts into its own struct
 * with relaxed atomic adds (no lock shared between connections).  The
 * counters of every open connection are on a list of this file's own
 * (rbdx_metrics_attach), under a lock that the request path never takes;
 * the writer thread (metrics_file=) sums them every metrics_interval
 * seconds under it and replaces the file atomically (a temporary file
 * renamed over it).  Metrics know nothing of connections (conn.h uses
 * them, not the other way round).
 *
 * The file is in Prometheus' text exposition format (prometheus.io,
 * "Exposition formats", text format 0.0.4): each metric family is
 * written whole, its "# HELP" and "# TYPE" lines, then every sample of
 * the family, so no family is interleaved with another; a histogram's
 * samples of one label set are its buckets (ascending "le"), _sum,
 * then _count.
 *
 * Series (labels image, identity; per connection also conn, a serial
 * number; op is read, write, trim, zero, flush or block_status):
 *   rbdx_requests_total, rbdx_request_bytes_total, rbdx_request_errors_total
 *   (also by errno), rbdx_request_duration_seconds (histogram, per image),
 *   rbdx_requests_in_flight, rbdx_connections, rbdx_qos_wait_seconds_total,
 *   and per process rbdx_writer_opens_total, rbdx_writer_fences_total.
 */
#ifndef RBDX_METRICS_H
#define RBDX_METRICS_H

#include <stdatomic.h>
#include <stdint.h>

#include "rbdx/identity.h"
#include "rbdx/op.h"

/** Latency buckets: upper bounds 2^4 .. 2^(4+RBDX_LAT_N-1) microseconds
 * (16 us .. 1 s), then +Inf. */
#define RBDX_LAT_N 17

/** NBD errors counted apart (errno values nbdkit sends), then "other". */
#define RBDX_ERRNO_N 7

/** One connection's counters.  Zero-initialised; the counters are
 * updated lock-free, the rest belongs to rbdx_metrics_attach/detach. */
struct rbdx_metrics {
  _Atomic uint64_t requests[RBDX_OP_N];
  _Atomic uint64_t bytes[RBDX_OP_N];
  _Atomic uint64_t errors[RBDX_OP_N];
  _Atomic uint64_t errnos[RBDX_ERRNO_N];
  _Atomic uint64_t lat[RBDX_OP_N][RBDX_LAT_N + 1];
  _Atomic uint64_t lat_sum_ns[RBDX_OP_N];
  _Atomic uint64_t qos_wait_ns;    /**< time spent waiting for QoS. */
  _Atomic int64_t in_flight;
  /* Set by rbdx_metrics_attach; metrics.c's lock. */
  struct rbdx_metrics *next, *prev; /**< the attached counters. */
  struct rbdx_ident ident;     /**< the image the counters are of. */
  const char *name;            /**< its name, as the connection opened it. */
  uint64_t serial;             /**< 1, 2, ... in the order attached. */
};

/** Start a request: counts it in flight.  @return its start time (ns,
 * CLOCK_MONOTONIC).  Thread-safe. */
uint64_t rbdx_metrics_begin (struct rbdx_metrics *m);

/** End a request begun with rbdx_metrics_begin without counting it (no
 * request, byte, latency or error count): one refused by the protocol
 * checks, which nbdkit refuses before the plugin sees it.  Thread-safe. */
void rbdx_metrics_forget (struct rbdx_metrics *m);

/** End a request of @p op over @p bytes that started at @p t0;
 * @p nbd_err is 0 or the errno handed to nbdkit.  Thread-safe. */
void rbdx_metrics_end (struct rbdx_metrics *m, enum rbdx_op op,
                       uint64_t bytes, uint64_t t0, int nbd_err);

/** A connection opened: put @p m (its counters, zero or counting
 * already) on the list the metrics file is written from, labelled with
 * the image @p ident (copied) and its @p name (borrowed: it must live
 * until rbdx_metrics_detach), with the next serial number.
 * Thread-safe. */
void rbdx_metrics_attach (struct rbdx_metrics *m,
                          const struct rbdx_ident *ident, const char *name);

/** The connection of @p m (attached) closes: take @p m off the list and
 * add its counters to its image's totals, in one step under the list's
 * lock, so a write of the file counts them exactly once (open or
 * closed) and counters only grow.  No request may be in flight on
 * @p m any more.  Thread-safe. */
void rbdx_metrics_detach (struct rbdx_metrics *m);

/** Process-wide events of the shared writers (writer.c). */
extern _Atomic uint64_t rbdx_writer_opens, rbdx_writer_fences;

/** Write @p path once, as it is now, to prove it can be written: for a
 * host that checks its parameters before it may start threads (nbdkit's
 * .get_ready).  Not thread-safe against rbdx_metrics_start/stop.
 * @return 0 or a negative errno. */
int rbdx_metrics_check (const char *path);

/** Write @p path once, then start the thread that rewrites it every
 * @p interval_s seconds (after nbdkit's fork: .after_fork).
 * @return 0, or a negative errno: the first write failed (a directory,
 *         a missing directory, no permission) or pthread_create did. */
int rbdx_metrics_start (const char *path, unsigned interval_s);

/** Write the file once more and stop the thread (.cleanup). */
void rbdx_metrics_stop (void);

/** Release the closed connections' totals (.unload, when no connection
 * is left). */
void rbdx_metrics_free (void);

#endif /* RBDX_METRICS_H */

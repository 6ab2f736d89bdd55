/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: what a failed request tells the client and the operator.
 *
 * One table maps librbd's negative errno to the errno nbdkit turns into
 * an NBD error (nbdkit 1.32 server/protocol.c maps EPERM, EIO, ENOMEM,
 * EINVAL, ENOSPC, EOVERFLOW, ENOTSUP and ESHUTDOWN; anything else would
 * become NBD_EINVAL and blame the client for a cluster fault).
 *
 * NBD_ESHUTDOWN is never produced here: the NBD spec (doc/proto.md,
 * "Error values") reserves it for a server that is shutting down, and a
 * client must then disconnect.  Ceph reports a blocklisted (fenced)
 * client as -EBLOCKLISTED, whose value is ESHUTDOWN (108) on Linux, so
 * it must be mapped to NBD_EIO deliberately.
 */
#ifndef RBDX_ERRORS_H
#define RBDX_ERRORS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "rbdx/op.h"

/** The errno to hand to nbdkit_set_error (or to put in the engine's
 * reply) for a request of kind @p op that failed with @p neg (a negative
 * errno from librbd or from rbdx's own checks).
 * NBD_EPERM is kept for a write to an image that is read-only (EROFS:
 * a snapshot, a non-primary mirrored image) or locked by another client
 * (EACCES); an OSD's own EPERM (the cephx caps, or the pool deleted
 * under the image) is no fault of the client's and becomes NBD_EIO.
 * A read or block status keeps only EINVAL (its range passed the end of
 * a shrunk image), ENOMEM and EOVERFLOW; every other failure of a read
 * is NBD_EIO (NBD spec, "Error values": NBD_EPERM and NBD_ENOSPC answer
 * writes; a read whose data cannot be returned is an I/O error) (C72).
 * Thread-safe; pure. */
int rbdx_nbd_error (enum rbdx_op op, int neg);

/** Log a cluster-side failure of one request at error level (nbdkit_error,
 * shown without -v), naming @p image, @p op ("read", "write", ...),
 * the byte range and the errno.  Rate-limited process-wide (a limit of
 * its own, as rbdx_error_limited) to RBDX_LOG_BURST messages per
 * RBDX_LOG_WINDOW_S seconds; the number suppressed is reported with the
 * next message that gets through.  Thread-safe. */
void rbdx_log_request_error (const char *image, const char *op,
                             uint64_t offset, uint32_t count, int neg);

#define RBDX_LOG_BURST 20      /**< messages per window */
#define RBDX_LOG_WINDOW_S 10   /**< seconds */

/** The rate limit of one kind of error message (a flood of one kind
 * never silences another): at most RBDX_LOG_BURST messages per window
 * of RBDX_LOG_WINDOW_S seconds (CLOCK_MONOTONIC).  Define one with
 * static storage, initialised with RBDX_LOG_LIMIT_INIT; its fields are
 * rbdx_error_limited's. */
struct rbdx_log_limit {
  pthread_mutex_t lock;
  time_t window_start;         /**< seconds, CLOCK_MONOTONIC */
  unsigned count;              /**< messages logged in the window */
  unsigned long suppressed;    /**< not logged since the last one */
};

#define RBDX_LOG_LIMIT_INIT { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0 }

/** rbdx_error (printf @p fmt) unless @p limit's window already had
 * RBDX_LOG_BURST messages; a message that gets through after some were
 * dropped ends with "; N more errors were not logged".  A message is
 * cut at 1024 bytes.  Thread-safe (@p limit's lock). */
void rbdx_error_limited (struct rbdx_log_limit *limit, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/** Take one message from @p limit, as rbdx_error_limited does, for a
 * caller that logs one event as more than one line (all of them or
 * none: nbdkit 1.42 sends a failed .open's last line to the client,
 * so a line meant for the log only must not be left last).
 * @return true if the event may be logged now, with @p tail (of
 *         @p taillen bytes, 80 are enough) set to "" or to "; N more
 *         errors were not logged", to end its first line; false if it is
 *         dropped (counted, @p tail set to "").  Thread-safe (@p limit's
 *         lock). */
bool rbdx_log_limit_take (struct rbdx_log_limit *limit, char *tail,
                          size_t taillen);

#endif /* RBDX_ERRORS_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/relink.h: when to hand the kernel new sockets, decided.
 *
 * The kernel's NBD driver multicasts NBD_CMD_LINK_DEAD once for each
 * connection it marks dead, and NBD_CMD_RECONFIGURE puts new sockets only
 * into dead slots, dropping any others silently (drivers/block/nbd.c,
 * nbd_reconnect_socket; see server/mapper/README.md).  So the supervisor counts
 * the events and hands over exactly that many sockets: after a short
 * pause so that a burst is counted together, never more than the device
 * has connections, and after a failure only once a back-off has passed.
 * An event can be lost (multicast overrun); then, after RBDX_RELINK_LOST_S
 * without any event while fewer copies of the sockets are live than the
 * device has connections, the missing copies are counted as dead.
 *
 * Pure bookkeeping: times are seconds on a monotonic clock passed in by
 * the caller; no I/O, no kernel.  A struct rbdx_relink starts zeroed and
 * belongs to one thread.
 */
#ifndef RBDX_SERVER_RELINK_H
#define RBDX_SERVER_RELINK_H

#include <stdbool.h>
#include <stdint.h>

/** Pause after the first LINK_DEAD event before sockets are sent, s. */
#define RBDX_RELINK_SETTLE_S 0.3
/** Back-off after the server could not be reached (or served another
 *  image), s. */
#define RBDX_RELINK_RETRY_S 0.5
/** Back-off after the kernel refused NBD_CMD_RECONFIGURE, s. */
#define RBDX_RELINK_REFUSED_RETRY_S 1.0
/** Quiet time after which missing copies count as dead links, s. */
#define RBDX_RELINK_LOST_S 5.0

/** A duplicate the supervisor keeps of a socket the kernel holds. */
struct rbdx_copy {
  int fd;            /**< our duplicate of a socket the kernel holds */
  uint64_t size;     /**< export size that connection negotiated, bytes */
  bool retiring;     /**< shut down for a growth, waiting for the kernel */
};

/** The accounting of dead links. */
struct rbdx_relink {
  unsigned dead;       /**< dead slots counted, not yet refilled */
  double dead_since;   /**< when they were first counted (0: none) */
  double next_try;     /**< no hand-over before this time (back-off) */
  double short_since;  /**< when fewer live copies than connections were
                            first seen (0: not short) */
  double last_event;   /**< time of the last LINK_DEAD event */
};

/** @p n more LINK_DEAD events arrived at @p now. */
void rbdx_relink_dead (struct rbdx_relink *l, unsigned n, double now);

/** How many sockets to hand over at @p now for a device of @p conns
 *  connections: 0 (nothing dead, or wait: the burst is still settling,
 *  or a back-off runs), else the dead count, at most @p conns. */
unsigned rbdx_relink_to_send (const struct rbdx_relink *l, unsigned conns, double now);

/** @p n sockets were handed over at @p now. */
void rbdx_relink_sent (struct rbdx_relink *l, unsigned n, double now);

/** A hand-over failed at @p now: back off, longer when the kernel
 *  refused the sockets (@p kernel_refused) than when no socket could be
 *  made. */
void rbdx_relink_failed (struct rbdx_relink *l, double now, bool kernel_refused);

/** Drop the back-off: try at the next occasion (`rbdx attach`). */
void rbdx_relink_retry_now (struct rbdx_relink *l);

/** Look for lost events at @p now, with @p live copies of the sockets of
 *  a device of @p conns connections left.  @return how many links were
 *  found dead without an event (now counted, ready to send), or 0. */
unsigned rbdx_relink_check_lost (struct rbdx_relink *l, unsigned conns, unsigned live,
                                 double now);

#endif

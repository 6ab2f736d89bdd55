/* SPDX-License-Identifier: BSD-3-Clause */
/* server/common/limits.h: the connection limit the mapper and the engine
 * share.
 *
 * One number, RBDX_MAX_CONNECTIONS, says how many NBD connections a
 * mapped device has at most; every other connection limit of the mapper
 * and the engine is derived from it here.  Constants only.
 */
#ifndef RBDX_SERVER_COMMON_LIMITS_H
#define RBDX_SERVER_COMMON_LIMITS_H

/** The most NBD connections one mapped device has: `rbdx map
 *  --connections N` takes 1 to this, and the default (the online CPUs)
 *  is capped by it (rbdx(8)). */
#define RBDX_MAX_CONNECTIONS 16

/** The most connections the built-in engine serves at once, a cap
 *  against a runaway or bogus client of its control socket (mode 0600).
 *  The engine serves one device, but a connection the kernel gave up on
 *  stays open in the engine until its reader sees it close, while the
 *  supervisor already asks for its replacement; a device's connections
 *  four times over leave room for several rounds of that. */
#define RBDX_ENGINE_MAX_OPEN (4 * RBDX_MAX_CONNECTIONS)

/** nbdkit's worker threads per connection where rbdx starts nbdkit (the
 *  mapper's --engine nbdkit, systemd/rbdx@.service, scripts/demo).  The
 *  plugin answers each request in the nbdkit thread that took it, so a
 *  connection has at most this many requests in flight; nbdkit's
 *  default, 16, doubles what a connection's Ceph client costs in threads
 *  (about 14, tests/bench/cost).  8 covers a queue depth of 32 spread
 *  over 4 connections, the depth a single librbd client needs at 4 KiB
 *  on a small cluster; deeper queues take more connections, each with
 *  its own client (nbdkit-rbdx-plugin(1), COST). */
#define RBDX_NBDKIT_THREADS "8"

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/engine.h: the built-in transmission engine of `rbdx map`.
 *
 * The kernel's NBD driver is handed sockets already in the transmission
 * phase (NBD doc/proto.md, "Transmission"), so it needs none of what
 * nbdkit adds (handshake, TLS, export lists).  The engine serves such
 * sockets with the core library (include/rbdx/core.h): one librbd
 * context per connection, a reader thread that submits every request
 * already in its receive buffer, and replies written from librbd's
 * completion callback without handing off to another thread.  Simple
 * replies only, as the kernel speaks (no structured replies).
 *
 * It runs as rbdx-engine (engine.c), a child process of the supervisor,
 * which asks for connections over a control socket (the mapper's
 * negotiate.h is the other end), so a crash is a restart plus
 * re-attach, as with nbdkit.
 *
 * Its files, cut along its threads:
 *   engine.c   the process: parameters, the control socket, the test
 *              hook, signals (the main thread and its client threads)
 *   conns.c    the open connections: start, count, stop all (conns.h)
 *   reader.c   what a connection's reader thread runs (reader.h)
 *   pending.c  the requests its reader holds for the quiesce gate or
 *              delays for QoS (pending.h)
 *   reply.c    what librbd's callback runs: completions, replies
 *              (reply.h)
 *   econn.h    the connection struct they share, and the small helpers
 *              they use (inline)
 *   host.c     the core's host services (rbdx/log.h, host.h)
 *   listen.c   the listening sockets, mode 0600 from bind (listen.h)
 * This header declares nothing: it is the engine's overview.
 */
#ifndef RBDX_SERVER_ENGINE_H
#define RBDX_SERVER_ENGINE_H

#endif

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
 * It runs as rbdx-engine (engine.c), a child process of the supervisor, which
 * asks for connections over a control socket (engine-client.h), so a
 * crash is a restart plus re-attach, as with nbdkit.
 */
#ifndef RBDX_SERVER_ENGINE_H
#define RBDX_SERVER_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "rbdx/core.h"

/* NBD transmission flags (NBD doc/proto.md, "Transmission flags"). */
#define RBDX_NBD_FLAG_HAS_FLAGS          (1 << 0)
#define RBDX_NBD_FLAG_READ_ONLY          (1 << 1)
#define RBDX_NBD_FLAG_SEND_FLUSH         (1 << 2)
#define RBDX_NBD_FLAG_SEND_FUA           (1 << 3)
#define RBDX_NBD_FLAG_SEND_TRIM          (1 << 5)
#define RBDX_NBD_FLAG_SEND_WRITE_ZEROES  (1 << 6)
#define RBDX_NBD_FLAG_CAN_MULTI_CONN     (1 << 8)
#define RBDX_NBD_FLAG_SEND_FAST_ZERO     (1 << 11)

/** The transmission flags of an export served by @p conn. */
uint16_t rbdx_engine_flags (const struct rbdx_conn *conn);

/** Serve NBD transmission on @p fd (a connected stream socket; the
 * engine owns it from now on) for @p conn (owned too: closed when the
 * connection ends) in a new thread.
 * @return 0; -ESHUTDOWN once rbdx_engine_stop_all started, or a negative
 *         errno from pthread_create/eventfd (then neither @p fd nor
 *         @p conn was taken).  Thread-safe. */
int rbdx_engine_serve (int fd, struct rbdx_conn *conn);

/** Connections being served now.  Thread-safe. */
unsigned rbdx_engine_open_count (void);

/** Make every connection stop reading (as if the client disconnected),
 * wait until each answered what it had in flight and closed.
 * Called once, at shutdown. */
void rbdx_engine_stop_all (void);

/** True once rbdx_engine_stop_all started (QoS waits end early). */
bool rbdx_engine_stopping (void);

/** Show debug lines (engine-host.c; errors are always shown). */
void rbdx_engine_verbose (bool on);

#endif

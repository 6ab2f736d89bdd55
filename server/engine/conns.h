/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/conns.h: the engine's open connections (conns.c): start
 * one (its reader thread), count them, stop them all.  Called from the
 * engine's own threads (engine.c: the main loop and its client
 * threads), never from a reader or from librbd's callback.
 */
#ifndef RBDX_SERVER_ENGINE_CONNS_H
#define RBDX_SERVER_ENGINE_CONNS_H

#include "rbdx/conn.h"

/** Serve NBD transmission on @p fd (a connected stream socket; the
 * engine owns it from now on) for @p conn (owned too: closed when the
 * connection ends) in a new thread.
 * @return 0; -ESHUTDOWN once rbdx_engine_stop_all started, or a negative
 *         errno from pthread_create/eventfd (then neither @p fd nor
 *         @p conn was taken).  Thread-safe. */
int rbdx_engine_serve (int fd, struct rbdx_conn *conn);

/** A descriptor (an eventfd, made at the first call; -1 if it cannot
 * be) that becomes readable when a connection's thread finished: the
 * main loop polls it and then calls rbdx_engine_reap, so a finished
 * thread is joined without waiting for the next connection.  Call it
 * first before serving; not thread-safe against that first call. */
int rbdx_engine_reap_fd (void);

/** Join and free the connections whose thread finished (reading the
 * descriptor of rbdx_engine_reap_fd empty).  Thread-safe. */
void rbdx_engine_reap (void);

/** Connections being served now.  Thread-safe. */
unsigned rbdx_engine_open_count (void);

/** Make every connection stop reading (as if the client disconnected),
 * wait until each answered what it had in flight and closed.
 * Called once, at shutdown. */
void rbdx_engine_stop_all (void);

#endif

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

/** Connections being served now.  Thread-safe. */
unsigned rbdx_engine_open_count (void);

/** Make every connection stop reading (as if the client disconnected),
 * wait until each answered what it had in flight and closed.
 * Called once, at shutdown. */
void rbdx_engine_stop_all (void);

#endif

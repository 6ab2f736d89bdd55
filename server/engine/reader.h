/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/reader.h: the reader thread of an engine connection
 * (reader.c), started by conns.c.
 */
#ifndef RBDX_SERVER_ENGINE_READER_H
#define RBDX_SERVER_ENGINE_READER_H

/** The thread function of a connection: @p arg is its struct econn
 * (econn.h, its fd, efd, lock and conn set).  It reads, parses and
 * submits requests until the client disconnects, the socket fails or
 * the engine stops (econn_stopping, stopping.h), waits until every request in
 * flight was answered, closes the socket and the rbdx_conn, and sets
 * ec->finished; the struct itself is conns.c's to free.
 * @return NULL. */
void *econn_reader (void *arg);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/reply.h: the reply path of an engine connection, what
 * librbd's callback runs (reply.c).  The reader thread (reader.c) enters
 * it by submitting a request, or by answering one it refused itself.
 */
#ifndef RBDX_SERVER_ENGINE_REPLY_H
#define RBDX_SERVER_ENGINE_REPLY_H

#include "econn.h"

/** End @p rq: count it, send its simple reply with NBD error
 * @p nbd_err (0, or a positive errno as the NBD error) and the data of
 * a successful read, or queue what the socket does not take; it leaves
 * the in-flight count once its reply is wholly sent.  Never blocks, and
 * never touches the connection after releasing its lock.  Any thread
 * (librbd's callback, or the reader for a request it refused). */
void econn_reply (struct ereq *rq, int nbd_err);

/** Submit @p rq (its aio filled in) on @p ctx; it ends in econn_reply
 * (a FUA write on a cached context first goes on ec->deferred for the
 * reader to submit its flush).  Reader thread. */
void econn_submit (struct econn *ec, struct ereq *rq, struct rbdx_ctx *ctx);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: one NBD connection: its own librbd context (reads, block
 * status), the context its writes go through (its own, or the shared
 * writer of its image: writer.h), and whether multi-conn holds.
 *
 * The connection is bound at open to the image identity its own context
 * found (ctx.h); its writer is the one of that identity.
 *
 * Open connections are kept in a process-wide list: nbdkit 1.32 skips
 * .close for connections still open when it quits (--run ending,
 * SIGTERM), which would leave their watches and the exclusive lock to
 * time out on the cluster (~30 s), so .cleanup closes them with
 * rbdx_conn_close_all.
 */
#ifndef RBDX_CONN_H
#define RBDX_CONN_H

#include <stdbool.h>

#include "rbdx/ctx.h"
#include "rbdx/metrics.h"
#include "rbdx/options.h"
#include "rbdx/qos.h"
#include "rbdx/quiesce.h"
#include "rbdx/writer.h"

struct rbdx_conn {
  struct rbdx_conn *next, *prev;  /**< open connections (conn.c's lock). */
  struct rbdx_ctx *ctx;        /**< own context. */
  struct rbdx_ctx *rctx;       /**< reads and block status: ctx, or wctx
                                    when that has a cache (a read must see
                                    what went into the writer's cache). */
  struct rbdx_ctx *wctx;       /**< writes, trims, zeroes, flushes. */
  struct rbdx_writer *writer;  /**< shared writer, or NULL. */
  struct rbdx_qos *qos;        /**< the image's QoS limits (qos.h). */
  bool multi_conn;             /**< what .can_multi_conn answers. */
  struct rbdx_metrics metrics; /**< this connection's counters, attached
                                    while it is open (metrics.h). */
  struct rbdx_quiesce_member *quiesce;  /**< ctx's quiesce watch, or NULL
                                             (quiesce.h). */
  struct rbdx_quiesce *gate;   /**< what its writes, trims and zeroes
                                    pass (rbdx_quiesce_write_begin), NULL
                                    without quiesce=true. */
  _Atomic bool client_left;    /**< a front end saw its client leave
                                    (the plugin: nbdkit ended a QoS wait
                                    early); set once, never cleared. */
};

/** Open a connection to @p spec (exactly @p ident when not NULL, see
 * rbdx_ctx_open): its own context, a check that the
 * cephx id may use the image's data pool (writes too unless
 * @p readonly), and the writer the write policy (o->writers,
 * o->exclusive) asks for.
 * @param out  receives the connection (close with rbdx_conn_close).
 * @param err  a one-line message on error.
 * With quiesce=true it joins its image's quiesce group (quiesce.h).
 * @return 0, or a negative errno of rbdx_ctx_open,
 *         rbdx_ctx_check_access, rbdx_writer_get or rbdx_quiesce_join
 *         (-ENOMEM).
 * Thread-safe (nbdkit opens connections in parallel). */
int rbdx_conn_open (const struct rbdx_options *o, const struct rbdx_spec *spec,
                    const struct rbdx_ident *ident, bool readonly,
                    struct rbdx_conn **out, char *err, size_t errlen);

/** Prove, before serving, that @p spec (exactly @p ident when not NULL)
 * can be served: the cluster answers, the image (and snapshot) exists,
 * the cephx id may read its data pool, and exclusive=true has an
 * exclusive-lock to hold.  An image that starts with a LUKS header,
 * given no encryption_format=, is served raw, as asked, and said so at
 * error level.  Everything it opened is shut down again (the plugin
 * forks after this: cluster.h).
 * @return 0, or a negative errno of rbdx_ctx_open or
 *         rbdx_ctx_check_access, or -EINVAL, with a one-line message. */
int rbdx_conn_probe (const struct rbdx_options *o,
                     const struct rbdx_spec *spec,
                     const struct rbdx_ident *ident, char *err,
                     size_t errlen);

/** Close @p conn: nothing may be in flight on it (nbdkit calls .close
 * once every request of the connection has returned).  Thread-safe. */
void rbdx_conn_close (struct rbdx_conn *conn);

/** Close every connection still open, then the writers nobody uses.
 * Only from .cleanup, after nbdkit ended every connection thread. */
void rbdx_conn_close_all (void);

#endif /* RBDX_CONN_H */

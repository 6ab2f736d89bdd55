/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: serving one RBD image to NBD clients, whoever speaks NBD.
 *
 * The core library (librbdx-core.a, built from server/core/, its
 * headers here in include/rbdx/) holds everything that is about the
 * image and not about the NBD front end; it is linked into the nbdkit
 * plugin (plugin/rbdx.c, io.c, exports.c) and into the mapper's built-in
 * engine (server/engine/).  Each host provides the three services of
 * rbdx/log.h.  Nothing here includes a front end's header.
 *
 *   options.h   the key=value parameters, parsed and validated (pure)
 *   cephargs.h  the cephx id: its check, and the one in $CEPH_ARGS
 *               without id= (pure)
 *   cluster.h   one rados_t from those parameters
 *   cct.h       the server's one Ceph context where Ceph is safe for it
 *               (ceph_context=)
 *   clients.h   which client a context gets: its own (on the shared Ceph
 *               context or not) or one of connections_per_client=
 *   ctx.h       one librbd context bound to an image identity; its
 *               synchronous requests (reaped by reactor.h) and its
 *               asynchronous ones (rbdx_ctx_aio, completed in librbd's
 *               callback)
 *   conn.h      one NBD connection: its context, the writer its writes go
 *               through (writer.h), multi-conn, QoS and metrics;
 *               rbdx_conn_probe proves an image servable before serving
 *   export.h    what an export is, for both front ends: the checks
 *               before serving, its size, what it can do
 *   op.h        the operations of a request and their names
 *   request.h   the checks every request passes (block size constraints,
 *               the crypto sector, the image's current end), once
 *   errors.h    librbd errno -> NBD error, rate-limited error logs
 *   qos.h       the image's QoS limits over all its connections
 *   metrics.h   request counters and the metrics file
 *   sizefile.h  the image's current size published in a file
 *   quiesce.h   librbd's quiesce protocol for every handle of an image:
 *               the hook once, writes held around a snapshot
 *               (quiesce-hook.h: its parameters and argv, pure;
 *               quiesce-run.h: the hook's process)
 *   updates.h   a context's header updates, handled on a thread started
 *               for them, never in librbd's callback
 *   rbdx/identity.h  pool id / namespace / image id / snapshot id
 *   clock.h     the monotonic clock every part reads (header only)
 *   printable.h a value from outside escaped for a log line (pure)
 *   utf8.h      the printable characters of UTF-8 text, under spec.h's
 *               name check, printable.h and the metrics labels (pure)
 *
 * Thread-safety and ownership are stated in each header.  A host that
 * forks must do so before the first rados_connect (cluster.h).
 *
 * This header is the map only: it includes and declares nothing, so
 * that include/ never points into the core's own files; a front end
 * includes the headers above that it uses.
 */
#ifndef RBDX_CORE_H
#define RBDX_CORE_H

#endif /* RBDX_CORE_H */

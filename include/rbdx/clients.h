/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx: which Ceph client a librbd context gets (server/core/clients.c).
 *
 * A context per connection gets a client of its own, made on the
 * server's shared Ceph context where ceph_context= says so (cct.h), or
 * with connections_per_client= a client shared by up to that many
 * contexts.  This file only chooses and counts; cluster.h makes and
 * connects handles, cct.h holds the shared Ceph context.
 */
#ifndef RBDX_CLIENTS_H
#define RBDX_CLIENTS_H

#include <stddef.h>

#include <rados/librados.h>

#include "rbdx/options.h"

/** The cluster handle of one librbd context: a Ceph client of its own
 * when o->connections_per_client is 1 (the default: every context has
 * its own Ceph client; made on the server's shared Ceph context when
 * rbdx_cct_shared, else
 * rbdx_cluster_connect's), else a client shared with at most
 * connections_per_client - 1 other contexts made from the same @p o
 * (the same server's options: any image, one cluster user), connected on
 * first use.  Each context still has its own I/O context and image
 * handle; what the sharers have in common is the client's messenger,
 * Objecter and monitor session (their locks and threads: the per-client
 * ceiling rbdx otherwise avoids), and its fate: a blocklisted client
 * fails every context on it.
 * @return as rbdx_cluster_connect; -ENOMEM.
 * Release with rbdx_cluster_release, never rados_shutdown.  Thread-safe. */
int rbdx_cluster_acquire (const struct rbdx_options *o, rados_t *out,
                          char *err, size_t errlen);

/** Give back a handle from rbdx_cluster_acquire: shut down when no other
 * context holds it (rbdx_cct_release for a client on a shared Ceph
 * context).  Nothing may be in flight on it from the caller's
 * I/O context (destroy that first).  Thread-safe. */
void rbdx_cluster_release (rados_t c);

/** The client @p c (from rbdx_cluster_acquire) was fenced (blocklisted:
 * a context on it saw -ESHUTDOWN/-EBLOCKLISTED): no later
 * rbdx_cluster_acquire hands it out, so new contexts get a fresh Ceph
 * client (a new instance); the contexts holding it keep it until they
 * release it, and the last release shuts it down as usual.  A client of
 * its own (connections_per_client=1) or an unknown @p c: nothing to do.
 * Thread-safe; never fails. */
void rbdx_cluster_retire (rados_t c);

#endif /* RBDX_CLIENTS_H */

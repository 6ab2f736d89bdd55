/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the shared, lock-owning writer of an image.
 *
 * With the exclusive-lock feature (a Pacific default, needed by
 * object-map and fast-diff) two librbd handles writing one image pass
 * the lock back and forth, about 7-8 ms per hand-over, and a flush on a
 * handle that does not own the lock takes it too (checked on Ceph
 * 16.2.15, see server/core/DESIGN.md).  So with writers=shared every write,
 * trim, zero and flush of every connection to an image goes through
 * one context of its own (its own rados_t), the only rbdx handle that
 * ever takes the lock, while reads and block status stay on each
 * connection's context: reads need no lock, and with the cache off
 * they see every acknowledged write.
 *
 * Writers are kept in a process-wide table keyed by image identity
 * (rbdx/identity.h), never by name: after `rbd rename x x-old; rbd
 * create x`, connections to "x" get a writer of the new image while the
 * ones already open keep writing to x-old.  A writer opens its image by
 * id.  Entries are reference counted by the connections using them; the
 * table lock is never held while librbd talks to the cluster; creating a
 * writer is serialised by a lock of its own (writer.c).
 *
 * Fencing: when the writer's rados_t is blocklisted (`rbd lock rm`, a
 * lock break by another client, `ceph osd blocklist add`), its context
 * is marked fenced (ctx.h) and every write of the connections using it
 * fails with EIO from then on, without reaching librbd.  Those
 * connections stay fenced, as a krbd mapping without recover_session
 * does; connections opened afterwards get a fresh writer (a new rados_t,
 * so a new client instance), which takes the lock through librbd's
 * ordinary cooperative path.  rbdx never breaks another owner's lock.
 *
 * Maintenance operations of other clients (`rbd feature disable`, `rbd
 * snap create`, ...) are forwarded by librbd to the lock owner, and the
 * writer's librbd handle carries them out; that works only because no
 * rbdx code runs inside librbd's update-watch callback (ctx.c,
 * on_update; server/core/DESIGN.md).
 */
#ifndef RBDX_WRITER_H
#define RBDX_WRITER_H

#include <stdbool.h>
#include <stddef.h>

#include "rbdx/ctx.h"
#include "rbdx/options.h"

struct rbdx_writer;

/** Take a reference on the writer of the image @p conn is bound to
 * (conn->ident), opening it on first use or when the existing one was
 * fenced.
 *
 * With @p o->exclusive the new writer acquires the lock at once with
 * rbd_lock_acquire(RBD_LOCK_MODE_EXCLUSIVE), which turns off librbd's
 * cooperative hand-over: other clients' writes then fail with -EROFS
 * instead of taking the lock.  It is kept until rbdx_writer_cleanup,
 * so the lock is held for the server's lifetime (as rbd-nbd
 * --exclusive does).  rbdx never breaks another owner's lock.
 *
 * @param out  receives the writer; release with rbdx_writer_put.
 * @return 0; -ENOMEM; any error of rbdx_ctx_open (-ENOENT: the image was
 *         removed meanwhile); with exclusive, the
 *         negative errno of rbd_lock_acquire (-EINVAL: the image has no
 *         exclusive-lock feature; -EROFS/-EBUSY/-ETIMEDOUT: another
 *         client keeps the lock), with a message in @p err.
 * Thread-safe. */
int rbdx_writer_get (const struct rbdx_options *o,
                     const struct rbdx_spec *spec, const struct rbdx_ctx *conn,
                     struct rbdx_writer **out, char *err, size_t errlen);

/** The context writes go through.  Valid while the reference is held. */
struct rbdx_ctx *rbdx_writer_ctx (struct rbdx_writer *w);

/** Drop a reference; the last one closes the writer's context (which
 * releases the lock and the watch).  NULL is a no-op.  Thread-safe. */
void rbdx_writer_put (struct rbdx_writer *w);

/** At unload: drop the references exclusive writers keep on themselves
 * and close every writer no connection uses.  Thread-safe. */
void rbdx_writer_cleanup (void);

#endif /* RBDX_WRITER_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: librbd's quiesce protocol for every handle of an image.
 *
 * `rbd snap create` (any client creating a snapshot without
 * --skip-quiesce) first sends a quiesce notification to every watcher of
 * the image header and waits until each has acknowledged it; a handle
 * with no quiesce watch registered acknowledges at once, one with watches
 * only once rbd_quiesce_complete was called for each of them, and a
 * non-zero result fails the snapshot (librbd ImageState.cc,
 * QuiesceWatchers; ImageWatcher.cc, notify_quiesce; server/core/DESIGN.md,
 * "Quiesce").  rbd-nbd --quiesce does this for its one handle.  rbdx
 * holds one handle per connection plus the shared writer, in one
 * process, so the handles of one image are coordinated as a group:
 *
 *  1. the first notification of any handle starts a round on the group's
 *     thread: the hook runs once ("HOOK DEVICE quiesce", quiesce-hook.h)
 *     while writes still flow, since a filesystem freeze writes its dirty
 *     data back through this very device and would never end if rbdx
 *     held those writes already;
 *  2. then new writes, trims and zeroes of every connection of the image
 *     are held (not failed while their client is there), reads, block
 *     status and flushes go on, and the writes already in librbd are
 *     waited for;
 *  3. every handle notified is acknowledged with 0 (one notified later
 *     in the same quiesce at once);
 *  4. when every handle acknowledged has had its unquiesce notification
 *     (sent once the snapshot exists, or by librbd itself 10 s after the
 *     acknowledgement if its sender vanished), the held writes go on, in
 *     order per connection, and then the unquiesce hook runs (a thaw may
 *     write: ext4 writes its superblock).
 *
 * The hold and the release are logged (debug) with their CLOCK_REALTIME
 * time: "rbdx: quiesce: DEVICE: writes held at SEC.NSEC", "... released
 * at ...".
 *
 * A failing hook (non-zero exit, killed by a signal, not done within
 * quiesce_timeout=) or writes in flight still not done by then:
 * every notified handle is acknowledged with the error (-EIO, or
 * -ETIMEDOUT), so the snapshot fails, as with rbd-nbd; writes were not
 * held, or are released at once; after a timeout the unquiesce hook
 * runs, in case the freeze took effect.
 *
 * Connections come and go during a round: one joining then simply
 * takes part (its handle is acknowledged when notified); one leaving
 * is acknowledged first if notified, so that librbd's unwatch, which
 * waits for a notification in progress, returns.  No librbd callback
 * ever blocks: they record and wake the group's thread.
 *
 * Thread-safety: every function is thread-safe.
 */
#ifndef RBDX_QUIESCE_H
#define RBDX_QUIESCE_H

#include <stdbool.h>
#include <stddef.h>

#include "rbdx/ctx.h"
#include "rbdx/options.h"

struct rbdx_quiesce;          /* the group of one image (identity) */
struct rbdx_quiesce_member;   /* one handle's quiesce watch */

/** A waiter of rbdx_quiesce_write_try: @p wake(@p arg) is called once,
 * from the group's thread, when held writes may go on.  It must not
 * block or call back into this module. */
struct rbdx_quiesce_waiter {
  void (*wake) (void *arg);
  void *arg;
  struct rbdx_quiesce_waiter *next;   /* the group's list */
  bool queued;
};

/** Register the quiesce watch (rbd_quiesce_watch) on @p ctx and join
 * the group of its image identity (creating it and its thread on
 * first use), when @p o has quiesce=true and @p ctx is a read-write
 * handle of the head.  Otherwise *@p out is NULL and nothing happens.
 * The group takes the hook, the timeout and DEVICE (quiesce_device=,
 * else ctx->name) from the first member.
 * @param out  receives the member; release with rbdx_quiesce_leave
 *             before rbdx_ctx_close(@p ctx).
 * @return 0; -ENOMEM; the negative errno of rbd_quiesce_watch or of
 *         pthread_create, with a message in @p err. */
int rbdx_quiesce_join (const struct rbdx_options *o, struct rbdx_ctx *ctx,
                       struct rbdx_quiesce_member **out, char *err,
                       size_t errlen);

/** Leave the group: acknowledge a pending notification of this handle,
 * unregister the watch (rbd_quiesce_unwatch), and drop the group (the
 * last member stops its thread).  NULL is a no-op.  May wait for a hook
 * that is running (at most quiesce_timeout=). */
void rbdx_quiesce_leave (struct rbdx_quiesce_member *m);

/** The group @p m belongs to (NULL for NULL): what writes gate on. */
struct rbdx_quiesce *rbdx_quiesce_of (struct rbdx_quiesce_member *m);

/** Before a write, trim or zero reaches librbd: wait while the group's
 * writes are held, then count it in flight.  NULL @p q: returns at once.
 * Never fails.  @return true if it waited (the caller may then check
 * that its client is still there before it sends the write; if not, it
 * calls rbdx_quiesce_write_end without sending). */
bool rbdx_quiesce_write_begin (struct rbdx_quiesce *q);

/** The same without waiting: @return true when counted in flight (go
 * on); false when held: @p w is queued and woken once writes may go on,
 * and the caller tries again then.  NULL @p q: true. */
bool rbdx_quiesce_write_try (struct rbdx_quiesce *q,
                             struct rbdx_quiesce_waiter *w);

/** Take @p w off the waiting list if it is on it (a connection ending). */
void rbdx_quiesce_waiter_cancel (struct rbdx_quiesce *q,
                                 struct rbdx_quiesce_waiter *w);

/** A write counted by rbdx_quiesce_write_begin/_try completed in
 * librbd.  Any thread (librbd's callback too); never blocks for long. */
void rbdx_quiesce_write_end (struct rbdx_quiesce *q);

#endif /* RBDX_QUIESCE_H */

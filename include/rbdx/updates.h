/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: a context's header updates, handled off librbd's thread on
 * a thread started on demand.
 *
 * librbd calls a handle's update watcher (rbd_update_watch) on its op
 * thread and acknowledges the header-update notification only after the
 * watcher returned; a synchronous librbd call made there deadlocks the
 * lock owner's maintenance operations (server/core/DESIGN.md, "Exclusive
 * lock, caches and multi-conn"; ctx.c, on_update).  So the watcher only
 * notes the update (rbdx_updates_note), and the handler runs on a
 * thread of the context's own.
 *
 * That thread exists only while an update is pending or being handled:
 * rbdx_updates_note starts it when none is running, it makes passes of
 * the handler while updates are pending (updates noted during a pass
 * make one more pass, however many they were) and then exits.  At rest
 * a context has no thread for its updates.  Each context has its own,
 * so a pass stuck in librbd (a refresh against an unreachable cluster)
 * delays only the updates of that context, never those of another
 * context or image in the process.
 *
 * When the thread cannot be started (pthread_create fails, e.g. EAGAIN
 * under a systemd unit's TasksMax), the update stays pending: the next
 * rbdx_updates_note or rbdx_updates_retry (called by every request of
 * the context, at the cost of one atomic load while nothing failed)
 * tries again, and the failure is logged at error level, rate-limited
 * (rbdx_error_limited, errors.h: a limit of its own, process-wide).
 *
 * The thread is joinable and joined by whoever starts the next one, or
 * by rbdx_updates_stop: after a pass it touches nothing of the struct
 * once it has cleared `running` under the lock, so that join waits only
 * for the thread's exit.
 */
#ifndef RBDX_UPDATES_H
#define RBDX_UPDATES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/** The update state of one context.  Embedded in struct rbdx_ctx; the
 * fields are the module's (read them only in tests). */
struct rbdx_updates {
  pthread_mutex_t lock;      /**< orders everything below but `retry`. */
  /** Held around every call of `handle`, by the thread's passes and by
   * rbdx_updates_run, so that two passes never overlap.  Taken with
   * `lock` not held. */
  pthread_mutex_t pass;
  pthread_t thread;          /**< valid while `joinable`. */
  void (*handle) (void *arg);
  void *arg;
  const char *name;          /**< the image, in messages; borrowed. */
  bool pending;              /**< noted and not yet taken by a pass. */
  bool running;              /**< a thread is making passes. */
  bool joinable;             /**< `thread` was started and not joined. */
  bool stopped;              /**< rbdx_updates_stop: no more passes. */
  bool inited;
  /** An update is pending with no thread to handle it (a start failed);
   * read without the lock by rbdx_updates_retry. */
  atomic_bool retry;
};

/** Set up @p u to run @p handle (@p arg) for each batch of updates.
 * @p name (not copied) must outlive @p u.  Starts no thread.  Not
 * concurrent with any other call on @p u. */
void rbdx_updates_init (struct rbdx_updates *u, void (*handle) (void *arg),
                        void *arg, const char *name);

/** Note an update: start the handler's thread unless one is running
 * (which then makes one more pass).  Never calls the handler and never
 * waits for it: safe on librbd's callback threads.  It may wait for a
 * previous handler thread that has finished its passes to exit (join),
 * and takes the lock the handler thread holds only between passes.  A
 * no-op after rbdx_updates_stop.  On a failed start the update stays
 * pending (see the file comment).  Thread-safe. */
void rbdx_updates_note (struct rbdx_updates *u);

/** Make one pass of the handler on the calling thread now, after a
 * pass of the handler's thread that is in progress (waits for it as long
 * as the handler takes): a caller that must see the header's state
 * before it goes on (the open, after rbd_update_watch, when updates may
 * already be noted) gets it without ever running the handler next to
 * the thread's.  Pending updates stay pending (the thread makes its pass
 * for them too).  Not from the handler (self-deadlock), not after
 * rbdx_updates_stop.  Thread-safe. */
void rbdx_updates_run (struct rbdx_updates *u);

/** If a start failed, try again (as rbdx_updates_note, without noting
 * a new update); otherwise return at once (one atomic load).
 * Thread-safe. */
void rbdx_updates_retry (struct rbdx_updates *u);

/** Stop: no pass starts after this returns, a pass in progress is
 * waited for (as long as the handler takes), and the thread is joined.
 * A pending update is dropped.  Call once, after the source of
 * rbdx_updates_note has gone (rbd_update_unwatch returned), then
 * nothing else on @p u; a never-initialised (zeroed) @p u is a no-op.
 * Must not be called from the handler. */
void rbdx_updates_stop (struct rbdx_updates *u);

#endif /* RBDX_UPDATES_H */

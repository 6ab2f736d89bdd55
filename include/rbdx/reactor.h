/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: reaping librbd completions for one image handle.
 *
 * librbd facts relied on (checked on Ceph 16.2.15; server/core/DESIGN.md,
 * "Completions: eventfd, io_uring and poll(2)"):
 * after rbd_set_image_notification(image, efd, EVENT_TYPE_EVENTFD) every
 * asynchronous request's completion is queued inside librbd and 1 is
 * added to the eventfd; rbd_poll_io_events() hands the queued
 * completions out.  The eventfd count is only a hint: after each wake-up
 * poll until it returns 0.  The queue holds no reference, so a
 * completion is released only after it was polled.
 *
 * Design: leader/followers.  nbdkit's API is synchronous, so every
 * request already has a worker thread blocked on it.  Instead of a
 * dedicated reaper thread (librbd thread -> reaper -> worker: two
 * context switches per request), one of the waiting workers is the
 * leader: it alone waits on the eventfd (through io_uring, or poll(2)
 * as a fallback), hands out every polled result and wakes exactly the
 * worker that owns it.  When the leader's own request is done it
 * returns at once and passes leadership to one still-waiting worker.
 * A sleeping worker waits on a semaphore of its own, posted after the
 * reactor mutex is released: a worker woken while the leader still held
 * the mutex (a condition variable must be signalled under it, since the
 * waiter may return and destroy it at once) would at once sleep again on
 * that mutex; that second sleep was about half a wake-up per request at
 * queue depth 32 (server/core/DESIGN.md, "Completions").  Each sleeper is
 * posted exactly once per sleep, by the thread that took it off the list
 * of sleepers under the mutex, so its semaphore is never posted after it
 * returned.
 * At queue depth 1 the request's own thread is woken straight by
 * librbd's eventfd write: one context switch, as with a plain blocking
 * call.  The io_uring ring is only touched by the leader, so it needs
 * no lock of its own; the reactor mutex orders successive leaders.
 *
 * Used only in the plugin's eventfd modes (completion=auto, the
 * default, io_uring, poll).  completion=callback needs no reactor:
 * librbd's callback wakes the owner directly (server/core/DESIGN.md,
 * "Completions").
 */
#ifndef RBDX_REACTOR_H
#define RBDX_REACTOR_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <sys/types.h>

#ifdef HAVE_LIBURING
#include <liburing.h>
#endif
#include <rbd/librbd.h>

#include "rbdx/options.h"

/** One waiting request.  Lives on the submitting worker's stack from
 * rbdx_wait_init until rbdx_reactor_wait returns. */
struct rbdx_wait {
  sem_t wake;                 /**< posted once per sleep: done or hand-over. */
  ssize_t ret;                /**< rbd_aio_get_return_value(): bytes or -errno. */
  bool done;
  bool asleep;                /**< on the reactor's list of sleepers. */
  struct rbdx_wait *next, *prev;  /**< reactor's list of sleepers. */
};

/** The completion reaper of one image handle (one NBD connection). */
struct rbdx_reactor {
  rbd_image_t image;          /**< not owned. */
  int efd;                    /**< not owned; closed by the caller after rbd_close. */
  bool use_uring;             /**< false: poll(2) fallback (always false
                                   when built without liburing). */
#ifdef HAVE_LIBURING
  bool multishot;             /**< kernel supports multishot poll (>= 5.13). */
  bool armed;                 /**< a poll SQE is outstanding on the ring. */
  struct io_uring ring;
#endif
  pthread_mutex_t lock;       /**< guards leader, sleepers, every rbdx_wait. */
  bool leader;                /**< some worker is waiting on the eventfd. */
  struct rbdx_wait *sleepers; /**< workers blocked on their cond. */
};

/** Set up @p r for @p image whose notifications go to @p efd (an
 * eventfd opened with EFD_NONBLOCK).  @p mode selects io_uring or the
 * poll(2) fallback; AUTO falls back when io_uring_queue_init fails
 * (kernel.io_uring_disabled, seccomp) or the plugin was built without
 * liburing, and says so in nbdkit's debug output once per process.
 * @return 0; with mode IO_URING, the negative errno of
 *         io_uring_queue_init, or -ENOTSUP when built without liburing;
 *         -errno from pthread init. */
int rbdx_reactor_init (struct rbdx_reactor *r, rbd_image_t image, int efd,
                       enum rbdx_completion mode);

/** Tear down; no request may be waiting.  Call after rbd_close. */
void rbdx_reactor_fini (struct rbdx_reactor *r);

/** Prepare @p w before submitting the request whose completion was
 * created with rbd_aio_create_completion(w, NULL, &c). */
void rbdx_wait_init (struct rbdx_wait *w);

/** Release @p w when its request was never submitted (rbdx_reactor_wait
 * releases it otherwise). */
void rbdx_wait_fini (struct rbdx_wait *w);

/** Block until @p w's completion has been reaped, reaping for other
 * waiters meanwhile if this thread becomes the leader.
 * @return the request's result: >= 0 (bytes for reads) or a negative
 *         errno from librbd (never an error of its own: if io_uring
 *         fails mid-way it switches to poll(2), since librbd still holds
 *         @p w's address).  Thread-safe: called by any number of nbdkit
 *         worker threads of the same connection at once. */
ssize_t rbdx_reactor_wait (struct rbdx_reactor *r, struct rbdx_wait *w);

/** True when @p r reaps through io_uring (for the debug log). */
static inline bool
rbdx_reactor_uses_uring (const struct rbdx_reactor *r)
{
  return r->use_uring;
}

#endif /* RBDX_REACTOR_H */

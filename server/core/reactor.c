/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: completion reaping (see reactor.h for the design). */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "rbdx/log.h"

#include "rbdx/reactor.h"

/* How many completions one rbd_poll_io_events call may hand out. */
#define POLL_BATCH 32

static atomic_bool fallback_said;

static void
say_fallback (const char *why, int err)
{
  if (!atomic_exchange (&fallback_said, true))
    rbdx_debug ("rbdx: io_uring unavailable (%s: %s); completions are "
                  "reaped with poll(2) on the eventfd instead",
                  why, strerror (err));
}

int
rbdx_reactor_init (struct rbdx_reactor *r, rbd_image_t image, int efd,
                   enum rbdx_completion mode)
{
  int e;

  memset (r, 0, sizeof *r);
  r->image = image;
  r->efd = efd;
  e = pthread_mutex_init (&r->lock, NULL);
  if (e)
    return -e;

  if (mode == RBDX_COMPLETION_POLL)
    return 0;
#ifndef HAVE_LIBURING
  if (mode == RBDX_COMPLETION_IO_URING) {
    pthread_mutex_destroy (&r->lock);
    return -ENOTSUP;
  }
  say_fallback ("built without liburing", ENOTSUP);
  return 0;
#else
  /* Only the leader submits, and it has at most one poll outstanding. */
  e = io_uring_queue_init (4, &r->ring, 0);
  if (e < 0) {
    if (mode == RBDX_COMPLETION_IO_URING) {
      pthread_mutex_destroy (&r->lock);
      return e;
    }
    say_fallback ("io_uring_queue_init", -e);
    return 0;
  }
  r->use_uring = true;
  r->multishot = true;   /* cleared if the kernel answers -EINVAL */
  return 0;
#endif
}

void
rbdx_reactor_fini (struct rbdx_reactor *r)
{
#ifdef HAVE_LIBURING
  if (r->use_uring)
    io_uring_queue_exit (&r->ring);   /* cancels the outstanding poll */
#endif
  pthread_mutex_destroy (&r->lock);
}

void
rbdx_wait_init (struct rbdx_wait *w)
{
  memset (w, 0, sizeof *w);
  sem_init (&w->wake, 0, 0);
}

void
rbdx_wait_fini (struct rbdx_wait *w)
{
  sem_destroy (&w->wake);
}

/* Take @p w off the sleepers.  Lock held; @p w asleep. */
static void
unlink_sleeper (struct rbdx_reactor *r, struct rbdx_wait *w)
{
  if (w->prev)
    w->prev->next = w->next;
  else
    r->sleepers = w->next;
  if (w->next)
    w->next->prev = w->prev;
  w->asleep = false;
}

#ifdef HAVE_LIBURING
/* Queue a poll for readability of the eventfd: multishot when the
 * kernel has it (it stays armed across wake-ups and fires at once if
 * the counter is already non-zero), one-shot otherwise. */
static int
arm (struct rbdx_reactor *r)
{
  struct io_uring_sqe *sqe = io_uring_get_sqe (&r->ring);
  int e;

  if (!sqe)
    return -EBUSY;
  if (r->multishot)
    io_uring_prep_poll_multishot (sqe, r->efd, POLLIN);
  else
    io_uring_prep_poll_add (sqe, r->efd, POLLIN);
  e = io_uring_submit (&r->ring);
  if (e < 0)
    return e;
  r->armed = true;
  return 0;
}

/* Block until the eventfd is readable (or a spurious wake-up). */
static int
wait_uring (struct rbdx_reactor *r)
{
  struct io_uring_cqe *cqe;
  int e;

  if (!r->armed && (e = arm (r)) < 0)
    return e;
  do
    e = io_uring_wait_cqe (&r->ring, &cqe);
  while (e == -EINTR);
  if (e < 0)
    return e;

  /* Take every CQE that is there: stale wake-ups coalesce here. */
  do {
    int res = cqe->res;

    if (!(cqe->flags & IORING_CQE_F_MORE))
      r->armed = false;
    io_uring_cqe_seen (&r->ring, cqe);
    if (res == -EINVAL && r->multishot) {
      r->multishot = false;   /* kernel < 5.13: re-arm one-shot */
      rbdx_debug ("rbdx: multishot poll unsupported, using one-shot poll");
    }
    else if (res < 0 && res != -ECANCELED)
      return res;
  } while (io_uring_peek_cqe (&r->ring, &cqe) == 0);
  return 0;
}
#endif /* HAVE_LIBURING */

static void
wait_poll (struct rbdx_reactor *r)
{
  struct pollfd p = { .fd = r->efd, .events = POLLIN };

  while (poll (&p, 1, -1) < 0 && errno == EINTR)
    ;
}

/* Reap until @me is done.  Called without the lock, by the one leader.
 * It never returns before @me's completion was polled: @me lives on the
 * caller's stack and librbd holds its address. */
static void
lead (struct rbdx_reactor *r, struct rbdx_wait *me)
{
  rbd_completion_t comps[POLL_BATCH];
  uint64_t count;
  int i, n;

  for (;;) {
    /* Reset the counter first, then poll until empty: a completion
     * queued after the last poll bumps the counter again, so no
     * wake-up is lost.  EAGAIN (counter already 0) is fine. */
    if (read (r->efd, &count, sizeof count) < 0 && errno != EAGAIN)
      rbdx_debug ("rbdx: eventfd read: %m");

    while ((n = rbd_poll_io_events (r->image, comps, POLL_BATCH)) > 0) {
      struct rbdx_wait *wake[POLL_BATCH];
      int nwake = 0;

      pthread_mutex_lock (&r->lock);
      for (i = 0; i < n; i++) {
        struct rbdx_wait *w = rbd_aio_get_arg (comps[i]);

        w->ret = rbd_aio_get_return_value (comps[i]);
        w->done = true;
        /* One not asleep yet finds done when it takes the lock. */
        if (w != me && w->asleep) {
          unlink_sleeper (r, w);
          wake[nwake++] = w;
        }
      }
      pthread_mutex_unlock (&r->lock);
      for (i = 0; i < n; i++)
        rbd_aio_release (comps[i]);
      /* After the unlock, so that the woken do not sleep on the lock;
       * each was taken off the list above, so nobody else posts it and
       * it cannot return before this post.  A sem_post whose waiter
       * returns and destroys the semaphore at once is safe in glibc
       * (after its atomic update it passes the address only to
       * futex_wake; nptl/sem_post.c). */
      for (i = 0; i < nwake; i++)
        sem_post (&wake[i]->wake);
    }
    if (me->done)   /* only this thread writes me->done */
      return;

    if (!r->use_uring)
      wait_poll (r);
#ifdef HAVE_LIBURING
    else {
      int e = wait_uring (r);

      if (e < 0) {
        /* Leave io_uring for good rather than fail a request whose
         * completion is still owned by librbd. */
        say_fallback ("io_uring_wait_cqe", -e);
        io_uring_queue_exit (&r->ring);
        r->use_uring = false;
      }
    }
#endif
  }
}

ssize_t
rbdx_reactor_wait (struct rbdx_reactor *r, struct rbdx_wait *w)
{
  struct rbdx_wait *s, *heir = NULL;
  ssize_t ret;

  pthread_mutex_lock (&r->lock);
  while (!w->done) {
    if (!r->leader) {
      r->leader = true;
      pthread_mutex_unlock (&r->lock);
      lead (r, w);            /* returns with w->done */
      pthread_mutex_lock (&r->lock);
      r->leader = false;
      /* Hand leadership to one worker whose request is still pending
       * (a done sleeper was already taken off and posted by lead). */
      for (s = r->sleepers; s; s = s->next) {
        if (!s->done) {
          unlink_sleeper (r, s);
          heir = s;
          break;
        }
      }
    }
    else {
      w->prev = NULL;
      w->next = r->sleepers;
      if (r->sleepers)
        r->sleepers->prev = w;
      r->sleepers = w;
      w->asleep = true;
      pthread_mutex_unlock (&r->lock);
      /* Whoever takes w off the list posts it once. */
      while (sem_wait (&w->wake) < 0)
        ;                     /* EINTR */
      pthread_mutex_lock (&r->lock);
    }
  }
  ret = w->ret;
  pthread_mutex_unlock (&r->lock);
  if (heir)
    sem_post (&heir->wake);   /* taken off the list above: as in lead */
  sem_destroy (&w->wake);
  return ret;
}

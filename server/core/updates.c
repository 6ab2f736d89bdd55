/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: header updates on a thread started on demand (see
 * updates.h).
 *
 * Why a thread per context started on demand, and not a resident one or
 * a worker shared by the image's contexts: header updates are rare
 * (resize, snapshot removal, a QoS setting, a lock break), so a
 * resident thread per context was one thread per connection spent on
 * waiting; a shared worker would save the thread too, but would put the
 * contexts behind it in one queue, where a pass stuck in librbd (a
 * refresh against a cluster that does not answer) delays every other
 * context's fencing, resize and snapshot check, and it needs a lifetime
 * of its own (who creates, who stops it, a context closing while the
 * worker handles it).  A thread per context that lives only while that
 * context has an update keeps the isolation and the simple lifetime of
 * the resident thread (its context owns it, rbdx_updates_stop joins it)
 * at zero threads at rest.  The price is a pthread_create per update
 * and context (tens of microseconds, on an event that happens a few
 * times in an image's life), and a start that can fail, hence `retry`.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "rbdx/log.h"

#include "rbdx/errors.h"
#include "rbdx/updates.h"

void
rbdx_updates_init (struct rbdx_updates *u, void (*handle) (void *arg),
                   void *arg, const char *name)
{
  memset (u, 0, sizeof *u);
  pthread_mutex_init (&u->lock, NULL);
  pthread_mutex_init (&u->pass, NULL);
  u->handle = handle;
  u->arg = arg;
  u->name = name;
  atomic_init (&u->retry, false);
  u->inited = true;
}

static void *
run (void *arg)
{
  struct rbdx_updates *u = arg;

  pthread_mutex_lock (&u->lock);
  while (u->pending && !u->stopped) {
    u->pending = false;           /* updates meanwhile: one more pass */
    pthread_mutex_unlock (&u->lock);
    pthread_mutex_lock (&u->pass);
    u->handle (u->arg);
    pthread_mutex_unlock (&u->pass);
    pthread_mutex_lock (&u->lock);
  }
  /* From here on the thread touches nothing of @u: whoever joins it
   * next waits only for its exit. */
  u->running = false;
  pthread_mutex_unlock (&u->lock);
  return NULL;
}

/* Failed starts, at error level: a limit of their own (errors.h), so a
 * process out of tasks, whose every context and request fails to start
 * one, logs RBDX_LOG_BURST lines per window, not one per attempt. */
static struct rbdx_log_limit start_limit = RBDX_LOG_LIMIT_INIT;

/* Start the thread if an update is pending and none runs.  Lock held. */
static void
start_locked (struct rbdx_updates *u)
{
  pthread_attr_t attr;
  sigset_t all;
  int r;

  if (u->stopped || u->running || !u->pending)
    return;
  if (u->joinable) {
    /* It cleared `running` and let go of the lock: it is exiting. */
    pthread_join (u->thread, NULL);
    u->joinable = false;
  }
  /* No signal for this thread, whichever thread starts it (librbd's,
   * which blocks them all, or a request's): a pass may wait in librbd
   * for minutes, and the host's signals belong to its own threads. */
  r = pthread_attr_init (&attr);
  if (r == 0) {
    sigfillset (&all);
    r = pthread_attr_setsigmask_np (&attr, &all);
    if (r == 0)
      r = pthread_create (&u->thread, &attr, run, u);
    pthread_attr_destroy (&attr);
  }
  if (r == 0) {
    u->running = true;
    u->joinable = true;
    atomic_store (&u->retry, false);
    return;
  }
  atomic_store (&u->retry, true);
  rbdx_error_limited (&start_limit, "rbdx: %s: cannot start a thread to "
                      "handle an update of the image header (resize, "
                      "snapshot removal, QoS, lock break): %s; trying "
                      "again with the next request or update", u->name,
                      strerror (r));
}

void
rbdx_updates_note (struct rbdx_updates *u)
{
  pthread_mutex_lock (&u->lock);
  u->pending = true;
  start_locked (u);
  pthread_mutex_unlock (&u->lock);
}

void
rbdx_updates_run (struct rbdx_updates *u)
{
  pthread_mutex_lock (&u->pass);
  u->handle (u->arg);
  pthread_mutex_unlock (&u->pass);
}

void
rbdx_updates_retry (struct rbdx_updates *u)
{
  if (!atomic_load_explicit (&u->retry, memory_order_relaxed))
    return;
  pthread_mutex_lock (&u->lock);
  start_locked (u);
  pthread_mutex_unlock (&u->lock);
}

void
rbdx_updates_stop (struct rbdx_updates *u)
{
  bool join;

  if (!u->inited)
    return;
  pthread_mutex_lock (&u->lock);
  u->stopped = true;              /* the thread makes no further pass */
  u->pending = false;
  atomic_store (&u->retry, false);
  join = u->joinable;
  u->joinable = false;
  pthread_mutex_unlock (&u->lock);
  if (join)
    pthread_join (u->thread, NULL);   /* after its pass, if in one */
  pthread_mutex_destroy (&u->pass);
  pthread_mutex_destroy (&u->lock);
  u->inited = false;
}

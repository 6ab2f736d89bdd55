/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: librbd's quiesce protocol for every handle of an image
 * (see quiesce.h; the librbd facts: server/core/DESIGN.md, "Quiesce"). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <rbd/librbd.h>

#include "rbdx/clock.h"
#include "rbdx/log.h"
#include "rbdx/printable.h"
#include "rbdx/quiesce-hook.h"
#include "rbdx/quiesce-run.h"
#include "rbdx/quiesce.h"

enum mstate { M_IDLE, M_NOTIFIED };
enum gstate { G_IDLE, G_RUNNING, G_QUIESCED, G_UNQUIESCING };

struct rbdx_quiesce_member {
  struct rbdx_quiesce_member *next;   /* the group's members (q->lock) */
  struct rbdx_quiesce *q;
  struct rbdx_ctx *ctx;
  uint64_t handle;                    /* rbd_quiesce_watch's */
  enum mstate st;
  unsigned pending_unq;  /* acknowledged with 0, unquiesce not seen yet */
  bool leaving;          /* acknowledge at once from now on */
  uint64_t round;        /* the last round it was acknowledged in */
};

struct rbdx_quiesce {
  struct rbdx_quiesce *next;          /* registry (reg_lock) */
  struct rbdx_ident ident;
  unsigned refs;                      /* members (reg_lock) */
  pthread_mutex_t lock;               /* everything below */
  pthread_cond_t cond;                /* the group's thread waits here */
  pthread_cond_t io;                  /* writers and the drain wait here */
  struct rbdx_quiesce_member *members;
  struct rbdx_quiesce_waiter *waiters;
  enum gstate state;
  bool held;                          /* new writes wait */
  bool stop;
  atomic_bool cancel;                 /* the last handle left: a freeze
                                         still running is killed (its
                                         thaw runs), not waited for */
  unsigned inflight;                  /* writes in librbd */
  unsigned pending_unq;               /* sum over the members */
  pthread_t thread;
  char *hook, *device;                /* quiesce_device= or the name */
  char *device_file;                  /* quiesce_device_file=, or NULL */
  const char *dev;                    /* this round's DEVICE: device or
                                         devbuf (the group's thread) */
  char devbuf[RBDX_QUIESCE_DEVICE_MAX + 1];
  unsigned timeout;                   /* seconds */
  uint64_t round;                     /* rounds started */
  int failed_r;                       /* the last round failed with it */
  uint64_t failed_until;              /* ... and its stragglers come
                                         until then (CLOCK_MONOTONIC ns) */
};

/* librbd gives watchers this long to acknowledge one notification
 * (watcher::Notifier::NOTIFY_TIMEOUT, 5 s): a handle that gets the
 * notification of a failed round later than the others is acknowledged
 * with the same error within it. */
#define STRAGGLER_NS (5 * UINT64_C (1000000000))

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rbdx_quiesce *groups;

/* Run the hook for the current round's device (quiesce-run.h). */
static int
run_hook (struct rbdx_quiesce *q, bool quiesce)
{
  return rbdx_quiesce_run_hook (q->hook, q->dev, quiesce, q->timeout,
                                quiesce ? &q->cancel : NULL);
}

/* The DEVICE of the round starting now, into q->dev (quiesce-hook.h):
 * quiesce_device_file='s content (into q->devbuf) if the file exists, else
 * quiesce_device= or the image's name (q->device).  A file that exists
 * but cannot be read or holds no device name fails the round: the
 * device is then unknown, and the hook given another name would find no
 * filesystem and let the snapshot be taken unfrozen.  Only the group's
 * thread calls it.  @return 0 or -EIO. */
static int
round_device (struct rbdx_quiesce *q)
{
  int r = 0;

  q->dev = q->device;
  if (q->device_file)
    r = rbdx_quiesce_device_read (q->device_file, q->devbuf);
  if (r < 0) {
    struct stat st;
    char why[64], shown[2048];

    /* Replaced since the start by something else than a file: say what. */
    if ((r == -EINVAL || r == -EISDIR) && stat (q->device_file, &st) == 0 &&
        !S_ISREG (st.st_mode))
      snprintf (why, sizeof why, "%s, not a regular file",
                rbdx_quiesce_file_kind (st.st_mode));
    else
      snprintf (why, sizeof why, "%s", r == -EINVAL
                ? "not a device name in a regular file" : strerror (-r));
    rbdx_error ("rbdx: quiesce: quiesce_device_file=%s: %s: failing the "
                "snapshot rather than not freezing its filesystem",
                rbdx_printable (q->device_file, shown, sizeof shown), why);
    return -EIO;
  }
  if (r == 1)
    q->dev = q->devbuf;
  return 0;
}

/* Acknowledge @p m's notification with @p r.  q->lock held, which is
 * safe: rbd_quiesce_complete (ImageState.cc, QuiesceWatchers::
 * quiesce_complete) only takes librbd's own lock, counts the handle and,
 * after the last one, completes the notification's context in this
 * thread (ImageWatcher.cc, prepare_quiesce_request: it schedules the
 * fallback unquiesce on a timer and queues the acknowledgement to the
 * notifier).  librbd calls quiesce watches only from its work queue
 * (QuiesceWatchers::send_notify queues them) and never with a lock of
 * its held, so on_quiesce and on_unquiesce cannot run inside this call,
 * and no librbd thread waits for q->lock while holding a lock that
 * rbd_quiesce_complete takes.  Releasing q->lock here would instead let
 * an unquiesce run before pending_unq counts this acknowledgement. */
static void
ack (struct rbdx_quiesce *q, struct rbdx_quiesce_member *m, int r)
{
  rbd_quiesce_complete (m->ctx->image, m->handle, r);
  m->st = M_IDLE;
  m->round = q->round;
  if (r == 0 && !m->leaving) {
    m->pending_unq++;
    q->pending_unq++;
  }
}

/* The debug line of a hold or release, with its CLOCK_REALTIME time
 * (what tests/quiesce/check.py compares its writes' times with). */
static void
log_gate (const struct rbdx_quiesce *q, const char *what)
{
  struct timespec ts;

  clock_gettime (CLOCK_REALTIME, &ts);
  rbdx_debug ("rbdx: quiesce: %s: writes %s at %lld.%09ld", q->dev, what,
              (long long) ts.tv_sec, ts.tv_nsec);
}

/* Let held writes go on.  q->lock held. */
static void
release (struct rbdx_quiesce *q)
{
  struct rbdx_quiesce_waiter *w;

  if (q->held)
    log_gate (q, "released");
  q->held = false;
  pthread_cond_broadcast (&q->io);
  while ((w = q->waiters)) {
    q->waiters = w->next;
    w->queued = false;
    w->wake (w->arg);
  }
}

static bool
any_notified (const struct rbdx_quiesce *q)
{
  for (struct rbdx_quiesce_member *m = q->members; m; m = m->next)
    if (m->st == M_NOTIFIED)
      return true;
  return false;
}

/* One quiesce: hook (writes flowing), hold, drain, acknowledge.
 * Called and returns with q->lock held. */
static void
run_round (struct rbdx_quiesce *q)
{
  uint64_t deadline;
  int r;

  q->state = G_RUNNING;
  q->round++;
  q->failed_r = 0;
  pthread_mutex_unlock (&q->lock);
  r = round_device (q);
  if (r == 0)
    r = run_hook (q, true);
  pthread_mutex_lock (&q->lock);
  if (r == 0) {
    q->held = true;
    log_gate (q, "held");
    deadline = rbdx_clock_ns () + (uint64_t) q->timeout * 1000000000;
    while (q->inflight > 0 && r == 0) {
      struct timespec ts = {
        .tv_sec = (time_t) (deadline / 1000000000),
        .tv_nsec = (long) (deadline % 1000000000),
      };
      if (pthread_cond_timedwait (&q->io, &q->lock, &ts) == ETIMEDOUT &&
          q->inflight > 0) {
        rbdx_error ("rbdx: quiesce: %s: %u writes still in flight after "
                    "%u s", q->dev, q->inflight, q->timeout);
        r = -ETIMEDOUT;
      }
    }
    if (r < 0)
      release (q);
  }
  /* Never -ETIMEDOUT to librbd: a snapshot forwarded to the lock owner
   * that fails with it is sent again (librbd Operations.cc,
   * C_InvokeAsyncRequest: a timed-out owner counts as gone), and each
   * attempt would run the hook again. */
  for (struct rbdx_quiesce_member *m = q->members; m; m = m->next)
    if (m->st == M_NOTIFIED)
      ack (q, m, r == -ETIMEDOUT ? -EIO : r);
  if (r == 0) {
    q->state = G_QUIESCED;
    rbdx_debug ("rbdx: quiesce: %s quiesced", q->dev);
    return;
  }
  q->state = G_IDLE;
  q->failed_r = r == -ETIMEDOUT ? -EIO : r;
  q->failed_until = rbdx_clock_ns () + STRAGGLER_NS;
  if (r == -ETIMEDOUT) {          /* the freeze may have taken effect */
    pthread_mutex_unlock (&q->lock);
    run_hook (q, false);
    pthread_mutex_lock (&q->lock);
  }
}

/* Every acknowledged handle saw its unquiesce: the held writes go on,
 * then the unquiesce hook runs.  In this order because a thaw may write
 * (ext4_unfreeze writes the superblock, seen in
 * tests/kernel/test-kernel-quiesce.sh): with writes still held it would
 * wait for the hook's timeout.  q->lock held. */
static void
run_unquiesce (struct rbdx_quiesce *q)
{
  q->state = G_UNQUIESCING;
  release (q);
  pthread_mutex_unlock (&q->lock);
  run_hook (q, false);
  pthread_mutex_lock (&q->lock);
  q->state = G_IDLE;
  rbdx_debug ("rbdx: quiesce: %s unquiesced", q->dev);
}

static void *
group_thread (void *arg)
{
  struct rbdx_quiesce *q = arg;

  pthread_mutex_lock (&q->lock);
  for (;;) {
    /* Leaving handles, and handles notified while quiesced (late, or a
     * second snapshot meanwhile): acknowledged at once. */
    for (struct rbdx_quiesce_member *m = q->members; m; m = m->next)
      if (m->st == M_NOTIFIED && (m->leaving || q->state == G_QUIESCED))
        ack (q, m, 0);
    /* The same notification as a round that failed, reaching a handle
     * that was not part of it (a handle that was gets a new snapshot's
     * notification, and a new round runs). */
    for (struct rbdx_quiesce_member *m = q->members; m; m = m->next)
      if (m->st == M_NOTIFIED && q->state == G_IDLE && q->failed_r &&
          m->round != q->round && rbdx_clock_ns () < q->failed_until)
        ack (q, m, q->failed_r);
    /* Before the stop: the last member leaving while quiesced drops the
     * pending count to 0 and then stops the group; the thaw must still
     * run, or the filesystem stays frozen. */
    if (q->state == G_QUIESCED && q->pending_unq == 0)
      run_unquiesce (q);
    else if (q->stop)
      break;
    else if (q->state == G_IDLE && any_notified (q))
      run_round (q);
    else
      pthread_cond_wait (&q->cond, &q->lock);
  }
  if (q->held)
    release (q);
  pthread_mutex_unlock (&q->lock);
  return NULL;
}

static void
on_quiesce (void *arg)
{
  struct rbdx_quiesce_member *m = arg;
  struct rbdx_quiesce *q = m->q;

  pthread_mutex_lock (&q->lock);
  m->st = M_NOTIFIED;
  pthread_cond_signal (&q->cond);
  pthread_mutex_unlock (&q->lock);
}

static void
on_unquiesce (void *arg)
{
  struct rbdx_quiesce_member *m = arg;
  struct rbdx_quiesce *q = m->q;

  pthread_mutex_lock (&q->lock);
  if (m->pending_unq > 0) {
    m->pending_unq--;
    if (--q->pending_unq == 0)
      pthread_cond_signal (&q->cond);
  }
  pthread_mutex_unlock (&q->lock);
}

static void
group_free (struct rbdx_quiesce *q)
{
  pthread_mutex_destroy (&q->lock);
  pthread_cond_destroy (&q->cond);
  pthread_cond_destroy (&q->io);
  free (q->hook);
  free (q->device);
  free (q->device_file);
  free (q);
}

/* The group of @p ctx's identity, with a new reference; reg_lock held. */
static int
group_get (const struct rbdx_options *o, const struct rbdx_ctx *ctx,
           struct rbdx_quiesce **out, char *err, size_t errlen)
{
  struct rbdx_quiesce *q;
  pthread_condattr_t ca;
  int r;

  for (q = groups; q; q = q->next)
    if (rbdx_ident_equal (&q->ident, &ctx->ident)) {
      q->refs++;
      *out = q;
      return 0;
    }
  q = calloc (1, sizeof *q);
  if (!q || !(q->hook = strdup (rbdx_quiesce_hook_path (&o->quiesce))) ||
      !(q->device = strdup (o->quiesce.device ? o->quiesce.device
                                               : ctx->name)) ||
      (o->quiesce.device_file &&
       !(q->device_file = strdup (o->quiesce.device_file)))) {
    if (q) {
      free (q->hook);
      free (q->device);
      free (q);
    }
    snprintf (err, errlen, "out of memory");
    return -ENOMEM;
  }
  q->ident = ctx->ident;
  q->dev = q->device;
  atomic_init (&q->cancel, false);
  q->timeout = rbdx_quiesce_timeout (&o->quiesce);
  pthread_mutex_init (&q->lock, NULL);
  pthread_cond_init (&q->cond, NULL);
  pthread_condattr_init (&ca);
  pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
  pthread_cond_init (&q->io, &ca);
  pthread_condattr_destroy (&ca);
  r = pthread_create (&q->thread, NULL, group_thread, q);
  if (r) {
    snprintf (err, errlen, "quiesce: cannot start a thread: %s", strerror (r));
    group_free (q);
    return -r;
  }
  q->refs = 1;
  q->next = groups;
  groups = q;
  *out = q;
  return 0;
}

static void
group_put (struct rbdx_quiesce *q)
{
  struct rbdx_quiesce **p;
  bool last;

  pthread_mutex_lock (&reg_lock);
  last = --q->refs == 0;
  if (last)
    for (p = &groups; *p; p = &(*p)->next)
      if (*p == q) {
        *p = q->next;
        break;
      }
  pthread_mutex_unlock (&reg_lock);
  if (!last)
    return;
  /* No handle of ours is left to hold writes for: a freeze hook still
   * running (a hung one would keep the server's stop waiting up to
   * quiesce_timeout=) is killed now; the thaw after it still runs. */
  atomic_store (&q->cancel, true);
  pthread_mutex_lock (&q->lock);
  q->stop = true;
  pthread_cond_signal (&q->cond);
  pthread_mutex_unlock (&q->lock);
  pthread_join (q->thread, NULL);
  group_free (q);
}

static void
unlink_member (struct rbdx_quiesce_member *m)
{
  struct rbdx_quiesce *q = m->q;

  pthread_mutex_lock (&q->lock);
  for (struct rbdx_quiesce_member **p = &q->members; *p; p = &(*p)->next)
    if (*p == m) {
      *p = m->next;
      break;
    }
  pthread_mutex_unlock (&q->lock);
}

int
rbdx_quiesce_join (const struct rbdx_options *o, struct rbdx_ctx *ctx,
                   struct rbdx_quiesce_member **out, char *err, size_t errlen)
{
  struct rbdx_quiesce_member *m;
  struct rbdx_quiesce *q = NULL;
  char shown[2048];
  int r;

  *out = NULL;
  if (!o->quiesce.on || ctx->readonly || ctx->ident.snap_id != RBDX_NOSNAP)
    return 0;
  m = calloc (1, sizeof *m);
  if (!m) {
    snprintf (err, errlen, "out of memory");
    return -ENOMEM;
  }
  pthread_mutex_lock (&reg_lock);
  r = group_get (o, ctx, &q, err, errlen);
  pthread_mutex_unlock (&reg_lock);
  if (r < 0) {
    free (m);
    return r;
  }
  m->q = q;
  m->ctx = ctx;
  pthread_mutex_lock (&q->lock);
  m->next = q->members;
  q->members = m;
  /* Not a straggler of a round before it watched: a watch registered
   * after a notification is not called for it (QuiesceWatchers). */
  m->round = q->round;
  pthread_mutex_unlock (&q->lock);
  r = rbd_quiesce_watch (ctx->image, on_quiesce, on_unquiesce, m, &m->handle);
  if (r < 0) {
    snprintf (err, errlen, "quiesce=true: cannot watch '%s' for quiesce "
              "notifications: %s", ctx->name, strerror (-r));
    unlink_member (m);
    group_put (q);
    free (m);
    return r;
  }
  rbdx_debug ("rbdx: %s: quiesce watch %" PRIu64 " registered, hook %s %s",
              ctx->name, m->handle, rbdx_printable (q->hook, shown,
                                                    sizeof shown), q->device);
  *out = m;
  return 0;
}

void
rbdx_quiesce_leave (struct rbdx_quiesce_member *m)
{
  struct rbdx_quiesce *q;
  int r;

  if (!m)
    return;
  q = m->q;
  pthread_mutex_lock (&q->lock);
  m->leaving = true;
  if (m->st == M_NOTIFIED)
    ack (q, m, 0);              /* its writes are over: nothing to hold */
  if (m->pending_unq) {
    q->pending_unq -= m->pending_unq;
    m->pending_unq = 0;
    if (q->pending_unq == 0)
      pthread_cond_signal (&q->cond);
  }
  pthread_mutex_unlock (&q->lock);
  /* Waits for a notification of this handle in progress, which the
   * group's thread acknowledges (leaving). */
  r = rbd_quiesce_unwatch (m->ctx->image, m->handle);
  if (r < 0)
    rbdx_error ("rbdx: %s: rbd_quiesce_unwatch: %s", m->ctx->name,
                strerror (-r));
  unlink_member (m);
  group_put (q);
  free (m);
}

struct rbdx_quiesce *
rbdx_quiesce_of (struct rbdx_quiesce_member *m)
{
  return m ? m->q : NULL;
}

bool
rbdx_quiesce_write_begin (struct rbdx_quiesce *q)
{
  bool waited = false;

  if (!q)
    return false;
  pthread_mutex_lock (&q->lock);
  while (q->held) {
    waited = true;
    pthread_cond_wait (&q->io, &q->lock);
  }
  q->inflight++;
  pthread_mutex_unlock (&q->lock);
  return waited;
}

bool
rbdx_quiesce_write_try (struct rbdx_quiesce *q, struct rbdx_quiesce_waiter *w)
{
  bool go;

  if (!q)
    return true;
  pthread_mutex_lock (&q->lock);
  go = !q->held;
  if (go)
    q->inflight++;
  else if (!w->queued) {
    w->queued = true;
    w->next = q->waiters;
    q->waiters = w;
  }
  pthread_mutex_unlock (&q->lock);
  return go;
}

void
rbdx_quiesce_waiter_cancel (struct rbdx_quiesce *q,
                            struct rbdx_quiesce_waiter *w)
{
  if (!q)
    return;
  pthread_mutex_lock (&q->lock);
  for (struct rbdx_quiesce_waiter **p = &q->waiters; *p; p = &(*p)->next)
    if (*p == w) {
      *p = w->next;
      break;
    }
  w->queued = false;
  pthread_mutex_unlock (&q->lock);
}

void
rbdx_quiesce_write_end (struct rbdx_quiesce *q)
{
  if (!q)
    return;
  pthread_mutex_lock (&q->lock);
  if (--q->inflight == 0 && q->held)
    pthread_cond_broadcast (&q->io);
  pthread_mutex_unlock (&q->lock);
}

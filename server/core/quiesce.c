/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: librbd's quiesce protocol for every handle of an image
 * (see quiesce.h; the librbd facts: server/core/DESIGN.md, "Quiesce"). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rbd/librbd.h>

#include "rbdx/log.h"
#include "rbdx/quiesce-hook.h"
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
  unsigned inflight;                  /* writes in librbd */
  unsigned pending_unq;               /* sum over the members */
  pthread_t thread;
  char *hook, *device;
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

static uint64_t
mono_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

/* Run HOOK DEVICE quiesce|unquiesce with execv and wait for it, at most
 * q->timeout seconds (then its process group is killed).  The child
 * only makes async-signal-safe calls before execv: the parent has
 * librados threads.  @return 0 (exit status 0), -EIO, -ETIMEDOUT. */
static int
run_hook (struct rbdx_quiesce *q, bool quiesce)
{
  const char *argv[4];
  const char *what = quiesce ? "quiesce" : "unquiesce";
  uint64_t deadline;
  int status = 0, r;
  pid_t pid;

  if (rbdx_quiesce_hook_argv (q->hook, q->device, quiesce, argv) < 0) {
    rbdx_error ("rbdx: quiesce: refusing to run hook '%s' for '%s'", q->hook,
                q->device);
    return -EINVAL;
  }
  pid = fork ();
  if (pid < 0) {
    r = -errno;
    rbdx_error ("rbdx: quiesce: cannot start hook %s: %s", q->hook,
                strerror (-r));
    return -EIO;
  }
  if (pid == 0) {
    struct sigaction sa;
    sigset_t all;
    int fd;

    setpgid (0, 0);
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigaction (SIGPIPE, &sa, NULL);     /* the engine ignores it */
    sigemptyset (&all);
    sigprocmask (SIG_SETMASK, &all, NULL);
    fd = open ("/dev/null", O_RDONLY);
    if (fd >= 0 && fd != 0) {
      dup2 (fd, 0);
      close (fd);
    }
    if (syscall (SYS_close_range, 3u, ~0u, 0u) < 0)
      for (int i = 3; i < 1024; i++)
        close (i);
    execv (argv[0], (char *const *) argv);
    _exit (127);
  }
  rbdx_debug ("rbdx: quiesce: running %s %s %s (pid %d)", argv[0], argv[1],
              what, (int) pid);
  deadline = mono_ns () + (uint64_t) q->timeout * 1000000000;
  for (;;) {
    pid_t w = waitpid (pid, &status, WNOHANG);

    if (w == pid)
      break;
    if (w < 0 && errno != EINTR) {
      rbdx_error ("rbdx: quiesce: waiting for hook %s: %s", q->hook,
                  strerror (errno));
      return -EIO;
    }
    if (mono_ns () >= deadline) {
      kill (-pid, SIGKILL);
      kill (pid, SIGKILL);
      while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
      rbdx_error ("rbdx: quiesce: hook %s %s %s did not finish within %u s: "
                  "killed", argv[0], argv[1], what, q->timeout);
      return -ETIMEDOUT;
    }
    nanosleep (&(struct timespec) { 0, 5000000 }, NULL);
  }
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0) {
    rbdx_debug ("rbdx: quiesce: %s %s %s succeeded", argv[0], argv[1], what);
    return 0;
  }
  if (WIFEXITED (status))
    rbdx_error ("rbdx: quiesce: hook %s %s %s failed with exit status %d",
                argv[0], argv[1], what, WEXITSTATUS (status));
  else
    rbdx_error ("rbdx: quiesce: hook %s %s %s killed by signal %d", argv[0],
                argv[1], what, WTERMSIG (status));
  return -EIO;
}

/* Acknowledge @p m's notification with @p r.  q->lock held: librbd only
 * completes its notification's context here and calls no watch back
 * from it (ImageState.cc, QuiesceWatchers::quiesce_complete). */
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
  rbdx_debug ("rbdx: quiesce: %s: writes %s at %lld.%09ld", q->device, what,
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
  r = run_hook (q, true);
  pthread_mutex_lock (&q->lock);
  if (r == 0) {
    q->held = true;
    log_gate (q, "held");
    deadline = mono_ns () + (uint64_t) q->timeout * 1000000000;
    while (q->inflight > 0 && r == 0) {
      struct timespec ts = {
        .tv_sec = (time_t) (deadline / 1000000000),
        .tv_nsec = (long) (deadline % 1000000000),
      };
      if (pthread_cond_timedwait (&q->io, &q->lock, &ts) == ETIMEDOUT &&
          q->inflight > 0) {
        rbdx_error ("rbdx: quiesce: %s: %u writes still in flight after "
                    "%u s", q->device, q->inflight, q->timeout);
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
    rbdx_debug ("rbdx: quiesce: %s quiesced", q->device);
    return;
  }
  q->state = G_IDLE;
  q->failed_r = r == -ETIMEDOUT ? -EIO : r;
  q->failed_until = mono_ns () + STRAGGLER_NS;
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
  rbdx_debug ("rbdx: quiesce: %s unquiesced", q->device);
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
          m->round != q->round && mono_ns () < q->failed_until)
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
                                               : ctx->name))) {
    if (q) {
      free (q->hook);
      free (q);
    }
    snprintf (err, errlen, "out of memory");
    return -ENOMEM;
  }
  q->ident = ctx->ident;
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
              ctx->name, m->handle, q->hook, q->device);
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

void
rbdx_quiesce_write_begin (struct rbdx_quiesce *q)
{
  if (!q)
    return;
  pthread_mutex_lock (&q->lock);
  while (q->held)
    pthread_cond_wait (&q->io, &q->lock);
  q->inflight++;
  pthread_mutex_unlock (&q->lock);
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

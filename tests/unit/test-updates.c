/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: a context's header updates on a thread started on
 * demand (server/core/updates.c, include/rbdx/updates.h).
 *
 * updates.c (and errors.c, its rate limit) is compiled here with the
 * core's host services (rbdx/log.h) stubbed, and linked with -Wl,--wrap=pthread_create,--wrap=pthread_join
 * so that the test counts the threads it starts and joins, sees when
 * their start routine has returned, and can make a start fail with
 * EAGAIN (as under a systemd unit's TasksMax).  The test's own threads
 * are made with __real_pthread_create.  Asserted:
 *   - at rest no thread is left: the handler's thread ends after its
 *     pass and the process has as many threads as before the update
 *     (/proc/self/task);
 *   - updates noted during a pass make exactly one more pass;
 *   - no update is lost: noters on 4 threads racing the handler thread's
 *     exit, and every noted update is seen by a pass that started after
 *     it; passes of one context never overlap;
 *   - a failed start keeps the update: no pass, an error message naming
 *     the image and the errno, at most RBDX_LOG_BURST per window however
 *     many starts failed, and the next retry or note starts the pass;
 *     without a failure, retry starts nothing;
 *   - stop during a pass waits for the pass, starts no further pass for
 *     updates noted meanwhile, and a note after stop is a no-op;
 *   - a pass stuck on one context does not hold up another's;
 *   - a pass run on the caller's thread (rbdx_updates_run, the open's)
 *     while the handler's thread is in a pass waits for that pass: the
 *     two never overlap, and both are made;
 *   - every thread started is joined exactly once (also TSan's thread
 *     leak check in scripts/test --sanitize=thread).
 * Waits poll for a condition with a generous deadline; a hang is caught
 * by alarm(2).
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rbdx/errors.h"
#include "rbdx/log.h"
#include "rbdx/updates.h"

#define DEADLINE_S 60          /* for each polled condition */
#define WATCHDOG_S 240         /* the whole program; TSan is ~10x slower */
#define NOTERS 4
#define NOTES_PER_NOTER 2000
#define SEED 20261202u

/* ---- pthread_create / pthread_join, wrapped ------------------------- */

int __real_pthread_create (pthread_t *t, const pthread_attr_t *attr,
                           void *(*fn) (void *), void *arg);
int __real_pthread_join (pthread_t t, void **ret);
int __wrap_pthread_create (pthread_t *t, const pthread_attr_t *attr,
                           void *(*fn) (void *), void *arg);
int __wrap_pthread_join (pthread_t t, void **ret);

static atomic_int fail_creates;  /* fail this many next starts with EAGAIN */
static atomic_int created;       /* threads started by updates.c */
static atomic_int joined;        /* of those, joined */
static atomic_int live;          /* of those, start routine not returned */

struct tramp {
  void *(*fn) (void *);
  void *arg;
};

static void *
tramp (void *p)
{
  struct tramp t = *(struct tramp *) p;
  void *r;

  free (p);
  r = t.fn (t.arg);
  atomic_fetch_sub (&live, 1);
  return r;
}

int
__wrap_pthread_create (pthread_t *t, const pthread_attr_t *attr,
                       void *(*fn) (void *), void *arg)
{
  struct tramp *p;
  int r;

  if (atomic_load (&fail_creates) > 0) {
    atomic_fetch_sub (&fail_creates, 1);
    return EAGAIN;
  }
  p = malloc (sizeof *p);
  if (!p)
    return EAGAIN;
  p->fn = fn;
  p->arg = arg;
  atomic_fetch_add (&live, 1);
  r = __real_pthread_create (t, attr, tramp, p);
  if (r != 0) {
    atomic_fetch_sub (&live, 1);
    free (p);
    return r;
  }
  atomic_fetch_add (&created, 1);
  return 0;
}

int
__wrap_pthread_join (pthread_t t, void **ret)
{
  int r = __real_pthread_join (t, ret);

  if (r == 0)
    atomic_fetch_add (&joined, 1);
  return r;
}

/* ---- The host services (rbdx/log.h) --------------------------------- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int errors_logged;
static char last_error[512];

void
rbdx_debug (const char *fmt, ...)
{
  (void) fmt;
}

void
rbdx_error (const char *fmt, ...)
{
  va_list ap;

  pthread_mutex_lock (&log_lock);
  va_start (ap, fmt);
  vsnprintf (last_error, sizeof last_error, fmt, ap);
  va_end (ap);
  errors_logged++;
  pthread_mutex_unlock (&log_lock);
}

int
rbdx_sleep_ns (uint64_t ns)
{
  struct timespec ts = { ns / 1000000000, ns % 1000000000 };
  return nanosleep (&ts, NULL);
}

static int
errors (void)
{
  int n;

  pthread_mutex_lock (&log_lock);
  n = errors_logged;
  pthread_mutex_unlock (&log_lock);
  return n;
}

/* ---- The handler ---------------------------------------------------- */

/* One context's handler: counts passes, can be held inside a pass by a
 * gate, records the sequence number of the last note it saw. */
struct probe {
  struct rbdx_updates u;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool gate_closed;            /* a pass waits while true */
  int waiting;                 /* passes waiting at the gate */
  atomic_int passes;
  atomic_int inside;           /* passes running now (must stay <= 1) */
  atomic_int overlaps;
  atomic_ulong seq;            /* notes so far (incremented before each) */
  atomic_ulong seen;           /* seq as the latest pass found it */
  unsigned seed;
  bool jitter;                 /* pause a little in some passes */
  atomic_bool *flag_at_exit;   /* read as each pass ends: */
  atomic_bool flag_seen;       /* ... and recorded true if ever set */
};

static void
handle (void *arg)
{
  struct probe *p = arg;

  if (atomic_fetch_add (&p->inside, 1) != 0)
    atomic_fetch_add (&p->overlaps, 1);
  atomic_store (&p->seen, atomic_load (&p->seq));
  pthread_mutex_lock (&p->lock);
  p->waiting++;
  pthread_cond_broadcast (&p->cond);
  while (p->gate_closed)
    pthread_cond_wait (&p->cond, &p->lock);
  p->waiting--;
  if (p->jitter && rand_r (&p->seed) % 4 == 0) {
    pthread_mutex_unlock (&p->lock);
    rbdx_sleep_ns ((rand_r (&p->seed) % 50) * 1000);
    pthread_mutex_lock (&p->lock);
  }
  pthread_mutex_unlock (&p->lock);
  if (p->flag_at_exit && atomic_load (p->flag_at_exit))
    atomic_store (&p->flag_seen, true);
  atomic_fetch_add (&p->passes, 1);
  atomic_fetch_sub (&p->inside, 1);
}

static void
probe_init (struct probe *p, const char *name)
{
  memset (p, 0, sizeof *p);
  pthread_mutex_init (&p->lock, NULL);
  pthread_cond_init (&p->cond, NULL);
  p->seed = SEED;
  rbdx_updates_init (&p->u, handle, p, name);
}

static void
probe_fini (struct probe *p)
{
  rbdx_updates_stop (&p->u);
  pthread_cond_destroy (&p->cond);
  pthread_mutex_destroy (&p->lock);
}

static void
gate (struct probe *p, bool closed)
{
  pthread_mutex_lock (&p->lock);
  p->gate_closed = closed;
  pthread_cond_broadcast (&p->cond);
  pthread_mutex_unlock (&p->lock);
}

static void
note (struct probe *p)
{
  atomic_fetch_add (&p->seq, 1);
  rbdx_updates_note (&p->u);
}

/* ---- Polling -------------------------------------------------------- */

static double
now_s (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Poll @p cond (every millisecond) for DEADLINE_S seconds. */
#define EVENTUALLY(cond) do {                                   \
    double until_ = now_s () + DEADLINE_S;                      \
    while (!(cond) && now_s () < until_)                        \
      rbdx_sleep_ns (1000000);                                  \
    if (!(cond))                                                \
      fail_msg ("not within %d s: %s", DEADLINE_S, #cond);      \
  } while (0)

static int
tasks (void)
{
  DIR *d = opendir ("/proc/self/task");
  struct dirent *e;
  int n = 0;

  assert_non_null (d);
  while ((e = readdir (d)))
    if (e->d_name[0] != '.')
      n++;
  closedir (d);
  return n;
}

static bool
waiting_at_gate (struct probe *p, int n)
{
  bool r;

  pthread_mutex_lock (&p->lock);
  r = p->waiting == n;
  pthread_mutex_unlock (&p->lock);
  return r;
}

static void
reset_counts (void)
{
  atomic_store (&created, 0);
  atomic_store (&joined, 0);
  atomic_store (&fail_creates, 0);
  pthread_mutex_lock (&log_lock);
  errors_logged = 0;
  last_error[0] = '\0';
  pthread_mutex_unlock (&log_lock);
}

/* ---- Tests ---------------------------------------------------------- */

/* Records its thread id in @p arg (a pid_t). */
static void *
nothing (void *arg)
{
  *(pid_t *) arg = gettid ();
  return NULL;
}

/* Whether thread @p tid is still listed in /proc/self/task. */
static bool
listed (pid_t tid)
{
  char path[64];

  snprintf (path, sizeof path, "/proc/self/task/%ld", (long) tid);
  return access (path, F_OK) == 0;
}

/* One update: one pass on one thread, which then ends. */
static void
test_rest (void **state)
{
  struct probe p;
  pthread_t t;
  pid_t tid = 0;
  int base;

  (void) state;
  reset_counts ();
  /* TSan starts a thread of its own with the first pthread_create. */
  assert_int_equal (__real_pthread_create (&t, NULL, nothing, &tid), 0);
  assert_int_equal (__real_pthread_join (t, NULL), 0);
  /* Joined, its task may still be listed for a moment. */
  EVENTUALLY (!listed (tid));
  base = tasks ();
  probe_init (&p, "rbd/rest");
  assert_int_equal (tasks (), base);        /* init starts nothing */
  note (&p);
  EVENTUALLY (atomic_load (&p.passes) == 1 && atomic_load (&live) == 0);
  EVENTUALLY (tasks () == base);            /* gone, not parked */
  assert_int_equal (atomic_load (&created), 1);
  /* The next update gets a thread again (joining the ended one). */
  note (&p);
  EVENTUALLY (atomic_load (&p.passes) == 2 && atomic_load (&live) == 0);
  assert_int_equal (atomic_load (&created), 2);
  assert_int_equal (atomic_load (&joined), 1);
  probe_fini (&p);
  assert_int_equal (atomic_load (&joined), 2);
  EVENTUALLY (tasks () == base);            /* a joined thread may linger in /proc */
  assert_int_equal (errors (), 0);
}

/* 100 updates during a pass: one more pass, on the same thread. */
static void
test_coalesce (void **state)
{
  struct probe p;

  (void) state;
  reset_counts ();
  probe_init (&p, "rbd/coalesce");
  gate (&p, true);
  note (&p);
  EVENTUALLY (waiting_at_gate (&p, 1));
  for (int i = 0; i < 100; i++)
    note (&p);
  gate (&p, false);
  EVENTUALLY (atomic_load (&live) == 0);
  assert_int_equal (atomic_load (&p.passes), 2);
  assert_int_equal (atomic_load (&p.seen), 101);
  assert_int_equal (atomic_load (&created), 1);
  probe_fini (&p);
  assert_int_equal (atomic_load (&joined), 1);
}

struct noter {
  struct probe *p;
  unsigned seed;
};

static void *
noter (void *arg)
{
  struct noter *n = arg;

  for (int i = 0; i < NOTES_PER_NOTER; i++) {
    note (n->p);
    switch (rand_r (&n->seed) % 8) {
    case 0:
      rbdx_sleep_ns ((rand_r (&n->seed) % 200) * 1000);  /* let it exit */
      break;
    case 1:
    case 2:
      sched_yield ();
      break;
    default:
      break;
    }
  }
  return NULL;
}

/* Notes race the handler thread's exit from four threads: the last
 * pass saw every note, and passes never overlapped. */
static void
test_no_lost_update (void **state)
{
  struct probe p;
  struct noter n[NOTERS];
  pthread_t t[NOTERS];

  (void) state;
  reset_counts ();
  probe_init (&p, "rbd/race");
  p.jitter = true;
  for (int i = 0; i < NOTERS; i++) {
    n[i].p = &p;
    n[i].seed = SEED + i;
    assert_int_equal (__real_pthread_create (&t[i], NULL, noter, &n[i]), 0);
  }
  for (int i = 0; i < NOTERS; i++)
    assert_int_equal (__real_pthread_join (t[i], NULL), 0);
  EVENTUALLY (atomic_load (&live) == 0);
  assert_int_equal (atomic_load (&p.seen), NOTERS * NOTES_PER_NOTER);
  assert_int_equal (atomic_load (&p.overlaps), 0);
  assert_true (atomic_load (&created) >= 1);
  assert_true (atomic_load (&p.passes) <= NOTERS * NOTES_PER_NOTER);
  print_message ("%d notes: %d passes on %d threads\n",
                 NOTERS * NOTES_PER_NOTER, atomic_load (&p.passes),
                 atomic_load (&created));
  probe_fini (&p);
  assert_int_equal (atomic_load (&joined), atomic_load (&created));
}

/* pthread_create fails: the update waits for the next note or retry,
 * and the failures are logged at error level, rate-limited. */
static void
test_start_fails (void **state)
{
  struct probe p;
  double t0;

  (void) state;
  reset_counts ();
  probe_init (&p, "rbd/tasksmax");
  rbdx_updates_retry (&p.u);                 /* nothing failed: no-op */
  assert_int_equal (atomic_load (&created), 0);

  t0 = now_s ();
  atomic_store (&fail_creates, 3);
  note (&p);
  assert_true (atomic_load (&p.u.retry));
  assert_int_equal (errors (), 1);
  pthread_mutex_lock (&log_lock);
  assert_non_null (strstr (last_error, "rbd/tasksmax"));
  assert_non_null (strstr (last_error, "cannot start a thread"));
  assert_non_null (strstr (last_error, strerror (EAGAIN)));
  pthread_mutex_unlock (&log_lock);
  note (&p);                                 /* fails again */
  rbdx_updates_retry (&p.u);                 /* and again */
  assert_int_equal (atomic_load (&fail_creates), 0);
  assert_int_equal (atomic_load (&created), 0);
  assert_int_equal (atomic_load (&p.passes), 0);
  assert_int_equal (errors (), 3);
  assert_true (atomic_load (&p.u.retry));

  rbdx_updates_retry (&p.u);                 /* a request: starts now */
  EVENTUALLY (atomic_load (&p.passes) == 1 && atomic_load (&live) == 0);
  assert_int_equal (atomic_load (&p.seen), 2);
  assert_false (atomic_load (&p.u.retry));
  assert_int_equal (atomic_load (&created), 1);

  /* A failure, then the next update starts it. */
  atomic_store (&fail_creates, 1);
  note (&p);
  assert_true (atomic_load (&p.u.retry));
  note (&p);
  EVENTUALLY (atomic_load (&p.passes) == 2 && atomic_load (&live) == 0);
  assert_int_equal (atomic_load (&p.seen), 4);
  assert_false (atomic_load (&p.u.retry));

  /* Every request of a process out of tasks fails to start it: the
   * messages stop at RBDX_LOG_BURST per window. */
  atomic_store (&fail_creates, 3 * RBDX_LOG_BURST);
  note (&p);
  for (int i = 1; i < 3 * RBDX_LOG_BURST; i++)
    rbdx_updates_retry (&p.u);
  assert_int_equal (atomic_load (&fail_creates), 0);
  if (now_s () - t0 < RBDX_LOG_WINDOW_S - 1)  /* all in one window */
    assert_int_equal (errors (), RBDX_LOG_BURST);
  else
    assert_true (errors () <= 2 * RBDX_LOG_BURST);
  rbdx_updates_retry (&p.u);
  EVENTUALLY (atomic_load (&p.passes) == 3 && atomic_load (&live) == 0);
  assert_int_equal (atomic_load (&p.seen), 5);
  probe_fini (&p);
  assert_int_equal (atomic_load (&joined), atomic_load (&created));
}

struct stopper {
  struct probe *p;
  atomic_bool returned;
};

static void *
stopper (void *arg)
{
  struct stopper *s = arg;

  rbdx_updates_stop (&s->p->u);
  atomic_store (&s->returned, true);
  return NULL;
}

static bool
stopped (struct probe *p)
{
  bool r;

  pthread_mutex_lock (&p->u.lock);
  r = p->u.stopped;
  pthread_mutex_unlock (&p->u.lock);
  return r;
}

/* Stop while a pass runs: it waits for the pass, and no pass follows. */
static void
test_stop_during_pass (void **state)
{
  struct probe p;
  struct stopper s = { .p = &p };
  pthread_t t;

  (void) state;
  reset_counts ();
  probe_init (&p, "rbd/stop");
  p.flag_at_exit = &s.returned;
  gate (&p, true);
  note (&p);
  EVENTUALLY (waiting_at_gate (&p, 1));
  note (&p);                                 /* would make one more pass */
  assert_int_equal (__real_pthread_create (&t, NULL, stopper, &s), 0);
  EVENTUALLY (stopped (&p));
  note (&p);                                 /* after stop: nothing */
  gate (&p, false);
  assert_int_equal (__real_pthread_join (t, NULL), 0);
  assert_true (atomic_load (&s.returned));
  assert_false (atomic_load (&p.flag_seen)); /* stop returned after the pass */
  assert_int_equal (atomic_load (&p.passes), 1);
  assert_int_equal (atomic_load (&live), 0);
  assert_int_equal (atomic_load (&created), 1);
  assert_int_equal (atomic_load (&joined), 1);
  pthread_cond_destroy (&p.cond);
  pthread_mutex_destroy (&p.lock);
}

struct runner {
  struct probe *p;
  atomic_bool calling;
  atomic_bool returned;
};

static void *
runner (void *arg)
{
  struct runner *r = arg;

  atomic_store (&r->calling, true);
  rbdx_updates_run (&r->p->u);
  atomic_store (&r->returned, true);
  return NULL;
}

/* The open's own pass while the thread's pass runs: after it, never
 * next to it. */
static void
test_run_beside_pass (void **state)
{
  struct probe p;
  struct runner r = { .p = &p };
  pthread_t t;

  (void) state;
  reset_counts ();
  probe_init (&p, "rbd/run");
  gate (&p, true);
  note (&p);
  EVENTUALLY (waiting_at_gate (&p, 1));       /* the thread's pass */
  assert_int_equal (__real_pthread_create (&t, NULL, runner, &r), 0);
  EVENTUALLY (atomic_load (&r.calling));
  /* The thread's pass holds `pass`: the runner cannot be in the handler,
   * whenever it gets there. */
  assert_int_equal (pthread_mutex_trylock (&p.u.pass), EBUSY);
  assert_false (atomic_load (&r.returned));
  gate (&p, false);
  assert_int_equal (__real_pthread_join (t, NULL), 0);
  assert_true (atomic_load (&r.returned));
  EVENTUALLY (atomic_load (&live) == 0);
  assert_int_equal (atomic_load (&p.overlaps), 0);
  assert_int_equal (atomic_load (&p.passes), 2);
  probe_fini (&p);
  assert_int_equal (atomic_load (&created), 1);
  assert_int_equal (atomic_load (&joined), 1);
}

/* A pass stuck on one context: another context's update is handled. */
static void
test_isolation (void **state)
{
  struct probe stuck, other;

  (void) state;
  reset_counts ();
  probe_init (&stuck, "rbd/stuck");
  probe_init (&other, "rbd/other");
  gate (&stuck, true);
  note (&stuck);
  EVENTUALLY (waiting_at_gate (&stuck, 1));
  note (&other);
  EVENTUALLY (atomic_load (&other.passes) == 1);
  note (&other);
  EVENTUALLY (atomic_load (&other.passes) == 2);
  assert_true (waiting_at_gate (&stuck, 1));   /* still stuck */
  probe_fini (&other);
  gate (&stuck, false);
  probe_fini (&stuck);
  assert_int_equal (atomic_load (&stuck.passes), 1);
  assert_int_equal (atomic_load (&joined), atomic_load (&created));
  assert_int_equal (atomic_load (&live), 0);
}

/* A context that never watched (zeroed, never initialised). */
static void
test_never_initialised (void **state)
{
  struct rbdx_updates u;

  (void) state;
  memset (&u, 0, sizeof u);
  rbdx_updates_retry (&u);
  rbdx_updates_stop (&u);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_rest),
    cmocka_unit_test (test_coalesce),
    cmocka_unit_test (test_no_lost_update),
    cmocka_unit_test (test_start_fails),
    cmocka_unit_test (test_stop_during_pass),
    cmocka_unit_test (test_isolation),
    cmocka_unit_test (test_run_beside_pass),
    cmocka_unit_test (test_never_initialised),
  };

  alarm (WATCHDOG_S);
  return cmocka_run_group_tests (tests, NULL, NULL);
}

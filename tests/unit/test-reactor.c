/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: stress of the completion reactor (server/core/reactor.c).
 *
 * reactor.c is linked against a stub of the four librbd calls it makes
 * (rbd_poll_io_events, rbd_aio_get_arg, rbd_aio_get_return_value,
 * rbd_aio_release) and of the core's host service rbdx_debug (rbdx/log.h).  The stub keeps librbd's
 * contract as reactor.h states it: a finished completion is queued and
 * then 1 is added to the image's eventfd; rbd_poll_io_events hands
 * queued completions out in order; a completion is released once, after
 * it was polled.
 *
 * Many worker threads (as nbdkit's workers on one connection) each
 * submit one request at a time and block in rbdx_reactor_wait, so dozens
 * wait at once; several finisher threads complete the pending requests
 * in a random order, one at a time or in bursts of all that are pending,
 * with random pauses (seeded PRNG, fixed seed, bounded counts); some
 * requests complete inline, before their worker waits, as librbd does
 * for requests that fail at submission.  Asserted, in io_uring mode and
 * in poll(2) mode:
 *   - every waiter gets exactly its own result (all results distinct);
 *   - every completion is polled exactly once and released exactly
 *     once, never touched after its release, and polled before its
 *     waiter returns (nothing lost, nothing doubled);
 *   - io_uring mode never fell back to poll(2);
 *   - each wait record's semaphore (reactor.c's sem_post, sem_wait and
 *     sem_destroy are wrapped with ld --wrap) is posted only while its
 *     worker is inside rbdx_reactor_wait (a post after it returned would
 *     touch a dead stack frame), exactly once per sleep (a second post
 *     would leave a count behind), and is destroyed with a count of 0;
 *     a record whose request was never submitted is released by
 *     rbdx_wait_fini, never posted.
 * A churn variant completes half of the requests inside the submitting
 * call and uses more workers than a poll batch twice over, so the
 * leader changes hands most often: the hand-over to an heir posted
 * after the unlock races with newcomers that take the lead meanwhile.
 * A lost wake-up shows as a hang: a watchdog aborts with the counts
 * after WATCHDOG_SECONDS (far above the normal run time, which is about
 * a second; TSan makes it ~10x slower).  Built into the TSan run of
 * scripts/test --sanitize=thread, where data races fail it.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rbdx/log.h"
#include "rbdx/reactor.h"

#define WORKERS 40             /* more than reactor.c's POLL_BATCH (32) */
#define CHURN_WORKERS 72       /* more than twice POLL_BATCH */
#define REQUESTS_PER_WORKER 1000
#define FINISHERS 3
#define SEED 20261130u
#define WATCHDOG_SECONDS 240

/* ---- The librbd stub ------------------------------------------------ */

struct stub_comp {
  struct rbdx_wait *arg;       /* the waiter, as rbd_aio_create_completion's arg */
  ssize_t ret;                 /* the result the waiter must get */
  atomic_int polled;           /* times rbd_poll_io_events handed it out */
  atomic_int released;         /* times rbd_aio_release was called */
  bool never;                  /* refused before submission: no completion */
  struct stub_comp *next;      /* in the image's queue of finished ones */
};

struct stub_image {
  pthread_mutex_t lock;
  pthread_cond_t cond;         /* pending grew, or a worker left */
  int efd;
  struct stub_comp *head, *tail;   /* finished, not yet polled */
  struct stub_comp **pending;      /* submitted, not yet finished */
  size_t npending;
  int workers_left;
  atomic_int faults;           /* contract violations seen by the stub */
  size_t max_pending;          /* most requests pending at once */
  int max_polled;              /* most completions one poll handed out */
  size_t polls;                /* rbd_poll_io_events calls that found some */
};

static void
fault (struct stub_image *img, const char *what, const struct stub_comp *c)
{
  fprintf (stderr, "test-reactor: %s (completion %p)\n", what, (void *) c);
  atomic_fetch_add (&img->faults, 1);
}

/* The stub image of the running test (the completion calls take no
 * image argument). */
static struct stub_image *cur;

int
rbd_poll_io_events (rbd_image_t image, rbd_completion_t *comps, int numcomp)
{
  struct stub_image *img = image;
  int n = 0;

  if (img != cur)
    fault (cur, "rbd_poll_io_events on an unknown image", NULL);
  pthread_mutex_lock (&img->lock);
  while (n < numcomp && img->head) {
    struct stub_comp *c = img->head;

    img->head = c->next;
    if (!img->head)
      img->tail = NULL;
    if (atomic_fetch_add (&c->polled, 1) != 0)
      fault (img, "completion polled twice", c);
    comps[n++] = c;
  }
  if (n > img->max_polled)
    img->max_polled = n;
  if (n > 0)
    img->polls++;
  pthread_mutex_unlock (&img->lock);
  return n;
}

static struct stub_comp *
live (rbd_completion_t rc, const char *what)
{
  struct stub_comp *c = rc;

  if (atomic_load (&c->polled) != 1 || atomic_load (&c->released) != 0)
    fault (cur, what, c);
  return c;
}

void *
rbd_aio_get_arg (rbd_completion_t c)
{
  return live (c, "rbd_aio_get_arg on a completion not polled or released")->arg;
}

ssize_t
rbd_aio_get_return_value (rbd_completion_t c)
{
  return live (c, "rbd_aio_get_return_value on a completion not polled "
               "or released")->ret;
}

void
rbd_aio_release (rbd_completion_t rc)
{
  struct stub_comp *c = rc;

  if (atomic_load (&c->polled) != 1)
    fault (cur, "rbd_aio_release before rbd_poll_io_events", c);
  if (atomic_fetch_add (&c->released, 1) != 0)
    fault (cur, "completion released twice", c);
}

/* reactor.c's only host call (rbdx/log.h). */
void
rbdx_debug (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  fputs ("rbdx_debug: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
}

/* Finish @c the way librbd does: queue it, then add 1 to the eventfd. */
static void
finish (struct stub_image *img, struct stub_comp *c)
{
  uint64_t one = 1;

  pthread_mutex_lock (&img->lock);
  c->next = NULL;
  if (img->tail)
    img->tail->next = c;
  else
    img->head = c;
  img->tail = c;
  pthread_mutex_unlock (&img->lock);
  if (write (img->efd, &one, sizeof one) != sizeof one)
    fault (img, "eventfd write failed", c);
}

static void
submit (struct stub_image *img, struct stub_comp *c)
{
  pthread_mutex_lock (&img->lock);
  img->pending[img->npending++] = c;
  if (img->npending > img->max_pending)
    img->max_pending = img->npending;
  pthread_cond_broadcast (&img->cond);
  pthread_mutex_unlock (&img->lock);
}

/* ---- reactor.c's semaphores, wrapped (ld --wrap=sem_*) --------------- */

/* A worker's wait record with what the wrappers check against. */
struct tw {
  struct rbdx_wait w;
  atomic_bool inside;          /* its worker is in rbdx_reactor_wait */
  atomic_int posts;            /* sem_post calls on w.wake this request */
  atomic_int waits;            /* sem_wait calls returning 0 */
};

int __real_sem_post (sem_t *s);
int __real_sem_wait (sem_t *s);
int __real_sem_destroy (sem_t *s);
int __wrap_sem_post (sem_t *s);
int __wrap_sem_wait (sem_t *s);
int __wrap_sem_destroy (sem_t *s);

static struct tw *
tw_of (sem_t *s)
{
  return (struct tw *) ((char *) s - offsetof (struct tw, w)
                        - offsetof (struct rbdx_wait, wake));
}

int
__wrap_sem_post (sem_t *s)
{
  struct tw *t = tw_of (s);

  /* Before the real post: the worker cannot have been woken by it yet. */
  if (!atomic_load (&t->inside))
    fault (cur, "semaphore posted while its worker is not waiting", NULL);
  if (atomic_fetch_add (&t->posts, 1) != atomic_load (&t->waits))
    fault (cur, "semaphore posted twice in one sleep", NULL);
  return __real_sem_post (s);
}

int
__wrap_sem_wait (sem_t *s)
{
  struct tw *t = tw_of (s);
  int r = __real_sem_wait (s);

  if (r == 0)
    atomic_fetch_add (&t->waits, 1);
  return r;
}

int
__wrap_sem_destroy (sem_t *s)
{
  struct tw *t = tw_of (s);
  int v = -1;

  if (sem_getvalue (s, &v) != 0 || v != 0)
    fault (cur, "semaphore destroyed with a count left", NULL);
  if (atomic_load (&t->posts) != atomic_load (&t->waits))
    fault (cur, "semaphore posted and waited a different number of times",
           NULL);
  return __real_sem_destroy (s);
}

/* ---- Threads --------------------------------------------------------- */

struct run {
  struct stub_image img;
  struct rbdx_reactor reactor;
  struct stub_comp *comps;     /* workers * REQUESTS_PER_WORKER */
  atomic_int wrong_results;
  atomic_int not_polled_on_return;
  atomic_int returned;
  size_t workers;              /* threads submitting */
  unsigned inline_one_in;      /* 1 in N requests completes at submission */
};

struct worker_arg {
  struct run *run;
  unsigned id;
};

/* A result no other request has: bytes for even indexes, a distinct
 * negative value for odd ones (as -errno would be). */
static ssize_t
expected (size_t index)
{
  return index % 2 ? -(ssize_t) (index + 1) : (ssize_t) index * 512;
}

static void *
worker (void *p)
{
  struct worker_arg *a = p;
  struct run *run = a->run;
  unsigned seed = SEED ^ (a->id * 2654435761u);
  struct tw t;
  size_t i;

  for (i = 0; i < REQUESTS_PER_WORKER; i++) {
    size_t index = a->id * REQUESTS_PER_WORKER + i;
    struct stub_comp *c = &run->comps[index];
    ssize_t ret;

    rbdx_wait_init (&t.w);
    atomic_store (&t.posts, 0);
    atomic_store (&t.waits, 0);
    if (rand_r (&seed) % 32 == 0) {
      /* Refused before it reached librbd: released, never waited on. */
      c->never = true;
      rbdx_wait_fini (&t.w);
      atomic_fetch_add (&run->returned, 1);
      continue;
    }
    c->arg = &t.w;
    c->ret = expected (index);
    atomic_store (&t.inside, true);
    if (rand_r (&seed) % run->inline_one_in == 0)
      finish (&run->img, c);     /* completed inside the submitting call */
    else
      submit (&run->img, c);
    ret = rbdx_reactor_wait (&run->reactor, &t.w);
    atomic_store (&t.inside, false);
    if (ret != c->ret) {
      fprintf (stderr, "test-reactor: worker %u request %zu got %zd, "
               "expected %zd\n", a->id, i, ret, c->ret);
      atomic_fetch_add (&run->wrong_results, 1);
    }
    if (atomic_load (&c->polled) != 1)
      atomic_fetch_add (&run->not_polled_on_return, 1);
    atomic_fetch_add (&run->returned, 1);
  }

  pthread_mutex_lock (&run->img.lock);
  run->img.workers_left--;
  pthread_cond_broadcast (&run->img.cond);
  pthread_mutex_unlock (&run->img.lock);
  return NULL;
}

static void
pause_briefly (unsigned *seed)
{
  struct timespec ts = { 0, (long) (rand_r (seed) % 50) * 1000 };

  if (ts.tv_nsec == 0)
    sched_yield ();
  else
    nanosleep (&ts, NULL);
}

/* Take one pending request at random (the lock held), or NULL. */
static struct stub_comp *
take_random (struct stub_image *img, unsigned *seed)
{
  size_t k;
  struct stub_comp *c;

  if (img->npending == 0)
    return NULL;
  k = (size_t) rand_r (seed) % img->npending;
  c = img->pending[k];
  img->pending[k] = img->pending[--img->npending];
  return c;
}

static void *
finisher (void *p)
{
  struct run *run = p;
  struct stub_image *img = &run->img;
  static atomic_uint next_id;
  unsigned seed = SEED + 7919u * (atomic_fetch_add (&next_id, 1) + 1);
  struct stub_comp *batch[CHURN_WORKERS + 1];   /* + the NULL ending a burst */
  size_t n, j;

  for (;;) {
    unsigned how = (unsigned) rand_r (&seed) % 10;

    if (how >= 8)
      pause_briefly (&seed);   /* let requests pile up */

    pthread_mutex_lock (&img->lock);
    while (img->npending == 0 && img->workers_left > 0)
      pthread_cond_wait (&img->cond, &img->lock);
    if (img->npending == 0) {
      pthread_mutex_unlock (&img->lock);
      return NULL;
    }
    n = 0;
    if (how < 6)               /* one */
      batch[n++] = take_random (img, &seed);
    else                       /* a burst: all that are pending */
      while ((batch[n] = take_random (img, &seed)) != NULL)
        n++;
    pthread_mutex_unlock (&img->lock);

    for (j = 0; j < n; j++) {
      if (how < 6 && rand_r (&seed) % 4 == 0)
        pause_briefly (&seed);
      finish (img, batch[j]);
    }
  }
}

/* ---- Watchdog: a lost completion or wake-up is a hang ------------------ */

static pthread_mutex_t dog_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dog_cond = PTHREAD_COND_INITIALIZER;
static bool dog_done;

static void *
watchdog (void *p)
{
  struct run *run = p;
  struct timespec deadline;
  int e = 0;

  clock_gettime (CLOCK_REALTIME, &deadline);
  deadline.tv_sec += WATCHDOG_SECONDS;
  pthread_mutex_lock (&dog_lock);
  while (!dog_done && e != ETIMEDOUT)
    e = pthread_cond_timedwait (&dog_cond, &dog_lock, &deadline);
  pthread_mutex_unlock (&dog_lock);
  if (e == ETIMEDOUT) {
    fprintf (stderr, "test-reactor: hung after %d s: %d of %d requests "
             "returned, %zu pending in the stub; a completion or a wake-up "
             "was lost\n", WATCHDOG_SECONDS, atomic_load (&run->returned),
             (int) (run->workers * REQUESTS_PER_WORKER), run->img.npending);
    abort ();
  }
  return NULL;
}

/* ---- The test -------------------------------------------------------- */

static void
stress (enum rbdx_completion mode, size_t nworkers, unsigned inline_one_in)
{
  const size_t total = nworkers * REQUESTS_PER_WORKER;
  struct run *run = calloc (1, sizeof *run);
  pthread_t workers[CHURN_WORKERS], finishers[FINISHERS], dog;
  struct worker_arg args[CHURN_WORKERS];
  size_t i;
  int e;

  assert_true (nworkers <= CHURN_WORKERS);
  assert_non_null (run);
  run->workers = nworkers;
  run->inline_one_in = inline_one_in;
  run->comps = calloc (total, sizeof *run->comps);
  run->img.pending = calloc (total, sizeof *run->img.pending);
  assert_non_null (run->comps);
  assert_non_null (run->img.pending);
  pthread_mutex_init (&run->img.lock, NULL);
  pthread_cond_init (&run->img.cond, NULL);
  run->img.workers_left = (int) nworkers;
  run->img.efd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  assert_true (run->img.efd >= 0);
  cur = &run->img;

  e = rbdx_reactor_init (&run->reactor, &run->img, run->img.efd, mode);
  if (mode == RBDX_COMPLETION_IO_URING && e < 0) {
    /* Only a kernel or seccomp policy that forbids io_uring gets here. */
    fprintf (stderr, "test-reactor: io_uring_queue_init: %s: io_uring mode "
             "not testable here\n", strerror (-e));
    close (run->img.efd);
    free (run->img.pending);
    free (run->comps);
    free (run);
    skip ();
  }
  assert_int_equal (e, 0);
  assert_int_equal (rbdx_reactor_uses_uring (&run->reactor),
                    mode == RBDX_COMPLETION_IO_URING);

  dog_done = false;
  assert_int_equal (pthread_create (&dog, NULL, watchdog, run), 0);
  for (i = 0; i < FINISHERS; i++)
    assert_int_equal (pthread_create (&finishers[i], NULL, finisher, run), 0);
  for (i = 0; i < nworkers; i++) {
    args[i] = (struct worker_arg) { run, (unsigned) i };
    assert_int_equal (pthread_create (&workers[i], NULL, worker, &args[i]), 0);
  }
  for (i = 0; i < nworkers; i++)
    pthread_join (workers[i], NULL);
  for (i = 0; i < FINISHERS; i++)
    pthread_join (finishers[i], NULL);
  pthread_mutex_lock (&dog_lock);
  dog_done = true;
  pthread_cond_signal (&dog_cond);
  pthread_mutex_unlock (&dog_lock);
  pthread_join (dog, NULL);

  /* What the run covered (it varies with scheduling; not asserted). */
  fprintf (stderr, "test-reactor: %s: %zu requests, up to %zu pending at "
           "once, %zu polls, up to %d completions per poll\n",
           mode == RBDX_COMPLETION_IO_URING ? "io_uring" : "poll(2)", total,
           run->img.max_pending, run->img.polls, run->img.max_polled);

  /* The last leader releases its batch after its own waiter returned;
   * every worker has joined, so every release has happened too. */
  assert_int_equal (atomic_load (&run->img.faults), 0);
  assert_int_equal (atomic_load (&run->wrong_results), 0);
  assert_int_equal (atomic_load (&run->not_polled_on_return), 0);
  assert_int_equal (atomic_load (&run->returned), total);
  assert_int_equal (run->img.npending, 0);
  assert_null (run->img.head);
  for (i = 0; i < total; i++) {
    int once = run->comps[i].never ? 0 : 1;

    assert_int_equal (atomic_load (&run->comps[i].polled), once);
    assert_int_equal (atomic_load (&run->comps[i].released), once);
  }
  assert_null (run->reactor.sleepers);
  assert_false (run->reactor.leader);
  /* io_uring mode must not have fallen back to poll(2) on the way. */
  assert_int_equal (rbdx_reactor_uses_uring (&run->reactor),
                    mode == RBDX_COMPLETION_IO_URING);

  rbdx_reactor_fini (&run->reactor);
  cur = NULL;
  close (run->img.efd);
  pthread_cond_destroy (&run->img.cond);
  pthread_mutex_destroy (&run->img.lock);
  free (run->img.pending);
  free (run->comps);
  free (run);
}

static void
test_stress_io_uring (void **state)
{
  stress (RBDX_COMPLETION_IO_URING, WORKERS, 16);
}

static void
test_stress_poll (void **state)
{
  stress (RBDX_COMPLETION_POLL, WORKERS, 16);
}

/* Leadership changing hands most often: half the requests complete
 * before their worker waits, so leaders leave quickly and heirs race
 * newcomers for the lead. */
static void
test_churn_io_uring (void **state)
{
  stress (RBDX_COMPLETION_IO_URING, CHURN_WORKERS, 2);
}

static void
test_churn_poll (void **state)
{
  stress (RBDX_COMPLETION_POLL, CHURN_WORKERS, 2);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_stress_io_uring),
    cmocka_unit_test (test_stress_poll),
    cmocka_unit_test (test_churn_io_uring),
    cmocka_unit_test (test_churn_poll),
  };

  return cmocka_run_group_tests (tests, NULL, NULL);
}

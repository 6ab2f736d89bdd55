/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: the one-submitter-at-a-time path of rbdx_ctx_aio
 * (server/core/ctx-io.c, ctx->sub), which the engine's shared writer
 * uses when it dispatches in its callers' threads.
 *
 * ctx-io.c is linked against a stub of the librbd calls it makes: a
 * submission records the request and either completes it at once, on the
 * submitting thread (as librbd may when it dispatches inline), or hands
 * it to a finisher thread, which runs the completion callback later.
 * Several submitter threads (the readers of several connections) each
 * submit a sequence of writes and flushes to one context.  Asserted:
 *   - never two threads inside librbd for the context at once;
 *   - each thread's requests reach librbd in the order it submitted
 *     them (the queue is FIFO);
 *   - every request's done runs exactly once with librbd's result, and
 *     nothing touches a request after its done (done poisons it: a
 *     later access follows garbage pointers and crashes);
 *   - without ctx->sub.on, requests go straight to librbd, concurrently;
 *   - a read of a context without a watch whose data may be zeros of
 *     deleted objects waits for headpoll.c's confirmation (C74).
 * A lost request shows as a hang: a watchdog aborts after
 * WATCHDOG_SECONDS.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rbdx/ctx.h"
#include "rbdx/rofs.h"

#define SUBMITTERS 6
#define PER_THREAD 3000
#define FINISHERS 2
#define WATCHDOG_SECONDS 240

/* ---- The librbd stub ------------------------------------------------ */

struct stub_comp {
  void *arg;
  rbd_callback_t cb;
  ssize_t ret;
  struct stub_comp *next;
};

static pthread_mutex_t pend_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pend_cond = PTHREAD_COND_INITIALIZER;
static struct stub_comp *pending;
static bool finishers_stop;

static atomic_int inside;          /* threads inside a stub submission */
static atomic_int max_inside;
static atomic_uint seed_ctr;
static uint64_t last_seq[SUBMITTERS];  /* per submitter: the last write
                                          seen; written by one thread at
                                          a time (that rule is tested) */
static atomic_bool order_ok = true;
static atomic_long submitted;

int
rbd_aio_create_completion (void *cb_arg, rbd_callback_t complete_cb,
                           rbd_completion_t *c)
{
  struct stub_comp *sc = calloc (1, sizeof *sc);

  if (!sc)
    return -ENOMEM;
  sc->arg = cb_arg;
  sc->cb = complete_cb;
  *c = sc;
  return 0;
}

ssize_t
rbd_aio_get_return_value (rbd_completion_t c)
{
  return ((struct stub_comp *) c)->ret;
}

void
rbd_aio_release (rbd_completion_t c)
{
  free (c);
}

/* A submission: check the rule, then complete now or later. */
static int
stub_submit (uint64_t off, rbd_completion_t c, ssize_t ret)
{
  struct stub_comp *sc = c;
  unsigned r = atomic_fetch_add (&seed_ctr, 2654435761u);
  int now = atomic_fetch_add (&inside, 1) + 1;
  int m = atomic_load (&max_inside);

  while (now > m && !atomic_compare_exchange_weak (&max_inside, &m, now))
    ;
  if (off != UINT64_MAX) {     /* writes carry (thread << 32 | seq) */
    unsigned t = (unsigned) (off >> 32);
    uint64_t seq = off & 0xffffffffu;

    if (t >= SUBMITTERS || seq <= last_seq[t])
      atomic_store (&order_ok, false);
    else
      last_seq[t] = seq;
  }
  if (r % 7 == 0)
    sched_yield ();            /* widen the window for other submitters */
  atomic_fetch_sub (&inside, 1);
  atomic_fetch_add (&submitted, 1);
  sc->ret = ret;
  if (r % 5 == 0) {            /* complete at once, on this thread */
    sc->cb (c, sc->arg);
    return 0;
  }
  pthread_mutex_lock (&pend_lock);
  sc->next = pending;
  pending = sc;
  pthread_cond_signal (&pend_cond);
  pthread_mutex_unlock (&pend_lock);
  return 0;
}

int
rbd_aio_write (rbd_image_t image, uint64_t off, size_t len, const char *buf,
               rbd_completion_t c)
{
  (void) image; (void) buf; (void) len;
  return stub_submit (off, c, 0);
}

int
rbd_aio_write2 (rbd_image_t image, uint64_t off, size_t len, const char *buf,
                rbd_completion_t c, int op_flags)
{
  (void) op_flags;
  return rbd_aio_write (image, off, len, buf, c);
}

/* test_confirm's reads: data made by read_fill, completed at once. */
static void (*read_fill) (char *buf, uint64_t off, size_t len);

int
rbd_aio_read (rbd_image_t image, uint64_t off, size_t len, char *buf,
              rbd_completion_t c)
{
  struct stub_comp *sc = c;

  (void) image;
  if (read_fill) {
    read_fill (buf, off, len);
    sc->ret = (ssize_t) len;
    sc->cb (c, sc->arg);
    return 0;
  }
  return stub_submit (UINT64_MAX, c, (ssize_t) len);
}

int
rbd_aio_flush (rbd_image_t image, rbd_completion_t c)
{
  (void) image;
  return stub_submit (UINT64_MAX, c, 0);
}

int
rbd_aio_discard (rbd_image_t image, uint64_t off, uint64_t len,
                 rbd_completion_t c)
{
  (void) image; (void) off; (void) len;
  return stub_submit (UINT64_MAX, c, 0);
}

int
rbd_aio_write_zeroes (rbd_image_t image, uint64_t off, size_t len,
                      rbd_completion_t c, int zero_flags, int op_flags)
{
  (void) image; (void) off; (void) len; (void) zero_flags; (void) op_flags;
  return stub_submit (UINT64_MAX, c, 0);
}

int
rbd_diff_iterate2 (rbd_image_t image, const char *fromsnapname, uint64_t ofs,
                   uint64_t len, uint8_t include_parent, uint8_t whole_object,
                   int (*cb) (uint64_t, size_t, int, void *), void *arg)
{
  (void) image; (void) fromsnapname; (void) ofs; (void) len;
  (void) include_parent; (void) whole_object; (void) cb; (void) arg;
  return -ENOSYS;
}

int
rbd_get_flags (rbd_image_t image, uint64_t *flags)
{
  (void) image; (void) flags;
  return -ENOSYS;
}

/* The image's end as librbd knows it: as large as the context's. */
int
rbd_get_size (rbd_image_t image, uint64_t *size)
{
  (void) image;
  *size = UINT64_MAX;
  return 0;
}

/* headpoll.c's confirmation: the waits are kept for test_confirm to
 * answer. */
static struct rbdx_headpoll_wait *confirms;
static int confirms_n;

void
rbdx_headpoll_confirm (struct rbdx_headpoll *e, struct rbdx_headpoll_wait *w)
{
  assert_true (e->registered);
  w->next = confirms;
  confirms = w;
  confirms_n++;
}

/* The core's other services ctx-io.c refers to (never reached here). */
void
rbdx_ctx_mark_fenced (struct rbdx_ctx *ctx)
{
  atomic_store (&ctx->fenced, true);
}

void
rbdx_updates_retry (struct rbdx_updates *u)
{
  (void) u;                   /* no update watch here (updates.h) */
}

void
rbdx_rofs_result (struct rbdx_ctx *ctx, enum rbdx_op op, ssize_t r)
{
  (void) ctx;                 /* no EROFS here (rofs.h) */
  (void) op;
  (void) r;
}

void
rbdx_wait_init (struct rbdx_wait *w)
{
  (void) w;
  abort ();
}

void
rbdx_wait_fini (struct rbdx_wait *w)
{
  (void) w;
  abort ();
}

ssize_t
rbdx_reactor_wait (struct rbdx_reactor *r, struct rbdx_wait *w)
{
  (void) r; (void) w;
  abort ();
}

static void *
finisher (void *arg)
{
  (void) arg;
  pthread_mutex_lock (&pend_lock);
  for (;;) {
    struct stub_comp *sc = pending;

    if (!sc) {
      if (finishers_stop)
        break;
      pthread_cond_wait (&pend_cond, &pend_lock);
      continue;
    }
    pending = sc->next;
    pthread_mutex_unlock (&pend_lock);
    sc->cb (sc, sc->arg);
    pthread_mutex_lock (&pend_lock);
  }
  pthread_mutex_unlock (&pend_lock);
  return NULL;
}

/* ---- The callers ---------------------------------------------------- */

static atomic_long done_count, done_bad;

struct treq {
  struct rbdx_aio aio;         /* first */
  unsigned magic;
};
#define TREQ_MAGIC 0x5eb0d1e5u

static void
treq_done (struct rbdx_aio *a, int ret)
{
  struct treq *t = (struct treq *) a;

  if (t->magic != TREQ_MAGIC || ret != 0)
    atomic_fetch_add (&done_bad, 1);
  /* Poison it (volatile: not a dead store): a later access by
   * rbdx_ctx_aio reads garbage pointers and crashes. */
  for (size_t i = 0; i < sizeof *t; i++)
    ((volatile unsigned char *) t)[i] = 0xab;
  atomic_fetch_add (&done_count, 1);
}

static struct rbdx_ctx ctx;
static struct treq reqs[SUBMITTERS][PER_THREAD];

static void *
submitter (void *arg)
{
  unsigned t = (unsigned) (uintptr_t) arg;

  for (uint64_t seq = 1; seq <= PER_THREAD; seq++) {
    struct treq *rq = &reqs[t][seq - 1];

    memset (rq, 0, sizeof *rq);
    rq->magic = TREQ_MAGIC;
    rq->aio.op = seq % 50 == 0 ? RBDX_OP_FLUSH : RBDX_OP_WRITE;
    rq->aio.offset = (uint64_t) t << 32 | seq;
    rq->aio.count = 4096;
    rq->aio.done = treq_done;
    rbdx_ctx_aio (&ctx, &rq->aio);
  }
  return NULL;
}

static void
watchdog (int sig)
{
  (void) sig;
  fprintf (stderr, "test-ctx-submit: hang: %ld of %d done\n",
           atomic_load (&done_count), SUBMITTERS * PER_THREAD);
  abort ();
}

static void
run (bool one_at_a_time)
{
  pthread_t sub[SUBMITTERS], fin[FINISHERS];
  long want = (long) SUBMITTERS * PER_THREAD;

  memset (&ctx, 0, sizeof ctx);
  pthread_mutex_init (&ctx.sub.lock, NULL);
  ctx.sub.on = one_at_a_time;
  ctx.efd = -1;
  /* Every offset is inside (ctx-io.c checks the end again at submission
   * and completion). */
  atomic_store (&ctx.cur_size, UINT64_MAX);
  memset (last_seq, 0, sizeof last_seq);
  atomic_store (&order_ok, true);
  atomic_store (&max_inside, 0);
  atomic_store (&done_count, 0);
  atomic_store (&done_bad, 0);
  atomic_store (&submitted, 0);
  finishers_stop = false;
  for (int i = 0; i < FINISHERS; i++)
    assert_int_equal (pthread_create (&fin[i], NULL, finisher, NULL), 0);
  for (int i = 0; i < SUBMITTERS; i++)
    assert_int_equal (pthread_create (&sub[i], NULL, submitter,
                                      (void *) (uintptr_t) i), 0);
  for (int i = 0; i < SUBMITTERS; i++)
    pthread_join (sub[i], NULL);
  /* Every request is in librbd's hands or done once the callers return
   * (the last submitter drains the queue before it leaves). */
  while (atomic_load (&done_count) < want)
    usleep (1000);
  pthread_mutex_lock (&pend_lock);
  finishers_stop = true;
  pthread_cond_broadcast (&pend_cond);
  pthread_mutex_unlock (&pend_lock);
  for (int i = 0; i < FINISHERS; i++)
    pthread_join (fin[i], NULL);

  assert_int_equal (atomic_load (&done_count), want);
  assert_int_equal (atomic_load (&done_bad), 0);
  /* A flush with nothing written since the last one never reaches
   * librbd (ctx-io.c, prepare); every write does. */
  assert_true (atomic_load (&submitted) >= want - want / 50);
  assert_true (ctx.sub.head == NULL && ctx.sub.tail == NULL && !ctx.sub.busy);
  pthread_mutex_destroy (&ctx.sub.lock);
}

static void
test_one_at_a_time (void **state)
{
  (void) state;
  run (true);
  assert_int_equal (atomic_load (&max_inside), 1);
  assert_true (atomic_load (&order_ok));
}

static void
test_direct (void **state)
{
  (void) state;
  run (false);
  /* Without the rule the submitters enter librbd side by side (not
   * asserted: two cores may still happen to take turns). */
  printf ("direct: at most %d threads inside librbd at once\n",
          atomic_load (&max_inside));
}

/* ---- Reads of a context without a watch (C74) -------------------- */

static unsigned zero_from, zero_len;   /* bytes of the read made zero */

static void
fill (char *buf, uint64_t off, size_t len)
{
  (void) off;
  memset (buf, 0x5a, len);
  memset (buf + zero_from, 0, zero_len);
}

static int last_ret;
static int last_calls;

static void
read_done (struct rbdx_aio *a, int ret)
{
  (void) a;
  last_ret = ret;
  last_calls++;
}

/* One read of @p count bytes at @p offset with bytes [from, from+len)
 * zero; @return whether it waits for a confirmation (else it is done,
 * with 0). */
static bool
read_waits (uint64_t offset, uint32_t count, unsigned from, unsigned len)
{
  static char buf[65536];
  static struct rbdx_aio a;

  zero_from = from;
  zero_len = len;
  memset (&a, 0, sizeof a);
  a.op = RBDX_OP_READ;
  a.buf = buf;
  a.count = count;
  a.offset = offset;
  a.done = read_done;
  last_calls = 0;
  confirms = NULL;
  confirms_n = 0;
  rbdx_ctx_aio (&ctx, &a);
  if (confirms_n == 0) {
    assert_int_equal (last_calls, 1);
    assert_int_equal (last_ret, 0);
    return false;
  }
  assert_int_equal (confirms_n, 1);
  assert_int_equal (last_calls, 0);   /* not answered before */
  return true;
}

/* A read whose data could hold zeros librbd made up for deleted objects
 * is answered only with headpoll.c's confirmation, and with its result;
 * data that cannot (no zero at either end, no image-aligned 512-byte
 * sector of zeros) and any read of a watched context is answered at
 * once; on a clone (confirm_reads) every read waits (C76). */
static void
test_confirm (void **state)
{
  (void) state;
  memset (&ctx, 0, sizeof ctx);
  ctx.efd = -1;
  ctx.ident.snap_id = RBDX_NOSNAP;
  atomic_store (&ctx.cur_size, UINT64_MAX);
  ctx.poll.registered = true;
  read_fill = fill;

  assert_false (read_waits (0, 4096, 0, 0));          /* all 0x5a */
  assert_true (read_waits (0, 4096, 0, 1));           /* first byte */
  confirms->done (confirms, 0);
  assert_int_equal (last_calls, 1);
  assert_int_equal (last_ret, 0);
  assert_true (read_waits (0, 4096, 4095, 1));        /* last byte */
  confirms->done (confirms, -ESTALE);
  assert_int_equal (last_calls, 1);
  assert_int_equal (last_ret, -ESTALE);
  /* Read at 100: image offset 1024 is byte 924 of the buffer. */
  assert_true (read_waits (100, 8192, 924, 512));
  assert_int_equal (confirms->offset, 100);     /* checked against the */
  assert_int_equal (confirms->count, 8192);     /* size found */
  confirms->done (confirms, -ETIMEDOUT);
  assert_int_equal (last_ret, -ETIMEDOUT);
  assert_false (read_waits (100, 8192, 925, 512));    /* not aligned */
  assert_false (read_waits (100, 8192, 924, 511));    /* not whole */
  assert_false (read_waits (0, 65536, 600, 400));     /* inside a sector */
  ctx.confirm_reads = true;                           /* a clone: */
  assert_true (read_waits (0, 4096, 0, 0));           /* every read */
  confirms->done (confirms, 0);
  assert_int_equal (last_ret, 0);
  ctx.confirm_reads = false;
  ctx.poll.registered = false;                        /* watched */
  assert_false (read_waits (0, 4096, 0, 4096));
  read_fill = NULL;
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_one_at_a_time),
    cmocka_unit_test (test_direct),
    cmocka_unit_test (test_confirm),
  };

  signal (SIGALRM, watchdog);
  alarm (WATCHDOG_SECONDS);
  return cmocka_run_group_tests (tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the requests of a librbd context (see ctx.h): one
 * prepare/finish pair for both paths, synchronous (waiting through the
 * reactor) and asynchronous (rbdx_ctx_aio, librbd's callback), and the
 * allocation map for block status. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "rbdx/ctx.h"
#include "rbdx/rofs.h"

/* Whether [@p offset, @p offset + @p count) lies inside the image as
 * librbd knows it now.  ctx->cur_size follows librbd on the context's
 * update thread (handle_update, ctx.c), which may not have run yet when
 * a request comes right after a shrink: another context of the same
 * connection (its reader, or the shared writer) can already have
 * answered from the new size.  librbd's own requests do not wait for
 * the refresh either: with Ceph 16.2, once `rbd resize --allow-shrink`
 * has returned, an rbd_aio_read on another handle still read 4096
 * bytes across the new end, and an rbd_aio_write is cut there and
 * completes with 0.  librbd's get_size refreshes the image first when a
 * header update is pending (refresh_if_required, librbd/internal.cc,
 * source), and every handle has it pending once the resize returned
 * (the notification is acknowledged only after that), so a request
 * checked here is refused before it reaches librbd; only a shrink that
 * lands between this check and librbd's dispatch is left to finish.
 * About 50 ns a call (measured with Ceph 16.2, nothing to refresh).  A
 * failed get_size says nothing: librbd fails the request itself.  A
 * snapshot's size never changes, and once the snapshot is removed a
 * watching handle's get_size says 0 (Ceph 16.2) where its reads fail
 * with ENOENT: the removal must end as EIO (check_snapshot, ctx.c),
 * never as a request past the end, so snapshots are not asked. */
static bool
inside_now (struct rbdx_ctx *ctx, uint64_t count, uint64_t offset)
{
  uint64_t size;

  if (ctx->ident.snap_id != RBDX_NOSNAP ||
      rbd_get_size (ctx->image, &size) < 0)
    return true;
  return offset <= size && count <= size - offset;
}

/* Checks and bookkeeping before a request reaches librbd.
 * @return 0 to submit it; 1 for a flush with nothing to do (the cache is
 *         off and nothing was written since the last flush: every
 *         acknowledged write is already on the OSDs); or the request's
 *         negative result. */
static int
prepare (struct rbdx_ctx *ctx, enum rbdx_op op, uint64_t count,
         uint64_t offset)
{
  /* The front end's rbdx_request_check (request.h) checked the image's
   * end when the request came; since then it may have waited for QoS
   * or a quiesce, and the image may have shrunk: librbd would cut a
   * write at the new end and complete it as if whole. */
  rbdx_updates_retry (&ctx->upd);   /* an update whose thread failed to start */
  switch (op) {
  case RBDX_OP_READ:
    if (atomic_load (&ctx->gone))
      return -ESTALE;
    if (!rbdx_ctx_inside (ctx, count, offset) ||
        !inside_now (ctx, count, offset))
      return -EINVAL;
    break;
  case RBDX_OP_TRIM:
  case RBDX_OP_WRITE:
  case RBDX_OP_ZERO:
    if (!rbdx_ctx_inside (ctx, count, offset) ||
        !inside_now (ctx, count, offset))
      return op == RBDX_OP_TRIM ? -EINVAL : -ENOSPC;
    atomic_store (&ctx->dirty, true);
    break;
  case RBDX_OP_FLUSH:
    if (!atomic_exchange (&ctx->dirty, false) && !ctx->cache_on)
      return 1;
    break;
  default:
    break;
  }
  /* Ceph fails every request of a blocklisted rados_t with
   * -EBLOCKLISTED (= -ESHUTDOWN on Linux) and the client stays
   * blocklisted; once seen, nothing more is sent on this context, so no
   * write can land after the fence. */
  if (atomic_load (&ctx->fenced))
    return -ESHUTDOWN;
  return 0;
}

/* The request's result from librbd's @p r (bytes for a read, or a
 * negative errno).  A short read is -EINVAL, never a partial buffer; a
 * write or zero that no longer fits the image (it shrank while the
 * request was in flight, and librbd cut the request at the new end and
 * completed it with 0: its rbd_aio_write clips silently) is -ENOSPC,
 * never acknowledged. */
static int
finish (struct rbdx_ctx *ctx, enum rbdx_op op, uint64_t count,
        uint64_t offset, ssize_t r)
{
  if (r == -ESHUTDOWN)
    rbdx_ctx_mark_fenced (ctx);
  if (op != RBDX_OP_READ)
    rbdx_rofs_result (ctx, op, r);
  if (r < 0) {
    if (op == RBDX_OP_FLUSH)
      atomic_store (&ctx->dirty, true);     /* still owed */
    return (int) r;
  }
  /* librbd cuts a read at the image's end and returns what it read:
   * the image shrank before librbd dispatched it (ctx->cur_size may not
   * know yet), which the NBD spec answers as a read past the end. */
  if (op == RBDX_OP_READ && (uint64_t) r != count)
    return -EINVAL;
  /* Removed while the read was in flight (its data may have read as
   * zeros): as for block status, do not answer. */
  if (op == RBDX_OP_READ && atomic_load (&ctx->gone))
    return -ESTALE;
  if ((op == RBDX_OP_WRITE || op == RBDX_OP_ZERO) &&
      !rbdx_ctx_inside (ctx, count, offset))
    return -ENOSPC;
  return 0;
}

/* Whether a read's data may hold zeros that librbd filled in for
 * objects deleted under a handle without a watch (C74): an object
 * missing reads as zeros over its whole part of the read, which either
 * reaches an end of the read (its first or last byte is then zero) or
 * runs between two boundaries of stripe units, each a multiple of 512
 * bytes of the image, and so covers a whole 512-byte sector aligned in
 * the image.  Data without either is the image's own.  A scan that stops
 * at the first nonzero byte of each sector. */
static bool
may_be_deleted (const unsigned char *buf, uint64_t count, uint64_t offset)
{
  uint64_t s = (512 - offset % 512) % 512;

  if (count == 0)
    return false;
  if (buf[0] == 0 || buf[count - 1] == 0)
    return true;
  for (; s + 512 <= count; s += 512)
    if (buf[s] == 0 && memcmp (buf + s, buf + s + 1, 511) == 0)
      return true;
  return false;
}

/* A read that finish() passed, of a context whose image is polled
 * (no watch, or a clone of a clone: headpoll.h), whose data headpoll.c
 * must confirm first: any read of a clone without a watch (an object
 * of a clone that is deleted reads as the parent's data, any bytes at
 * all: C76), else one whose data may be zeros of deleted objects. */
static bool
to_confirm (struct rbdx_ctx *ctx, const struct rbdx_aio *a, int r)
{
  return r == 0 && a->op == RBDX_OP_READ && ctx->poll.registered &&
         (ctx->confirm_reads || may_be_deleted (a->buf, a->count, a->offset));
}

/* headpoll.c's answer for a request of rbdx_ctx_aio. */
static void
confirmed (struct rbdx_headpoll_wait *w, int r)
{
  struct rbdx_aio *a = (struct rbdx_aio *)
    ((char *) w - offsetof (struct rbdx_aio, hp));

  a->done (a, r);
}

/* Hand @p a (a read that finish() passed) to headpoll.c: @c done runs
 * with the check's answer, on the poller's thread. */
static void
confirm (struct rbdx_ctx *ctx, struct rbdx_aio *a)
{
  a->hp.done = confirmed;
  a->hp.offset = a->offset;
  a->hp.count = a->count;
  rbdx_headpoll_confirm (&ctx->poll, &a->hp);
}

/* Queue one request on librbd with completion @p c.  On failure the
 * request was not queued and librbd will never complete it. */
static int
queue (struct rbdx_ctx *ctx, const struct rbdx_aio *a, rbd_completion_t c)
{
  switch (a->op) {
  case RBDX_OP_READ:
    return rbd_aio_read (ctx->image, a->offset, a->count, a->buf, c);
  case RBDX_OP_WRITE:
    if (a->fua)
      return rbd_aio_write2 (ctx->image, a->offset, a->count, a->buf, c,
                             LIBRADOS_OP_FLAG_FADVISE_FUA);
    return rbd_aio_write (ctx->image, a->offset, a->count, a->buf, c);
  case RBDX_OP_FLUSH:
    return rbd_aio_flush (ctx->image, c);
  case RBDX_OP_TRIM:
    return rbd_aio_discard (ctx->image, a->offset, a->count, c);
  case RBDX_OP_ZERO:
    return rbd_aio_write_zeroes (ctx->image, a->offset, a->count, c,
                                 a->may_hole && !ctx->notrim ? 0
                                 : RBD_WRITE_ZEROES_FLAG_THICK_PROVISION, 0);
  default:
    return -EINVAL;
  }
}

/* Submit one request and wait for its result through the reactor.  The
 * wait record lives on this stack frame; librbd holds its address until
 * the reactor has polled the completion, which rbdx_reactor_wait
 * guarantees before returning. */
static ssize_t
submit_wait (struct rbdx_ctx *ctx, const struct rbdx_aio *a)
{
  struct rbdx_wait w;
  rbd_completion_t c;
  int r;

  rbdx_wait_init (&w);
  r = rbd_aio_create_completion (&w, NULL, &c);
  if (r < 0) {
    rbdx_wait_fini (&w);
    return r;
  }
  r = queue (ctx, a, c);
  if (r < 0) {
    rbd_aio_release (c);
    rbdx_wait_fini (&w);
    return r;
  }
  return rbdx_reactor_wait (&ctx->reactor, &w);
}

/* A synchronous request in completion mode RBDX_COMPLETION_CALLBACK:
 * librbd's callback thread posts the caller's semaphore itself, one
 * wake-up per request and no reaper between (server/core/DESIGN.md,
 * "Completions").  The record lives on the caller's stack, destroyed
 * as soon as sem_wait returns (POSIX allows destroying a semaphore no
 * thread is blocked on): glibc's sem_post (nptl/sem_post.c, source)
 * reads the semaphore before its one atomic compare-and-swap and after
 * it only passes the address to a futex wake, which on memory reused
 * meanwhile is at worst a spurious wake-up that futex users retry. */
struct cb_wait {
  struct rbdx_aio a;          /* first: done gets &a */
  sem_t sem;
  int ret;
};

static void
cb_done (struct rbdx_aio *a, int ret)
{
  struct cb_wait *w = (struct cb_wait *) a;

  w->ret = ret;
  sem_post (&w->sem);         /* the last touch of w */
}

/* A synchronous read's confirmation (run_sync), answered as
 * run_callback's requests are. */
static int
confirm_sync (struct rbdx_ctx *ctx, const struct rbdx_aio *a)
{
  struct cb_wait w = { .a = *a };

  sem_init (&w.sem, 0, 0);
  w.a.done = cb_done;
  confirm (ctx, &w.a);
  while (sem_wait (&w.sem) < 0)
    ;                         /* EINTR: headpoll.c still holds &w */
  sem_destroy (&w.sem);
  return w.ret;
}

static int
run_callback (struct rbdx_ctx *ctx, const struct rbdx_aio *a)
{
  struct cb_wait w = { .a = *a };

  sem_init (&w.sem, 0, 0);
  w.a.done = cb_done;
  rbdx_ctx_aio (ctx, &w.a);   /* prepare, queue, finish: as run_sync */
  while (sem_wait (&w.sem) < 0)
    ;                         /* EINTR: librbd still holds &w */
  sem_destroy (&w.sem);
  return w.ret;
}

/* The synchronous path: prepare, submit and wait, finish (through the
 * reactor, or librbd's callback when the context has none). */
static int
run_sync (struct rbdx_ctx *ctx, const struct rbdx_aio *a)
{
  int r;

  if (!ctx->have_reactor)
    return run_callback (ctx, a);
  r = prepare (ctx, a->op, a->count, a->offset);
  if (r == 1)
    return 0;
  if (r == 0) {
    r = finish (ctx, a->op, a->count, a->offset, submit_wait (ctx, a));
    return to_confirm (ctx, a, r) ? confirm_sync (ctx, a) : r;
  }
  return finish (ctx, a->op, a->count, a->offset, r);
}

/* librbd calls this on one of its threads when the request is done. */
static void
aio_done (rbd_completion_t c, void *arg)
{
  struct rbdx_aio *a = arg;
  ssize_t r = rbd_aio_get_return_value (c);
  int ret;

  rbd_aio_release (c);
  ret = finish (a->ctx, a->op, a->count, a->offset, r);
  if (to_confirm (a->ctx, a, ret)) {
    confirm (a->ctx, a);
    return;
  }
  a->done (a, ret);
}

static void
submit_one (struct rbdx_ctx *ctx, struct rbdx_aio *a)
{
  rbd_completion_t c;
  int r;

  r = prepare (ctx, a->op, a->count, a->offset);
  if (r == 0) {
    r = rbd_aio_create_completion (a, aio_done, &c);
    if (r == 0) {
      r = queue (ctx, a, c);
      if (r == 0)
        return;                 /* aio_done will answer */
      rbd_aio_release (c);
    }
  }
  a->done (a, r == 1 ? 0 : finish (ctx, a->op, a->count, a->offset, r));
}

/* One submitter at a time (ctx->sub, ctx.h): the thread that finds no
 * other submitting runs librbd's dispatch for its request and for every
 * request the threads of other connections queue meanwhile, in order;
 * the others return at once.  No lock is held while librbd runs (a
 * request refused at once completes on this thread). */
static void
submit_combined (struct rbdx_ctx *ctx, struct rbdx_aio *a)
{
  struct rbdx_aio *list;

  a->next = NULL;
  pthread_mutex_lock (&ctx->sub.lock);
  if (ctx->sub.tail)
    ctx->sub.tail->next = a;
  else
    ctx->sub.head = a;
  ctx->sub.tail = a;
  if (ctx->sub.busy) {
    pthread_mutex_unlock (&ctx->sub.lock);
    return;
  }
  ctx->sub.busy = true;
  while ((list = ctx->sub.head)) {
    ctx->sub.head = ctx->sub.tail = NULL;
    pthread_mutex_unlock (&ctx->sub.lock);
    while (list) {
      struct rbdx_aio *next = list->next;   /* list may be freed by done */

      submit_one (ctx, list);
      list = next;
    }
    pthread_mutex_lock (&ctx->sub.lock);
  }
  ctx->sub.busy = false;
  pthread_mutex_unlock (&ctx->sub.lock);
}

void
rbdx_ctx_aio (struct rbdx_ctx *ctx, struct rbdx_aio *a)
{
  a->ctx = ctx;
  if (ctx->sub.on)
    submit_combined (ctx, a);
  else
    submit_one (ctx, a);
}

bool
rbdx_ctx_inside (struct rbdx_ctx *ctx, uint64_t count, uint64_t offset)
{
  uint64_t size = atomic_load (&ctx->cur_size);
  return offset <= size && count <= size - offset;
}

int
rbdx_ctx_read (struct rbdx_ctx *ctx, void *buf, uint32_t count,
               uint64_t offset)
{
  struct rbdx_aio a = { .op = RBDX_OP_READ, .buf = buf, .count = count,
                        .offset = offset };
  return run_sync (ctx, &a);
}

int
rbdx_ctx_write (struct rbdx_ctx *ctx, const void *buf, uint32_t count,
                uint64_t offset, bool fua)
{
  struct rbdx_aio a = { .op = RBDX_OP_WRITE, .buf = (void *) buf,
                        .count = count, .offset = offset, .fua = fua };
  return run_sync (ctx, &a);
}

int
rbdx_ctx_flush (struct rbdx_ctx *ctx)
{
  struct rbdx_aio a = { .op = RBDX_OP_FLUSH };
  return run_sync (ctx, &a);
}

int
rbdx_ctx_discard (struct rbdx_ctx *ctx, uint32_t count, uint64_t offset)
{
  struct rbdx_aio a = { .op = RBDX_OP_TRIM, .count = count,
                        .offset = offset };
  return run_sync (ctx, &a);
}

int
rbdx_ctx_zero (struct rbdx_ctx *ctx, uint32_t count, uint64_t offset,
               bool may_hole)
{
  struct rbdx_aio a = { .op = RBDX_OP_ZERO, .count = count,
                        .offset = offset, .may_hole = may_hole };
  return run_sync (ctx, &a);
}

bool
rbdx_ctx_fast_diff_valid (struct rbdx_ctx *ctx)
{
  uint64_t flags;

  /* With encryption loaded, librbd 16.2's whole-object diff reports raw
   * offsets (shifted by the LUKS header): report data instead. */
  if (!(ctx->features & RBD_FEATURE_FAST_DIFF) || ctx->encrypted)
    return false;
  if (rbd_get_flags (ctx->image, &flags) < 0)
    return false;
  return !(flags & (RBD_FLAG_FAST_DIFF_INVALID | RBD_FLAG_OBJECT_MAP_INVALID));
}

static int
diff_cb (uint64_t offset, size_t length, int exists, void *arg)
{
  return rbdx_extent_walk_add (arg, offset, length, exists != 0);
}

int
rbdx_ctx_extents (struct rbdx_ctx *ctx, uint32_t count, uint64_t offset,
                  rbdx_extent_fn fn, void *arg)
{
  struct rbdx_extent_walk w;
  uint64_t size = atomic_load (&ctx->cur_size), now;
  int r;

  rbdx_updates_retry (&ctx->upd);
  /* As inside_now: the end librbd walks to, if it already knows more. */
  if (ctx->ident.snap_id == RBDX_NOSNAP &&
      rbd_get_size (ctx->image, &now) == 0 && now < size)
    size = now;
  if (atomic_load (&ctx->gone))
    return -ESTALE;
  if (atomic_load (&ctx->fenced))
    return -ESHUTDOWN;
  /* advertise_size=max lets nbdkit pass any offset: bound by the image. */
  if (offset >= size)
    return -EINVAL;
  if (count > size - offset)
    count = (uint32_t) (size - offset);
  if (!rbdx_ctx_fast_diff_valid (ctx))
    return fn (arg, offset, count, false);

  rbdx_extent_walk_init (&w, offset, count, fn, arg);
  r = rbd_diff_iterate2 (ctx->image, NULL, offset, count, 1, 1, diff_cb, &w);
  if (r < 0)
    return r;
  /* A removal that raced with the walk: do not answer from a map that
   * may already describe nothing. */
  if (atomic_load (&ctx->gone))
    return -ESTALE;
  return rbdx_extent_walk_finish (&w);
}

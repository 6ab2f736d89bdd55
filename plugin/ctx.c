/* rbdx plugin: one connection's librbd context (see ctx.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "cluster.h"
#include "ctx.h"

/* Say why the image cannot be opened, naming the part that is wrong.
 * Only called on -ENOENT, to tell a missing image from a missing
 * snapshot (rbd_open_read_only gives -ENOENT for both). */
static void
explain_enoent (struct rbdx_ctx *ctx, const struct rbdx_spec *spec,
                char *err, size_t errlen)
{
  rbd_image_t head;

  if (spec->snap && rbd_open_read_only (ctx->io, spec->image, &head,
                                        NULL) == 0) {
    rbd_close (head);
    snprintf (err, errlen, "snapshot '%s' of image '%.*s' does not exist",
              spec->snap, (int) (strlen (ctx->name) - strlen (spec->snap) - 1),
              ctx->name);
    return;
  }
  snprintf (err, errlen, "image '%s' does not exist", ctx->name);
}

/* Read the effective rbd_cache of the open image: an image-level
 * setting (rbd config image set ...) overrides what rbdx set on the
 * rados_t, so ask librbd what it uses. */
static int
effective_cache (rbd_image_t image, bool *on)
{
  rbd_config_option_t *opts;
  int max = 0, r, i;

  r = rbd_config_image_list (image, NULL, &max);
  if (r < 0 && r != -ERANGE)
    return r;
  opts = calloc (max ? max : 1, sizeof *opts);
  if (!opts)
    return -ENOMEM;
  r = rbd_config_image_list (image, opts, &max);
  if (r >= 0) {
    *on = false;
    for (i = 0; i < max; i++)
      if (strcmp (opts[i].name, "rbd_cache") == 0)
        *on = strcmp (opts[i].value, "true") == 0;
    rbd_config_image_list_cleanup (opts, max);
  }
  free (opts);
  return r < 0 ? r : 0;
}

static int
open_image (struct rbdx_ctx *ctx, const struct rbdx_options *o,
            const struct rbdx_spec *spec, unsigned flags,
            char *err, size_t errlen)
{
  uint8_t order = 22;
  int r;

  r = rbdx_cluster_open_pool (ctx->cluster, spec->pool, spec->ns, &ctx->io,
                              err, errlen);
  if (r < 0) {
    ctx->io = NULL;
    return r;
  }

  if (spec->snap || (flags & RBDX_CTX_PROBE))
    r = rbd_open_read_only (ctx->io, spec->image, &ctx->image, spec->snap);
  else {
    r = rbd_open (ctx->io, spec->image, &ctx->image, NULL);
    if (ctx->readonly && (r == -EPERM || r == -EACCES || r == -EROFS))
      r = rbd_open_read_only (ctx->io, spec->image, &ctx->image, NULL);
  }
  if (r < 0) {
    ctx->image = NULL;
    if (r == -ENOENT)
      explain_enoent (ctx, spec, err, errlen);
    else if (r == -EPERM || r == -EACCES)
      snprintf (err, errlen, "client.%s may not open image '%s' "
                "(check its cephx caps): %s", rbdx_options_id (o),
                ctx->name, strerror (-r));
    else
      snprintf (err, errlen, "cannot open image '%s': %s",
                ctx->name, strerror (-r));
    return r;
  }

  if ((r = rbd_get_size (ctx->image, &ctx->size)) < 0 ||
      (r = rbd_get_features (ctx->image, &ctx->features)) < 0 ||
      (r = effective_cache (ctx->image, &ctx->cache_on)) < 0) {
    snprintf (err, errlen, "cannot read the properties of image '%s': %s",
              ctx->name, strerror (-r));
    return r;
  }
  {
    rbd_image_info_t info;

    if (rbd_stat (ctx->image, &info, sizeof info) == 0)
      order = (uint8_t) info.order;
  }
  ctx->object_size = UINT64_C (1) << order;
  atomic_store (&ctx->cur_size, ctx->size);
  return 0;
}

/* size_file=: the image size every watching context agrees on, i.e. the
 * smallest of their cur_size.  A grow is published only once every
 * context (each connection's, and the shared writer's, which does the
 * writes) has seen it, so a client that grows its device on the strength
 * of the file never reaches a context that still bounds requests by the
 * old size; a shrink is published as soon as one context sees it.  The
 * file is replaced by writing a temporary file beside it and renaming it
 * over, so a reader never sees a partial value.  Errors go to nbdkit's
 * debug output only: the export works without the file.  size_lock
 * guards the registry and orders the writes. */
static pthread_mutex_t size_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rbdx_ctx *size_ctxs;
static unsigned long size_seq;

static void
publish_size_locked (const char *path)
{
  uint64_t min = UINT64_MAX;
  char tmp[4200];
  FILE *f;
  int bad;

  for (const struct rbdx_ctx *c = size_ctxs; c; c = c->size_next) {
    uint64_t v = atomic_load (&c->cur_size);
    if (v < min)
      min = v;
  }
  if (min == UINT64_MAX)
    return;
  snprintf (tmp, sizeof tmp, "%s.%ld.%lu", path, (long) getpid (), ++size_seq);
  f = fopen (tmp, "we");
  if (!f) {
    nbdkit_debug ("rbdx: cannot write size_file=%s: %m", path);
    return;
  }
  bad = fprintf (f, "%" PRIu64 "\n", min) < 0;
  bad |= fclose (f) == EOF;
  if (bad || rename (tmp, path) == -1) {
    nbdkit_debug ("rbdx: cannot write size_file=%s: %m", path);
    unlink (tmp);
  }
}

/* Add a watching context to the registry and publish. */
static void
size_list_add (struct rbdx_ctx *ctx)
{
  if (!ctx->size_file)
    return;
  pthread_mutex_lock (&size_lock);
  ctx->size_next = size_ctxs;
  size_ctxs = ctx;
  ctx->size_listed = true;
  publish_size_locked (ctx->size_file);
  pthread_mutex_unlock (&size_lock);
}

static void
size_list_remove (struct rbdx_ctx *ctx)
{
  pthread_mutex_lock (&size_lock);
  if (ctx->size_listed) {
    for (struct rbdx_ctx **p = &size_ctxs; *p; p = &(*p)->size_next)
      if (*p == ctx) {
        *p = ctx->size_next;
        break;
      }
    ctx->size_listed = false;
    if (size_ctxs)
      publish_size_locked (ctx->size_file);   /* the minimum may rise */
  }
  pthread_mutex_unlock (&size_lock);
}

/* librbd calls this (on one of its threads) after the image header
 * changed, e.g. a resize by another client (the pattern rbd-nbd uses to
 * follow resizes). */
static void
on_update (void *arg)
{
  struct rbdx_ctx *ctx = arg;
  uint64_t size;

  if (rbd_get_size (ctx->image, &size) == 0 &&
      atomic_exchange (&ctx->cur_size, size) != size && ctx->size_file) {
    pthread_mutex_lock (&size_lock);
    if (ctx->size_listed)
      publish_size_locked (ctx->size_file);
    pthread_mutex_unlock (&size_lock);
  }
}

int
rbdx_ctx_open (const struct rbdx_options *o, const struct rbdx_spec *spec,
               unsigned flags, struct rbdx_ctx **out, char *err, size_t errlen)
{
  struct rbdx_ctx *ctx;
  size_t n;
  int r;

  ctx = calloc (1, sizeof *ctx);
  if (!ctx)
    return -ENOMEM;
  ctx->efd = -1;
  ctx->readonly = (flags & RBDX_CTX_READONLY) || spec->snap;
  n = rbdx_spec_format (spec, NULL, 0) + 1;
  ctx->name = malloc (n);
  if (!ctx->name) {
    free (ctx);
    return -ENOMEM;
  }
  rbdx_spec_format (spec, ctx->name, n);

  r = rbdx_cluster_connect (o, &ctx->cluster, err, errlen);
  if (r < 0) {
    ctx->cluster = NULL;
    goto fail;
  }
  ctx->size_file = spec->snap ? NULL : o->size_file;
  r = open_image (ctx, o, spec, flags, err, errlen);
  if (r < 0 || (flags & RBDX_CTX_PROBE))
    goto out;

  ctx->efd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (ctx->efd < 0) {
    r = -errno;
    snprintf (err, errlen, "eventfd: %s", strerror (errno));
    goto fail;
  }
  r = rbd_set_image_notification (ctx->image, ctx->efd, EVENT_TYPE_EVENTFD);
  if (r < 0) {
    snprintf (err, errlen, "rbd_set_image_notification: %s", strerror (-r));
    goto fail;
  }
  r = rbdx_reactor_init (&ctx->reactor, ctx->image, ctx->efd, o->completion);
  if (r < 0) {
    snprintf (err, errlen, "completion=io_uring: cannot set up io_uring: %s",
              strerror (-r));
    goto fail;
  }
  ctx->have_reactor = true;

  if (!spec->snap) {
    r = rbd_update_watch (ctx->image, &ctx->watch_handle, on_update, ctx);
    if (r < 0) {
      snprintf (err, errlen, "rbd_update_watch on '%s': %s", ctx->name,
                strerror (-r));
      goto fail;
    }
    ctx->watching = true;
    on_update (ctx);    /* a resize between open and watch */
    size_list_add (ctx);
  }

out:
  if (r < 0)
    goto fail;
  *out = ctx;
  return 0;

fail:
  rbdx_ctx_close (ctx);
  return r;
}

void
rbdx_ctx_close (struct rbdx_ctx *ctx)
{
  if (!ctx)
    return;
  size_list_remove (ctx);
  if (ctx->watching)
    rbd_update_unwatch (ctx->image, ctx->watch_handle);
  if (ctx->image)
    rbd_close (ctx->image);      /* waits for librbd's own work */
  if (ctx->have_reactor)
    rbdx_reactor_fini (&ctx->reactor);
  if (ctx->efd >= 0)
    close (ctx->efd);            /* after rbd_close: librbd may still write it */
  if (ctx->io)
    rados_ioctx_destroy (ctx->io);
  if (ctx->cluster)
    rados_shutdown (ctx->cluster);
  free (ctx->name);
  free (ctx);
}

enum op { OP_READ, OP_WRITE, OP_WRITE_FUA, OP_FLUSH, OP_DISCARD, OP_ZERO };

/* Submit one asynchronous request and wait for its result.  The wait
 * record lives on this stack frame; librbd holds its address until the
 * reactor has polled the completion, which rbdx_reactor_wait guarantees
 * before returning. */
static ssize_t
run (struct rbdx_ctx *ctx, enum op op, void *buf, uint64_t count,
     uint64_t offset, int zero_flags)
{
  struct rbdx_wait w;
  rbd_completion_t c;
  int r;

  rbdx_wait_init (&w);
  r = rbd_aio_create_completion (&w, NULL, &c);
  if (r < 0) {
    pthread_cond_destroy (&w.cond);
    return r;
  }
  switch (op) {
  case OP_READ:
    r = rbd_aio_read (ctx->image, offset, count, buf, c);
    break;
  case OP_WRITE:
    r = rbd_aio_write (ctx->image, offset, count, buf, c);
    break;
  case OP_WRITE_FUA:
    r = rbd_aio_write2 (ctx->image, offset, count, buf, c,
                        LIBRADOS_OP_FLAG_FADVISE_FUA);
    break;
  case OP_FLUSH:
    r = rbd_aio_flush (ctx->image, c);
    break;
  case OP_DISCARD:
    r = rbd_aio_discard (ctx->image, offset, count, c);
    break;
  case OP_ZERO:
    r = rbd_aio_write_zeroes (ctx->image, offset, count, c, zero_flags, 0);
    break;
  }
  if (r < 0) {
    /* Not queued: librbd will never complete it. */
    rbd_aio_release (c);
    pthread_cond_destroy (&w.cond);
    return r;
  }
  return rbdx_reactor_wait (&ctx->reactor, &w);
}

/* Is [offset, offset+count) inside the image as it is now? */
static bool
inside (struct rbdx_ctx *ctx, uint64_t count, uint64_t offset)
{
  uint64_t size = atomic_load (&ctx->cur_size);
  return offset <= size && count <= size - offset;
}

/* Checks and bookkeeping shared by write, discard and zero. */
static int
before_write (struct rbdx_ctx *ctx, uint64_t count, uint64_t offset)
{
  if (!inside (ctx, count, offset))
    return -ENOSPC;
  atomic_store (&ctx->dirty, true);
  return 0;
}

int
rbdx_ctx_read (struct rbdx_ctx *ctx, void *buf, uint32_t count,
               uint64_t offset)
{
  ssize_t r;

  if (!inside (ctx, count, offset))
    return -EINVAL;
  r = run (ctx, OP_READ, buf, count, offset, 0);
  if (r < 0)
    return (int) r;
  return (uint64_t) r == count ? 0 : -EINVAL;
}

int
rbdx_ctx_write (struct rbdx_ctx *ctx, const void *buf, uint32_t count,
                uint64_t offset, bool fua)
{
  ssize_t r = before_write (ctx, count, offset);

  if (r == 0)
    r = run (ctx, fua ? OP_WRITE_FUA : OP_WRITE, (void *) buf, count,
             offset, 0);
  return r < 0 ? (int) r : 0;
}

int
rbdx_ctx_flush (struct rbdx_ctx *ctx)
{
  ssize_t r;

  if (!atomic_exchange (&ctx->dirty, false) && !ctx->cache_on)
    return 0;
  r = run (ctx, OP_FLUSH, NULL, 0, 0, 0);
  if (r < 0)
    atomic_store (&ctx->dirty, true);   /* still owed */
  return r < 0 ? (int) r : 0;
}

int
rbdx_ctx_discard (struct rbdx_ctx *ctx, uint32_t count, uint64_t offset)
{
  ssize_t r = before_write (ctx, count, offset);

  if (r == 0)
    r = run (ctx, OP_DISCARD, NULL, count, offset, 0);
  return r < 0 ? (int) r : 0;
}

int
rbdx_ctx_zero (struct rbdx_ctx *ctx, uint32_t count, uint64_t offset,
               bool may_hole)
{
  ssize_t r = before_write (ctx, count, offset);

  if (r == 0)
    r = run (ctx, OP_ZERO, NULL, count, offset,
             may_hole ? 0 : RBD_WRITE_ZEROES_FLAG_THICK_PROVISION);
  return r < 0 ? (int) r : 0;
}

bool
rbdx_ctx_fast_diff_valid (struct rbdx_ctx *ctx)
{
  uint64_t flags;

  if (!(ctx->features & RBD_FEATURE_FAST_DIFF))
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
  uint64_t size = atomic_load (&ctx->cur_size);
  int r;

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
  return rbdx_extent_walk_finish (&w);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx plugin: size_file= publisher (see sizefile.h). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "rbdx/log.h"

#include "rbdx/sizefile.h"

/* size_lock guards the registry and orders the writes. */
static pthread_mutex_t size_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rbdx_ctx *size_ctxs;
static unsigned long size_seq;

static void
publish_locked (const char *path)
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
    rbdx_debug ("rbdx: cannot write size_file=%s: %m", path);
    return;
  }
  bad = fprintf (f, "%" PRIu64 "\n", min) < 0;
  bad |= fclose (f) == EOF;
  if (bad || rename (tmp, path) == -1) {
    rbdx_debug ("rbdx: cannot write size_file=%s: %m", path);
    unlink (tmp);
  }
}

void
rbdx_size_register (struct rbdx_ctx *ctx)
{
  if (!ctx->size_file)
    return;
  pthread_mutex_lock (&size_lock);
  if (size_ctxs && !rbdx_ident_equal (&size_ctxs->ident, &ctx->ident))
    rbdx_debug ("rbdx: %s is another image than the one size_file=%s "
                  "describes: not published", ctx->name, ctx->size_file);
  else {
    ctx->size_next = size_ctxs;
    size_ctxs = ctx;
    ctx->size_listed = true;
    publish_locked (ctx->size_file);
  }
  pthread_mutex_unlock (&size_lock);
}

void
rbdx_size_changed (struct rbdx_ctx *ctx)
{
  pthread_mutex_lock (&size_lock);
  if (ctx->size_listed)
    publish_locked (ctx->size_file);
  pthread_mutex_unlock (&size_lock);
}

void
rbdx_size_unregister (struct rbdx_ctx *ctx)
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
      publish_locked (ctx->size_file);   /* the minimum may rise */
  }
  pthread_mutex_unlock (&size_lock);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx plugin: shared lock-owning writers (see writer.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "writer.h"

struct rbdx_writer {
  struct rbdx_writer *next;
  struct rbdx_ctx *ctx;
  unsigned refs;
  bool pinned;          /* exclusive: one reference held until cleanup */
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rbdx_writer *table;

static int
take_lock (struct rbdx_ctx *ctx, char *err, size_t errlen)
{
  int r;

  if (!(ctx->features & RBD_FEATURE_EXCLUSIVE_LOCK)) {
    snprintf (err, errlen, "exclusive=true: image '%s' has no exclusive-lock "
              "feature (rbd feature enable %s exclusive-lock)",
              ctx->name, ctx->name);
    return -EINVAL;
  }
  r = rbd_lock_acquire (ctx->image, RBD_LOCK_MODE_EXCLUSIVE);
  if (r < 0)
    snprintf (err, errlen, "exclusive=true: cannot take the exclusive lock "
              "of '%s' (another client keeps it? see rbd lock ls %s): %s",
              ctx->name, ctx->name, strerror (-r));
  return r;
}

/* Unlink and close @w; call with table_lock held. */
static void
drop (struct rbdx_writer *w)
{
  struct rbdx_writer **p;

  for (p = &table; *p; p = &(*p)->next) {
    if (*p == w) {
      *p = w->next;
      break;
    }
  }
  nbdkit_debug ("rbdx: %s: shared writer closed", w->ctx->name);
  rbdx_ctx_close (w->ctx);
  free (w);
}

/* A fenced writer serves no new connection: release the reference an
 * exclusive writer holds on itself, so it closes with its last user.
 * Call with table_lock held; returns whether @w is still usable. */
static bool
usable (struct rbdx_writer *w)
{
  if (!rbdx_ctx_check_fenced (w->ctx))
    return true;
  if (w->pinned) {
    w->pinned = false;
    if (--w->refs == 0)
      drop (w);
  }
  return false;
}

int
rbdx_writer_get (const struct rbdx_options *o, const struct rbdx_spec *spec,
                 const struct rbdx_ctx *conn, struct rbdx_writer **out,
                 char *err, size_t errlen)
{
  char id[256];
  struct rbdx_writer *w, *next;
  int r = 0;

  pthread_mutex_lock (&table_lock);
  for (w = table; w; w = next) {
    next = w->next;
    if (rbdx_ident_equal (&w->ctx->ident, &conn->ident) && usable (w))
      break;
  }
  if (w) {
    w->refs++;
    goto out;
  }

  w = calloc (1, sizeof *w);
  if (!w) {
    r = -ENOMEM;
    goto out;
  }
  r = rbdx_ctx_open (o, spec, &conn->ident, 0, &w->ctx, err, errlen);
  if (r == 0 && o->exclusive)
    r = take_lock (w->ctx, err, errlen);
  if (r < 0) {
    rbdx_ctx_close (w->ctx);
    free (w);
    w = NULL;
    goto out;
  }
  w->refs = 1;
  if (o->exclusive) {
    w->pinned = true;
    w->refs++;
  }
  w->next = table;
  table = w;
  rbdx_ident_format (&conn->ident, id, sizeof id);
  nbdkit_debug ("rbdx: %s (%s): shared writer opened%s", w->ctx->name, id,
                o->exclusive ? ", exclusive lock held" : "");

out:
  pthread_mutex_unlock (&table_lock);
  *out = w;
  return r;
}

struct rbdx_ctx *
rbdx_writer_ctx (struct rbdx_writer *w)
{
  return w->ctx;
}

void
rbdx_writer_put (struct rbdx_writer *w)
{
  if (!w)
    return;
  pthread_mutex_lock (&table_lock);
  if (--w->refs == 0)
    drop (w);
  pthread_mutex_unlock (&table_lock);
}

void
rbdx_writer_cleanup (void)
{
  struct rbdx_writer *w, *next;

  pthread_mutex_lock (&table_lock);
  for (w = table; w; w = next) {
    next = w->next;
    if (w->pinned) {
      w->pinned = false;
      w->refs--;
    }
    if (w->refs == 0)
      drop (w);
  }
  pthread_mutex_unlock (&table_lock);
}

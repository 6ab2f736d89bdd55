/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: shared lock-owning writers (see writer.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/log.h"

#include "rbdx/metrics.h"
#include "rbdx/quiesce.h"
#include "rbdx/writer.h"

struct rbdx_writer {
  struct rbdx_writer *next;
  struct rbdx_ctx *ctx;
  unsigned refs;
  bool pinned;          /* exclusive: one reference held until cleanup */
  bool counted_fence;   /* counted in rbdx_writer_fences */
  struct rbdx_quiesce_member *quiesce;  /* its quiesce watch (quiesce.h) */
};

/* table_lock guards the table and the references and is never held
 * while librbd talks to the cluster.  create_lock serialises creating
 * writers (one rbd_open and, with exclusive=true, one rbd_lock_acquire
 * per image, never two racing for the lock), held around the open only:
 * connections whose writer exists, and closes, never wait for it. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;
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

/* Unlink @w; call with table_lock held.  The caller closes it (after
 * unlocking: rbd_close may wait on the cluster). */
static void
unlink_writer (struct rbdx_writer *w)
{
  struct rbdx_writer **p;

  for (p = &table; *p; p = &(*p)->next) {
    if (*p == w) {
      *p = w->next;
      break;
    }
  }
}

static void
close_writer (struct rbdx_writer *w)
{
  rbdx_debug ("rbdx: %s: shared writer closed", w->ctx->name);
  rbdx_quiesce_leave (w->quiesce);
  rbdx_ctx_close (w->ctx);
  free (w);
}

/* A usable writer of @ident, with a new reference, or NULL.  A fenced
 * writer serves no new connection, nor one whose last write failed with
 * EROFS: librbd can keep such a handle read-only after `rbd mirror image
 * promote` until it refreshes (Ceph 16.2; rofs.h has it
 * refreshed within a second or two of the next failed write), and a
 * handle opened afterwards writes at once.  The connections that have
 * it keep it: their writes work again when it has refreshed.  The reference an exclusive writer
 * holds on itself is dropped, so it closes with its last user (returned
 * in *dead when that is now).  Call with table_lock held. */
static struct rbdx_writer *
find_usable (const struct rbdx_ident *ident, struct rbdx_writer **dead)
{
  struct rbdx_writer *w, *next;
  bool rofs;

  for (w = table; w; w = next) {
    next = w->next;
    if (!rbdx_ident_equal (&w->ctx->ident, ident))
      continue;
    rofs = atomic_load (&w->ctx->write_rofs);
    if (!rofs && !rbdx_ctx_check_fenced (w->ctx)) {
      w->refs++;
      return w;
    }
    if (!rofs && !w->counted_fence) {     /* a fence, not an EROFS */
      w->counted_fence = true;
      atomic_fetch_add (&rbdx_writer_fences, 1);
    }
    if (w->pinned) {
      w->pinned = false;
      if (--w->refs == 0) {
        unlink_writer (w);
        *dead = w;
      }
    }
  }
  return NULL;
}

int
rbdx_writer_get (const struct rbdx_options *o, const struct rbdx_spec *spec,
                 const struct rbdx_ctx *conn, struct rbdx_writer **out,
                 char *err, size_t errlen)
{
  struct rbdx_writer *w, *nw, *dead = NULL, *dead2 = NULL;
  char id[RBDX_IDENT_TEXT_MAX];
  int r;

  pthread_mutex_lock (&table_lock);
  w = find_usable (&conn->ident, &dead);
  pthread_mutex_unlock (&table_lock);
  if (dead)
    close_writer (dead);
  if (w) {
    *out = w;
    return 0;
  }

  pthread_mutex_lock (&create_lock);
  pthread_mutex_lock (&table_lock);
  w = find_usable (&conn->ident, &dead2);
  pthread_mutex_unlock (&table_lock);
  if (w) {                       /* made while we waited */
    pthread_mutex_unlock (&create_lock);
    if (dead2)
      close_writer (dead2);
    *out = w;
    return 0;
  }
  nw = calloc (1, sizeof *nw);
  r = nw ? rbdx_ctx_open (o, spec, &conn->ident, RBDX_CTX_SHARED, &nw->ctx,
                         err, errlen)
         : -ENOMEM;
  if (r == 0 && o->exclusive)
    r = take_lock (nw->ctx, err, errlen);
  if (r == 0)
    r = rbdx_quiesce_join (o, nw->ctx, &nw->quiesce, err, errlen);
  if (r < 0) {
    pthread_mutex_unlock (&create_lock);
    if (nw)
      rbdx_ctx_close (nw->ctx);
    free (nw);
    if (dead2)
      close_writer (dead2);
    *out = NULL;
    return r;
  }

  nw->refs = 1;
  if (o->exclusive) {
    nw->pinned = true;
    nw->refs++;
  }
  pthread_mutex_lock (&table_lock);
  nw->next = table;
  table = nw;
  w = nw;
  pthread_mutex_unlock (&table_lock);
  atomic_fetch_add (&rbdx_writer_opens, 1);
  pthread_mutex_unlock (&create_lock);
  if (dead2)
    close_writer (dead2);
  rbdx_ident_format (&conn->ident, id, sizeof id);
  rbdx_debug ("rbdx: %s (%s): shared writer opened%s", w->ctx->name, id,
                o->exclusive ? ", exclusive lock held" : "");
  *out = w;
  return 0;
}

struct rbdx_ctx *
rbdx_writer_ctx (struct rbdx_writer *w)
{
  return w->ctx;
}

void
rbdx_writer_put (struct rbdx_writer *w)
{
  bool last;

  if (!w)
    return;
  pthread_mutex_lock (&table_lock);
  last = --w->refs == 0;
  if (last)
    unlink_writer (w);
  pthread_mutex_unlock (&table_lock);
  if (last)
    close_writer (w);
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
    if (w->refs == 0) {
      unlink_writer (w);
      close_writer (w);      /* at unload: nothing else runs */
    }
  }
  pthread_mutex_unlock (&table_lock);
}

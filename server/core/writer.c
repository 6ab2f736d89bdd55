/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: shared lock-owning writers (see writer.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
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

/* table_lock guards the table, the references and the images whose
 * writer is being created, and is never held while librbd talks to the
 * cluster.  One writer is created at a time per image (one rbd_open
 * and, with exclusive=true, one rbd_lock_acquire, never two racing for
 * the lock): a connection of that image waits on `created` meanwhile.
 * Those of other images do not (C87: in pool mode, exclusive=true, a
 * lock acquire waiting ~30 s for a dead owner's watch to expire held up
 * every other image's new connections), nor do connections whose writer
 * exists, nor closes. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t created = PTHREAD_COND_INITIALIZER;
static struct rbdx_writer *table;

/* An image whose writer a connection is creating (under table_lock). */
struct creating {
  const struct rbdx_ident *ident;
  struct creating *next;
};
static struct creating *creating;

static bool
being_created (const struct rbdx_ident *ident)
{
  struct creating *c;

  for (c = creating; c; c = c->next)
    if (rbdx_ident_equal (c->ident, ident))
      return true;
  return false;
}

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
  rbdx_debug ("rbdx: %s: taking the exclusive lock (exclusive=true)",
              ctx->name);
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
  struct rbdx_writer *w, *nw, *dead;
  struct creating mine = { .ident = &conn->ident }, **q;
  char id[RBDX_IDENT_TEXT_MAX];
  int r;

  pthread_mutex_lock (&table_lock);
  for (;;) {
    dead = NULL;
    w = find_usable (&conn->ident, &dead);
    if (dead) {                 /* rbd_close may wait on the cluster */
      pthread_mutex_unlock (&table_lock);
      close_writer (dead);
      pthread_mutex_lock (&table_lock);
      if (!w)
        continue;
    }
    if (w || !being_created (&conn->ident))
      break;
    pthread_cond_wait (&created, &table_lock);  /* made meanwhile? */
  }
  if (w) {
    pthread_mutex_unlock (&table_lock);
    *out = w;
    return 0;
  }
  mine.next = creating;
  creating = &mine;
  pthread_mutex_unlock (&table_lock);

  nw = calloc (1, sizeof *nw);
  r = nw ? rbdx_ctx_open (o, spec, &conn->ident, RBDX_CTX_SHARED, &nw->ctx,
                         err, errlen)
         : -ENOMEM;
  if (r == 0 && o->exclusive)
    r = take_lock (nw->ctx, err, errlen);
  if (r == 0)
    r = rbdx_quiesce_join (o, nw->ctx, &nw->quiesce, err, errlen);
  if (r < 0 && nw) {
    rbdx_ctx_close (nw->ctx);
    free (nw);
    nw = NULL;
  }
  if (nw) {
    nw->refs = 1;
    if (o->exclusive) {
      nw->pinned = true;
      nw->refs++;
    }
  }

  pthread_mutex_lock (&table_lock);
  for (q = &creating; *q != &mine; q = &(*q)->next)
    ;
  *q = mine.next;
  if (nw) {
    nw->next = table;
    table = nw;
  }
  pthread_cond_broadcast (&created);
  pthread_mutex_unlock (&table_lock);
  if (!nw) {
    *out = NULL;
    return r;
  }
  atomic_fetch_add (&rbdx_writer_opens, 1);
  rbdx_ident_format (&conn->ident, id, sizeof id);
  rbdx_debug ("rbdx: %s (%s): shared writer opened%s", nw->ctx->name, id,
                o->exclusive ? ", exclusive lock held" : "");
  *out = nw;
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

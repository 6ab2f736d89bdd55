/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: one connection's librbd context (see ctx.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rbdx/log.h"

#include "rbdx/ancestors.h"
#include "rbdx/clients.h"
#include "rbdx/cluster.h"
#include "rbdx/ctx.h"
#include "rbdx/headpoll.h"
#include "rbdx/imageconf.h"
#include "rbdx/printable.h"
#include "rbdx/qos.h"
#include "rbdx/rofs.h"
#include "rbdx/sizefile.h"

/* The I/O context of the image's pool: by name, or by the pool id of
 * @ident (a pool renamed since is still the same pool). */
static int
open_pool (struct rbdx_ctx *ctx, const struct rbdx_spec *spec,
           const struct rbdx_ident *ident, char *err, size_t errlen)
{
  int r;

  if (!ident)
    return rbdx_cluster_open_pool (ctx->cluster, spec->pool, spec->ns,
                                   &ctx->io, err, errlen);
  r = rados_ioctx_create2 (ctx->cluster, ident->pool_id, &ctx->io);
  if (r < 0) {
    snprintf (err, errlen, "cannot open the pool of '%s' (pool id %" PRId64
              "): %s", ctx->name, ident->pool_id, strerror (-r));
    return r;
  }
  rados_ioctx_set_namespace (ctx->io, *ident->ns ? ident->ns : NULL);
  return 0;
}

static bool
denied (int r)
{
  return r == -EPERM || r == -EACCES || r == -EROFS;
}

/* Open the head: read-write (the handle with the header watch) unless
 * probing, read-only when the cephx id may not write and the export
 * is read-only anyway. */
static int
open_head (struct rbdx_ctx *ctx, const struct rbdx_spec *spec,
           const struct rbdx_ident *ident, unsigned flags, bool *rw)
{
  int r = -EPERM;

  *rw = !(flags & RBDX_CTX_PROBE);
  if (*rw) {
    r = ident ? rbd_open_by_id (ctx->io, ident->image_id, &ctx->image, NULL)
              : rbd_open (ctx->io, spec->image, &ctx->image, NULL);
    if (r == 0 || !ctx->readonly || !denied (r))
      return r;
    *rw = false;
  }
  return ident ? rbd_open_by_id_read_only (ctx->io, ident->image_id,
                                           &ctx->image, NULL)
               : rbd_open_read_only (ctx->io, spec->image, &ctx->image, NULL);
}

/* Record the identity of the open head (pool id, namespace, image id)
 * and, for a snapshot, move the handle to it by id. */
static int
bind_identity (struct rbdx_ctx *ctx, const struct rbdx_options *o,
               const struct rbdx_spec *spec, const struct rbdx_ident *ident,
               char *err, size_t errlen)
{
  struct rbdx_ident *id = &ctx->ident;
  int r;

  id->pool_id = rados_ioctx_get_id (ctx->io);
  if (spec->ns && strlen (spec->ns) > RBDX_NS_MAX) {
    snprintf (err, errlen, "namespace of '%s' is longer than %d bytes",
              ctx->name, RBDX_NS_MAX);
    return -ENAMETOOLONG;
  }
  snprintf (id->ns, sizeof id->ns, "%s",
            ident ? ident->ns : spec->ns ? spec->ns : "");
  r = rbd_get_id (ctx->image, id->image_id, sizeof id->image_id);
  if (r < 0) {
    /* Format 1 images (created before Ceph 0.56 made format 2 the
     * default) have no id and cannot be renamed in place safely: the
     * name is the best identity there is. */
    snprintf (id->image_id, sizeof id->image_id, "name:%s", spec->image);
  }
  id->snap_id = RBDX_NOSNAP;
  if (!spec->snap && !o->snap_id_set)
    return 0;

  if (ident)
    id->snap_id = ident->snap_id;
  else if (o->snap_id_set)
    id->snap_id = o->snap_id;
  else if ((r = rbd_snap_get_id (ctx->image, spec->snap, &id->snap_id)) < 0)
    goto fail;
  r = rbd_snap_set_by_id (ctx->image, id->snap_id);
  if (r == 0)
    return 0;
fail:
  if (r == -ENOENT && !spec->snap)
    snprintf (err, errlen, "image '%s' has no snapshot of id %" PRIu64 "%s",
              ctx->name, id->snap_id, ident ? " any more" : "");
  else if (r == -ENOENT)
    snprintf (err, errlen, "snapshot '%s' of image '%s/%s%s%s' does not "
              "exist%s", spec->snap, spec->pool, spec->ns ? spec->ns : "",
              spec->ns ? "/" : "", spec->image, ident ? " any more" : "");
  else
    snprintf (err, errlen, "cannot open snapshot '%s': %s", ctx->name,
              strerror (-r));
  return r;
}

static int
open_image (struct rbdx_ctx *ctx, const struct rbdx_options *o,
            const struct rbdx_spec *spec, const struct rbdx_ident *ident,
            unsigned flags, bool *rw, char *err, size_t errlen)
{
  rbd_image_info_t info;
  int r;

  r = open_pool (ctx, spec, ident, err, errlen);
  if (r < 0) {
    ctx->io = NULL;
    return r;
  }
  r = open_head (ctx, spec, ident, flags, rw);
  if (r < 0) {
    ctx->image = NULL;
    if (r == -ENOENT && ident) {
      char id[RBDX_IDENT_TEXT_MAX];

      rbdx_ident_format (ident, id, sizeof id);
      snprintf (err, errlen, "image '%s' with identity %s does not exist "
                "(any more)", ctx->name, id);
    }
    else if (r == -ENOENT)
      snprintf (err, errlen, "image '%s' does not exist", ctx->name);
    else if ((r == -EPERM || r == -EACCES) && !(flags & RBDX_CTX_READONLY))
      snprintf (err, errlen, "client.%s may not open image '%s' (check its "
                "cephx caps) for a connection that may write: a writable "
                "open needs osd 'profile rbd pool=%s' (with read-only caps, "
                "serve with nbdkit -r): %s", rbdx_options_id (o),
                ctx->name, spec->pool, strerror (-r));
    else if (r == -EPERM || r == -EACCES)
      snprintf (err, errlen, "client.%s may not open image '%s' "
                "(check its cephx caps in pool '%s'): %s",
                rbdx_options_id (o), ctx->name, spec->pool, strerror (-r));
    else if (r == -ETIMEDOUT && (flags & RBDX_CTX_PROBE))
      /* RBDX_PROBE_OSD_TIMEOUT_S in rbdx/cluster.h says why. */
      snprintf (err, errlen, "client.%s could not open image '%s': no OSD "
                "answered within rados_osd_op_timeout; OSDs of Ceph 17 and "
                "later refuse an id without OSD caps (check its cephx caps, "
                "e.g. osd 'profile rbd pool=%s'), or the OSDs are down",
                rbdx_options_id (o), ctx->name, spec->pool);
    else
      snprintf (err, errlen, "cannot open image '%s': %s",
                ctx->name, strerror (-r));
    return r;
  }
  r = bind_identity (ctx, o, spec, ident, err, errlen);
  if (r < 0)
    return r;
  r = rbdx_load_encryption (ctx->io, ctx->image, ctx->name, o,
                            &ctx->crypto_sector, err, errlen);
  if (r < 0)
    return r;
  ctx->encrypted = o->nenc > 0;
  ctx->notrim = o->notrim;

  if ((r = rbd_get_size (ctx->image, &ctx->size)) < 0 ||
      (r = rbd_get_features (ctx->image, &ctx->features)) < 0 ||
      (r = rbdx_effective_cache (ctx->image, ctx->name, &ctx->cache_on)) < 0) {
    snprintf (err, errlen, "cannot read the properties of image '%s': %s",
              ctx->name, strerror (-r));
    return r;
  }
  ctx->object_size = UINT64_C (1) << 22;
  if (rbd_stat (ctx->image, &info, sizeof info) == 0)
    ctx->object_size = UINT64_C (1) << info.order;
  atomic_store (&ctx->cur_size, ctx->size);
  return 0;
}

void
rbdx_ctx_mark_fenced (struct rbdx_ctx *ctx)
{
  if (!atomic_exchange (&ctx->fenced, true)) {
    rbdx_error ("rbdx: %s: this Ceph client (instance %" PRIu64 ") was "
                  "blocklisted: its requests fail with EIO from now on",
                  ctx->name, rados_get_instance_id (ctx->cluster));
    /* connections_per_client=: no new context on this client. */
    rbdx_cluster_retire (ctx->cluster);
  }
}

bool
rbdx_ctx_check_fenced (struct rbdx_ctx *ctx)
{
  int owner = 0;

  if (!atomic_load (&ctx->fenced) && ctx->image &&
      (ctx->features & RBD_FEATURE_EXCLUSIVE_LOCK) &&
      rbd_is_exclusive_lock_owner (ctx->image, &owner) == -ESHUTDOWN)
    rbdx_ctx_mark_fenced (ctx);
  return atomic_load (&ctx->fenced);
}

/* The snapshot this context serves: still there?  Only -ENOENT from
 * rbd_snap_get_name (by id) means it was removed; librbd refreshes the
 * header before answering. */
static void
check_snapshot (struct rbdx_ctx *ctx)
{
  char name[512];
  size_t len = sizeof name;

  if (rbd_snap_get_name (ctx->image, ctx->ident.snap_id, name, &len) ==
      -ENOENT && !atomic_exchange (&ctx->gone, true))
    rbdx_error ("rbdx: %s: the snapshot was removed: reads and block "
                  "status on this connection fail with EIO from now on; "
                  "reconnect to serve a snapshot of that name again",
                  ctx->name);
}

/* Move the handle to its snapshot again, which reloads what librbd
 * keeps of it.  A read-write handle moved to a snapshot (the one with
 * the header watch) keeps the snapshot's object map and parent as it
 * loaded them: after `rbd feature enable object-map` and `rbd
 * object-map rebuild IMAGE@SNAP`, after `rbd flatten` of a clone or
 * `rbd migration execute`, it read zeros where the snapshot holds data
 * (Ceph 16.2; a read-only handle, or this one set again, reads the
 * data).  Reads between the header update and this pass may still see
 * the old map. */
static void
reload_snapshot (struct rbdx_ctx *ctx)
{
  int r;

  if (atomic_load (&ctx->gone))
    return;
  r = rbd_snap_set_by_id (ctx->image, ctx->ident.snap_id);
  if (r == -ENOENT)
    check_snapshot (ctx);
  else if (r < 0)
    rbdx_error ("rbdx: %s: cannot reload the snapshot after a header "
                "update: %s", ctx->name, strerror (-r));
  else
    rbdx_debug ("rbdx: %s: snapshot reloaded after a header update",
                ctx->name);
}

/* The image header changed: a resize or a snapshot removal by another
 * client (the pattern rbd-nbd uses to follow resizes), a QoS setting,
 * or a lock break.  Runs on a thread the context starts for the update
 * (updates.h), or once at open (rbdx_updates_run, never next to that
 * thread's pass): every call here may wait for the cluster or for a
 * refresh of the image. */
static void
handle_update (void *arg)
{
  struct rbdx_ctx *ctx = arg;
  struct rbdx_qos *qos = atomic_load (&ctx->qos);
  uint64_t size;

  /* `rbd config image set ... rbd_qos_*` is a header update too, and so
   * is a lock break (`rbd lock rm`), which blocklists the owner. */
  if (qos)
    rbdx_qos_refresh (qos, ctx->image);
  if (ctx->ident.snap_id == RBDX_NOSNAP && !ctx->readonly) {
    rbdx_ctx_check_fenced (ctx);
    rbdx_rofs_refresh (ctx);
  }
  if (ctx->ident.snap_id != RBDX_NOSNAP) {
    check_snapshot (ctx);
    reload_snapshot (ctx);
    return;
  }
  if (rbd_get_size (ctx->image, &size) == 0 &&
      atomic_exchange (&ctx->cur_size, size) != size)
    rbdx_size_changed (&ctx->size_entry);
}

/* librbd calls this on its op thread (rbd_op_threads, 1 by default)
 * after the header changed, and acknowledges the header-update
 * notification only when its update watchers have returned.  When this
 * handle owns the exclusive lock and carries out a maintenance request
 * of another client (`rbd feature disable`, `rbd snap create`, ...),
 * librbd notifies the header while the image is prepared for the
 * operation and waits for every watcher's ack, this handle's own
 * included; a synchronous librbd call here (rbd_get_size refreshes the
 * image, rbd_is_exclusive_lock_owner asserts the lock on the header)
 * waits for that operation in turn, until the notification times out
 * after 5 s and the operation fails with ETIMEDOUT, which the
 * requesting client takes for an owner that did not answer and retries
 * forever (seen with Ceph 16.2.15).  So only note the update here: a
 * thread of this context's own, started for it, runs handle_update
 * (updates.c says why one per context and only on demand). */
static void
on_update (void *arg)
{
  struct rbdx_ctx *ctx = arg;

  rbdx_updates_note (&ctx->upd);
}

/* A clone of a clone (C79, ancestors.h): the watch says nothing of its
 * ancestors, so their links are checked (headpoll.h) and reads whose
 * data may be zeros wait for a check (ctx-io.c). */
static int
follow_ancestors (struct rbdx_ctx *ctx, char *err, size_t errlen)
{
  struct rbdx_ancestors anc;
  int r = rbdx_ancestors_find (&anc, ctx->io, ctx->image);

  if (r == 0 && anc.n > 0) {
    r = rbdx_headpoll_register (&ctx->poll, ctx->io, &ctx->ident, ctx->name,
                                &ctx->gone, &ctx->cur_size, 0, &anc);
    rbdx_ancestors_free (&anc);       /* unless moved */
  }
  if (r < 0)
    snprintf (err, errlen, "cannot follow the parents of clone '%s': %s",
              ctx->name, strerror (-r));
  return r;
}

static int
start_reactor (struct rbdx_ctx *ctx, const struct rbdx_options *o,
               char *err, size_t errlen)
{
  int r;

  ctx->efd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (ctx->efd < 0) {
    r = -errno;
    snprintf (err, errlen, "eventfd: %s", strerror (errno));
    return r;
  }
  r = rbd_set_image_notification (ctx->image, ctx->efd, EVENT_TYPE_EVENTFD);
  if (r < 0) {
    snprintf (err, errlen, "rbd_set_image_notification: %s", strerror (-r));
    return r;
  }
  r = rbdx_reactor_init (&ctx->reactor, ctx->image, ctx->efd, o->completion);
  if (r < 0) {
    snprintf (err, errlen, "completion=io_uring: cannot set up io_uring: %s",
              strerror (-r));
    return r;
  }
  ctx->have_reactor = true;
  return 0;
}

/* librbd hands each asynchronous request to its io_context pool thread
 * for dispatch unless rbd_non_blocking_aio is false (server/core/
 * DESIGN.md).  The engine's threads submit (rbdx_ctx_aio), and so do
 * the plugin's nbdkit workers in completion=callback (measured:
 * DESIGN.md, "Completions"), and dispatching there saves a
 * thread wake-up per request: an engine connection's context is fed by
 * its one reader thread, a plugin's by its nbdkit workers; a shared
 * writer by the readers of several connections, one at a time
 * (ctx->sub: queued behind the thread in librbd, never waiting on the
 * image's locks).  A client shared by several contexts
 * (connections_per_client=) serves only such contexts in the engine, so
 * its setting may reach them all; librbd reads it when an image is
 * opened.  Only while the value is Ceph's default, as for the client
 * defaults (rbdx_cluster_set_default); a failure leaves the default.  A
 * shared writer takes its callers one at a time whoever set the value
 * false (the conf file or ceph.rbd_non_blocking_aio=false too). */
static void
choose_dispatch (struct rbdx_ctx *ctx, const struct rbdx_options *o,
                 unsigned flags)
{
  char cur[16];

  if (o->completion != RBDX_COMPLETION_CALLBACK || (flags & RBDX_CTX_PROBE))
    return;
  if (rbdx_cluster_set_default (o, ctx->cluster, "rbd_non_blocking_aio",
                                "true", "false") < 0) {
    rbdx_debug ("rbdx: %s: cannot set rbd_non_blocking_aio=false",
                ctx->name);
    return;
  }
  if (rados_conf_get (ctx->cluster, "rbd_non_blocking_aio", cur,
                      sizeof cur) < 0)
    return;
  ctx->sub.on = (flags & RBDX_CTX_SHARED) && strcmp (cur, "false") == 0;
}

/* Undo a failed open_image and give back the (fenced) shared client. */
static void
retire_client (struct rbdx_ctx *ctx)
{
  if (ctx->image)
    rbd_close (ctx->image);
  ctx->image = NULL;
  if (ctx->io)
    rados_ioctx_destroy (ctx->io);
  ctx->io = NULL;
  rbdx_cluster_retire (ctx->cluster);
  rbdx_cluster_release (ctx->cluster);
  ctx->cluster = NULL;
}

int
rbdx_ctx_open (const struct rbdx_options *o, const struct rbdx_spec *spec,
               const struct rbdx_ident *ident, unsigned flags,
               struct rbdx_ctx **out, char *err, size_t errlen)
{
  struct rbdx_ctx *ctx;
  bool rw = false;
  size_t n;
  int r;

  ctx = calloc (1, sizeof *ctx);
  if (!ctx)
    return -ENOMEM;
  pthread_mutex_init (&ctx->sub.lock, NULL);
  ctx->efd = -1;
  ctx->readonly = (flags & RBDX_CTX_READONLY) || spec->snap || o->snap_id_set;
  /* snap_id=: "pool/image@{snap id N}", in messages only. */
  n = rbdx_spec_format (spec, NULL, 0) + 40;
  ctx->name = malloc (n);
  if (!ctx->name) {
    pthread_mutex_destroy (&ctx->sub.lock);
    free (ctx);
    return -ENOMEM;
  }
  rbdx_spec_format (spec, ctx->name, n);
  if (o->snap_id_set && !spec->snap)
    snprintf (ctx->name + strlen (ctx->name), 40, "@{snap id %" PRIu64 "}",
              o->snap_id);

  r = (flags & RBDX_CTX_PROBE)
        ? rbdx_cluster_connect_probe (o, &ctx->cluster, err, errlen)
        : rbdx_cluster_acquire (o, &ctx->cluster, err, errlen);
  if (r < 0) {
    ctx->cluster = NULL;
    goto fail;
  }
  choose_dispatch (ctx, o, flags);
  r = open_image (ctx, o, spec, ident, flags, &rw, err, errlen);
  if (r == -ESHUTDOWN && !(flags & RBDX_CTX_PROBE) &&
      o->connections_per_client > 1) {
    /* A shared client fenced before any of its contexts noticed: retire
     * it and open once more on a fresh one. */
    rbdx_debug ("rbdx: %s: shared Ceph client blocklisted: retrying on a "
                "new client", ctx->name);
    retire_client (ctx);
    r = rbdx_cluster_acquire (o, &ctx->cluster, err, errlen);
    if (r < 0) {
      ctx->cluster = NULL;
      goto fail;
    }
    choose_dispatch (ctx, o, flags);
    r = open_image (ctx, o, spec, ident, flags, &rw, err, errlen);
  }
  if (r < 0)
    goto fail;
  if (flags & RBDX_CTX_PROBE)
    goto out;
  if (o->completion != RBDX_COMPLETION_CALLBACK) {
    r = start_reactor (ctx, o, err, errlen);
    if (r < 0)
      goto fail;
  }

  /* A read-only handle has no header watch: its update watch would
   * never fire. */
  if (rw) {
    rbdx_updates_init (&ctx->upd, handle_update, ctx, ctx->name);
    r = rbd_update_watch (ctx->image, &ctx->watch_handle, on_update, ctx);
    if (r < 0) {
      snprintf (err, errlen, "rbd_update_watch on '%s': %s", ctx->name,
                strerror (-r));
      goto fail;
    }
    ctx->watching = true;
    /* A resize or removal between open and watch.  Through the updates
     * module: an update noted since the watch began already has a
     * thread making a pass, and two passes must not overlap. */
    rbdx_updates_run (&ctx->upd);
    if (ctx->ident.snap_id == RBDX_NOSNAP) {
      ctx->follows_size = true;
      rbdx_size_register (&ctx->size_entry, o->size_file, &ctx->ident,
                          ctx->name, &ctx->cur_size);
    }
    r = follow_ancestors (ctx, err, errlen);
    if (r < 0)
      goto fail;
  }
  else {
    /* Read-only (client.%s may not watch the header): nothing tells
     * this handle of a removal or a resize; ask the cluster
     * (headpoll.h). */
    char shown[1024];
    struct rbdx_ancestors anc;
    rbd_linked_image_spec_t parent;
    rbd_snap_spec_t psnap;

    /* A clone's object that is gone reads as its parent's (C76). */
    if (rbd_get_parent (ctx->image, &parent, &psnap) == 0) {
      ctx->confirm_reads = true;
      rbd_linked_image_spec_cleanup (&parent);
      rbd_snap_spec_cleanup (&psnap);
    }
    rbdx_printable (rbdx_options_id (o), shown, sizeof shown);
    r = rbdx_ancestors_find (&anc, ctx->io, ctx->image);
    if (r < 0) {
      snprintf (err, errlen, "cannot read the parents of clone '%s': %s",
                ctx->name, strerror (-r));
      goto fail;
    }
    r = rbdx_headpoll_register (&ctx->poll, ctx->io, &ctx->ident, ctx->name,
                                &ctx->gone, &ctx->cur_size,
                                RBDX_HEADPOLL_OWN |
                                (ctx->encrypted ? RBDX_HEADPOLL_ENCRYPTED : 0) |
                                (ctx->confirm_reads ? RBDX_HEADPOLL_CLONE : 0),
                                &anc);
    rbdx_ancestors_free (&anc);       /* unless moved */
    if (r == -ENOTSUP)
      rbdx_error ("rbdx: %s: opened read-only (client.%s may not watch the "
                  "image header) and a format 1 image: its removal or "
                  "shrink is not noticed", ctx->name, shown);
    else if (r < 0) {
      snprintf (err, errlen, "cannot follow '%s' opened read-only: %s",
                ctx->name, strerror (-r));
      goto fail;
    }
    else {
      uint64_t mine, now;

      rbdx_debug ("rbdx: %s: opened read-only (client.%s may not watch the "
                  "image header): its removal and resize are polled every "
                  "%d ms", ctx->name, shown, RBDX_HEADPOLL_INTERVAL_MS);
      /* The link the checks compare against must be the handle's. */
      if (ctx->confirm_reads && rbd_get_overlap (ctx->image, &mine) == 0 &&
          (rbdx_headpoll_overlap (&ctx->poll, &now) < 0 || now != mine)) {
        snprintf (err, errlen, "image '%s' changed while it was being "
                  "opened (rbd flatten, or a shrink of the clone): connect "
                  "again", ctx->name);
        r = -EAGAIN;
        goto fail;
      }
    }
  }

out:
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
  rbdx_size_unregister (&ctx->size_entry);
  rbdx_headpoll_unregister (&ctx->poll);  /* before its I/O context goes */
  if (ctx->watching)
    rbd_update_unwatch (ctx->image, ctx->watch_handle);
  rbdx_updates_stop (&ctx->upd); /* after the unwatch: no more notes */
  if (ctx->image)
    rbd_close (ctx->image);      /* waits for librbd's own work */
  if (ctx->have_reactor)
    rbdx_reactor_fini (&ctx->reactor);
  if (ctx->efd >= 0)
    close (ctx->efd);            /* after rbd_close: librbd may still write it */
  if (ctx->io)
    rados_ioctx_destroy (ctx->io);
  if (ctx->cluster)
    rbdx_cluster_release (ctx->cluster);
  pthread_mutex_destroy (&ctx->sub.lock);
  free (ctx->name);
  free (ctx);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: one NBD connection (see conn.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/imageconf.h"
#include "rbdx/log.h"
#include "rbdx/printable.h"

#include "rbdx/conn.h"

static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rbdx_conn *conns;

static void
link_conn (struct rbdx_conn *conn)
{
  rbdx_metrics_attach (&conn->metrics, &conn->ctx->ident, conn->ctx->name);
  pthread_mutex_lock (&conns_lock);
  conn->prev = NULL;
  conn->next = conns;
  if (conns)
    conns->prev = conn;
  conns = conn;
  pthread_mutex_unlock (&conns_lock);
}

void
rbdx_conn_close (struct rbdx_conn *conn)
{
  rbdx_metrics_detach (&conn->metrics);  /* counted once: open, or closed */
  pthread_mutex_lock (&conns_lock);
  if (conn->prev)
    conn->prev->next = conn->next;
  else if (conns == conn)
    conns = conn->next;
  if (conn->next)
    conn->next->prev = conn->prev;
  pthread_mutex_unlock (&conns_lock);
  rbdx_quiesce_leave (conn->quiesce);
  rbdx_writer_put (conn->writer);
  rbdx_ctx_close (conn->ctx);      /* no update callback after this */
  rbdx_qos_put (conn->qos);
  free (conn);
}

void
rbdx_conn_close_all (void)
{
  while (conns) {
    rbdx_debug ("rbdx: closing %s left open by nbdkit's shutdown",
                  conns->ctx->name);
    rbdx_conn_close (conns);
  }
  rbdx_writer_cleanup ();
}

static const char *
policy_name (enum rbdx_writers w)
{
  return w == RBDX_WRITERS_SHARED ? "shared" : "per-connection";
}

/* The write policy (writer.h): with exclusive-lock, one lock-owning
 * handle per image so rbdx's own handles never fight over the lock. */
static enum rbdx_writers
policy_of (const struct rbdx_options *o, bool lock)
{
  if (o->exclusive)
    return RBDX_WRITERS_SHARED;
  if (o->writers == RBDX_WRITERS_AUTO)
    return lock ? RBDX_WRITERS_SHARED : RBDX_WRITERS_PER_CONNECTION;
  return o->writers;
}

static void
log_open (const struct rbdx_conn *conn, enum rbdx_writers policy)
{
  const struct rbdx_ctx *ctx = conn->ctx;
  char id[RBDX_IDENT_TEXT_MAX];

  rbdx_ident_format (&ctx->ident, id, sizeof id);
  rbdx_debug ("rbdx: opened %s (%s) %s, %" PRIu64 " bytes, features 0x%"
                PRIx64 ", writers=%s, multi-conn %s, rbd_cache %s, "
                "completions via %s", ctx->name, id,
                ctx->readonly ? "read-only" : "read-write",
                ctx->size, ctx->features,
                ctx->readonly ? "none" : policy_name (policy),
                conn->multi_conn ? "yes" : "no",
                ctx->cache_on ? "ON" : "off",
                !ctx->have_reactor ? "librbd callbacks"
                : rbdx_reactor_uses_uring (&ctx->reactor) ? "io_uring"
                : "poll(2)");
  if (ctx->cache_on)
    rbdx_debug ("rbdx: %s: rbd_cache is on (image-level or ceph.rbd_cache "
                  "setting): multi-conn is not advertised", ctx->name);
}

int
rbdx_conn_open (const struct rbdx_options *o, const struct rbdx_spec *spec,
                const struct rbdx_ident *ident, bool readonly,
                struct rbdx_conn **out, char *err, size_t errlen)
{
  struct rbdx_conn *conn;
  enum rbdx_writers policy;
  bool lock;
  int r;

  conn = calloc (1, sizeof *conn);
  if (!conn) {
    snprintf (err, errlen, "out of memory");
    return -ENOMEM;
  }
  r = rbdx_ctx_open (o, spec, ident, readonly ? RBDX_CTX_READONLY : 0,
                     &conn->ctx, err, errlen);
  if (r == 0)
    r = rbdx_ctx_check_access (conn->ctx, o, !conn->ctx->readonly, err,
                               errlen);
  if (r == 0) {
    r = rbdx_qos_get (o, &conn->ctx->ident, conn->ctx->image, &conn->qos);
    if (r < 0)
      snprintf (err, errlen, "cannot read the QoS settings of '%s': %s",
                conn->ctx->name, strerror (-r));
    else
      atomic_store (&conn->ctx->qos, conn->qos);
  }
  if (r < 0)
    goto fail;
  conn->wctx = conn->ctx;
  lock = conn->ctx->features & RBD_FEATURE_EXCLUSIVE_LOCK;
  policy = policy_of (o, lock);
  if (!conn->ctx->readonly && policy == RBDX_WRITERS_SHARED) {
    r = rbdx_writer_get (o, spec, conn->ctx, &conn->writer, err, errlen);
    if (r < 0)
      goto fail;
    conn->wctx = rbdx_writer_ctx (conn->writer);
  }
  r = rbdx_quiesce_join (o, conn->ctx, &conn->quiesce, err, errlen);
  if (r < 0)
    goto fail;
  conn->gate = rbdx_quiesce_of (conn->quiesce);
  /* With a cache forced on (rbd_cache, a persistent write-back cache),
   * writes sit in the writer's cache: reads through another handle would
   * miss them.  Then the shared writer serves this connection's reads
   * too, so every connection sees one cache. */
  conn->rctx = conn->wctx->cache_on ? conn->wctx : conn->ctx;

  /* NBD multi-conn promises that a FLUSH or FUA reply on one connection
   * makes the data visible on all of them.  It holds when no handle
   * caches (rbd_cache off: a write is acknowledged once on the OSDs)
   * and rbdx's handles do not pass the exclusive-lock around; a
   * read-only export is always safe. */
  conn->multi_conn = conn->ctx->readonly ||
    (!conn->ctx->cache_on && !conn->wctx->cache_on &&
     (policy == RBDX_WRITERS_SHARED || !lock));
  log_open (conn, policy);
  link_conn (conn);
  *out = conn;
  return 0;

fail:
  rbdx_writer_put (conn->writer);
  rbdx_ctx_close (conn->ctx);
  rbdx_qos_put (conn->qos);
  free (conn);
  return r;
}

/* An image that starts with a LUKS header, served without
 * encryption_format=: its clients get the ciphertext, header included,
 * and one that makes a filesystem there destroys the keyslots.  Right
 * for a volume that its client decrypts itself (Cinder's front-end
 * encryption: cryptsetup on the client's host), so it is said, at error
 * level, not refused. */
static void
note_raw_luks (struct rbdx_ctx *ctx)
{
  int v = rbdx_luks_header_version (ctx->image);

  if (v > 0)
    rbdx_error ("rbdx: image '%s' starts with a LUKS%d header and no "
                "encryption_format= was given: it is served as it is, "
                "ciphertext and header (right when its client decrypts it, "
                "as with Cinder's front-end encryption; to serve it "
                "decrypted give encryption_format=luks and "
                "encryption_passphrase_file=)", ctx->name, v);
}

/* A non-primary image of mirroring (rbd-mirror's copy on a secondary
 * site, or one demoted for a failover) is opened by librbd as any
 * other, and every write then fails with EROFS (NBD_EPERM) until it is
 * promoted.  Not refused: reading the secondary copy is a use, and a
 * promotion makes new connections writable (C70); said at start, at
 * error level, so that the first failed write is not the news. */
static void
note_non_primary (struct rbdx_ctx *ctx)
{
  rbd_mirror_image_info_t info;

  if (ctx->ident.snap_id != RBDX_NOSNAP ||
      rbd_mirror_image_get_info (ctx->image, &info, sizeof info) < 0)
    return;
  if (info.state == RBD_MIRROR_IMAGE_ENABLED && !info.primary)
    rbdx_error ("rbdx: image '%s' is a non-primary mirrored image: its "
                "writes fail with EPERM until `rbd mirror image promote`; "
                "serve it with -r for reads alone", ctx->name);
  rbd_mirror_image_get_info_cleanup (&info);
}

/* identity= serves the pinned image whatever image= names now (the
 * mapper pins a device to the image it mapped, so that `rbd rename x
 * x-old; rbd create x` does not swap it).  When the pinned image is no
 * longer named as image= says, the operator is told, at error level,
 * which image is served: a name that now means another image is no
 * reason to exit, and no client can see the difference. */
static void
note_renamed_pin (struct rbdx_ctx *ctx, const struct rbdx_spec *spec)
{
  char *now = NULL, a[1024], b[1024];
  size_t len = 256;
  int r;

  /* librbd says how long a name is when the buffer is too short. */
  do {
    free (now);
    now = malloc (len);
    r = now ? rbd_get_name (ctx->image, now, &len) : -ENOMEM;
  } while (r == -ERANGE);
  if (r < 0 || strcmp (now, spec->image) == 0) {
    free (now);
    return;
  }
  rbdx_error ("rbdx: image '%s' is not the pinned image any more: the "
              "image of identity= is named '%s' now (same pool and "
              "namespace), and it is the one served (as after `rbd rename`; drop identity= to serve "
              "what the name means now)",
              rbdx_printable (ctx->name, a, sizeof a),
              rbdx_printable (now, b, sizeof b));
  free (now);
}

int
rbdx_conn_probe (const struct rbdx_options *o, const struct rbdx_spec *spec,
                 const struct rbdx_ident *ident, char *err, size_t errlen)
{
  struct rbdx_ctx *ctx;
  char id[RBDX_IDENT_TEXT_MAX];
  int r;

  r = rbdx_ctx_open (o, spec, ident, RBDX_CTX_READONLY | RBDX_CTX_PROBE,
                     &ctx, err, errlen);
  if (r < 0)
    return r;
  rbdx_ident_format (&ctx->ident, id, sizeof id);
  rbdx_debug ("rbdx: %s (%s) is reachable: %" PRIu64 " bytes, features 0x%"
              PRIx64, ctx->name, id, ctx->size, ctx->features);
  /* Reading is needed whatever the export.  Whether a connection may
   * write is checked when it opens: the plugin is not told of nbdkit -r
   * before serving, so an id without write rights is no reason to exit;
   * but it is said now, at error level, not only at the first refusal. */
  r = rbdx_ctx_check_access (ctx, o, false, err, errlen);
  if (r == 0 && ctx->ident.snap_id == RBDX_NOSNAP) {
    char werr[512], shown[4 * sizeof werr];
    int w = rbdx_ctx_check_access (ctx, o, true, werr, sizeof werr);

    if (w == -EPERM || w == -EACCES)
      rbdx_error ("rbdx: %s; every connection that may write will be "
                  "refused: none if nbdkit runs with -r (nbdkit does not "
                  "tell the plugin before serving), else serve it "
                  "read-only or give the id write rights",
                  rbdx_printable (werr, shown, sizeof shown));
  }
  if (r == 0 && o->exclusive && ctx->ident.snap_id == RBDX_NOSNAP &&
      !(ctx->features & RBD_FEATURE_EXCLUSIVE_LOCK)) {
    snprintf (err, errlen, "exclusive=true: image '%s' has no "
              "exclusive-lock feature", ctx->name);
    r = -EINVAL;
  }
  if (r == 0 && o->nenc == 0)
    note_raw_luks (ctx);
  if (r == 0)
    note_non_primary (ctx);
  if (r == 0 && ident)
    note_renamed_pin (ctx, spec);
  rbdx_ctx_close (ctx);
  return r;
}

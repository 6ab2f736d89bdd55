/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx: nbdkit plugin serving Ceph RBD images over NBD.
 *
 * This file holds the nbdkit callbacks only; the work is in options.c
 * (parameters), exports.c (export names), cluster.c (rados_t), ctx.c
 * (one connection's librbd context), writer.c (the shared writer),
 * reactor.c (completion reaping) and errors.c (NBD errors and logs).
 *
 * Every connection is bound at .open to one image identity (pool id,
 * namespace, image id, snapshot id; rbdx/identity.h): its own context
 * records what the export name meant at that moment, and its writer is
 * the one of that identity.  What happens to open connections on each
 * lifecycle event of the image is in the man page, "LIFECYCLE".
 *
 * Lifecycle (nbdkit-plugin(3)): .config/.config_complete validate the
 * parameters without starting librados threads; .get_ready proves the
 * cluster and image reachable with a probe connection that is shut
 * down again, because nbdkit forks after it and a process must not
 * fork after rados_connect; every .open then creates the connection's
 * own rados_t + image handle.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "cluster.h"
#include "conn.h"
#include "ctx.h"
#include "errors.h"
#include "metrics.h"
#include "exports.h"
#include "options.h"
#include "writer.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

/* Block size constraints (NBD doc/proto.md "Block size constraints").
 * librbd takes byte-granular requests and does no read-modify-write of
 * its own, so the minimum is 1; 4 KiB is what clients should prefer;
 * the maximum keeps one request well inside nbdkit's 64 MiB limit. */
#define RBDX_MIN_BLOCK   1
#define RBDX_PREF_BLOCK  4096
#define RBDX_MAX_BLOCK   (32 * 1024 * 1024)

static struct rbdx_options opts;
static char canon[RBDX_EXPORT_MAX];   /* default export, "" in pool mode */
/* identity=: the default export is exactly this image (the rbdx mapper
 * pins the image it mapped, so a restarted server never serves another
 * image that took the name meanwhile). */
static struct rbdx_ident pin;
static bool pinned;

/* The errno of the request this thread is answering, for the metrics:
 * every error rbdx hands nbdkit goes through set_error. */
static __thread int req_err;

static void
set_error (int e)
{
  req_err = e;
  nbdkit_set_error (e);
}

/* End of a request: count it (metrics.h) and pass its result on. */
static int
done (struct rbdx_conn *conn, enum rbdx_op op, uint64_t bytes, uint64_t t0,
      int r)
{
  rbdx_metrics_end (&conn->metrics, op, bytes, t0,
                    r < 0 ? (req_err ? req_err : EIO) : 0);
  return r;
}

static void
rbdx_unload (void)
{
  rbdx_metrics_free ();
  rbdx_options_free (&opts);
}

/* nbdkit calls .cleanup after every connection thread has ended (it
 * waits for them before leaving its accept loop), so no request is in
 * flight on what is closed here. */
static void
rbdx_cleanup (void)
{
  rbdx_metrics_stop ();       /* a last write, with what is still open */
  rbdx_conn_close_all ();
}

/* After nbdkit's fork: threads may start now (cluster.h). */
static int
rbdx_after_fork (void)
{
  int r;

  if (!opts.metrics_file)
    return 0;
  r = rbdx_metrics_start (opts.metrics_file, opts.metrics_interval);
  if (r < 0) {
    nbdkit_error ("rbdx: metrics_file=%s: cannot start its writer: %s",
                  opts.metrics_file, strerror (-r));
    return -1;
  }
  return 0;
}

/* Parameters that name files.  nbdkit changes to / when it forks into
 * the background (and --run, service units and the mapper may start it
 * elsewhere), so each is made absolute against the directory nbdkit was
 * started in, at configuration time.  A Ceph path holding a $variable
 * is Ceph's to expand and is left alone. */
static bool
is_path_key (const char *key)
{
  static const char *const keys[] = {
    "conf", "keyring", "size_file", "encryption_passphrase_file",
    "metrics_file",
    "ceph.keyring", "ceph.keyfile", "ceph.log_file", "ceph.admin_socket",
    NULL
  };
  for (size_t i = 0; keys[i]; i++)
    if (strcmp (key, keys[i]) == 0)
      return true;
  return false;
}

static int
rbdx_config (const char *key, const char *value)
{
  char err[512], *abs = NULL;
  int r;

  if (strcmp (key, "identity") == 0) {
    if (pinned || rbdx_ident_parse (value, &pin) < 0) {
      nbdkit_error ("rbdx: identity='%s': %s", value, pinned ? "given twice"
                    : "expected POOLID/[NAMESPACE/]IMAGEID[@SNAPID], as the "
                    "export description shows it");
      return -1;
    }
    pinned = true;
    return 0;
  }
  if (is_path_key (key) && *value && *value != '/' && !strchr (value, '$')) {
    abs = nbdkit_absolute_path (value);
    if (!abs)
      return -1;
    value = abs;
  }
  r = rbdx_options_set (&opts, key, value, err, sizeof err);
  free (abs);

  if (r == -ENOMEM)
    nbdkit_error ("rbdx: out of memory");
  else if (r < 0)
    nbdkit_error ("rbdx: %s", err);
  return r < 0 ? -1 : 0;
}

static int
rbdx_config_complete (void)
{
  char err[512];
  rados_t c;
  int r;

  r = rbdx_options_complete (&opts, err, sizeof err);
  if (r < 0) {
    nbdkit_error ("rbdx: %s", r == -ENOMEM ? "out of memory" : err);
    return -1;
  }
  if (opts.spec.image)
    rbdx_spec_format (&opts.spec, canon, sizeof canon);
  if (pinned && (opts.pool || !opts.spec.image ||
                 !opts.spec.snap != (pin.snap_id == RBDX_NOSNAP))) {
    nbdkit_error ("rbdx: identity= pins the image given as image= (a "
                  "snapshot identity for a snapshot spec), without pool=");
    return -1;
  }
  /* Creating and configuring a handle starts no thread, so the conf
   * file and every ceph.* option can be checked before the fork. */
  if (rbdx_cluster_configure (&opts, &c, err, sizeof err) < 0) {
    nbdkit_error ("rbdx: %s", err);
    return -1;
  }
  rados_shutdown (c);
  return 0;
}

/* Pool mode without a default image: prove the pool (and namespace)
 * reachable. */
static int
probe_pool (char *err, size_t errlen)
{
  rados_ioctx_t io;
  rados_t c;
  int r;

  r = rbdx_cluster_connect (&opts, &c, err, errlen);
  if (r < 0)
    return r;
  r = rbdx_cluster_open_pool (c, opts.pool, opts.pool_ns, &io, err, errlen);
  if (r == 0)
    rados_ioctx_destroy (io);
  rados_shutdown (c);
  return r;
}

/* nbdkit forks right after this: everything connected here is shut
 * down again before returning. */
static int
rbdx_get_ready (void)
{
  struct rbdx_ctx *ctx;
  char err[512], id[256];

  if (!opts.spec.image) {
    if (probe_pool (err, sizeof err) < 0)
      goto fail;
    return 0;
  }
  if (rbdx_ctx_open (&opts, &opts.spec, pinned ? &pin : NULL,
                     RBDX_CTX_READONLY | RBDX_CTX_PROBE, &ctx, err,
                     sizeof err) < 0)
    goto fail;
  rbdx_ident_format (&ctx->ident, id, sizeof id);
  nbdkit_debug ("rbdx: %s (%s) is reachable: %" PRIu64 " bytes, features 0x%"
                PRIx64, ctx->name, id, ctx->size, ctx->features);
  /* Reading is needed whatever the export; whether writing is allowed
   * is checked at .open, where nbdkit says if the export is writable. */
  if (rbdx_ctx_check_access (ctx, &opts, false, err, sizeof err) < 0) {
    rbdx_ctx_close (ctx);
    goto fail;
  }
  if (opts.exclusive && !opts.spec.snap &&
      !(ctx->features & RBD_FEATURE_EXCLUSIVE_LOCK)) {
    snprintf (err, sizeof err, "exclusive=true: image '%s' has no "
              "exclusive-lock feature", ctx->name);
    rbdx_ctx_close (ctx);
    goto fail;
  }
  rbdx_ctx_close (ctx);
  return 0;

fail:
  nbdkit_error ("rbdx: %s", err);
  return -1;
}

static int
rbdx_list_exports (int readonly, int is_tls, struct nbdkit_exports *exports)
{
  return rbdx_exports_list (&opts, canon, exports);
}

static const char *
rbdx_default_export (int readonly, int is_tls)
{
  return canon;
}

static void *
rbdx_open (int readonly)
{
  struct rbdx_conn *conn = NULL;
  struct rbdx_spec spec;
  char err[512];

  if (rbdx_export_resolve (&opts, canon, nbdkit_export_name (), &spec) < 0)
    return NULL;
  /* Single-image mode resolves every name to the default image. */
  if (rbdx_conn_open (&opts, &spec, pinned ? &pin : NULL, readonly, &conn,
                      err, sizeof err) < 0)
    nbdkit_error ("rbdx: %s", err);
  rbdx_spec_free (&spec);
  return conn;
}

/* nbdkit calls this once every request of the connection has
 * returned, and each request waits for its librbd completion, so
 * nothing is in flight on these handles any more. */
static void
rbdx_close (void *handle)
{
  rbdx_conn_close (handle);
}

static int64_t
rbdx_get_size (void *handle)
{
  struct rbdx_conn *conn = handle;

  /* advertise_size=max: each request is still bounded by the image's
   * current size (cur_size, kept by the update watch). */
  if (opts.advertise_size == RBDX_ADVERTISE_MAX && conn->ctx->follows_size)
    return RBDX_ADVERTISE_MAX_BYTES;
  return (int64_t) conn->ctx->size;
}

static const char *
rbdx_export_description (void *handle)
{
  struct rbdx_conn *conn = handle;
  char id[256];

  /* The identity lets a client (the rbdx mapper) pin what it mapped. */
  rbdx_ident_format (&conn->ctx->ident, id, sizeof id);
  return nbdkit_printf_intern ("%s (identity %s)",
                               rbdx_export_describe (conn->ctx->name), id);
}

/* The crypto sector of encryption_format= (librbd's LUKS2 uses 4096-byte
 * sectors, LUKS1 512): smaller or unaligned requests would make librbd
 * read, decrypt, modify and write a sector, racing another connection's
 * write to the same sector.  1 without encryption. */
static uint32_t
sector (void)
{
  switch (opts.encryption) {
  case RBDX_ENCRYPTION_LUKS2: return 4096;
  case RBDX_ENCRYPTION_LUKS1: return 512;
  default: return RBDX_MIN_BLOCK;
  }
}

/* A request not aligned to the crypto sector: NBD_EINVAL (the export's
 * minimum block size says so, NBD doc/proto.md "Block size
 * constraints"). */
static bool
misaligned (struct rbdx_ctx *ctx, const char *op, uint32_t count,
            uint64_t offset)
{
  uint32_t s = sector ();

  if (s == 1 || (offset % s == 0 && count % s == 0))
    return false;
  nbdkit_debug ("rbdx: %s: %s of %" PRIu32 " bytes at %" PRIu64 " is not "
                "aligned to the %" PRIu32 "-byte crypto sector", ctx->name,
                op, count, offset, s);
  set_error (EINVAL);
  return true;
}

/* A read or write longer than the advertised maximum block size: the
 * client must not send it (NBD doc/proto.md, "Block size constraints"),
 * nbdkit 1.32 lets it through up to 64 MiB; answered with NBD_EINVAL, as
 * the spec allows, rather than a 64 MiB buffer per such request. */
static bool
oversized (struct rbdx_ctx *ctx, const char *op, uint32_t count)
{
  if (count <= RBDX_MAX_BLOCK)
    return false;
  nbdkit_debug ("rbdx: %s: %s of %" PRIu32 " bytes is over the maximum "
                "block size %d", ctx->name, op, count, RBDX_MAX_BLOCK);
  set_error (EINVAL);
  return true;
}

static int
rbdx_block_size (void *handle, uint32_t *minimum, uint32_t *preferred,
                 uint32_t *maximum)
{
  *minimum = sector ();
  *preferred = RBDX_PREF_BLOCK;
  *maximum = RBDX_MAX_BLOCK;
  return 0;
}

static int
rbdx_is_rotational (void *handle)
{
  return 0;
}

static int
rbdx_can_write (void *handle)
{
  struct rbdx_conn *conn = handle;
  return !conn->ctx->readonly;
}

/* Decided in rbdx_open. */
static int
rbdx_can_multi_conn (void *handle)
{
  struct rbdx_conn *conn = handle;
  return conn->multi_conn;
}

static int
rbdx_can_flush (void *handle)
{
  return 1;
}

static int
rbdx_can_fua (void *handle)
{
  return NBDKIT_FUA_NATIVE;
}

static int
rbdx_can_trim (void *handle)
{
  return 1;
}

static int
rbdx_can_zero (void *handle)
{
  return 1;
}

/* rbd_aio_write_zeroes without THICK_PROVISION removes or truncates
 * objects and zeroes partial ones on the OSD (no data sent), so it is
 * faster than writing zeros; with NO_HOLE it writes zeros and is not. */
static int
rbdx_can_fast_zero (void *handle)
{
  return 1;
}

static int
rbdx_can_extents (void *handle)
{
  return 1;
}

/* rbd_cache is off, so there is no cache for NBD_CMD_CACHE to fill:
 * the command is not advertised. */
static int
rbdx_can_cache (void *handle)
{
  return NBDKIT_CACHE_NONE;
}

/* A request the cluster (or rbdx, for a fenced client or a removed
 * snapshot) could not carry out: logged at error level, rate-limited
 * (errors.h), and answered with the NBD error of errors.c's table. */
static int
fail (struct rbdx_ctx *ctx, const char *op, uint32_t count, uint64_t offset,
      int neg)
{
  rbdx_log_request_error (ctx->name, op, offset, count, neg);
  set_error (rbdx_nbd_error (neg));
  return -1;
}

/* A request outside the image as it is now (it shrank after the client
 * negotiated its size, or advertise_size=max): the client's doing, so
 * only a debug line.  NBD doc/proto.md, "Error values": a read or trim
 * past the end is EINVAL, a write or write-zeroes ENOSPC. */
static bool
outside (struct rbdx_ctx *ctx, const char *op, uint32_t count,
         uint64_t offset, int err)
{
  if (rbdx_ctx_inside (ctx, count, offset))
    return false;
  nbdkit_debug ("rbdx: %s: %s of %" PRIu32 " bytes at %" PRIu64 " is past "
                "the image's current end", ctx->name, op, count, offset);
  set_error (err);
  return true;
}

/* nbdkit stopped a QoS wait: it is shutting down (or the client left),
 * the one case where NBD_ESHUTDOWN is the right answer. */
static int
qos_stopped (void)
{
  set_error (errno ? errno : ESHUTDOWN);
  return -1;
}

/* FUA with a cache forced on (ceph.rbd_cache=true or an image-level
 * setting): make the request durable with a flush. */
static int
fua_flush (struct rbdx_ctx *ctx, uint32_t flags)
{
  int r;

  if (!(flags & NBDKIT_FLAG_FUA) || !ctx->cache_on)
    return 0;
  r = rbdx_ctx_flush (ctx);
  return r < 0 ? fail (ctx, "flush for FUA", 0, 0, r) : 0;
}

static int
do_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
            uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  int r;

  if (oversized (conn->rctx, "read", count) ||
      misaligned (conn->rctx, "read", count, offset) ||
      outside (conn->rctx, "read", count, offset, EINVAL))
    return -1;
  if (rbdx_qos_wait (conn->qos, false, count, &conn->metrics.qos_wait_ns) < 0)
    return qos_stopped ();
  r = rbdx_ctx_read (conn->rctx, buf, count, offset);
  return r < 0 ? fail (conn->rctx, "read", count, offset, r) : 0;
}

static int
do_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
             uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  int r;

  if (oversized (conn->wctx, "write", count) ||
      misaligned (conn->wctx, "write", count, offset) ||
      outside (conn->wctx, "write", count, offset, ENOSPC))
    return -1;
  if (rbdx_qos_wait (conn->qos, true, count, &conn->metrics.qos_wait_ns) < 0)
    return qos_stopped ();
  r = rbdx_ctx_write (conn->wctx, buf, count, offset, flags & NBDKIT_FLAG_FUA);
  if (r < 0)
    return fail (conn->wctx, "write", count, offset, r);
  return fua_flush (conn->wctx, flags);
}

static int
do_flush (void *handle, uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  int r = rbdx_ctx_flush (conn->wctx);

  return r < 0 ? fail (conn->wctx, "flush", 0, 0, r) : 0;
}

static int
do_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  int r;

  if (misaligned (conn->wctx, "trim", count, offset) ||
      outside (conn->wctx, "trim", count, offset, EINVAL))
    return -1;
  if (rbdx_qos_wait (conn->qos, true, count, &conn->metrics.qos_wait_ns) < 0)
    return qos_stopped ();
  r = rbdx_ctx_discard (conn->wctx, count, offset);
  if (r < 0)
    return fail (conn->wctx, "trim", count, offset, r);
  return fua_flush (conn->wctx, flags);
}

static int
do_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  bool may_hole = flags & NBDKIT_FLAG_MAY_TRIM;
  int r;

  /* Thick zeroing writes real zeros: no faster than a write. */
  if ((flags & NBDKIT_FLAG_FAST_ZERO) && !may_hole) {
    set_error (ENOTSUP);
    return -1;
  }
  if (misaligned (conn->wctx, "write zeroes", count, offset) ||
      outside (conn->wctx, "write zeroes", count, offset, ENOSPC))
    return -1;
  if (rbdx_qos_wait (conn->qos, true, count, &conn->metrics.qos_wait_ns) < 0)
    return qos_stopped ();
  r = rbdx_ctx_zero (conn->wctx, count, offset, may_hole);
  if (r < 0)
    return fail (conn->wctx, "write zeroes", count, offset, r);
  return fua_flush (conn->wctx, flags);
}

static int
add_extent (void *arg, uint64_t offset, uint64_t length, bool hole)
{
  uint32_t type = hole ? NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO : 0;
  return nbdkit_add_extent (arg, offset, length, type) < 0 ? -errno : 0;
}

static int
do_extents (void *handle, uint32_t count, uint64_t offset, uint32_t flags,
              struct nbdkit_extents *extents)
{
  struct rbdx_conn *conn = handle;
  int r;

  if (outside (conn->rctx, "block status", 1, offset, EINVAL))
    return -1;
  r = rbdx_ctx_extents (conn->rctx, count, offset, add_extent, extents);
  return r < 0 ? fail (conn->rctx, "block status", count, offset, r) : 0;
}

/* The request callbacks: each one counted (metrics.h) around its work. */
static int
rbdx_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
            uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  uint64_t t0 = rbdx_metrics_begin (&conn->metrics);

  req_err = 0;
  return done (conn, RBDX_OP_READ, count, t0,
               do_pread (conn, buf, count, offset, flags));
}

static int
rbdx_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
             uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  uint64_t t0 = rbdx_metrics_begin (&conn->metrics);

  req_err = 0;
  return done (conn, RBDX_OP_WRITE, count, t0,
               do_pwrite (conn, buf, count, offset, flags));
}

static int
rbdx_flush (void *handle, uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  uint64_t t0 = rbdx_metrics_begin (&conn->metrics);

  req_err = 0;
  return done (conn, RBDX_OP_FLUSH, 0, t0, do_flush (conn, flags));
}

static int
rbdx_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  uint64_t t0 = rbdx_metrics_begin (&conn->metrics);

  req_err = 0;
  return done (conn, RBDX_OP_TRIM, count, t0,
               do_trim (conn, count, offset, flags));
}

static int
rbdx_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct rbdx_conn *conn = handle;
  uint64_t t0 = rbdx_metrics_begin (&conn->metrics);

  req_err = 0;
  return done (conn, RBDX_OP_ZERO, count, t0,
               do_zero (conn, count, offset, flags));
}

static int
rbdx_extents (void *handle, uint32_t count, uint64_t offset, uint32_t flags,
              struct nbdkit_extents *extents)
{
  struct rbdx_conn *conn = handle;
  uint64_t t0 = rbdx_metrics_begin (&conn->metrics);

  req_err = 0;
  return done (conn, RBDX_OP_BLOCK_STATUS, count, t0,
               do_extents (conn, count, offset, flags, extents));
}

static void
rbdx_dump_plugin (void)
{
  int major, minor, extra;

  rbd_version (&major, &minor, &extra);
  printf ("rbdx_version=%s\n", RBDX_VERSION);
  printf ("rbdx_librbd_version=%d.%d.%d\n", major, minor, extra);
  rados_version (&major, &minor, &extra);
  printf ("rbdx_librados_version=%d.%d.%d\n", major, minor, extra);
}

#define rbdx_config_help \
  "[image=][pool/[namespace/]]image[@snapshot]\n" \
  "                     The RBD image to serve (pool defaults to rbd; a\n" \
  "                     snapshot is served read-only).\n" \
  "pool=POOL[/NAMESPACE] Serve every image of the pool by export name\n" \
  "                     (IMAGE or IMAGE@SNAP); image= is then the default.\n" \
  "writers=auto|shared|per-connection\n" \
  "                     Where writes go: one lock-owning handle per image\n" \
  "                     (shared), each connection's own (per-connection), or\n" \
  "                     shared exactly when the image has exclusive-lock (auto).\n" \
  "exclusive=false|true Hold the exclusive lock for the server's lifetime and\n" \
  "                     refuse to hand it to other clients.\n" \
  "conf=PATH            ceph.conf (default: $CEPH_CONF, /etc/ceph/$cluster.conf,\n" \
  "                     ~/.ceph/$cluster.conf, ./$cluster.conf).\n" \
  "id=NAME              cephx user without 'client.' (default: admin).\n" \
  "keyring=PATH         Keyring holding that user's key.\n" \
  "mon_host=ADDRS       Monitor addresses (overrides the conf file).\n" \
  "cluster=NAME         Cluster name (default: ceph).\n" \
  "ceph.OPTION=VALUE    Any Ceph option, set with rados_conf_set (repeatable).\n" \
  "completion=auto|io_uring|poll\n" \
  "                     How completions are reaped (default: auto = io_uring,\n" \
  "                     falling back to poll(2) on the eventfd: poll;\n" \
  "                     eventfd is an old name of poll).\n" \
  "size_file=PATH       Keep the image's current size (bytes) in PATH.\n" \
  "qos.NAME_limit=N     QoS limit for all connections together (NAME: iops,\n" \
  "                     read_iops, write_iops, bps, read_bps, write_bps); also\n" \
  "                     qos.NAME_burst=N, qos.NAME_burst_seconds=S (librbd's\n" \
  "                     rbd_qos_* meanings; default: the image's own limits).\n" \
  "encryption_format=luks1|luks2\n" \
  "                     Load the image's LUKS encryption (rbd encryption format)\n" \
  "                     on every context; needs encryption_passphrase_file=.\n" \
  "encryption_passphrase_file=PATH\n" \
  "                     The passphrase (the file less a final newline, as\n" \
  "                     rbd encryption format reads it; never logged).\n" \
  "metrics_file=PATH    Write request metrics (Prometheus text format) to PATH.\n" \
  "metrics_interval=S   Rewrite it every S seconds (default: 5).\n" \
  "identity=POOLID/[NAMESPACE/]IMAGEID[@SNAPID]\n" \
  "                     Serve exactly this image (as the export description\n" \
  "                     shows it), whatever its name means now.\n" \
  "advertise_size=image|max\n" \
  "                     Size told in the handshake: the image's, or the largest\n" \
  "                     possible for clients that get the size elsewhere (the\n" \
  "                     rbdx mapper), so connections survive the image growing."

static struct nbdkit_plugin plugin = {
  .name               = "rbdx",
  .longname           = "rbdx: Ceph RBD over NBD with a librbd context per connection",
  .version            = RBDX_VERSION,
  .description        = "Serve a Ceph RBD image; every NBD connection gets its "
                        "own librbd context.",
  .unload             = rbdx_unload,
  .cleanup            = rbdx_cleanup,
  .config             = rbdx_config,
  .config_complete    = rbdx_config_complete,
  .config_help        = rbdx_config_help,
  .magic_config_key   = "image",
  .dump_plugin        = rbdx_dump_plugin,
  .get_ready          = rbdx_get_ready,
  .after_fork         = rbdx_after_fork,
  .list_exports       = rbdx_list_exports,
  .default_export     = rbdx_default_export,
  .open               = rbdx_open,
  .close              = rbdx_close,
  .get_size           = rbdx_get_size,
  .export_description = rbdx_export_description,
  .block_size         = rbdx_block_size,
  .is_rotational      = rbdx_is_rotational,
  .can_write          = rbdx_can_write,
  .can_multi_conn     = rbdx_can_multi_conn,
  .can_flush          = rbdx_can_flush,
  .can_fua            = rbdx_can_fua,
  .can_trim           = rbdx_can_trim,
  .can_zero           = rbdx_can_zero,
  .can_fast_zero      = rbdx_can_fast_zero,
  .can_extents        = rbdx_can_extents,
  .can_cache          = rbdx_can_cache,
  .pread              = rbdx_pread,
  .pwrite             = rbdx_pwrite,
  .flush              = rbdx_flush,
  .trim               = rbdx_trim,
  .zero               = rbdx_zero,
  .extents            = rbdx_extents,
  .errno_is_preserved = 0,
};

NBDKIT_REGISTER_PLUGIN (plugin)

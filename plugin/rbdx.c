/* rbdx: nbdkit plugin serving Ceph RBD images over NBD.
 *
 * This file holds the nbdkit callbacks only; the work is in options.c
 * (parameters), cluster.c (rados_t), ctx.c (one connection's librbd
 * context) and reactor.c (completion reaping).
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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "cluster.h"
#include "ctx.h"
#include "options.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

/* Block size constraints (NBD doc/proto.md "Block size constraints").
 * librbd takes byte-granular requests and does no read-modify-write of
 * its own, so the minimum is 1; 4 KiB is what clients should prefer;
 * the maximum keeps one request well inside nbdkit's 64 MiB limit. */
#define RBDX_MIN_BLOCK   1
#define RBDX_PREF_BLOCK  4096
#define RBDX_MAX_BLOCK   (32 * 1024 * 1024)

static struct rbdx_options opts;
static char canon[RBDX_SPEC_MAX + 8];   /* "pool/[ns/]image[@snap]" */

static void
rbdx_unload (void)
{
  rbdx_options_free (&opts);
}

static int
rbdx_config (const char *key, const char *value)
{
  char err[512];
  int r = rbdx_options_set (&opts, key, value, err, sizeof err);

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

  if (rbdx_options_complete (&opts, err, sizeof err) < 0) {
    nbdkit_error ("rbdx: %s", err);
    return -1;
  }
  rbdx_spec_format (&opts.spec, canon, sizeof canon);
  /* Creating and configuring a handle starts no thread, so the conf
   * file and every ceph.* option can be checked before the fork. */
  if (rbdx_cluster_configure (&opts, &c, err, sizeof err) < 0) {
    nbdkit_error ("rbdx: %s", err);
    return -1;
  }
  rados_shutdown (c);
  return 0;
}

static int
rbdx_get_ready (void)
{
  struct rbdx_ctx *ctx;
  char err[512];

  if (rbdx_ctx_open (&opts, &opts.spec, RBDX_CTX_READONLY | RBDX_CTX_PROBE,
                     &ctx, err, sizeof err) < 0) {
    nbdkit_error ("rbdx: %s", err);
    return -1;
  }
  nbdkit_debug ("rbdx: %s is reachable: %" PRIu64 " bytes, features 0x%"
                PRIx64, ctx->name, ctx->size, ctx->features);
  rbdx_ctx_close (ctx);
  return 0;
}

static int
rbdx_list_exports (int readonly, int is_tls, struct nbdkit_exports *exports)
{
  return nbdkit_add_export (exports, canon,
                            nbdkit_printf_intern ("Ceph RBD image %s", canon));
}

static const char *
rbdx_default_export (int readonly, int is_tls)
{
  return canon;
}

static void *
rbdx_open (int readonly)
{
  const char *name = nbdkit_export_name ();
  struct rbdx_spec asked;
  struct rbdx_ctx *ctx;
  char err[512], buf[sizeof canon];
  int r;

  /* Only the configured image is served; its spec may be given in any
   * form the rbd CLI accepts ("img", "rbd/img").  Anything else is
   * refused at negotiation with a message naming what is served. */
  if (name && *name && strcmp (name, canon) != 0) {
    r = rbdx_spec_parse (name, opts.spec.pool, &asked, NULL);
    if (r == 0) {
      rbdx_spec_format (&asked, buf, sizeof buf);
      rbdx_spec_free (&asked);
    }
    if (r < 0 || strcmp (buf, canon) != 0) {
      nbdkit_error ("rbdx: export '%s' is not served here (this server "
                    "serves '%s')", name, canon);
      return NULL;
    }
  }

  r = rbdx_ctx_open (&opts, &opts.spec, readonly ? RBDX_CTX_READONLY : 0,
                     &ctx, err, sizeof err);
  if (r < 0) {
    nbdkit_error ("rbdx: %s", err);
    return NULL;
  }
  nbdkit_debug ("rbdx: opened %s %s, %" PRIu64 " bytes, features 0x%" PRIx64
                ", rbd_cache %s, completions via %s", ctx->name,
                ctx->readonly ? "read-only" : "read-write", ctx->size,
                ctx->features, ctx->cache_on ? "ON" : "off",
                rbdx_reactor_uses_uring (&ctx->reactor) ? "io_uring"
                : "poll(2)");
  if (ctx->cache_on)
    nbdkit_debug ("rbdx: %s: rbd_cache is on (image-level or ceph.rbd_cache "
                  "setting): multi-conn is not advertised", ctx->name);
  return ctx;
}

static void
rbdx_close (void *handle)
{
  rbdx_ctx_close (handle);
}

static int64_t
rbdx_get_size (void *handle)
{
  struct rbdx_ctx *ctx = handle;
  return (int64_t) ctx->size;
}

static const char *
rbdx_export_description (void *handle)
{
  struct rbdx_ctx *ctx = handle;
  return nbdkit_printf_intern ("Ceph RBD image %s", ctx->name);
}

static int
rbdx_block_size (void *handle, uint32_t *minimum, uint32_t *preferred,
                 uint32_t *maximum)
{
  *minimum = RBDX_MIN_BLOCK;
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
  struct rbdx_ctx *ctx = handle;
  return !ctx->readonly;
}

/* NBD multi-conn promises that a FLUSH or FUA reply on one connection
 * makes the data visible on all of them.  Every connection has its own
 * image handle, so this holds only when no handle caches (rbd_cache
 * off: a write is acknowledged once on the OSDs) and when handles do
 * not fight over the exclusive-lock (one writer at a time passes the
 * lock around at ~7 ms per hand-over); a read-only export is always
 * safe. */
static int
rbdx_can_multi_conn (void *handle)
{
  struct rbdx_ctx *ctx = handle;

  if (ctx->readonly)
    return 1;
  return !ctx->cache_on && !(ctx->features & RBD_FEATURE_EXCLUSIVE_LOCK);
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

/* One table from librbd's negative errno to the errno nbdkit turns into
 * an NBD error (nbdkit maps EPERM, EIO, ENOMEM, EINVAL, ENOSPC,
 * EOVERFLOW, ENOTSUP and ESHUTDOWN; anything else would become
 * NBD_EINVAL, which would blame the client for a cluster fault). */
static int
nbd_errno (int neg)
{
  switch (-neg) {
  case EPERM: case EIO: case ENOMEM: case EINVAL: case ENOSPC:
  case EOVERFLOW: case ENOTSUP: case ESHUTDOWN:
    return -neg;
  case EROFS: case EACCES:
    return EPERM;       /* read-only handle / lock taken exclusively */
  case EDQUOT: case EFBIG:
    return ENOSPC;
  case ERANGE:
    return EINVAL;
  default:
    return EIO;         /* ETIMEDOUT, ENOENT (image removed), EBLOCKLISTED.. */
  }
}

static int
fail (const char *what, int neg)
{
  nbdkit_debug ("rbdx: %s failed: %s", what, strerror (-neg));
  nbdkit_set_error (nbd_errno (neg));
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
  return r < 0 ? fail ("flush for FUA", r) : 0;
}

static int
rbdx_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
            uint32_t flags)
{
  int r = rbdx_ctx_read (handle, buf, count, offset);
  return r < 0 ? fail ("read", r) : 0;
}

static int
rbdx_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
             uint32_t flags)
{
  struct rbdx_ctx *ctx = handle;
  int r = rbdx_ctx_write (ctx, buf, count, offset, flags & NBDKIT_FLAG_FUA);

  if (r < 0)
    return fail ("write", r);
  return fua_flush (ctx, flags);
}

static int
rbdx_flush (void *handle, uint32_t flags)
{
  int r = rbdx_ctx_flush (handle);
  return r < 0 ? fail ("flush", r) : 0;
}

static int
rbdx_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct rbdx_ctx *ctx = handle;
  int r = rbdx_ctx_discard (ctx, count, offset);

  if (r < 0)
    return fail ("trim", r);
  return fua_flush (ctx, flags);
}

static int
rbdx_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct rbdx_ctx *ctx = handle;
  bool may_hole = flags & NBDKIT_FLAG_MAY_TRIM;
  int r;

  /* Thick zeroing writes real zeros: no faster than a write. */
  if ((flags & NBDKIT_FLAG_FAST_ZERO) && !may_hole) {
    nbdkit_set_error (ENOTSUP);
    return -1;
  }
  r = rbdx_ctx_zero (ctx, count, offset, may_hole);
  if (r < 0)
    return fail ("write zeroes", r);
  return fua_flush (ctx, flags);
}

static int
add_extent (void *arg, uint64_t offset, uint64_t length, bool hole)
{
  uint32_t type = hole ? NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO : 0;
  return nbdkit_add_extent (arg, offset, length, type) < 0 ? -errno : 0;
}

static int
rbdx_extents (void *handle, uint32_t count, uint64_t offset, uint32_t flags,
              struct nbdkit_extents *extents)
{
  int r = rbdx_ctx_extents (handle, count, offset, add_extent, extents);
  return r < 0 ? fail ("block status", r) : 0;
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
  "conf=PATH            ceph.conf (default: $CEPH_CONF, /etc/ceph/$cluster.conf,\n" \
  "                     ~/.ceph/$cluster.conf, ./$cluster.conf).\n" \
  "id=NAME              cephx user without 'client.' (default: admin).\n" \
  "keyring=PATH         Keyring holding that user's key.\n" \
  "mon_host=ADDRS       Monitor addresses (overrides the conf file).\n" \
  "cluster=NAME         Cluster name (default: ceph).\n" \
  "ceph.OPTION=VALUE    Any Ceph option, set with rados_conf_set (repeatable).\n" \
  "completion=auto|io_uring|eventfd\n" \
  "                     How completions are reaped (default: auto = io_uring,\n" \
  "                     falling back to poll(2) on the eventfd)."

static struct nbdkit_plugin plugin = {
  .name               = "rbdx",
  .longname           = "rbdx: Ceph RBD over NBD with a librbd context per connection",
  .version            = RBDX_VERSION,
  .description        = "Serve a Ceph RBD image; every NBD connection gets its "
                        "own librbd context.",
  .unload             = rbdx_unload,
  .config             = rbdx_config,
  .config_complete    = rbdx_config_complete,
  .config_help        = rbdx_config_help,
  .magic_config_key   = "image",
  .dump_plugin        = rbdx_dump_plugin,
  .get_ready          = rbdx_get_ready,
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

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx plugin: the nbdkit front end serving Ceph RBD images over NBD.
 *
 * This file holds the nbdkit callbacks of the server's and a
 * connection's lifecycle; the data path is io.c, export names are
 * exports.c, who the client is (for the log) peer.c, and the work is
 * the serving core's (server/core/, see
 * include/rbdx/core.h): what an export is and the checks before serving
 * (export.h), parameters (options.h), a connection (conn.h), a librbd
 * context (ctx.h), QoS, metrics and NBD errors.
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
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "rbdx/budget.h"
#include "rbdx/cct.h"
#include "rbdx/cluster.h"
#include "rbdx/conn.h"
#include "rbdx/ctx.h"
#include "rbdx/errors.h"
#include "rbdx/export.h"
#include "rbdx/metrics.h"
#include "rbdx/options.h"
#include "rbdx/printable.h"
#include "rbdx/request.h"
#include "rbdx/writer.h"
#include "exports.h"
#include "io.h"
#include "peer.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

/* identity= (opts.identity) pins the default export to exactly that
 * image: the rbdx mapper pins the image it mapped, so a restarted server
 * never serves another image that took the name meanwhile. */
static struct rbdx_options opts;
static char canon[RBDX_EXPORT_MAX];   /* default export, "" in pool mode */
/* max_connections=: connections open now against the limit, counted in
 * .open before a context is made and out in .close, and the one
 * pool-mode listing while its Ceph client exists (exports.h). */
static struct rbdx_budget budget;
/* The log of refused connections (max_connections=) and of connections
 * that failed to open (a cluster error, a writer refused), each with a
 * rate limit of its own (rbdx/errors.h), as the engine's: a client
 * that loops connecting cannot flood the log.  A connection refused
 * past the limit gets nbdkit's refusal without rbdx's text. */
static struct rbdx_log_limit refusals = RBDX_LOG_LIMIT_INIT;
static struct rbdx_log_limit open_failures = RBDX_LOG_LIMIT_INIT;

/* Threads a connection costs here: its Ceph client and nbdkit's worker
 * threads, which the plugin cannot see (nbdkit --threads, default 16,
 * plus the connection's own thread); counted at the default. */
#define NBDKIT_THREADS_PER_CONN 17

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
  char shown[4 * PATH_MAX];
  int r;

  /* In pool mode each image written to gets a shared writer, a Ceph
   * client of its own: a connection per image costs two (C86; the one
   * writer of single-image mode is within the reserve). */
  budget.max = opts.max_connections ? opts.max_connections
    : rbdx_budget_default (RBDX_CONN_THREADS + NBDKIT_THREADS_PER_CONN,
                           opts.pool && opts.writers !=
                           RBDX_WRITERS_PER_CONNECTION ? 2 : 1);
  nbdkit_debug ("rbdx: max_connections=%u", budget.max);
  if (!opts.metrics_file)
    return 0;
  r = rbdx_metrics_start (opts.metrics_file, opts.metrics_interval);
  if (r < 0) {
    nbdkit_error ("rbdx: metrics_file=%s: cannot start its writer: %s",
                  rbdx_printable (opts.metrics_file, shown, sizeof shown),
                  strerror (-r));
    return -1;
  }
  return 0;
}

/* Parameters that name files are made absolute against the directory
 * nbdkit was started in (rbdx_options_wants_absolute: nbdkit changes to
 * / when it forks into the background). */
static int
rbdx_config (const char *key, const char *value)
{
  char err[512], shown[4 * sizeof err], *abs = NULL;
  int r;

  if (rbdx_options_wants_absolute (key, value)) {
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
    nbdkit_error ("rbdx: %s", rbdx_printable (err, shown, sizeof shown));
  return r < 0 ? -1 : 0;
}

/* The checks of rbdx/export.h, starting no thread (nbdkit forks
 * later). */
static int
rbdx_config_complete (void)
{
  char err[512], shown[4 * sizeof err];

  if (rbdx_export_configure (&opts, err, sizeof err) < 0) {
    nbdkit_error ("rbdx: %s", rbdx_printable (err, shown, sizeof shown));
    return -1;
  }
  if (opts.spec.image)
    rbdx_spec_format (&opts.spec, canon, sizeof canon);
  return 0;
}

/* nbdkit forks right after this: everything connected here is shut
 * down again before returning. */
static int
rbdx_get_ready (void)
{
  char err[512], shown[4 * PATH_MAX];
  int r;

  /* Written again after the fork by the metrics thread (.after_fork). */
  if (opts.metrics_file && (r = rbdx_metrics_check (opts.metrics_file)) < 0) {
    nbdkit_error ("rbdx: metrics_file=%s: cannot be written: %s",
                  rbdx_printable (opts.metrics_file, shown, sizeof shown),
                  strerror (-r));
    return -1;
  }
  if (rbdx_export_probe (&opts, err, sizeof err) < 0) {
    nbdkit_error ("rbdx: %s", rbdx_printable (err, shown, sizeof shown));
    return -1;
  }
  return 0;
}

static int
rbdx_list_exports (int readonly, int is_tls, struct nbdkit_exports *exports)
{
  return rbdx_exports_list (&opts, canon, &budget, exports);
}

static const char *
rbdx_default_export (int readonly, int is_tls)
{
  return canon;
}

/* Which client opened which image (nbdkit -v): the address and, over
 * TLS with verified X.509 certificates, the certificate's names, so an
 * operator can tell whose connection an image's traffic is (peer.h). */
static void
log_client (const struct rbdx_conn *conn)
{
  char who[2048];

  rbdx_peer_describe (who, sizeof who);
  nbdkit_debug ("rbdx: %s: client %s", conn->ctx->name, who);
}

static void *
rbdx_open (int readonly)
{
  struct rbdx_conn *conn = NULL;
  struct rbdx_spec spec;
  char err[512];
  int r;

  /* Refused before any Ceph client is made.  nbdkit answers a failed
   * .open with NBD_REP_ERR_UNKNOWN whatever the errno (1.42.3, seen with
   * errno 1, 5, 11, 12, 13, 16, 22, 24 and 28; libnbd reports it as
   * "server has no export named ..."); 1.42.3 sends the text of this
   * nbdkit_error with it, which libnbd logs as "server error message:"
   * (1.32 sent none, so the log line is the record either way). */
  if (rbdx_budget_take (&budget, err, sizeof err) < 0) {
    rbdx_error_limited (&refusals, "rbdx: connection refused: %s", err);
    errno = EMFILE;
    return NULL;
  }
  if (rbdx_export_resolve (&opts, canon, nbdkit_export_name (), &spec) < 0) {
    rbdx_budget_give (&budget);
    return NULL;
  }
  /* Single-image mode resolves every name to the default image. */
  r = rbdx_conn_open (&opts, &spec, rbdx_options_pin (&opts), readonly,
                      &conn, err, sizeof err);
  if (r < 0) {
    char name[RBDX_SPEC_MAX + 1], tail[80], shown[4 * sizeof err];

    /* The whole reason is for the server's log only: it can name the
     * cluster, the cephx id, monitor addresses and file paths.  nbdkit
     * 1.42 sends the text of the last nbdkit_error of a failed .open to
     * the client (seen with libnbd's "server error message"), before
     * TLS too when TLS is not required, so the last one says only which
     * export failed and the errno's text.  Both lines or neither
     * (rate-limited as one). */
    rbdx_spec_format (&spec, name, sizeof name);
    if (rbdx_log_limit_take (&open_failures, tail, sizeof tail)) {
      nbdkit_error ("rbdx: %s%s", rbdx_printable (err, shown, sizeof shown),
                    tail);
      nbdkit_error ("rbdx: export '%s' cannot be served now: %s (the "
                    "server's log has the reason)", name, strerror (-r));
    }
    rbdx_budget_give (&budget);
  }
  else
    log_client (conn);
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
  rbdx_budget_give (&budget);
}

static int64_t
rbdx_get_size (void *handle)
{
  return (int64_t) rbdx_export_size (&opts, handle);
}

static const char *
rbdx_export_description (void *handle)
{
  struct rbdx_conn *conn = handle;
  char id[RBDX_IDENT_TEXT_MAX], desc[RBDX_EXPORT_MAX + 32];

  /* The identity lets a client (the rbdx mapper) pin what it mapped.
   * Interned here, on the connection's thread with its context (nbdkit
   * frees it with the connection). */
  rbdx_ident_format (&conn->ctx->ident, id, sizeof id);
  return nbdkit_printf_intern ("%s (identity %s)",
                               rbdx_export_describe (conn->ctx->name, desc,
                                                     sizeof desc), id);
}

static int
rbdx_block_size (void *handle, uint32_t *minimum, uint32_t *preferred,
                 uint32_t *maximum)
{
  struct rbdx_conn *conn = handle;

  *minimum = rbdx_request_min_block (conn->ctx);
  *preferred = RBDX_PREF_BLOCK;
  *maximum = RBDX_MAX_BLOCK;
  return 0;
}

static int
rbdx_is_rotational (void *handle)
{
  return 0;
}

/* What the export can do is the core's (rbdx_export_caps); nbdkit
 * asks each question once per connection. */
static struct rbdx_export_caps
caps_of (void *handle)
{
  struct rbdx_export_caps c;

  rbdx_export_caps (handle, &c);
  return c;
}

static int
rbdx_can_write (void *handle)
{
  return caps_of (handle).write;
}

static int
rbdx_can_multi_conn (void *handle)
{
  return caps_of (handle).multi_conn;
}

static int
rbdx_can_flush (void *handle)
{
  return caps_of (handle).flush;
}

static int
rbdx_can_fua (void *handle)
{
  return caps_of (handle).fua ? NBDKIT_FUA_NATIVE : NBDKIT_FUA_NONE;
}

static int
rbdx_can_trim (void *handle)
{
  return caps_of (handle).trim;
}

static int
rbdx_can_zero (void *handle)
{
  return caps_of (handle).zero;
}

static int
rbdx_can_fast_zero (void *handle)
{
  return caps_of (handle).fast_zero;
}

static int
rbdx_can_extents (void *handle)
{
  return caps_of (handle).extents;
}

/* rbd_cache is off, so there is no cache for NBD_CMD_CACHE to fill:
 * the command is not advertised. */
static int
rbdx_can_cache (void *handle)
{
  return NBDKIT_CACHE_NONE;
}

static void
rbdx_dump_plugin (void)
{
  char release[64];
  int major, minor, extra;

  rbd_version (&major, &minor, &extra);
  printf ("rbdx_version=%s\n", RBDX_VERSION);
  printf ("rbdx_librbd_version=%d.%d.%d\n", major, minor, extra);
  rados_version (&major, &minor, &extra);
  printf ("rbdx_librados_version=%d.%d.%d\n", major, minor, extra);
  /* What ceph_context=auto chooses here (cct.h). */
  printf ("rbdx_ceph_context_auto=%s\n",
          rbdx_cct_fixed (release, sizeof release) ? "shared" : "connection");
  printf ("rbdx_ceph_release=%s\n", release);
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
  "notrim=false|true    No TRIM; write zeroes keeps allocation (thick).\n" \
  "snap_id=ID           Serve the image's snapshot of this id (read-only).\n" \
  "quiesce=false|true   Run a hook around snapshots (librbd's quiesce\n" \
  "                     notification), once for all connections; writes\n" \
  "                     are held meanwhile.\n" \
  "quiesce_hook=PATH    That hook, run as PATH DEVICE quiesce|unquiesce\n" \
  "                     (default: rbdx's fsfreeze hook).\n" \
  "quiesce_timeout=S    Kill the hook after S seconds (default 20).\n" \
  "quiesce_device=NAME  The hook's DEVICE (default: pool/image).\n" \
  "quiesce_device_file=PATH  The hook's DEVICE read from PATH at each\n" \
  "                     snapshot, if it exists (rbdx map writes it).\n" \
  "conf=PATH            ceph.conf (default: $CEPH_CONF, /etc/ceph/$cluster.conf,\n" \
  "                     ~/.ceph/$cluster.conf, ./$cluster.conf).\n" \
  "id=NAME              cephx user without 'client.' (default: the\n" \
  "                     --id of $CEPH_ARGS, else admin).\n" \
  "keyring=PATH         Keyring holding that user's key.\n" \
  "mon_host=ADDRS       Monitor addresses (overrides the conf file).\n" \
  "cluster=NAME         Cluster name (default: ceph).\n" \
  "ceph.OPTION=VALUE    Any Ceph option, set with rados_conf_set (each once;\n" \
  "                     not ceph.key or ceph.keyfile: give keyring=).\n" \
  "completion=auto|io_uring|poll|callback\n" \
  "                     How completions reach the waiting thread (default:\n" \
  "                     auto = the eventfd reaped with io_uring, falling back\n" \
  "                     to poll(2); io_uring; poll; callback: librbd's\n" \
  "                     callback wakes it; eventfd is an old name of poll).\n" \
  "size_file=PATH       Keep the image's current size (bytes) in PATH.\n" \
  "qos.NAME_limit=N     QoS limit for all connections together (NAME: iops,\n" \
  "                     read_iops, write_iops, bps, read_bps, write_bps); also\n" \
  "                     qos.NAME_burst=N, qos.NAME_burst_seconds=S (librbd's\n" \
  "                     rbd_qos_* meanings; default: the image's own limits).\n" \
  "encryption_format=luks|luks1|luks2\n" \
  "                     Load the image's LUKS encryption (rbd encryption format;\n" \
  "                     luks: read LUKS1 or LUKS2 from the header) on every\n" \
  "                     context; one encryption_passphrase_file= each.  Repeat\n" \
  "                     both for a clone with its own format: the image's own\n" \
  "                     first, then its parent's (needs librbd 17+).\n" \
  "encryption_passphrase_file=PATH\n" \
  "                     The passphrase (the file; a final newline is tried\n" \
  "                     both ways, as Ceph 16 and 18 differ; never logged).\n" \
  "metrics_file=PATH    Write request metrics (Prometheus text format) to PATH.\n" \
  "metrics_interval=S   Rewrite it every S seconds (default: 5).\n" \
  "connections_per_client=K\n" \
  "                     Let K connections share one Ceph client, each with its\n" \
  "                     own image handle (default 1: a client per connection).\n" \
  "ceph_context=auto|shared|connection\n" \
  "                     One Ceph context (configuration, log, messenger\n" \
  "                     workers, librbd's thread pool) for every connection's\n" \
  "                     client, or one each (auto: shared where Ceph has the\n" \
  "                     fix of ceph/ceph PR 53568, i.e. 17.2.8, 18.2.4+).\n" \
  "max_connections=N    Refuse connections beyond N open at once (default:\n" \
  "                     what RLIMIT_NOFILE and the cgroup's pids.max allow).\n" \
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
  .pread              = rbdx_io_pread,
  .pwrite             = rbdx_io_pwrite,
  .flush              = rbdx_io_flush,
  .trim               = rbdx_io_trim,
  .zero               = rbdx_io_zero,
  .extents            = rbdx_io_extents,
  .errno_is_preserved = 0,
};

NBDKIT_REGISTER_PLUGIN (plugin)

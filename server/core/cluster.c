/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: cluster handles (see cluster.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rbd/librbd.h>

#include "rbdx/cephargs.h"
#include "rbdx/cluster.h"

static bool
user_sets (const struct rbdx_options *o, const char *name)
{
  size_t i;

  for (i = 0; i < o->nceph; i++)
    if (strcmp (o->ceph[i].name, name) == 0)
      return true;
  return false;
}

/* Thread pools of one rados client sized for one connection's queue,
 * and its in-memory log ring (see cluster.h).  Each is set only while it
 * still has Ceph's built-in default, so a value from the conf file or
 * $CEPH_ARGS stays, and ceph.NAME= (applied later) always wins. */
static const struct {
  const char *name, *ceph_default, *rbdx_default;
} client_defaults[] = {
  { "ms_async_op_threads", "3", RBDX_MS_ASYNC_OP_THREADS },
  { "librados_thread_count", "2", RBDX_LIBRADOS_THREAD_COUNT },
  { "log_max_recent", "500", RBDX_LOG_MAX_RECENT },
};

int
rbdx_cluster_set_default (const struct rbdx_options *o, rados_t c,
                          const char *name, const char *ceph_default,
                          const char *value)
{
  char cur[64];
  int r;

  if (user_sets (o, name))
    return 0;
  if (rados_conf_get (c, name, cur, sizeof cur) < 0 ||
      strcmp (cur, ceph_default) != 0)
    return 0;  /* unknown to this Ceph, or set by conf file / env */
  r = rados_conf_set (c, name, value);
  return r < 0 ? r : 1;
}

/* @shared: for a shared Ceph context, whose messenger workers serve
 * every client on it (cct.h). */
static int
set_client_defaults (const struct rbdx_options *o, rados_t c, bool shared)
{
  const char *value;
  size_t i;
  int r;

  for (i = 0; i < sizeof client_defaults / sizeof client_defaults[0]; i++) {
    value = client_defaults[i].rbdx_default;
    if (shared && strcmp (client_defaults[i].name, "ms_async_op_threads") == 0)
      value = RBDX_SHARED_MS_ASYNC_OP_THREADS;
    r = rbdx_cluster_set_default (o, c, client_defaults[i].name,
                                  client_defaults[i].ceph_default, value);
    if (r < 0)
      return r;
  }
  return 0;
}

/* The admin socket librados will make at rados_connect, from whatever
 * set it (the configuration file, $CEPH_ARGS, ceph.admin_socket=, which
 * options-ceph.c checked already), metavariables expanded (rados_conf_get
 * expands them: Ceph src/common/config.cc, md_config_t::_get_val).
 * librados removes whatever is at that path to bind its socket (as root
 * any file): only a socket (a stale one) or nothing may be there.  A
 * missing directory is librados' to report, as it always did. */
static int
admin_socket_check (rados_t c, char *err, size_t errlen)
{
  char path[4096];
  struct stat st;

  if (rados_conf_get (c, "admin_socket", path, sizeof path) < 0 || !*path ||
      lstat (path, &st) == -1 || S_ISSOCK (st.st_mode))
    return 0;
  snprintf (err, errlen, "the Ceph option admin_socket (from the "
            "configuration file or $CEPH_ARGS) names '%s', which exists and "
            "is not a socket: librados would remove it to bind its own",
            path);
  return -EINVAL;
}

static int
configure (const struct rbdx_options *o, bool shared, rados_t *out,
           char *err, size_t errlen)
{
  char entity[sizeof "client." + RBDX_CEPHX_ID_MAX];
  rados_t c;
  size_t i;
  int r;

  /* Never cut short: a cut id is another user. */
  if ((size_t) snprintf (entity, sizeof entity, "client.%s",
                         rbdx_options_id (o)) >= sizeof entity) {
    snprintf (err, errlen, "id: a cephx id longer than %d bytes",
              RBDX_CEPHX_ID_MAX);
    return -ENAMETOOLONG;
  }
  r = rados_create2 (&c, o->cluster ? o->cluster : "ceph", entity, 0);
  if (r < 0) {
    snprintf (err, errlen, "cannot create a Ceph handle for %s: %s",
              entity, strerror (-r));
    return r;
  }

  r = rados_conf_read_file (c, o->conf);
  if (r < 0 && o->conf) {
    snprintf (err, errlen, "conf='%s': cannot parse it as a Ceph "
              "configuration file: %s", o->conf, strerror (-r));
    goto fail;
  }
  /* Without conf=, a missing default file is fine when mon_host= is
   * given; rados_connect reports what is still missing. */

  r = rados_conf_parse_env (c, NULL);
  if (r < 0) {
    snprintf (err, errlen, "cannot parse $CEPH_ARGS: %s", strerror (-r));
    goto fail;
  }
  if (o->keyring && (r = rados_conf_set (c, "keyring", o->keyring)) < 0) {
    snprintf (err, errlen, "keyring='%s': %s", o->keyring, strerror (-r));
    goto fail;
  }
  if (o->mon_host && (r = rados_conf_set (c, "mon_host", o->mon_host)) < 0) {
    snprintf (err, errlen, "mon_host='%s': not a monitor address list: %s",
              o->mon_host, strerror (-r));
    goto fail;
  }

  /* The cache is off so that an acknowledged write is on the OSDs and
   * visible to every other connection's context (what multi-conn
   * promises).  The effective value is checked per image after open,
   * because an image-level setting overrides this. */
  r = rados_conf_set (c, "rbd_cache", "false");
  if (r == 0 && !user_sets (o, "client_mount_timeout"))
    r = rados_conf_set (c, "client_mount_timeout", RBDX_MOUNT_TIMEOUT_S);
  if (r == 0)
    r = set_client_defaults (o, c, shared);
  if (r < 0) {
    snprintf (err, errlen, "cannot set rbdx's Ceph defaults: %s",
              strerror (-r));
    goto fail;
  }

  for (i = 0; i < o->nceph; i++) {
    r = rados_conf_set (c, o->ceph[i].name, o->ceph[i].value);
    if (r == -ENOENT) {
      snprintf (err, errlen, "ceph.%s: no such Ceph option", o->ceph[i].name);
      r = -EINVAL;
      goto fail;
    }
    if (r < 0) {
      snprintf (err, errlen, "ceph.%s='%s': Ceph rejects this value: %s",
                o->ceph[i].name, o->ceph[i].value, strerror (-r));
      r = -EINVAL;
      goto fail;
    }
  }

  if ((r = admin_socket_check (c, err, errlen)) < 0)
    goto fail;
  *out = c;
  return 0;

fail:
  rados_shutdown (c);
  return r;
}

int
rbdx_cluster_configure (const struct rbdx_options *o, rados_t *out,
                        char *err, size_t errlen)
{
  return configure (o, false, out, err, errlen);
}

int
rbdx_cluster_configure_shared (const struct rbdx_options *o, rados_t *out,
                               char *err, size_t errlen)
{
  return configure (o, true, out, err, errlen);
}

int
rbdx_cluster_connect_handle (const struct rbdx_options *o, rados_t c,
                             char *err, size_t errlen)
{
  char mons[512] = "";
  const char *hint;
  const char *from = o->id_from_env ? " (the id of $CEPH_ARGS)" : "";
  int r;

  r = rados_connect (c);
  if (r >= 0)
    return 0;
  if (rados_conf_get (c, "mon_host", mons, sizeof mons) < 0 || !*mons) {
    snprintf (err, errlen, "cannot connect to Ceph cluster '%s' as "
              "client.%s%s: no monitor address (give conf=, mon_host= or "
              "$CEPH_CONF): %s", o->cluster ? o->cluster : "ceph",
              rbdx_options_id (o), from, strerror (-r));
    return r;
  }
  switch (-r) {
  case ENOENT:
    hint = "no key for this id in the keyring, or no keyring found "
           "(check id= or $CEPH_ARGS, and keyring=)";
    break;
  case EACCES: case EPERM:
    hint = "the cluster refused the key: unknown id, or the keyring "
           "has no or a wrong key for it (check id= or $CEPH_ARGS, and "
           "keyring=)";
    break;
  case ETIMEDOUT:
    hint = "no monitor answered within client_mount_timeout "
           "(check mon_host= / conf=)";
    break;
  default:
    hint = strerror (-r);
  }
  snprintf (err, errlen, "cannot connect to Ceph cluster '%s' as client.%s%s "
            "(monitors %s): %s", o->cluster ? o->cluster : "ceph",
            rbdx_options_id (o), from, mons, hint);
  return r;
}

/* rbdx_cluster_configure, then rados_osd_op_timeout when @osd_timeout
 * is not NULL and the user sets none, then rados_connect. */
static int
connect_with (const struct rbdx_options *o, const char *osd_timeout,
              rados_t *out, char *err, size_t errlen)
{
  rados_t c;
  int r;

  r = rbdx_cluster_configure (o, &c, err, errlen);
  if (r < 0)
    return r;
  if (osd_timeout && !user_sets (o, "rados_osd_op_timeout") &&
      (r = rados_conf_set (c, "rados_osd_op_timeout", osd_timeout)) < 0) {
    snprintf (err, errlen, "cannot set rados_osd_op_timeout for the "
              "start-up probe: %s", strerror (-r));
    rados_shutdown (c);
    return r;
  }

  r = rbdx_cluster_connect_handle (o, c, err, errlen);
  if (r < 0) {
    rados_shutdown (c);
    return r;
  }
  *out = c;
  return 0;
}

int
rbdx_cluster_connect (const struct rbdx_options *o, rados_t *out,
                      char *err, size_t errlen)
{
  return connect_with (o, NULL, out, err, errlen);
}

int
rbdx_cluster_connect_probe (const struct rbdx_options *o, rados_t *out,
                            char *err, size_t errlen)
{
  return connect_with (o, RBDX_PROBE_OSD_TIMEOUT_S, out, err, errlen);
}

int
rbdx_cluster_open_pool (rados_t c, const char *pool, const char *ns,
                        rados_ioctx_t *io, char *err, size_t errlen)
{
  rados_ioctx_t ioctx;
  bool exists = false;
  int r;

  r = rados_ioctx_create (c, pool, &ioctx);
  if (r < 0) {
    snprintf (err, errlen, r == -ENOENT ? "pool '%s' does not exist"
              : "cannot open pool '%s': %s", pool, strerror (-r));
    return r;
  }
  if (ns) {
    r = rbd_namespace_exists (ioctx, ns, &exists);
    if (r < 0 || !exists) {
      snprintf (err, errlen, "namespace '%s/%s' does not exist%s%s",
                pool, ns, r < 0 ? ": " : "", r < 0 ? strerror (-r) : "");
      rados_ioctx_destroy (ioctx);
      return r < 0 ? r : -ENOENT;
    }
    rados_ioctx_set_namespace (ioctx, ns);
  }
  *io = ioctx;
  return 0;
}

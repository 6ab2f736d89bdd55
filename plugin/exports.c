/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx plugin: export names (see exports.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rbd/librbd.h>

#include "rbdx/spec.h"
#include "rbdx/clients.h"
#include "rbdx/cluster.h"
#include "rbdx/errors.h"
#include "rbdx/log.h"
#include "rbdx/printable.h"
#include "exports.h"

const char *
rbdx_export_describe (const char *name, char *buf, size_t len)
{
  snprintf (buf, len, "Ceph RBD image %s", name);
  return buf;
}

/* Does "POOL/[NS/]NAME" parse back to exactly this image?  Not when
 * NAME holds '/' or '@' (another pool or namespace, a snapshot), or
 * is too long. */
static bool
addressable (const struct rbdx_options *o, const char *image, char *name,
             size_t len)
{
  struct rbdx_spec spec;
  bool ok;

  if ((size_t) snprintf (name, len, "%s/%s%s%s", o->pool,
                         o->pool_ns ? o->pool_ns : "", o->pool_ns ? "/" : "",
                         image) >= len)
    return false;
  if (rbdx_spec_parse (name, NULL, &spec, NULL) < 0)
    return false;
  ok = strcmp (spec.image, image) == 0 && !spec.snap;
  rbdx_spec_free (&spec);
  return ok;
}

static int
list_pool (const struct rbdx_options *o, rados_ioctx_t io,
           struct nbdkit_exports *exports)
{
  rbd_image_spec_t *images = NULL;
  char name[RBDX_EXPORT_MAX], shown[4 * RBDX_EXPORT_MAX];
  char desc[RBDX_EXPORT_MAX + 32];
  size_t n = 0, i;
  int r;

  while ((r = rbd_list2 (io, images, &n)) == -ERANGE) {
    free (images);
    images = calloc (n, sizeof *images);
    if (!images)
      return -ENOMEM;
  }
  for (i = 0; r >= 0 && i < n; i++) {
    /* A name with a control character (C0, DEL, C1) or a byte that is
     * not UTF-8 is not listed: a newline or a carriage return would
     * split `nbdinfo --list` and the logs, an escape sequence (ESC [,
     * U+009B) reach the terminal of whoever reads the list, export names
     * are UTF-8 (the NBD protocol, doc/proto.md), and the spec grammar
     * refuses it, so it would not open anyway. */
    bool ctl = rbdx_spec_has_unsafe_char (images[i].name);

    if (ctl || !addressable (o, images[i].name, name, sizeof name)) {
      nbdkit_debug ("rbdx: image '%s' (id %s) of pool '%s%s%s' is not "
                    "listed: %s", rbdx_printable (images[i].name, shown,
                                                  sizeof shown),
                    images[i].id, o->pool, o->pool_ns ? "/" : "",
                    o->pool_ns ? o->pool_ns : "",
                    ctl ? "its name contains a control character "
                          "or a byte that is not UTF-8"
                        : "its name cannot be written as an export name "
                          "('/' or '@', or too long)");
      continue;
    }
    /* nbdkit_add_export copies both strings. */
    if (nbdkit_add_export (exports, name,
                           rbdx_export_describe (name, desc,
                                                 sizeof desc)) < 0)
      r = -ENOMEM;
  }
  if (images && n)
    rbd_image_spec_list_cleanup (images, n);
  free (images);
  return r < 0 ? r : 0;
}

/* One listing's Ceph client at a time (see exports.h): held from
 * before the budget is taken until the client is released. */
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
/* The log of listings refused (busy, or the budget spent), with a rate
 * limit of its own (rbdx/errors.h): a flood of listers cannot flood
 * the log. */
static struct rbdx_log_limit list_refusals = RBDX_LOG_LIMIT_INIT;

/* Wait for list_lock at most RBDX_LIST_WAIT_S seconds.
 * @return 0 with the lock held, or the errno of pthread_mutex_timedlock
 * (ETIMEDOUT). */
static int
list_lock_take (void)
{
  struct timespec until;

  clock_gettime (CLOCK_REALTIME, &until);
  until.tv_sec += RBDX_LIST_WAIT_S;
  return pthread_mutex_timedlock (&list_lock, &until);
}

int
rbdx_exports_list (const struct rbdx_options *o, const char *canon,
                   struct rbdx_budget *budget,
                   struct nbdkit_exports *exports)
{
  char err[512], shown[4 * sizeof err], desc[RBDX_EXPORT_MAX + 32];
  rados_ioctx_t io;
  rados_t c;
  int r;

  if (!o->pool)
    return nbdkit_add_export (exports, canon,
                              rbdx_export_describe (canon, desc,
                                                    sizeof desc));

  r = list_lock_take ();
  if (r != 0) {
    rbdx_error_limited (&list_refusals, "rbdx: NBD_OPT_LIST refused: "
                        "another listing of pool '%s' held the cluster "
                        "for more than %d s (listings run one at a "
                        "time): %s", o->pool, RBDX_LIST_WAIT_S,
                        strerror (r));
    errno = EAGAIN;
    return -1;
  }
  if (rbdx_budget_take (budget, err, sizeof err) < 0) {
    pthread_mutex_unlock (&list_lock);
    rbdx_error_limited (&list_refusals, "rbdx: NBD_OPT_LIST refused (a "
                        "listing needs a Ceph client, counted as a "
                        "connection): %s", err);
    errno = EMFILE;
    return -1;
  }

  r = rbdx_cluster_acquire (o, &c, err, sizeof err);
  if (r == 0) {
    r = rbdx_cluster_open_pool (c, o->pool, o->pool_ns, &io, err,
                                sizeof err);
    if (r == 0) {
      r = list_pool (o, io, exports);
      rados_ioctx_destroy (io);
      if (r < 0)
        snprintf (err, sizeof err, "cannot list the images of pool '%s': %s",
                  o->pool, strerror (-r));
    }
    rbdx_cluster_release (c);
  }
  rbdx_budget_give (budget);
  pthread_mutex_unlock (&list_lock);
  if (r < 0) {
    nbdkit_error ("rbdx: %s", rbdx_printable (err, shown, sizeof shown));
    return -1;
  }
  return 0;
}

static bool
same_pool (const struct rbdx_options *o, const struct rbdx_spec *spec)
{
  return strcmp (spec->pool, o->pool) == 0 &&
    (spec->ns ? o->pool_ns && strcmp (spec->ns, o->pool_ns) == 0
              : !o->pool_ns);
}

/* The log of export names refused by .open, rate-limited (a limit of
 * its own, rbdx/errors.h): a client that loops asking for a name that
 * is not served cannot flood the log. */
static struct rbdx_log_limit name_refusals = RBDX_LOG_LIMIT_INIT;

int
rbdx_export_resolve (const struct rbdx_options *o, const char *canon,
                     const char *name, struct rbdx_spec *spec)
{
  char buf[RBDX_EXPORT_MAX];
  const char *why = "";
  int r;

  if (!name || !*name || strcmp (name, canon) == 0) {
    if (!o->spec.image) {
      rbdx_error_limited (&name_refusals, "rbdx: no default export: name "
                          "an image of pool '%s%s%s' (nbdinfo --list shows "
                          "them)", o->pool, o->pool_ns ? "/" : "",
                          o->pool_ns ? o->pool_ns : "");
      return -1;
    }
    return rbdx_spec_copy (spec, &o->spec) < 0 ? -1 : 0;
  }

  r = rbdx_spec_parse (name, o->pool ? o->pool : o->spec.pool, spec, &why);
  if (r < 0) {
    char shown[4 * RBDX_EXPORT_MAX];

    rbdx_error_limited (&name_refusals, "rbdx: export '%s': %s",
                        rbdx_printable (name, shown, sizeof shown), why);
    return -1;
  }
  /* A bare IMAGE in pool mode lives in pool='s namespace. */
  if (o->pool_ns && !strchr (name, '/') &&
      !(spec->ns = strdup (o->pool_ns))) {
    nbdkit_error ("rbdx: out of memory");
    rbdx_spec_free (spec);
    return -1;
  }
  rbdx_spec_format (spec, buf, sizeof buf);
  if (o->pool) {
    char shown[4 * RBDX_EXPORT_MAX], pool[4 * RBDX_EXPORT_MAX];
    char ns[4 * RBDX_EXPORT_MAX];

    if (same_pool (o, spec))
      return 0;
    /* Name the pool and namespace it is in: "rbd/ns1/img" under
     * pool=rbd is in pool rbd, but not in its default namespace. */
    rbdx_error_limited (&name_refusals, "rbdx: export '%s' (pool '%s', %s%s%s) "
                        "is not served by pool=%s%s%s", rbdx_printable (name,
                        shown, sizeof shown),
                        rbdx_printable (spec->pool, pool, sizeof pool),
                        spec->ns ? "namespace '" : "the default namespace",
                        spec->ns ? rbdx_printable (spec->ns, ns, sizeof ns) : "",
                        spec->ns ? "'" : "", o->pool, o->pool_ns ? "/" : "",
                        o->pool_ns ? o->pool_ns : "");
  }
  else if (strcmp (buf, canon) == 0)
    return 0;
  else {
    char shown[4 * RBDX_EXPORT_MAX];

    rbdx_error_limited (&name_refusals, "rbdx: export '%s' is not served "
                        "here (this server serves '%s')",
                        rbdx_printable (name, shown, sizeof shown), canon);
  }
  rbdx_spec_free (spec);
  return -1;
}

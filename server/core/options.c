/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: parameter parsing (see options.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rbdx/budget.h"
#include "rbdx/cephargs.h"
#include "rbdx/opterr.h"
#include "rbdx/options.h"
#include "rbdx/tmpfile.h"

#define CEPH_PREFIX "ceph."

/* A keyword of an enum-valued parameter.  An alias is accepted but not
 * offered in error messages. */
struct keyword {
  const char *name;
  int value;
  bool alias;
};

static const struct keyword writers_names[] = {
  { "auto", RBDX_WRITERS_AUTO, false },
  { "shared", RBDX_WRITERS_SHARED, false },
  { "per-connection", RBDX_WRITERS_PER_CONNECTION, false },
  { NULL, 0, false }
};
static const struct keyword advertise_names[] = {
  { "image", RBDX_ADVERTISE_IMAGE, false },
  { "max", RBDX_ADVERTISE_MAX, false },
  { NULL, 0, false }
};
static const struct keyword encryption_names[] = {
  { "luks", RBDX_ENCRYPTION_LUKS, false },
  { "luks1", RBDX_ENCRYPTION_LUKS1, false },
  { "luks2", RBDX_ENCRYPTION_LUKS2, false },
  { NULL, 0, false }
};
static const struct keyword completion_names[] = {
  { "callback", RBDX_COMPLETION_CALLBACK, false },
  { "auto", RBDX_COMPLETION_AUTO, false },
  { "io_uring", RBDX_COMPLETION_IO_URING, false },
  { "poll", RBDX_COMPLETION_POLL, false },
  /* The old name: both modes wait on the eventfd, so it named nothing. */
  { "eventfd", RBDX_COMPLETION_POLL, true },
  { NULL, 0, false }
};

static const struct keyword ceph_context_names[] = {
  { "auto", RBDX_CEPH_CONTEXT_AUTO, false },
  { "shared", RBDX_CEPH_CONTEXT_SHARED, false },
  { "connection", RBDX_CEPH_CONTEXT_CONNECTION, false },
  { NULL, 0, false }
};

/* Set *slot to the value of the keyword named value in names (ended by
 * a NULL name), once. */
static int
set_keyword (const char *key, const char *value,
             const struct keyword *names, int *slot, bool *set,
             char *err, size_t errlen)
{
  char expected[128] = "";
  int i, n = 0, shown = 0;

  if (*set)
    return rbdx_opt_err (err, errlen, "%s= given twice", key);
  for (i = 0; names[i].name; i++) {
    if (strcmp (value, names[i].name) == 0) {
      *slot = names[i].value;
      *set = true;
      return 0;
    }
    if (!names[i].alias)
      n++;
  }
  for (i = 0; names[i].name; i++) {
    if (names[i].alias)
      continue;
    shown++;
    snprintf (expected + strlen (expected), sizeof expected - strlen (expected),
              "%s%s", shown == 1 ? "" : shown < n ? ", " : " or ",
              names[i].name);
  }
  return rbdx_opt_err (err, errlen, "%s='%s': expected %s", key, value, expected);
}

/* encryption_format= and encryption_passphrase_file=: the next spec of
 * each list (the image's own first), as rbd's repeated
 * --encryption-format and --encryption-passphrase-file. */
static int
set_encryption (struct rbdx_options *o, const char *key, const char *value,
                char *err, size_t errlen)
{
  bool format = strcmp (key, "encryption_format") == 0;
  size_t *n = format ? &o->nenc : &o->nenc_files;
  bool set = false;
  int r;

  if (*n == RBDX_ENCRYPTION_MAX)
    return rbdx_opt_err (err, errlen, "%s= given more than %d times (the image's "
                    "own and one per encrypted parent with a passphrase of "
                    "its own)", key, RBDX_ENCRYPTION_MAX);
  if (!format) {
    o->enc[*n].passphrase_file = strdup (value);
    if (!o->enc[*n].passphrase_file)
      return -ENOMEM;
    ++*n;
    return 0;
  }
  r = set_keyword (key, value, encryption_names, (int *) &o->enc[*n].format,
                   &set, err, errlen);
  if (r == 0)
    ++*n;
  return r;
}

static int
options_set (struct rbdx_options *o, const char *key, const char *value,
             char *err, size_t errlen)
{
  const char *why = NULL;
  int r;

  if (errlen)
    err[0] = '\0';
  if (value == NULL || *value == '\0')
    return rbdx_opt_err (err, errlen, "%s= needs a value", key);

  if (strncmp (key, CEPH_PREFIX, strlen (CEPH_PREFIX)) == 0)
    return rbdx_options_set_ceph (o, key + strlen (CEPH_PREFIX), value,
                                  err, errlen);
  if (strncmp (key, "qos.", 4) == 0)
    return rbdx_options_set_qos (o, key, value, err, errlen);

  if (strcmp (key, "image") == 0) {
    char *text;

    if (o->spec.image) {
      char prev[RBDX_SPEC_MAX + 8];

      rbdx_spec_format (&o->spec, prev, sizeof prev);
      return rbdx_opt_err (err, errlen, "image= given twice ('%s' and '%s')",
                   prev, value);
    }
    text = strdup (value);
    if (!text)
      return -ENOMEM;
    r = rbdx_spec_parse (value, NULL, &o->spec, &why);
    if (r < 0) {
      free (text);
      if (r == -EINVAL)
        return rbdx_opt_err (err, errlen, "image='%s': %s", value, why);
      return r;
    }
    o->image_text = text;
    return 0;
  }
  if (strcmp (key, "pool") == 0) {
    const char *slash = strchr (value, '/');

    if (o->pool)
      return rbdx_opt_err (err, errlen, "pool= given twice");
    /* As in an image spec (rbdx_spec_parse): the pool is logged and
     * listed, so a control character would split a line, and export
     * names are UTF-8. */
    if (rbdx_spec_has_unsafe_char (value))
      return rbdx_opt_err (err, errlen, "pool='%s': contains a control "
                           "character or a byte that is not UTF-8", value);
    if (strchr (value, '@') || slash == value ||
        (slash && (slash[1] == '\0' || strchr (slash + 1, '/'))))
      return rbdx_opt_err (err, errlen, "pool='%s': expected POOL or "
                   "POOL/NAMESPACE", value);
    o->pool = slash ? strndup (value, (size_t) (slash - value))
                    : strdup (value);
    if (slash)
      o->pool_ns = strdup (slash + 1);
    if (!o->pool || (slash && !o->pool_ns))
      return -ENOMEM;
    /* As in an image spec: "." and ".." are no pool or namespace names. */
    if (rbdx_spec_name_is_dots (o->pool) ||
        (o->pool_ns && rbdx_spec_name_is_dots (o->pool_ns))) {
      free (o->pool);
      free (o->pool_ns);
      o->pool = o->pool_ns = NULL;
      return rbdx_opt_err (err, errlen, "pool='%s': '.' and '..' are no pool "
                           "or namespace names", value);
    }
    return 0;
  }
  if (strcmp (key, "writers") == 0)
    return set_keyword (key, value, writers_names, (int *) &o->writers,
                        &o->writers_set, err, errlen);
  if (strcmp (key, "exclusive") == 0 || strcmp (key, "notrim") == 0) {
    bool n = key[0] == 'n';

    if (n ? o->notrim_set : o->exclusive_set)
      return rbdx_opt_err (err, errlen, "%s= given twice", key);
    r = rbdx_parse_bool (value);
    if (r < 0)
      return rbdx_opt_err (err, errlen, "%s='%s': expected true or false", key,
                   value);
    *(n ? &o->notrim : &o->exclusive) = r;
    *(n ? &o->notrim_set : &o->exclusive_set) = true;
    return 0;
  }
  if (strcmp (key, "snap_id") == 0) {
    char *end;

    if (o->snap_id_set)
      return rbdx_opt_err (err, errlen, "snap_id= given twice");
    errno = 0;
    o->snap_id = strtoull (value, &end, 10);
    /* Ceph reserves UINT64_MAX - 1 (CEPH_NOSNAP) and UINT64_MAX. */
    if (*value < '0' || *value > '9' || *end || errno ||
        o->snap_id >= UINT64_MAX - 1)
      return rbdx_opt_err (err, errlen, "snap_id='%s': expected a snapshot id, "
                      "a whole number as `rbd snap ls` shows it", value);
    o->snap_id_set = true;
    return 0;
  }
  if (rbdx_quiesce_is_key (key))
    return rbdx_quiesce_option_set (&o->quiesce, key, value, err, errlen);
  if (strcmp (key, "conf") == 0)
    return rbdx_opt_set_once (&o->conf, key, value, err, errlen);
  if (strcmp (key, "id") == 0) {
    char bad[128];

    if (strncmp (value, "client.", 7) == 0)
      return rbdx_opt_err (err, errlen, "id='%s': give the cephx id without the "
                   "'client.' prefix (id=%s)", value, value + 7);
    if (rbdx_cephx_id_check (value, bad, sizeof bad) < 0)
      return rbdx_opt_err (err, errlen, "id='%.*s': %s", RBDX_CEPHX_ID_MAX,
                           value, bad);
    return rbdx_opt_set_once (&o->id, key, value, err, errlen);
  }
  if (strcmp (key, "keyring") == 0)
    return rbdx_opt_set_once (&o->keyring, key, value, err, errlen);
  if (strcmp (key, "mon_host") == 0)
    return rbdx_opt_set_once (&o->mon_host, key, value, err, errlen);
  if (strcmp (key, "cluster") == 0) {
    /* librados puts the name in paths (/etc/ceph/$cluster.conf). */
    if (!rbdx_cluster_name_valid (value))
      return rbdx_opt_err (err, errlen, "cluster='%s': a Ceph cluster name is "
                           "letters, digits, '_' and '-' only", value);
    return rbdx_opt_set_once (&o->cluster, key, value, err, errlen);
  }
  if (strcmp (key, "size_file") == 0) {
    if (value[0] != '/')
      return rbdx_opt_err (err, errlen, "size_file='%s': must be an absolute path", value);
    return rbdx_opt_set_once (&o->size_file, key, value, err, errlen);
  }
  if (strcmp (key, "metrics_file") == 0) {
    if (value[0] != '/')
      return rbdx_opt_err (err, errlen, "metrics_file='%s': must be an absolute path",
                   value);
    return rbdx_opt_set_once (&o->metrics_file, key, value, err, errlen);
  }
  if (strcmp (key, "metrics_interval") == 0) {
    uint64_t v;
    if (o->metrics_interval)
      return rbdx_opt_err (err, errlen, "metrics_interval= given twice");
    if (rbdx_parse_size (value, &v) < 0 || v == 0 || v > 3600)
      return rbdx_opt_err (err, errlen, "metrics_interval='%s': expected seconds, "
                   "1 to 3600", value);
    o->metrics_interval = (unsigned) v;
    return 0;
  }
  if (strcmp (key, "connections_per_client") == 0) {
    uint64_t v;
    if (o->connections_per_client)
      return rbdx_opt_err (err, errlen, "connections_per_client= given twice");
    if (rbdx_parse_size (value, &v) < 0 || v == 0
        || v > RBDX_CONNECTIONS_PER_CLIENT_MAX)
      return rbdx_opt_err (err, errlen, "connections_per_client='%s': expected a "
                      "number of connections, 1 to %d", value,
                      RBDX_CONNECTIONS_PER_CLIENT_MAX);
    o->connections_per_client = (unsigned) v;
    return 0;
  }
  if (strcmp (key, "max_connections") == 0) {
    uint64_t v;
    if (o->max_connections)
      return rbdx_opt_err (err, errlen, "max_connections= given twice");
    if (rbdx_parse_size (value, &v) < 0 || v == 0
        || v > RBDX_MAX_CONNECTIONS_LIMIT)
      return rbdx_opt_err (err, errlen, "max_connections='%s': expected a number "
                      "of connections, 1 to %d", value,
                      RBDX_MAX_CONNECTIONS_LIMIT);
    o->max_connections = (unsigned) v;
    return 0;
  }
  if (strcmp (key, "encryption_format") == 0 ||
      strcmp (key, "encryption_passphrase_file") == 0)
    return set_encryption (o, key, value, err, errlen);
  if (strcmp (key, "advertise_size") == 0)
    return set_keyword (key, value, advertise_names, (int *) &o->advertise_size,
                        &o->advertise_size_set, err, errlen);
  if (strcmp (key, "ceph_context") == 0)
    return set_keyword (key, value, ceph_context_names,
                        (int *) &o->ceph_context, &o->ceph_context_set,
                        err, errlen);
  if (strcmp (key, "completion") == 0)
    return set_keyword (key, value, completion_names, (int *) &o->completion,
                        &o->completion_set, err, errlen);
  if (strcmp (key, "identity") == 0) {
    if (o->identity_set)
      return rbdx_opt_err (err, errlen, "identity= given twice");
    if (rbdx_ident_parse (value, &o->identity) < 0)
      return rbdx_opt_err (err, errlen, "identity='%s': expected POOLID/"
                      "[NAMESPACE/]IMAGEID[@SNAPID], as the export "
                      "description shows it", value);
    o->identity_set = true;
    return 0;
  }
  return rbdx_opt_err (err, errlen, "unknown parameter '%s' (see nbdkit rbdx --help; "
               "Ceph options are given as ceph.NAME=VALUE)", key);
}

/* size_file=PATH, metrics_file=PATH: its directory must exist and be
 * writable (the file is replaced by renaming a temporary file there),
 * and what is at PATH must be a regular file if anything (tmpfile.h). */
static int
check_dir (const char *key, const char *path, char *err, size_t errlen)
{
  char dir[4096];
  const char *slash;
  size_t n;
  int r;

  if (!path)
    return 0;
  slash = strrchr (path, '/');
  n = slash == path ? 1 : (size_t) (slash - path);
  if (n >= sizeof dir)
    return rbdx_opt_err (err, errlen, "%s='%s': path too long", key, path);
  memcpy (dir, path, n);
  dir[n] = '\0';
  if (access (dir, W_OK | X_OK) != 0)
    return rbdx_opt_err (err, errlen, "%s='%s': cannot write in %s: %s",
                 key, path, dir, strerror (errno));
  r = rbdx_tmpfile_target_check (path);
  if (r == -EISDIR)
    return rbdx_opt_err (err, errlen, "%s='%s': names a directory, not a "
                         "file", key, path);
  if (r == -EEXIST)
    return rbdx_opt_err (err, errlen, "%s='%s': exists and is not a regular "
                         "file (rbdx replaces the file it writes: a device, "
                         "FIFO, socket, directory or symbolic link there is "
                         "never replaced)", key, path);
  if (r < 0)
    return rbdx_opt_err (err, errlen, "%s='%s': %s", key, path, strerror (-r));
  return 0;
}

static bool
same (const char *a, const char *b)
{
  return (!a && !b) || (a && b && strcmp (a, b) == 0);
}

/* Without id=, the id of $CEPH_ARGS (cephargs.h), checked as id=. */
static int
id_from_env (struct rbdx_options *o, char *err, size_t errlen)
{
  char id[RBDX_CEPHX_ID_MAX + 1], why[256];
  int r;

  if (o->id)
    return 0;
  r = rbdx_ceph_args_id (getenv ("CEPH_ARGS"), id, sizeof id, why, sizeof why);
  if (r == 0)
    return 0;
  if (r > 0 && rbdx_cephx_id_check (id, why, sizeof why) == 0) {
    o->id = strdup (id);
    if (!o->id)
      return -ENOMEM;
    o->id_from_env = true;
    return 0;
  }
  if (r > 0)
    return rbdx_opt_err (err, errlen, "$CEPH_ARGS: the cephx id '%s': %s "
                         "(or give id=)", id, why);
  return rbdx_opt_err (err, errlen, "$CEPH_ARGS: %s (or give id=)", why);
}

static int
options_complete (struct rbdx_options *o, char *err, size_t errlen)
{
  struct rbdx_spec spec;
  int r;

  if (errlen)
    err[0] = '\0';
  if (!o->spec.image && !o->pool)
    return rbdx_opt_err (err, errlen, "no image given: use nbdkit rbdx "
                 "[pool/[namespace/]]image[@snapshot], or pool=POOL to "
                 "serve every image of a pool");
  if (o->spec.image && o->pool) {
    /* "img" means pool=/img; re-read it now that pool= is known (a
     * long pool= can make "pool/img" too long). */
    const char *why = NULL;

    r = rbdx_spec_parse (o->image_text, o->pool, &spec, &why);
    if (r == -EINVAL)
      return rbdx_opt_err (err, errlen, "image='%s': %s (pool='%s')",
                   o->image_text, why, o->pool);
    if (r < 0)
      return r;
    rbdx_spec_free (&o->spec);
    o->spec = spec;
    if (strchr (o->image_text, '/') == NULL && o->pool_ns) {
      free (o->spec.ns);
      o->spec.ns = strdup (o->pool_ns);
      if (!o->spec.ns)
        return -ENOMEM;
    }
    if (strcmp (o->spec.pool, o->pool) != 0 || !same (o->spec.ns, o->pool_ns))
      return rbdx_opt_err (err, errlen, "image='%s' is not in pool='%s%s%s'",
                   o->image_text, o->pool, o->pool_ns ? "/" : "",
                   o->pool_ns ? o->pool_ns : "");
  }
  if (o->snap_id_set && (o->pool || !o->spec.image || o->spec.snap))
    return rbdx_opt_err (err, errlen, "snap_id= names a snapshot of the image "
                    "given as image=, which then names none (no @SNAP), "
                    "without pool=");
  if (o->identity_set &&
      (o->pool || !o->spec.image ||
       !rbdx_options_snapshot (o) != (o->identity.snap_id == RBDX_NOSNAP) ||
       (o->snap_id_set && o->snap_id != o->identity.snap_id)))
    return rbdx_opt_err (err, errlen, "identity= pins the image given as image= "
                    "(a snapshot identity for a snapshot spec or snap_id=, "
                    "then that one), without pool=");
  /* A namespace cannot be renamed: a pinned image is in the spec's own
   * (a pool can, so the pool is kept by id alone). */
  if (o->identity_set &&
      strcmp (o->identity.ns, o->spec.ns ? o->spec.ns : "") != 0)
    return rbdx_opt_err (err, errlen, "identity= names an image of namespace "
                    "'%s', but image='%s' is in namespace '%s'",
                    o->identity.ns, o->image_text,
                    o->spec.ns ? o->spec.ns : "");
  if (o->exclusive && o->writers == RBDX_WRITERS_PER_CONNECTION)
    return rbdx_opt_err (err, errlen, "exclusive=true needs one lock owner: it "
                 "cannot be combined with writers=per-connection");
  if (o->size_file && o->pool)
    return rbdx_opt_err (err, errlen, "size_file= holds the size of one image: it "
                 "cannot be combined with pool=");
  if (o->metrics_interval && !o->metrics_file)
    return rbdx_opt_err (err, errlen, "metrics_interval= needs metrics_file=, "
                         "the file it says how often to write");
  if (o->advertise_size == RBDX_ADVERTISE_MAX && !o->size_file)
    return rbdx_opt_err (err, errlen, "advertise_size=max needs size_file=, where "
                 "clients learn the real size (it is for the rbdx mapper)");
  r = id_from_env (o, err, errlen);
  if (r == 0)
    r = check_dir ("size_file", o->size_file, err, errlen);
  if (r == 0)
    r = check_dir ("metrics_file", o->metrics_file, err, errlen);
  if (r == 0)
    r = rbdx_opt_check_file ("conf", o->conf, err, errlen);
  if (r == 0)
    r = rbdx_opt_check_file ("keyring", o->keyring, err, errlen);
  if (r == 0)
    r = rbdx_options_read_passphrases (o, err, errlen);
  if (r == 0)
    r = rbdx_quiesce_options_complete (&o->quiesce, err, errlen);
  if (r == 0 && o->spec.image) {
    char text[RBDX_SPEC_MAX + 1];

    rbdx_spec_format (&o->spec, text, sizeof text);
    r = rbdx_quiesce_spec_device_check (&o->quiesce, text, err, errlen);
  }
  if (r == 0)
    r = rbdx_options_check_ceph (o, err, errlen);
  return r;
}

/* Every error leaves a message, -ENOMEM too. */
static int
out_of_memory (int r, char *err, size_t errlen)
{
  if (r == -ENOMEM && errlen)
    snprintf (err, errlen, "out of memory");
  return r;
}

int
rbdx_options_set (struct rbdx_options *o, const char *key, const char *value,
                  char *err, size_t errlen)
{
  return out_of_memory (options_set (o, key, value, err, errlen), err, errlen);
}

int
rbdx_options_complete (struct rbdx_options *o, char *err, size_t errlen)
{
  return out_of_memory (options_complete (o, err, errlen), err, errlen);
}

void
rbdx_options_free (struct rbdx_options *o)
{
  size_t i;

  for (i = 0; i < RBDX_ENCRYPTION_MAX; i++) {
    if (o->enc[i].passphrase)
      explicit_bzero (o->enc[i].passphrase, RBDX_PASSPHRASE_MAX + 1);
    free (o->enc[i].passphrase);
    free (o->enc[i].passphrase_file);
  }
  free (o->metrics_file);
  rbdx_spec_free (&o->spec);
  free (o->image_text);
  free (o->pool);
  free (o->pool_ns);
  free (o->conf);
  free (o->id);
  free (o->keyring);
  free (o->mon_host);
  free (o->cluster);
  free (o->size_file);
  for (i = 0; i < o->nceph; i++) {
    free (o->ceph[i].name);
    free (o->ceph[i].given);
    free (o->ceph[i].value);
  }
  free (o->ceph);
  rbdx_quiesce_options_free (&o->quiesce);
  memset (o, 0, sizeof *o);
}

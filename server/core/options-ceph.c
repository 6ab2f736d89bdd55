/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the ceph.NAME=VALUE parameters (see options.h): names taken
 * as Ceph takes them, a Ceph option set once, no raw key on a command
 * line, and the files of log_file and admin_socket checked before
 * librados opens (or removes) them.  Pure logic but for stat(2) and
 * statfs(2) of the paths; part of librbdx-common. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "rbdx/cephargs.h"
#include "rbdx/opterr.h"
#include "rbdx/options.h"

const char *
rbdx_options_id (const struct rbdx_options *o)
{
  return o->id ? o->id : "admin";
}

const char *
rbdx_ceph_option_refused (const char *name)
{
  if (rbdx_ceph_name_eq (name, "key"))
    return "a raw key on a command line is readable by every user (ps, "
      "/proc/PID/cmdline): put it in a keyring file only its user can "
      "read and give keyring=FILE";
  if (rbdx_ceph_name_eq (name, "keyfile"))
    return "give the key as a keyring file, readable only by its user: "
      "keyring=FILE";
  return NULL;
}

/* The directory part of @p path ("." without a '/'), in @p dir. */
static int
dir_of (const char *path, char *dir, size_t len)
{
  const char *slash = strrchr (path, '/');
  size_t n = !slash ? 1 : slash == path ? 1 : (size_t) (slash - path);

  if (n >= len)
    return -ENAMETOOLONG;
  memcpy (dir, slash ? path : ".", n);
  dir[n] = '\0';
  return 0;
}

static bool
proc_or_sys (const char *path)
{
  struct statfs fs;

  return statfs (path, &fs) == 0 &&
    (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC);
}

/* A path that does not exist yet: its directory must, outside /proc and
 * /sys. */
static int
check_dir (const char *path, char *why, size_t whylen)
{
  char dir[4096];
  struct stat st;

  if (dir_of (path, dir, sizeof dir) < 0)
    return rbdx_opt_err (why, whylen, "path too long");
  if (stat (dir, &st) != 0)
    return rbdx_opt_err (why, whylen, "its directory %s: %s", dir,
                         strerror (errno));
  if (!S_ISDIR (st.st_mode))
    return rbdx_opt_err (why, whylen, "%s is not a directory", dir);
  if (proc_or_sys (dir))
    return rbdx_opt_err (why, whylen, "a file of /proc or /sys, not a log "
                         "or socket");
  return 0;
}

int
rbdx_log_path_check (const char *path, char *why, size_t whylen)
{
  struct stat st;

  if (stat (path, &st) != 0) {
    if (errno == ENOENT)
      return check_dir (path, why, whylen);
    return rbdx_opt_err (why, whylen, "%s", strerror (errno));
  }
  if (S_ISCHR (st.st_mode) && st.st_rdev == makedev (1, 3))
    return 0;   /* /dev/null: discard the log */
  if (!S_ISREG (st.st_mode))
    return rbdx_opt_err (why, whylen, "not a regular file");
  if (proc_or_sys (path))
    return rbdx_opt_err (why, whylen, "a file of /proc or /sys, not a log");
  return 0;
}

/* admin_socket: librados removes what is there before it binds. */
static int
socket_path_check (const char *path, char *why, size_t whylen)
{
  struct stat st;

  if (lstat (path, &st) != 0) {
    if (errno == ENOENT)
      return check_dir (path, why, whylen);
    return rbdx_opt_err (why, whylen, "%s", strerror (errno));
  }
  if (!S_ISSOCK (st.st_mode))
    return rbdx_opt_err (why, whylen, "exists and is not a socket (librados "
                         "would remove it to bind its own)");
  if (proc_or_sys (path))
    return rbdx_opt_err (why, whylen, "a file of /proc or /sys");
  return 0;
}

/* The value of metavariable @p var (@p n bytes), or NULL when rbdx
 * cannot know it ($pid, $cctid, $host, a configuration option, ...). */
static const char *
meta_value (const char *var, size_t n, const struct rbdx_ceph_meta *m,
            char *name, size_t namelen)
{
#define IS(s) (n == sizeof s - 1 && memcmp (var, s, n) == 0)
  if (IS ("type"))
    return "client";
  if (IS ("cluster"))
    return m ? m->cluster : NULL;
  if (IS ("id"))
    return m ? m->id : NULL;
  if (IS ("name") && m && m->id &&
      (size_t) snprintf (name, namelen, "client.%s", m->id) < namelen)
    return name;
  return NULL;
#undef IS
}

/* Whether metavariable @p var (@p n bytes), when rbdx does not know its
 * value, still expands to one file name component (no '/'): the
 * server's pid, the Ceph context's id, the short host name, and the
 * cluster name and cephx id when the caller passed none. */
static bool
meta_leaf (const char *var, size_t n)
{
  static const char *const leaf[] = {
    "pid", "cctid", "host", "cluster", "id", "name", "type",
  };

  for (size_t i = 0; i < sizeof leaf / sizeof leaf[0]; i++)
    if (n == strlen (leaf[i]) && memcmp (var, leaf[i], n) == 0)
      return true;
  return false;
}

/* @p in with the metavariables rbdx knows expanded (as Ceph's
 * md_config_t expands them: $NAME, NAME of [A-Za-z0-9_], or ${NAME});
 * the others are kept as they are.  *@p leaf is the offset in @p out of
 * the first one kept that meta_leaf allows (SIZE_MAX: none).
 * @return 0; -ENAMETOOLONG if @p out (@p len bytes) is too short;
 *         -EDOM for any other variable (a configuration option such as
 *         $run_dir: a directory rbdx cannot know). */
static int
expand (const char *in, const struct rbdx_ceph_meta *m, char *out,
        size_t len, size_t *leaf)
{
  size_t o = 0, n;

  *leaf = SIZE_MAX;
  while (*in) {
    const char *v = NULL, *var, *end, *from = in;
    char name[300];
    bool brace;

    n = 1;
    if (*in == '$') {
      brace = in[1] == '{';
      var = in + 1 + brace;
      for (end = var; (*end >= 'a' && *end <= 'z') || (*end >= 'A' &&
             *end <= 'Z') || (*end >= '0' && *end <= '9') || *end == '_';
           end++)
        ;
      if (end > var && (!brace || *end == '}')) {
        v = meta_value (var, (size_t) (end - var), m, name, sizeof name);
        if (v)
          from = v;
        else if (meta_leaf (var, (size_t) (end - var)) && *leaf == SIZE_MAX)
          *leaf = o;
        else if (!meta_leaf (var, (size_t) (end - var)))
          return -EDOM;
        n = v ? strlen (v) : (size_t) (end + brace - in);
        in = end + brace;
      }
      else
        in++;
    }
    else
      in++;
    if (o + n >= len)
      return -ENAMETOOLONG;
    memcpy (out + o, from, n);
    o += n;
  }
  out[o] = '\0';
  return 0;
}

int
rbdx_ceph_path_check (const char *name, const char *value,
                      const struct rbdx_ceph_meta *meta,
                      char *err, size_t errlen)
{
  bool log = rbdx_ceph_name_eq (name, "log_file");
  char path[4096], why[256];
  const char *slash;
  size_t leaf;
  int r;

  if (!log && !rbdx_ceph_name_eq (name, "admin_socket"))
    return 0;
  r = expand (value, meta, path, sizeof path, &leaf);
  slash = strrchr (path, '/');
  if (r == -ENAMETOOLONG)
    return rbdx_opt_err (err, errlen, "ceph.%s='%s': path too long", name,
                         value);
  /* What the others expand to is Ceph's: the directory must be given
   * literally, and is then checked alone. */
  if (r < 0 || (leaf != SIZE_MAX && slash && leaf < (size_t) (slash - path)))
    return rbdx_opt_err (err, errlen, "ceph.%s='%s': rbdx checks the path "
                         "before Ceph expands it: give the directory "
                         "literally ($pid, $cctid, $host, $cluster, $name, "
                         "$id and $type in the file name only)", name, value);
  if (leaf == SIZE_MAX)
    r = log ? rbdx_log_path_check (path, why, sizeof why)
            : socket_path_check (path, why, sizeof why);
  else
    r = check_dir (path, why, sizeof why);
  if (r < 0)
    return rbdx_opt_err (err, errlen, "ceph.%s='%s': %s", name, value, why);
  return 0;
}

/* Whether @p s can be Ceph's host option: what $host expands to in a
 * file name (Ceph src/common/config.cc, expand_meta: $host is the host
 * option, else the short host name). */
static bool
host_name_valid (const char *s)
{
  return *s && *s != '.' && *s != '-' &&
    strspn (s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
            "0123456789-_.") == strlen (s);
}

int
rbdx_options_set_ceph (struct rbdx_options *o, const char *name,
                       const char *value, char *err, size_t errlen)
{
  struct rbdx_ceph_option *n;
  const char *why;
  size_t i;

  if (*name == '\0')
    return rbdx_opt_err (err, errlen, "'ceph.' needs an option name, "
                         "as in ceph.rados_osd_op_timeout=30");
  if (strchr (name, ' ') || strchr (name, '.'))
    return rbdx_opt_err (err, errlen, "ceph.%s: a Ceph option name has no "
                         "spaces or dots (use underscores, as in "
                         "ceph.rbd_cache)", name);
  /* Never the value: it is the secret. */
  if ((why = rbdx_ceph_option_refused (name)))
    return rbdx_opt_err (err, errlen, "ceph.%s= refused: %s", name, why);
  /* $cluster names files (/etc/ceph/$cluster.$name.keyring): as cluster=. */
  if (rbdx_ceph_name_eq (name, "cluster") && !rbdx_cluster_name_valid (value))
    return rbdx_opt_err (err, errlen, "ceph.cluster='%s': a Ceph cluster name "
                         "is letters, digits, '_' and '-' only", value);
  /* $host names files too (ceph.log_file=/var/log/ceph/$host.log): one
   * holding a '/' or starting with '.' would lead out of the directory
   * rbdx checked. */
  if (rbdx_ceph_name_eq (name, "host") && !host_name_valid (value))
    return rbdx_opt_err (err, errlen, "ceph.host='%s': a host name is "
                         "letters, digits, '-', '_' and '.', not first",
                         value);
  for (i = 0; i < o->nceph; i++) {
    if (!rbdx_ceph_name_eq (o->ceph[i].given, name))
      continue;
    if (strcmp (o->ceph[i].given, name) == 0)
      return rbdx_opt_err (err, errlen, "ceph.%s= given twice", name);
    return rbdx_opt_err (err, errlen, "ceph.%s= and ceph.%s= both set the "
                         "Ceph option %s", o->ceph[i].given, name,
                         o->ceph[i].name);
  }
  n = realloc (o->ceph, (o->nceph + 1) * sizeof *n);
  if (!n)
    return -ENOMEM;
  o->ceph = n;
  n += o->nceph;
  n->given = strdup (name);
  n->name = strdup (name);
  n->value = strdup (value);
  if (!n->given || !n->name || !n->value) {
    free (n->given);
    free (n->name);
    free (n->value);
    return -ENOMEM;
  }
  rbdx_ceph_name_normalize (n->name);
  o->nceph++;
  return 0;
}

int
rbdx_options_check_ceph (const struct rbdx_options *o, char *err,
                         size_t errlen)
{
  const struct { const char *key; const char *value; } first[] = {
    { "keyring", o->keyring }, { "mon_host", o->mon_host },
    { "cluster", o->cluster },
  };
  struct rbdx_ceph_meta meta = {
    .cluster = o->cluster ? o->cluster : "ceph",
    .id = rbdx_options_id (o),
  };
  static const char *const env_paths[] = { "log_file", "admin_socket" };
  size_t i, j;
  int r;

  /* $CEPH_ARGS sets them too (rados_conf_parse_env applies it, and
   * librados opens the log file then): checked as ceph.NAME=. */
  for (j = 0; j < sizeof env_paths / sizeof env_paths[0]; j++) {
    char v[4096], why[4400];

    r = rbdx_ceph_args_option (getenv ("CEPH_ARGS"), env_paths[j], v,
                               sizeof v);
    if (r == -ENAMETOOLONG)
      return rbdx_opt_err (err, errlen, "$CEPH_ARGS: the value of --%s is "
                           "too long", env_paths[j]);
    if (r == 1 &&
        rbdx_ceph_path_check (env_paths[j], v, &meta, why, sizeof why) < 0)
      return rbdx_opt_err (err, errlen, "$CEPH_ARGS sets %s: %s",
                           env_paths[j], why);
  }
  for (i = 0; i < o->nceph; i++) {
    for (j = 0; j < sizeof first / sizeof first[0]; j++)
      if (first[j].value && strcmp (o->ceph[i].name, first[j].key) == 0)
        return rbdx_opt_err (err, errlen, "%s= and ceph.%s= both set the "
                             "Ceph option %s: give one", first[j].key,
                             o->ceph[i].given, first[j].key);
    r = rbdx_ceph_path_check (o->ceph[i].given, o->ceph[i].value, &meta,
                              err, errlen);
    if (r < 0)
      return r;
  }
  return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/nbd-compat.c: the rbd-nbd personality's command line parser
 * (see nbd-compat.h).  Pure: no I/O.  The grammar follows Ceph's
 * src/tools/rbd_nbd/rbd-nbd.cc (parse_args) and src/common/ceph_argparse.cc
 * (option matching); the messages are rbd-nbd's where it has one. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/options.h"
#include "rbdx/printable.h"
#include "rbdx/spec.h"
#include "ceph-bools.h"
#include "nbd-compat.h"
#include "target.h"

enum kind { FLAG, ARG };

enum id {
  O_HELP, O_VERSION, O_DEVICE, O_IO_TIMEOUT, O_TIMEOUT, O_NBDS_MAX,
  O_MAX_PART, O_QUIESCE, O_QUIESCE_HOOK, O_READ_ONLY, O_REATTACH,
  O_EXCLUSIVE, O_NOTRIM, O_FORMAT, O_PRETTY, O_TRY_NETLINK, O_SHOW_COOKIE,
  O_COOKIE, O_SNAP_ID, O_ENC_FORMAT, O_ENC_FILE, O_FOREGROUND, O_SETUSER,
  O_SETGROUP, O_NO_MON_CONFIG, O_CONNECTIONS,
  /* Ceph's own options that rbdx turns into plugin parameters. */
  C_ID, C_NAME, C_CLUSTER, C_CONF, C_MON_HOST, C_KEYRING, C_KEYFILE,
  C_LOG_FILE, C_KEY,
};

static const struct opt {
  const char *names[3];
  enum kind kind;
  enum id id;
} opts[] = {
  { { "-h", "--help" }, FLAG, O_HELP },
  { { "-v", "--version" }, FLAG, O_VERSION },
  { { "--device" }, ARG, O_DEVICE },
  { { "--io-timeout" }, ARG, O_IO_TIMEOUT },
  { { "--timeout" }, ARG, O_TIMEOUT },
  { { "--nbds_max" }, ARG, O_NBDS_MAX },
  { { "--max_part" }, ARG, O_MAX_PART },
  { { "--quiesce" }, FLAG, O_QUIESCE },
  { { "--quiesce-hook" }, ARG, O_QUIESCE_HOOK },
  { { "--read-only" }, FLAG, O_READ_ONLY },
  { { "--reattach-timeout" }, ARG, O_REATTACH },
  { { "--exclusive" }, FLAG, O_EXCLUSIVE },
  { { "--notrim" }, FLAG, O_NOTRIM },
  { { "--format" }, ARG, O_FORMAT },
  { { "--pretty-format" }, FLAG, O_PRETTY },
  { { "--try-netlink" }, FLAG, O_TRY_NETLINK },
  { { "--show-cookie" }, FLAG, O_SHOW_COOKIE },
  { { "--cookie" }, ARG, O_COOKIE },
  { { "--snap-id" }, ARG, O_SNAP_ID },
  { { "--encryption-format" }, ARG, O_ENC_FORMAT },
  { { "--encryption-passphrase-file" }, ARG, O_ENC_FILE },
  /* global_init's (Ceph src/global/global_init.cc). */
  { { "-f", "-d" }, FLAG, O_FOREGROUND },
  { { "--setuser" }, ARG, O_SETUSER },
  { { "--setgroup" }, ARG, O_SETGROUP },
  /* global_init's flag, not a configuration option (Ceph's config has no
   * option no_mon_config: rados_conf_set answers ENOENT). */
  { { "--no-mon-config" }, FLAG, O_NO_MON_CONFIG },
  /* rbdx's own, not rbd-nbd's: how many connections (default: CPUs). */
  { { "--connections" }, ARG, O_CONNECTIONS },
  /* ceph_argparse_early_args and the config's own short names. */
  { { "--id" }, ARG, C_ID },
  { { "--name", "-n" }, ARG, C_NAME },
  { { "--cluster" }, ARG, C_CLUSTER },
  { { "--conf", "-c" }, ARG, C_CONF },
  { { "--mon_host", "-m" }, ARG, C_MON_HOST },
  { { "--keyring", "-k" }, ARG, C_KEYRING },
  { { "--keyfile" }, ARG, C_KEYFILE },
  { { "--log_file" }, ARG, C_LOG_FILE },
  { { "--key" }, ARG, C_KEY },
};

/* Families of Ceph configuration options (names as in Ceph's
 * src/common/options/): "--NAME=VALUE" and "--NAME VALUE" with a name
 * that starts so is a Ceph option, passed on as ceph.NAME=VALUE; Ceph
 * itself refuses a name it does not know when the server connects.
 * Anything else is an option rbd-nbd does not know either. */
static const char *const ceph_families[] = {
  "admin_socket", "auth_", "cephx_", "client_", "clog_", "crush_", "crypto_",
  "debug_", "err_to_", "fsid", "heartbeat_", "immutable_object_cache_",
  "librados_", "lockdep", "log_", "mon_", "ms_", "objecter_",
  "osd_", "perf", "public_", "rados_", "rbd_", "run_dir", "throttler_", NULL
};

static const char *const commands[] = {
  [RBDX_NBD_MAP] = "map", [RBDX_NBD_UNMAP] = "unmap",
  [RBDX_NBD_ATTACH] = "attach", [RBDX_NBD_DETACH] = "detach",
  [RBDX_NBD_LIST] = "list-mapped",
};

static int
fail (struct rbdx_nbd_args *a, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (a->msg, sizeof a->msg, fmt, ap);
  va_end (ap);
  return -EINVAL;
}

/* @p s for a message: escaped by rbdx_printable (a hostile value must
 * not write lines of its own), cut to fit 320 bytes. */
#define Q(s) rbdx_printable ((s), (char[320]) { 0 }, 320)

/* The name part of @p arg up to '=' with '-' as '_' after the first two
 * characters (ceph_argparse.cc, dashes_to_underscores), into @p buf. */
static void
normalize (const char *arg, char *buf, size_t len)
{
  size_t i;

  for (i = 0; arg[i] && arg[i] != '=' && i + 1 < len; i++)
    buf[i] = i >= 2 && arg[i] == '-' ? '_' : arg[i];
  buf[i] = '\0';
}

static const struct opt *
find_opt (const char *arg)
{
  char n[128], m[128];

  normalize (arg, n, sizeof n);
  for (size_t k = 0; k < sizeof opts / sizeof *opts; k++)
    for (int j = 0; j < 3 && opts[k].names[j]; j++) {
      normalize (opts[k].names[j], m, sizeof m);
      if (strcmp (n, m) == 0)
        return &opts[k];
    }
  return NULL;
}

static enum rbdx_nbd_cmd
find_cmd (const char *s)
{
  for (int c = RBDX_NBD_MAP; c <= RBDX_NBD_LIST; c++)
    if (strcmp (s, commands[c]) == 0)
      return (enum rbdx_nbd_cmd) c;
  return RBDX_NBD_NONE;
}

/* A Ceph option of a known family: "--" and [a-z0-9_-]. */
static bool
is_ceph_option (const char *arg)
{
  char n[128];

  if (strncmp (arg, "--", 2) != 0)
    return false;
  normalize (arg, n, sizeof n);
  if (strlen (n) < 3 || strlen (n) >= sizeof n - 1)
    return false;
  for (const char *p = n + 2; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
      return false;
  for (int i = 0; ceph_families[i]; i++)
    if (strncmp (n + 2, ceph_families[i], strlen (ceph_families[i])) == 0)
      return true;
  return false;
}

/* "--no-NAME" (no '=') for a bool NAME (ceph-bools.h): NAME=false. */
static bool
no_bool (const char *arg)
{
  char n[128];

  normalize (arg, n, sizeof n);
  return !strchr (arg, '=') && strncmp (n, "--no_", 5) == 0 &&
         rbdx_ceph_is_bool (n + 5);
}

const char *
rbdx_nbd_param (const struct rbdx_nbd_args *a, const char *key)
{
  size_t k = strlen (key);

  for (size_t i = 0; i < a->nparams; i++)
    if (strncmp (a->params[i], key, k) == 0 && a->params[i][k] == '=')
      return a->params[i] + k + 1;
  return NULL;
}

/* KEY=VALUE into a->params, replacing an earlier KEY. */
static int
add_param (struct rbdx_nbd_args *a, const char *opt, const char *key,
           const char *value)
{
  size_t k = strlen (key), i;
  char *p;

  if (!*value)
    return fail (a, "rbd-nbd: %s needs a value", Q (opt));
  if (rbdx_spec_has_unsafe_char (value))
    return fail (a, "rbd-nbd: the value of %s holds a control character "
                 "or a byte that is not UTF-8", Q (opt));
  if (asprintf (&p, "%s=%s", key, value) < 0)
    return -ENOMEM;
  for (i = 0; i < a->nparams; i++)
    if (strncmp (a->params[i], key, k) == 0 && a->params[i][k] == '=')
      break;
  if (i == a->nparams) {
    if (a->nparams == RBDX_NBD_MAX_PARAMS) {
      free (p);
      return fail (a, "rbd-nbd: too many Ceph options (at most %d)", RBDX_NBD_MAX_PARAMS);
    }
    a->nparams++;
  }
  else
    free (a->params[i]);
  a->params[i] = p;
  return 0;
}

/* A whole number for @p opt (Ceph's strict_strtol, then rbd-nbd's range
 * check; @p what names it in rbd-nbd's message). */
static int
number (struct rbdx_nbd_args *a, const char *what, const char *v,
        long long lo, long long hi, const char *range, long long *out)
{
  char *end;
  long long n;

  errno = 0;
  n = strtoll (v, &end, 10);
  if (errno || end == v || *end)
    return fail (a, "rbd-nbd: The option value '%s' is invalid", Q (v));
  if (n < lo || n > hi)
    return fail (a, "rbd-nbd: Invalid argument for %s%s!", what, range);
  *out = n;
  return 0;
}

static bool
cookie_chars_ok (const char *c)
{
  size_t n = strlen (c);

  if (n == 0 || n > RBDX_NBD_COOKIE_MAX || strncmp (c, "rbdx:", 5) == 0)
    return false;
  for (; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
          (*c >= '0' && *c <= '9') || strchr ("._:+-", *c)))
      return false;
  return true;
}

/* One option of the table with its value (NULL for a flag). */
static int
apply (struct rbdx_nbd_args *a, const struct opt *o, const char *arg,
       const char *v, int *nformats, int *nfiles)
{
  long long n;
  int r = 0;

  switch (o->id) {
  case O_HELP: a->cmd = RBDX_NBD_HELP; break;
  case O_VERSION: a->cmd = RBDX_NBD_VERSION; break;
  case O_DEVICE: a->device = v; break;
  case O_IO_TIMEOUT: case O_TIMEOUT:
    r = number (a, o->id == O_TIMEOUT ? "timeout" : "io-timeout", v, 0, 86400,
                "", &n);
    if (r == 0 && o->id == O_TIMEOUT)
      snprintf (a->warning, sizeof a->warning,
                "rbd-nbd: --timeout is deprecated (use --io-timeout)");
    a->io_timeout = (int) n;
    break;
  case O_REATTACH:
    r = number (a, "reattach-timeout", v, 0, 86400, "", &n);
    a->reattach_timeout = (int) n;
    break;
  case O_NBDS_MAX:
    /* Bounded by what the module takes: nbds_max_ok, after all options. */
    r = number (a, "nbds_max", v, 0, INT_MAX, "", &n);
    a->nbds_max = (int) n;
    break;
  case O_MAX_PART:
    r = number (a, "max_part", v, 0, 255, "(0~255)", &n);
    a->max_part = (int) n;
    break;
  case O_CONNECTIONS:
    r = number (a, "connections", v, 1, 16, "(1~16)", &n);
    a->connections = (unsigned) n;
    break;
  case O_SNAP_ID:
    /* Ceph's snapshot ids; the plugin refuses CEPH_NOSNAP and above. */
    r = number (a, "snap-id", v, 0, LLONG_MAX, "", &n);
    a->snap_id = n;
    break;
  case O_QUIESCE: a->quiesce = true; break;
  case O_QUIESCE_HOOK:
    /* The server checks the file (quiesce-hook.h); a relative path or a
     * control character is refused here, before anything starts. */
    if (v[0] != '/' || rbdx_spec_has_unsafe_char (v))
      return fail (a, "rbd-nbd: --quiesce-hook %s: an absolute path without "
                   "control characters is needed", Q (v));
    a->quiesce_hook = v;
    break;
  case O_READ_ONLY: a->read_only = true; break;
  case O_EXCLUSIVE: a->exclusive = true; break;
  case O_NOTRIM: a->notrim = true; break;
  case O_FORMAT: a->format_text = v; break;
  case O_PRETTY: a->pretty = true; break;
  case O_TRY_NETLINK: a->try_netlink = true; break;
  case O_SHOW_COOKIE: a->show_cookie = true; break;
  case O_COOKIE:
    if (!cookie_chars_ok (v))
      return fail (a, "rbd-nbd: invalid cookie '%s' (rbdx takes 1 to %d of "
                   "A-Z a-z 0-9 . _ : + -, not starting \"rbdx:\")",
                   Q (v), RBDX_NBD_COOKIE_MAX);
    a->cookie = v;
    break;
  case O_ENC_FORMAT:
    if (strcmp (v, "luks") && strcmp (v, "luks1") && strcmp (v, "luks2"))
      return fail (a, "rbd-nbd: Invalid encryption format");
    if (*nformats == RBDX_ENCRYPTION_MAX)
      return fail (a, "rbd-nbd: rbdx loads at most %d encryption formats (the "
                   "image's own and its parents')", RBDX_ENCRYPTION_MAX);
    a->encryption_format[(*nformats)++] = v;
    break;
  case O_ENC_FILE:
    if (rbdx_spec_has_unsafe_char (v))
      return fail (a, "rbd-nbd: the value of %s holds a control character "
                   "or a byte that is not UTF-8", Q (arg));
    if (*nfiles == RBDX_ENCRYPTION_MAX)
      return fail (a, "rbd-nbd: rbdx takes at most %d passphrase files (the "
                   "image's own and its parents')", RBDX_ENCRYPTION_MAX);
    a->passphrase_file[(*nfiles)++] = v;
    break;
  case O_FOREGROUND: a->foreground = true; break;
  case O_NO_MON_CONFIG: a->no_mon_config = true; break;
  case O_SETUSER: case O_SETGROUP:
    return fail (a, "rbd-nbd: %s is not supported by rbdx (the mapper runs as "
                 "root: the kernel's NBD netlink interface needs it)", Q (arg));
  case C_ID: r = add_param (a, arg, "id", v); break;
  case C_NAME:
    if (strncmp (v, "client.", 7) != 0 || !v[7])
      return fail (a, "rbd-nbd: --name '%s': rbdx connects as a Ceph client, "
                   "give client.ID", Q (v));
    r = add_param (a, arg, "id", v + 7);
    break;
  case C_CLUSTER:
    /* librados makes it a path component (/etc/ceph/$cluster.conf). */
    if (*v && !rbdx_spec_has_unsafe_char (v) && !rbdx_cluster_name_valid (v))
      return fail (a, "rbd-nbd: invalid cluster name '%s' (letters, digits, '_' "
                   "and '-' only)", Q (v));
    r = add_param (a, arg, "cluster", v);
    break;
  case C_CONF: r = add_param (a, arg, "conf", v); break;
  case C_MON_HOST: r = add_param (a, arg, "mon_host", v); break;
  case C_KEYRING: r = add_param (a, arg, "keyring", v); break;
  case C_KEYFILE: r = add_param (a, arg, "ceph.keyfile", v); break;
  case C_LOG_FILE:
    r = add_param (a, arg, "ceph.log_file", v);
    a->log_file = v;
    break;
  case C_KEY:
    return fail (a, "rbd-nbd: --key is refused by rbdx: a secret on the command "
                 "line is readable by every user (/proc/PID/cmdline); give "
                 "--keyfile or --keyring");
  }
  return r;
}

/* The spec argument: hostile until proved otherwise. */
static int
check_spec (struct rbdx_nbd_args *a, const char *s)
{
  const char *why = NULL, *pool = rbdx_nbd_param (a, "ceph.rbd_default_pool");
  char text[1100];

  if (!*s || s[0] == '-' || strchr (s, '=') || rbdx_spec_has_unsafe_char (s))
    why = "a spec is [pool/[namespace/]]image[@snap], not empty, not starting "
          "with '-', without '=', control characters or bytes that are not "
          "UTF-8";
  else if (rbdx_target_is_uri (s))
    why = "an image spec, not a URI";
  if (!why) {
    /* rbd-nbd takes the pool a spec does not name from rbd_default_pool:
     * a pool name, which must not bring a namespace, a snapshot or an
     * option of its own into the spec. */
    if (pool && !strchr (s, '/') &&
        (pool[0] == '-' || strpbrk (pool, "/@=") || rbdx_target_is_uri (pool)))
      return fail (a, "rbd-nbd: invalid rbd_default_pool '%s' for spec '%s' (a "
                   "pool name: not starting with '-', without '/', '@' or '=')",
                   Q (pool), Q (s));
    if (pool && !strchr (s, '/'))
      snprintf (text, sizeof text, "%s/%s", pool, s);
    else
      snprintf (text, sizeof text, "%s", s);
    if (rbdx_target_canonical (text, a->target, sizeof a->target, &why) == 0)
      return 0;
  }
  a->target[0] = '\0';
  return fail (a, "rbd-nbd: invalid spec '%s' (%s)", Q (s), why);
}

static int
check_device (struct rbdx_nbd_args *a, const char *d)
{
  a->device_index = -1;
  if (strncmp (d, "/dev/nbd", 8) == 0)
    a->device_index = rbdx_device_index (d);
  if (a->device_index < 0)
    return fail (a, "rbd-nbd: invalid device path: %s (expected /dev/nbd{num})", Q (d));
  return 0;
}

/* --nbds_max against what the nbd module's init accepts (Linux
 * drivers/block/nbd.c, nbd_init: -EINVAL when nbds_max > 1 <<
 * (MINORBITS - part_shift), MINORBITS 20, part_shift = fls (max_part),
 * the module's max_part 16 unless --max_part says otherwise), so that
 * modprobe never fails on it: at most 32768 devices by default, 2^20
 * with --max_part 0. */
static int
nbds_max_ok (struct rbdx_nbd_args *a)
{
  int part = a->max_part >= 0 ? a->max_part : 16, shift = 0;
  long long cap;

  while (shift < 31 && (1 << shift) <= part)
    shift++;                   /* fls (part) */
  cap = 1LL << (20 - shift);
  if (a->nbds_max > cap)
    return fail (a, "rbd-nbd: Invalid argument for nbds_max(0~%lld with "
                 "max_part=%d)! (the nbd module takes at most 2^20 minors, "
                 "%d per device)", cap, part, 1 << shift);
  return 0;
}

/* What rbdx does not do (yet) for map and attach, refused clearly rather
 * than ignored: each would change what the device does. */
static int
refuse_unsupported (struct rbdx_nbd_args *a)
{
  if (rbdx_nbd_param (a, "ceph.keyfile") && rbdx_nbd_param (a, "keyring"))
    return fail (a, "rbd-nbd: --keyfile and --keyring: give one (the key file, or "
                 "a keyring file that holds the key)");
  if (a->no_mon_config)
    return fail (a, "rbd-nbd: --no-mon-config is not supported by rbdx: its "
                 "server is a librados client, which always takes the "
                 "monitors' configuration");
  return 0;
}

int
rbdx_nbd_parse (int argc, char **argv, struct rbdx_nbd_args *a)
{
  const char *rest[64];
  int nrest = 0, nformats = 0, nfiles = 0, r;
  int k = 0;

  memset (a, 0, sizeof *a);
  a->device_index = -1;
  a->io_timeout = -1;
  a->reattach_timeout = 30;
  a->nbds_max = -1;
  a->max_part = -1;
  a->snap_id = -1;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *eq, *v = NULL;
    const struct opt *o = arg[0] == '-' && arg[1] ? find_opt (arg) : NULL;

    if (o) {
      eq = strchr (arg, '=');
      if (o->kind == FLAG && eq)
        o = NULL;               /* "--read-only=x" is no flag of rbd-nbd's */
      else if (o->kind == ARG) {
        if (eq)
          v = eq + 1;
        else if (i + 1 < argc)
          v = argv[++i];
        else
          return fail (a, "Option %s requires an argument.", Q (arg));
      }
    }
    if (o) {
      r = apply (a, o, arg, v, &nformats, &nfiles);
      if (r < 0)
        return r;
      if (a->cmd == RBDX_NBD_HELP || a->cmd == RBDX_NBD_VERSION)
        return 0;
      continue;
    }
    if (is_ceph_option (arg) || no_bool (arg)) {
      char n[128], key[140];
      normalize (arg, n, sizeof n);
      eq = strchr (arg, '=');
      if (!eq && no_bool (arg)) {
        snprintf (key, sizeof key, "ceph.%s", n + 5);
        v = "false";            /* "--no-NAME" of a bool */
      }
      else {
        snprintf (key, sizeof key, "ceph.%s", n + 2);
        if (eq)
          v = eq + 1;
        else if (rbdx_ceph_is_bool (n + 2))
          v = "true";           /* a bool never takes the next word */
        else if (i + 1 < argc && argv[i + 1][0] != '-' &&
                 find_cmd (argv[i + 1]) == RBDX_NBD_NONE)
          v = argv[++i];
        else
          v = "true";           /* given alone: taken for a bool */
      }
      r = add_param (a, arg, key, v);
      if (r < 0)
        return r;
      continue;
    }
    /* The subcommand, its argument, and what rbd-nbd leaves over. */
    if (nrest == (int) (sizeof rest / sizeof *rest))
      return fail (a, "rbd-nbd: unknown args: %s", Q (arg));
    rest[nrest++] = arg;
  }

  if ((r = nbds_max_ok (a)) < 0)
    return r;
  if (nformats == 0 && nfiles > 0) {
    for (; nformats < nfiles; nformats++)
      a->encryption_format[nformats] = "luks";    /* rbd-nbd's default */
  }
  if (nformats != nfiles)
    return fail (a, "rbd-nbd: Encryption formats count does not match "
                 "passphrase files count");
  a->nenc = nformats;
  if (nrest == 0)
    return fail (a, "rbd-nbd: must specify command");
  a->cmd = find_cmd (rest[k]);
  if (a->cmd == RBDX_NBD_NONE)
    return fail (a, "rbd-nbd: unknown command: %s", Q (rest[k]));
  k++;
  switch (a->cmd) {
  case RBDX_NBD_ATTACH:
    if (!a->device)
      return fail (a, "rbd-nbd: must specify device to attach");
    /* fall through */
  case RBDX_NBD_MAP:
    if (k == nrest)
      return fail (a, "rbd-nbd: must specify image-or-snap-spec");
    a->spec = rest[k++];
    if ((r = check_spec (a, a->spec)) < 0)
      return r;
    if (a->device && (r = check_device (a, a->device)) < 0)
      return r;
    break;
  case RBDX_NBD_UNMAP:
  case RBDX_NBD_DETACH:
    if (k == nrest)
      return fail (a, "rbd-nbd: must specify nbd device or image-or-snap-spec");
    if (strncmp (rest[k], "/dev/", 5) == 0) {
      a->device = rest[k++];
      if ((r = check_device (a, a->device)) < 0)
        return r;
    }
    else {
      a->spec = rest[k++];
      if ((r = check_spec (a, a->spec)) < 0)
        return r;
    }
    break;
  case RBDX_NBD_LIST:
    if (a->format_text) {
      if (strcmp (a->format_text, "json") == 0)
        a->format = RBDX_NBD_JSON;
      else if (strcmp (a->format_text, "xml") == 0)
        a->format = RBDX_NBD_XML;
      else if (*a->format_text && strcmp (a->format_text, "plain") != 0)
        return fail (a, "rbd-nbd: invalid output format: %s", Q (a->format_text));
    }
    break;
  default:
    break;
  }
  if (a->snap_id >= 0 && a->spec && strchr (a->target, '@'))
    return fail (a, "rbd-nbd: use either snapname or snapid, not both");
  if (k < nrest)
    return fail (a, "rbd-nbd: unknown args: %s", Q (rest[k]));
  if (a->cmd == RBDX_NBD_MAP || a->cmd == RBDX_NBD_ATTACH)
    return refuse_unsupported (a);
  return 0;
}

void
rbdx_nbd_args_free (struct rbdx_nbd_args *a)
{
  for (size_t i = 0; i < a->nparams; i++)
    free (a->params[i]);
  a->nparams = 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/rbdx.c: the rbdx mapper's command line (see rbdx.pod):
 *   rbdx map [OPTIONS] SPEC|URI [KEY=VALUE...]
 *   rbdx unmap [--force] DEVICE|SPEC|URI
 *   rbdx attach [OPTIONS] DEVICE [SPEC|URI [KEY=VALUE...]]
 *   rbdx list-mapped [--format plain|json]
 * Exit status: 0 done, 1 failed (message on stderr), 2 bad usage.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rbdx/spec.h"
#include "conninfo.h"
#include "links.h"
#include "netlink.h"
#include "state.h"
#include "status.h"
#include "supervise.h"

#define MAX_MAPPED 1024

int rbdx_lock_fd = -1;      /* see lock_run_dir; closed by the supervisor */

static const char *prog = "rbdx";

static void __attribute__ ((noreturn, format (printf, 2, 3)))
die (int status, const char *fmt, ...)
{
  va_list ap;
  fprintf (stderr, "%s: ", prog);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (status);
}

static void
usage (FILE *f)
{
  fprintf (f,
    "usage: rbdx map [OPTIONS] [pool/[namespace/]]image[@snap] [KEY=VALUE...]\n"
    "       rbdx map [OPTIONS] nbd://HOST[:PORT]/EXPORT | nbd+unix:///EXPORT?socket=PATH\n"
    "       rbdx unmap [--force] /dev/nbdX | SPEC | URI\n"
    "       rbdx map|unmap --connection-info FILE|-\n"
    "       rbdx attach [OPTIONS] /dev/nbdX [SPEC|URI [KEY=VALUE...]]\n"
    "       rbdx list-mapped [--format plain|json]      (alias: list)\n"
    "       rbdx status [/dev/nbdX|SPEC|URI] [--format plain|json]\n"
    "       rbdx -h | --help | --version\n"
    "map options:\n"
    "  -c, --connections N      NBD connections (default: CPUs, at most 16)\n"
    "  -r, --read-only          map read-only\n"
    "      --exclusive          hold the image's exclusive lock (exclusive=true)\n"
    "  -d, --device /dev/nbdX   use this device (default: a free one)\n"
    "      --io-timeout S       kernel request timeout, seconds (default 60; 0: the\n"
    "                           block layer's 30 s)\n"
    "      --reattach-timeout S how long I/O waits for a dead connection to be\n"
    "                           replaced, seconds (default 30)\n"
    "      --resize-poll S      NBD URI: ask the server for its size every S seconds\n"
    "                           (default 5); image spec: any S > 0 reads the size file\n"
    "                           5 times a second; 0: do not follow resizes\n"
    "      --id NAME, --conf FILE, --keyring FILE   cephx user, ceph.conf, keyring\n"
    "  -o, --option KEY=VALUE   any rbdx plugin parameter (nbdkit-rbdx-plugin(1));\n"
    "                           a bare KEY=VALUE after the spec works too\n"
    "      --engine builtin|nbdkit  what serves the kernel's connections: the\n"
    "                           built-in engine (default) or nbdkit with the plugin\n"
    "      --format plain|json  output format (map, attach, list-mapped, status)\n"
    "      --connection-info FILE|-  map (or unmap) the volume a Cinder/os-brick RBD\n"
    "                           connection_info describes; prints os-brick's device\n"
    "                           info JSON\n"
    "unmap options:\n"
    "      --force              unmap even if the device is mounted or open\n"
    "See rbdx(8).\n");
}

static bool
is_uri (const char *t)
{
  return strstr (t, "://") != NULL;
}

/* The kernel needs a plain socket: no TLS (nbds://), no ssh tunnel. */
static bool
uri_supported (const char *t)
{
  return strncmp (t, "nbd://", 6) == 0 || strncmp (t, "nbd+unix://", 11) == 0;
}

/* Canonical form of an image spec, or the URI unchanged.  0 or -1. */
static int
canonical (const char *text, char *buf, size_t len, const char **why)
{
  struct rbdx_spec spec = { 0 };

  if (is_uri (text)) {
    if (!uri_supported (text)) {
      *why = "only nbd:// and nbd+unix:// URIs can be mapped (the kernel "
             "cannot speak TLS or go through ssh)";
      return -1;
    }
    if (strlen (text) >= len) {
      *why = "too long";
      return -1;
    }
    snprintf (buf, len, "%s", text);
    return 0;
  }
  if (rbdx_spec_parse (text, NULL, &spec, why) < 0)
    return -1;
  /* Never map a name cut short: it would be another image's. */
  if (rbdx_spec_format (&spec, buf, len) >= len) {
    rbdx_spec_free (&spec);
    *why = "too long";
    return -1;
  }
  rbdx_spec_free (&spec);
  return 0;
}

/* "/dev/nbd3" or "nbd3" -> 3; -1 when @p text is no device name. */
static int
device_index (const char *text)
{
  const char *p = text;
  char *end;
  long i;

  if (strncmp (p, "/dev/", 5) == 0)
    p += 5;
  if (strncmp (p, "nbd", 3) != 0)
    return -1;
  i = strtol (p + 3, &end, 10);
  if (end == p + 3 || *end || i < 0 || i > 1 << 20)
    return -1;
  return (int) i;
}

static unsigned
parse_seconds (const char *name, const char *v, unsigned max)
{
  char *end;
  unsigned long n;

  errno = 0;
  n = strtoul (v, &end, 10);
  if (errno || end == v || *end || v[0] == '-' || n > max)
    die (2, "%s must be a whole number of seconds from 0 to %u, not '%s'", name, max, v);
  return (unsigned) n;
}


/* Remove the private directories (socket, logs) of supervisors that were
 * killed and so could not clean up. */
static void
remove_stale_dirs (void)
{
  DIR *d = opendir (rbdx_run_dir ());
  struct dirent *e;

  if (!d)
    return;
  while ((e = readdir (d))) {
    char path[4096], file[4200];
    long pid;
    if (sscanf (e->d_name, "sup-%ld", &pid) != 1 || rbdx_pid_alive ((pid_t) pid))
      continue;
    snprintf (path, sizeof path, "%s/%s", rbdx_run_dir (), e->d_name);
    for (const char **f = (const char *[]) { "nbd.sock", "server.log", "supervisor.log", "size", NULL };
         *f; f++) {
      snprintf (file, sizeof file, "%s/%s", path, *f);
      unlink (file);
    }
    rmdir (path);
  }
  closedir (d);
}

/* Every live mapping (stale state files of dead supervisors whose device
 * is no longer connected are removed on the way). */
static int
load_mapped (struct rbdx_state *out, int max)
{
  int idx[MAX_MAPPED], n = rbdx_state_list (idx, MAX_MAPPED), k = 0;

  remove_stale_dirs ();

  for (int i = 0; i < n && k < max; i++) {
    if (rbdx_state_load (idx[i], &out[k]) < 0)
      continue;
    if (!rbdx_proc_is (out[k].supervisor, out[k].supervisor_start) &&
        !rbdx_device_connected (idx[i])) {
      rbdx_state_remove (idx[i]);
      continue;
    }
    k++;
  }
  return k;
}

/* The mapping of @p target (device, spec or URI), or NULL. */
static struct rbdx_state *
find_mapped (const char *target, struct rbdx_state *all, int n)
{
  char canon[RBDX_TARGET_MAX];
  const char *why;
  int idx = device_index (target);

  for (int i = 0; i < n; i++) {
    if (idx >= 0 && all[i].index == idx)
      return &all[i];
    if (idx < 0 && canonical (target, canon, sizeof canon, &why) == 0 &&
        strcmp (all[i].target, canon) == 0)
      return &all[i];
  }
  return NULL;
}

static void
print_mapping (bool json, int index, const char *target, unsigned conns,
               long server, long sup, bool read_only)
{
  if (!json) {
    printf ("/dev/nbd%d\n", index);
    return;
  }
  printf ("{\"device\":\"/dev/nbd%d\",\"%s\":", index, is_uri (target) ? "uri" : "image");
  rbdx_json_string (stdout, target);
  printf (",\"connections\":%u,\"read_only\":%s,\"server_pid\":", conns,
          read_only ? "true" : "false");
  if (server > 0)
    printf ("%ld", server);
  else
    printf ("null");
  printf (",\"supervisor_pid\":%ld}\n", sup);
}

static unsigned
default_connections (void)
{
  long n = sysconf (_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 16 ? 16 : (unsigned) n;
}

static void
add_param (struct rbdx_map_opts *o, const char *key, const char *value)
{
  char *p, *abs = NULL;

  /* The supervisor runs in /: make file names absolute now. */
  if (!*key) {
    const char *eq = strchr (value, '=');
    size_t klen = eq ? (size_t) (eq - value) : 0;
    if (eq && eq[1] && eq[1] != '/' &&
        ((klen == 4 && !strncmp (value, "conf", 4)) ||
         (klen == 7 && !strncmp (value, "keyring", 7)))) {
      char *real = realpath (eq + 1, NULL);
      if (!real)
        die (1, "%s: %s", value, strerror (errno));
      if (asprintf (&abs, "%.*s=%s", (int) klen, value, real) < 0)
        die (1, "out of memory");
      free (real);
      value = abs;
    }
  }
  else if ((!strcmp (key, "conf=") || !strcmp (key, "keyring=")) && value[0] != '/') {
    abs = realpath (value, NULL);
    if (!abs)
      die (1, "--%.*s %s: %s", (int) strlen (key) - 1, key, value, strerror (errno));
    value = abs;
  }
  o->params = realloc (o->params, (o->nparams + 1) * sizeof *o->params);
  if (!o->params || asprintf (&p, "%s%s", key, value) < 0)
    die (1, "out of memory");
  o->params[o->nparams++] = p;
  free (abs);
}

/* Load the nbd module if its netlink family is missing; then say clearly
 * when there is still no driver. */
static void
require_nbd_driver (void)
{
  struct rbdx_nl *nl;
  int r = rbdx_nl_open (&nl);

  if (r == -ENOENT) {
    pid_t pid = fork ();
    if (pid == 0) {
      int null = open ("/dev/null", O_RDWR);
      dup2 (null, 1);
      dup2 (null, 2);
      execl ("/sbin/modprobe", "modprobe", "nbd", (char *) NULL);
      execl ("/usr/sbin/modprobe", "modprobe", "nbd", (char *) NULL);
      _exit (127);
    }
    if (pid > 0)
      waitpid (pid, NULL, 0);
    r = rbdx_nl_open (&nl);
  }
  if (r == -ENOENT)
    die (1, "the kernel has no NBD driver (no \"nbd\" netlink family, and "
         "`modprobe nbd` did not load one): nothing was mapped");
  if (r)
    die (1, "cannot open a netlink socket: %s", strerror (-r));
  rbdx_nl_close (nl);
}

enum { OPT_EXCLUSIVE = 256, OPT_IO_TIMEOUT, OPT_REATTACH, OPT_RESIZE, OPT_ID,
       OPT_CONF, OPT_KEYRING, OPT_FORMAT, OPT_FORCE, OPT_CONNINFO, OPT_ENGINE };

static const struct option long_opts[] = {
  { "connections", required_argument, NULL, 'c' },
  { "read-only", no_argument, NULL, 'r' },
  { "exclusive", no_argument, NULL, OPT_EXCLUSIVE },
  { "device", required_argument, NULL, 'd' },
  { "io-timeout", required_argument, NULL, OPT_IO_TIMEOUT },
  { "reattach-timeout", required_argument, NULL, OPT_REATTACH },
  { "resize-poll", required_argument, NULL, OPT_RESIZE },
  { "id", required_argument, NULL, OPT_ID },
  { "conf", required_argument, NULL, OPT_CONF },
  { "keyring", required_argument, NULL, OPT_KEYRING },
  { "option", required_argument, NULL, 'o' },
  { "format", required_argument, NULL, OPT_FORMAT },
  { "force", no_argument, NULL, OPT_FORCE },
  { "connection-info", required_argument, NULL, OPT_CONNINFO },
  { "engine", required_argument, NULL, OPT_ENGINE },
  { "help", no_argument, NULL, 'h' },
  { NULL, 0, NULL, 0 },
};

struct cli {
  struct rbdx_map_opts o;
  bool json, force, device_set, resize_poll_set;
  const char *conninfo;   /* --connection-info FILE or "-" */
  const char *engine;     /* --engine builtin|nbdkit, NULL if not given */
  char **args;      /* positional arguments */
  int nargs;
};

static void
parse_cli (int argc, char **argv, struct cli *c)
{
  int ch;

  memset (c, 0, sizeof *c);
  c->o.device = -1;
  c->o.io_timeout = 60;
  c->o.reattach_timeout = 30;
  c->o.resize_poll = 5;
  c->o.nbdkit = getenv ("RBDX_NBDKIT") && *getenv ("RBDX_NBDKIT") ? getenv ("RBDX_NBDKIT") : "nbdkit";
  c->o.plugin = getenv ("RBDX_PLUGIN") && *getenv ("RBDX_PLUGIN") ? getenv ("RBDX_PLUGIN") : "rbdx";
  optind = 1;
  opterr = 0;      /* our own messages, prefixed "rbdx:" */
  while ((ch = getopt_long (argc, argv, ":c:rd:o:h", long_opts, NULL)) != -1) {
    switch (ch) {
    case 'c':
      {
        char *end;
        long n = strtol (optarg, &end, 10);
        if (end == optarg || *end || n < 1 || n > 16)
          die (2, "--connections must be a number from 1 to 16, not '%s'", optarg);
        c->o.connections = (unsigned) n;
      }
      c->o.connections_set = true;
      break;
    case 'r': c->o.read_only = true; break;
    case OPT_EXCLUSIVE: add_param (&c->o, "exclusive=", "true"); break;
    case 'd':
      c->o.device = device_index (optarg);
      if (c->o.device < 0)
        die (2, "--device must name an NBD device like /dev/nbd0, not '%s'", optarg);
      c->device_set = true;
      break;
    case OPT_IO_TIMEOUT: c->o.io_timeout = parse_seconds ("--io-timeout", optarg, 86400); break;
    case OPT_REATTACH:
      c->o.reattach_timeout = parse_seconds ("--reattach-timeout", optarg, 86400);
      break;
    case OPT_RESIZE:
      c->o.resize_poll = parse_seconds ("--resize-poll", optarg, 86400);
      c->resize_poll_set = true;
      break;
    case OPT_ID: add_param (&c->o, "id=", optarg); break;
    case OPT_CONF: add_param (&c->o, "conf=", optarg); break;
    case OPT_KEYRING: add_param (&c->o, "keyring=", optarg); break;
    case 'o':
      if (!strchr (optarg, '=') || optarg[0] == '=')
        die (2, "-o wants KEY=VALUE, not '%s'", optarg);
      add_param (&c->o, "", optarg);
      break;
    case OPT_FORMAT:
      if (!strcmp (optarg, "json"))
        c->json = true;
      else if (strcmp (optarg, "plain"))
        die (2, "--format must be plain or json, not '%s'", optarg);
      break;
    case OPT_FORCE: c->force = true; break;
    case OPT_CONNINFO: c->conninfo = optarg; break;
    case OPT_ENGINE:
      if (strcmp (optarg, "builtin") && strcmp (optarg, "nbdkit"))
        die (2, "--engine must be builtin or nbdkit, not '%s'", optarg);
      c->engine = optarg;
      break;
    case 'h': usage (stdout); exit (0);
    case ':':
      die (2, "%s needs a value (see rbdx --help)", argv[optind - 1]);
    default:
      die (2, "unknown option '%s' (see rbdx --help)", argv[optind - 1]);
    }
  }
  /* GNU getopt permutes: options may also follow the spec, as in rbdxtab
   * lines; what is left is positional. */
  for (; optind < argc; optind++) {
    c->args = realloc (c->args, (size_t) (c->nargs + 1) * sizeof *c->args);
    if (!c->args)
      die (1, "out of memory");
    c->args[c->nargs++] = argv[optind];
  }
}

/* The built-in engine's program: $RBDX_ENGINE, else rbdx-engine next to
 * this program (the build tree), else the installed one. */
static const char *
engine_program (void)
{
  static char path[4096];
  const char *env = getenv ("RBDX_ENGINE");
  ssize_t n;
  char *slash;

  if (env && *env)
    return env;
  n = readlink ("/proc/self/exe", path, sizeof path - 32);
  if (n > 0) {
    path[n] = '\0';
    slash = strrchr (path, '/');
    if (slash) {
      strcpy (slash + 1, "rbdx-engine");
      if (access (path, X_OK) == 0)
        return path;
    }
  }
  return RBDX_LIBEXECDIR "/rbdx-engine";
}

/* --engine (default builtin, or what the device was mapped with). */
static void
set_engine (struct cli *c, const char *recorded)
{
  const char *e = c->engine ? c->engine : recorded && *recorded ? recorded
                  : "builtin";
  c->o.engine = strcmp (e, "builtin") == 0 ? engine_program () : NULL;
}

/* Our own server with several connections: one writer (writers=shared)
 * unless told otherwise.  With a writer per connection, a write the kernel
 * re-sends on another connection after an I/O timeout could land before
 * the first copy, which the first connection's librbd client may still be
 * executing; through one librbd client they stay in order. */
static void
default_writers (struct rbdx_map_opts *o)
{
  if (o->is_uri || o->connections < 2)
    return;
  for (size_t i = 0; i < o->nparams; i++)
    if (!strncmp (o->params[i], "writers=", 8))
      return;
  add_param (o, "writers=", "shared");
}

/* TARGET [KEY=VALUE...] into the map options. */
static void
set_target (struct cli *c, char **args, int nargs)
{
  const char *why = NULL;

  if (nargs < 1)
    die (2, "no image spec or NBD URI given");
  if (canonical (args[0], c->o.target, sizeof c->o.target, &why) < 0)
    die (2, "bad %s '%s': %s", is_uri (args[0]) ? "NBD URI" : "image spec", args[0], why);
  c->o.is_uri = is_uri (args[0]);
  for (int i = 1; i < nargs; i++) {
    if (!strchr (args[i], '=') || args[i][0] == '=')
      die (2, "unexpected argument '%s' (plugin parameters are KEY=VALUE)", args[i]);
    add_param (&c->o, "", args[i]);
  }
  if (c->o.is_uri && c->o.nparams)
    die (2, "%s is an NBD URI: the server is not rbdx's own, so plugin parameters "
         "(%s) cannot apply", args[0], c->o.params[0]);
  if (!c->o.is_uri && strchr (c->o.target, '@'))
    c->o.read_only = true;    /* a snapshot maps read-only */
}

/* Serialise map and attach (two maps of one image must not both map it).
 * The lock is held until this process exits; the supervisor closes its
 * inherited descriptor at once. */
static void
lock_run_dir (void)
{
  char path[4200];
  int fd;

  if (rbdx_state_mkdir ())
    die (1, "cannot create %s: %s", rbdx_run_dir (), strerror (errno));
  snprintf (path, sizeof path, "%s/lock", rbdx_run_dir ());
  fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || flock (fd, LOCK_EX) == -1)
    die (1, "cannot lock %s: %s", path, strerror (errno));
  rbdx_lock_fd = fd;
}

/* --connection-info: the volume it describes, parsed (dies on errors). */
static void
load_conninfo (const char *path, struct rbdx_conninfo *ci)
{
  char err[512], *text = rbdx_conninfo_read (path);
  int r;

  if (!text)
    die (1, "--connection-info %s: %s", path, strerror (errno));
  r = rbdx_conninfo_parse (text, ci, err, sizeof err);
  free (text);
  if (r < 0)
    die (2, "--connection-info %s: %s", path, r == -ENOMEM ? "out of memory" : err);
}

/* Where the keyring a connection_info carries is kept while mapped:
 * RUN_DIR/keyrings/POOL%VOLUME.keyring (root only). */
static void
keyring_path (const char *spec, char *buf, size_t len)
{
  char name[1100];
  size_t i;

  snprintf (name, sizeof name, "%s", spec);
  for (i = 0; name[i]; i++)
    if (name[i] == '/')
      name[i] = '%';
  snprintf (buf, len, "%s/keyrings/%s.keyring", rbdx_run_dir (), name);
}

/* os-brick's device info for the mapped volume. */
static void
print_device_info (int index, const char *spec)
{
  char link[4200];

  if (rbdx_link_path (spec, link, sizeof link) < 0)
    snprintf (link, sizeof link, "/dev/nbd%d", index);
  printf ("{\"type\":\"block\",\"path\":");
  rbdx_json_string (stdout, link);
  printf (",\"device\":\"/dev/nbd%d\"}\n", index);
}

/* map --connection-info: the map options from the connection_info. */
static void
conninfo_to_map (struct cli *c, struct rbdx_conninfo *ci, char *kr, size_t krlen)
{
  char *args[1] = { ci->spec };
  FILE *f;
  int fd;

  if (c->nargs > 1)
    die (2, "--connection-info names the volume: no image spec or URI too");
  set_target (c, args, 1);
  for (size_t i = 0; i < ci->nparams; i++)
    add_param (&c->o, "", ci->params[i]);
  if (ci->read_only)
    c->o.read_only = true;
  *kr = '\0';
  if (!ci->keyring)
    return;
  keyring_path (c->o.target, kr, krlen);
  if (rbdx_state_mkdir () < 0)
    die (1, "cannot create %s: %s", rbdx_run_dir (), strerror (errno));
  {
    char dir[4200];
    snprintf (dir, sizeof dir, "%s/keyrings", rbdx_run_dir ());
    if (mkdir (dir, 0700) == -1 && errno != EEXIST)
      die (1, "cannot create %s: %s", dir, strerror (errno));
  }
  fd = open (kr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  f = fd >= 0 ? fdopen (fd, "w") : NULL;
  if (!f || fputs (ci->keyring, f) == EOF || fclose (f) == EOF)
    die (1, "cannot write the volume's keyring %s: %s", kr, strerror (errno));
  add_param (&c->o, "keyring=", kr);
}

static int
cmd_map (struct cli *c)
{
  struct rbdx_state all[MAX_MAPPED], *st;
  int n, index, r;
  long server, sup;
  unsigned conns;
  const char *msg;

  struct rbdx_conninfo ci;
  char kr[4200] = "";

  if (c->conninfo) {
    load_conninfo (c->conninfo, &ci);
    conninfo_to_map (c, &ci, kr, sizeof kr);
    rbdx_conninfo_free (&ci);
  }
  else
    set_target (c, c->args + 1, c->nargs - 1);
  if (!c->o.connections)
    c->o.connections = default_connections ();
  default_writers (&c->o);
  set_engine (c, NULL);
  if (geteuid () != 0)
    die (1, "mapping a device needs root (CAP_SYS_ADMIN for the kernel's NBD "
         "netlink interface)");
  require_nbd_driver ();
  lock_run_dir ();
  n = load_mapped (all, MAX_MAPPED);
  /* Mapping what is mapped succeeds, like rbdmap re-runs do.  A name is
   * not an identity: a mapping whose server stated its image identity is
   * compared by identity, which the supervisor learns from a new server
   * (the name may mean another image since). */
  st = find_mapped (c->o.target, all, n);
  if (st && !*st->identity && rbdx_device_connected (st->index)) {
    if (c->conninfo)
      print_device_info (st->index, st->target);
    else
      print_mapping (c->json, st->index, st->target, st->connections,
                     (long) st->server, (long) st->supervisor, st->read_only);
    return 0;
  }
  r = rbdx_supervise_start (&c->o, &index, &server, &sup, &conns, &msg);
  if (r < 0) {
    if (*kr)
      unlink (kr);
    die (1, "%s: %s", c->o.target, msg);
  }
  if (r == 1) {
    struct rbdx_state dup;
    if (rbdx_state_load (index, &dup) < 0)
      die (1, "%s: mapped on /dev/nbd%d, whose state is gone", c->o.target, index);
    if (c->conninfo)
      print_device_info (index, dup.target);
    else
      print_mapping (c->json, index, dup.target, dup.connections, (long) dup.server,
                     (long) dup.supervisor, dup.read_only);
    return 0;
  }
  if (c->conninfo) {
    print_device_info (index, c->o.target);
    return 0;
  }
  print_mapping (c->json, index, c->o.target, conns, server, sup, c->o.read_only);
  return 0;
}

static bool
wait_gone (pid_t pid, double secs)
{
  for (int i = 0; i < (int) (secs * 10); i++) {
    if (!rbdx_pid_alive (pid))
      return true;
    struct timespec ts = { 0, 100000000 };
    nanosleep (&ts, NULL);
  }
  return !rbdx_pid_alive (pid);
}

/* Whether the server recorded in @p st still runs (the same process: its
 * start time matches, so a reused pid is never signalled). */
static bool
server_running (const struct rbdx_state *st)
{
  return st->server > 0 && rbdx_proc_is (st->server, st->server_start);
}

static int
cmd_unmap (struct cli *c)
{
  struct rbdx_state all[MAX_MAPPED], *st, tmp = { 0 };
  char dev[64];
  int n, fd, idx;

  struct rbdx_conninfo ci;
  char kr[4200] = "";
  const char *what;

  if (c->conninfo) {
    /* os-brick's disconnect: the volume the connection_info names; one
     * that is not mapped is already disconnected. */
    if (c->nargs != 1)
      die (2, "--connection-info names the volume: no device, spec or URI too");
    load_conninfo (c->conninfo, &ci);
    snprintf (c->o.target, sizeof c->o.target, "%s", ci.spec);
    rbdx_conninfo_free (&ci);
    what = c->o.target;
    keyring_path (what, kr, sizeof kr);
  }
  else if (c->nargs != 2)
    die (2, "unmap wants one device, image spec or URI");
  else
    what = c->args[1];
  if (geteuid () != 0)
    die (1, "unmapping a device needs root");
  n = load_mapped (all, MAX_MAPPED);
  st = find_mapped (what, all, n);
  idx = device_index (what);
  if (!st && c->conninfo) {
    unlink (kr);
    return 0;
  }
  if (!st) {
    if (idx < 0 || !rbdx_device_connected (idx))
      die (1, "%s is not mapped", what);
    /* Connected without our state: disconnect it anyway. */
    tmp.index = idx;
    st = &tmp;
  }
  snprintf (dev, sizeof dev, "/dev/nbd%d", st->index);
  /* Busy: mounted, held by device-mapper, or opened exclusively. */
  /* O_RDONLY: a read-only device refuses O_RDWR with EACCES, which would
   * hide that it is mounted.  fsync works on it all the same. */
  fd = open (dev, O_RDONLY | O_EXCL | O_CLOEXEC);
  if (fd < 0 && errno == EBUSY && !c->force)
    die (1, "%s is in use (mounted or held open exclusively); unmount it first, "
         "or use --force", dev);
  if (fd >= 0) {
    /* Write back what the page cache holds and flush the server. */
    if (fsync (fd) == -1 && errno != EROFS && errno != EINVAL)
      fprintf (stderr, "%s: warning: flushing %s: %s\n", prog, dev, strerror (errno));
    close (fd);
  }
  if (rbdx_proc_is (st->supervisor, st->supervisor_start)) {
    kill (st->supervisor, SIGTERM);
    if (!wait_gone (st->supervisor, 90))
      die (1, "the supervisor of %s (pid %ld) did not finish unmapping in 90 s", dev,
           (long) st->supervisor);
  }
  else {
    struct rbdx_nl *nl;
    int r = rbdx_nl_open (&nl);
    if (r)
      die (1, "cannot use the kernel's NBD netlink interface: %s", strerror (-r));
    r = rbdx_nl_disconnect (nl, st->index);
    rbdx_nl_close (nl);
    if (r && rbdx_device_connected (st->index))
      die (1, "cannot disconnect %s: %s", dev, strerror (-r));
    if (server_running (st)) {
      kill (st->server, SIGTERM);
      if (!wait_gone (st->server, 30))
        kill (st->server, SIGKILL);
    }
    if (*st->target && !is_uri (st->target))
      rbdx_link_remove (st->target, st->index);
    rbdx_state_remove (st->index);
  }
  for (int i = 0; i < 100 && rbdx_device_connected (st->index); i++) {
    struct timespec ts = { 0, 100000000 };
    nanosleep (&ts, NULL);
  }
  if (rbdx_device_connected (st->index))
    die (1, "%s is still connected", dev);
  if (*kr)
    unlink (kr);
  return 0;
}

static int
cmd_attach (struct cli *c)
{
  struct rbdx_state st;
  int index, r;
  long server, sup;
  unsigned conns;
  const char *msg;

  if (c->nargs < 2)
    die (2, "attach wants a device, e.g. rbdx attach /dev/nbd0");
  index = device_index (c->args[1]);
  if (index < 0)
    die (2, "attach wants a device like /dev/nbd0, not '%s'", c->args[1]);
  if (geteuid () != 0)
    die (1, "attaching a device needs root");
  require_nbd_driver ();
  lock_run_dir ();
  if (!rbdx_device_connected (index))
    die (1, "/dev/nbd%d is not connected: use rbdx map", index);
  r = rbdx_state_load (index, &st);
  if (r == 0 && rbdx_proc_is (st.supervisor, st.supervisor_start)) {
    /* Its supervisor re-attaches by itself; ask it to try now. */
    kill (st.supervisor, SIGUSR1);
    print_mapping (c->json, index, st.target, st.connections, (long) st.server,
                   (long) st.supervisor, st.read_only);
    return 0;
  }
  if (r == 0) {
    /* The kernel has st.connections slots: hand it exactly that many. */
    if (c->o.connections_set && c->o.connections != st.connections)
      die (2, "/dev/nbd%d was mapped with %u connections; attach gives it the same "
           "number (drop --connections)", index, st.connections);
    c->o.connections = st.connections;
    c->o.connections_set = true;
    if (server_running (&st))
      c->o.orphan = (long) st.server;
    snprintf (c->o.identity, sizeof c->o.identity, "%s", st.identity);
  }
  set_engine (c, r == 0 ? st.engine : NULL);
  if (c->nargs >= 3)
    set_target (c, c->args + 2, c->nargs - 2);
  else if (r == 0) {
    char *p = st.params, *sep;
    snprintf (c->o.target, sizeof c->o.target, "%s", st.target);
    c->o.is_uri = is_uri (st.target);
    c->o.read_only = st.read_only;
    while ((sep = strchr (p, RBDX_PARAM_SEP))) {
      *sep = '\0';
      add_param (&c->o, "", p);
      p = sep + 1;
    }
    if (!c->resize_poll_set)
      c->o.resize_poll = st.resize_poll;
  }
  else
    die (1, "nothing is known about /dev/nbd%d: give the image spec or URI it was "
         "mapped from", index);
  if (!c->o.connections)
    c->o.connections = default_connections ();
  c->o.device = index;
  c->o.attach = true;
  c->o.connections_set = true;
  if (rbdx_supervise_start (&c->o, &index, &server, &sup, &conns, &msg) != 0)
    die (1, "%s: %s", c->o.target, msg);
  print_mapping (c->json, index, c->o.target, conns, server, sup, c->o.read_only);
  return 0;
}

/* rbdx status [DEV|SPEC|URI]: every mapping, or the one named. */
static int
cmd_status (struct cli *c)
{
  struct rbdx_state all[MAX_MAPPED], *st;
  int n, shown = 0;

  if (c->nargs > 2)
    die (2, "status wants at most one device, image spec or URI");
  n = load_mapped (all, MAX_MAPPED);
  st = c->nargs == 2 ? find_mapped (c->args[1], all, n) : NULL;
  if (c->nargs == 2 && !st)
    die (1, "%s is not mapped", c->args[1]);
  if (c->json)
    printf ("[");
  for (int i = 0; i < n; i++) {
    if (st && &all[i] != st)
      continue;
    if (c->json && shown)
      printf (",");
    rbdx_status_print (&all[i], c->json);
    shown++;
  }
  if (c->json)
    printf ("]\n");
  return 0;
}

static int
cmd_list (struct cli *c)
{
  struct rbdx_state all[MAX_MAPPED];
  int n = load_mapped (all, MAX_MAPPED);

  if (c->nargs != 1)
    die (2, "list-mapped takes no arguments");
  if (c->json)
    printf ("[");
  else if (n)
    printf ("%-12s %-40s %-11s %-8s %-10s %s\n", "device", "image", "connections",
            "server", "supervisor", "size");
  for (int i = 0; i < n; i++) {
    char dev[32];
    snprintf (dev, sizeof dev, "/dev/nbd%d", all[i].index);
    if (c->json) {
      printf ("%s{\"device\":\"%s\",\"%s\":", i ? "," : "", dev,
              is_uri (all[i].target) ? "uri" : "image");
      rbdx_json_string (stdout, all[i].target);
      printf (",\"connections\":%u,\"read_only\":%s,\"server_pid\":", all[i].connections,
              all[i].read_only ? "true" : "false");
      if (all[i].server > 0)
        printf ("%ld", (long) all[i].server);
      else
        printf ("null");
      printf (",\"supervisor_pid\":%ld,\"size\":%llu,\"connected\":%s,"
              "\"identity\":", (long) all[i].supervisor,
              rbdx_device_bytes (all[i].index),
              rbdx_device_connected (all[i].index) ? "true" : "false");
      if (*all[i].identity)
        rbdx_json_string (stdout, all[i].identity);
      else
        printf ("null");
      printf ("}");
    }
    else {
      char server[24];
      snprintf (server, sizeof server, "%ld", (long) all[i].server);
      printf ("%-12s %-40s %-11u %-8s %-10ld %llu\n", dev, all[i].target,
              all[i].connections, all[i].server > 0 ? server : "-",
              (long) all[i].supervisor, rbdx_device_bytes (all[i].index));
    }
  }
  if (c->json)
    printf ("]\n");
  return 0;
}

int
main (int argc, char **argv)
{
  struct cli c;

  if (argc < 2) {
    usage (stderr);
    return 2;
  }
  if (!strcmp (argv[1], "--help") || !strcmp (argv[1], "-h")) {
    usage (stdout);
    return 0;
  }
  if (!strcmp (argv[1], "--version")) {
    printf ("rbdx %s\n", RBDX_VERSION);
    return 0;
  }
  /* Subcommand first, then its options and arguments; args[0] is the
   * subcommand. */
  parse_cli (argc - 1, argv + 1, &c);
  {
    char **a = malloc ((size_t) (c.nargs + 1) * sizeof *a);
    if (!a)
      die (1, "out of memory");
    a[0] = argv[1];
    if (c.nargs)
      memcpy (a + 1, c.args, (size_t) c.nargs * sizeof *a);
    free (c.args);
    c.args = a;
    c.nargs++;
  }
  if (!strcmp (argv[1], "map"))
    return cmd_map (&c);
  if (!strcmp (argv[1], "unmap"))
    return cmd_unmap (&c);
  if (!strcmp (argv[1], "attach"))
    return cmd_attach (&c);
  if (!strcmp (argv[1], "list-mapped") || !strcmp (argv[1], "list"))
    return cmd_list (&c);
  if (!strcmp (argv[1], "status")) {
    int r = cmd_status (&c);
    free (c.args);
    return r;
  }
  fprintf (stderr, "%s: unknown command '%s'\n", prog, argv[1]);
  usage (stderr);
  return 2;
}

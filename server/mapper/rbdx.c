/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/rbdx.c: the rbdx mapper's command line (see rbdx.pod, cli.h):
 *   rbdx map [OPTIONS] SPEC|URI [KEY=VALUE...]
 *   rbdx unmap [--force] DEVICE|SPEC|URI
 *   rbdx attach [OPTIONS] DEVICE [SPEC|URI [KEY=VALUE...]]
 *   rbdx list-mapped [--format plain|json]
 *   rbdx status [DEVICE|SPEC|URI] [--format plain|json]
 *   rbdx nbd-compat ARGS...   (and entered as rbd-nbd: nbd-compat.h)
 * Options, usage and the dispatch here; the helpers every command uses
 * in cli.c; the commands in cmd-*.c.
 * Exit status: 0 done, 1 failed (message on stderr), 2 bad usage, 3 (unmap,
 * status) not mapped: RBDX_EXIT_NOT_MAPPED in cli.h.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rbdx/printable.h"

#include "cli.h"
#include "common/limits.h"
#include "nbd-compat.h"
#include "target.h"

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
    "       rbdx nbd-compat RBD-NBD-ARGS...   (rbd-nbd's command line; also as rbd-nbd)\n"
    "       rbdx -h | --help | --version\n"
    "map options:\n"
    "  -c, --connections N      NBD connections (default: CPUs, at most %d, within\n"
    "                           the node budget, RBDX_NODE_CONNECTIONS)\n"
    "  -r, --read-only          map read-only\n"
    "      --exclusive          hold the image's exclusive lock (exclusive=true)\n"
    "      --notrim             no discard; zeroes stay allocated (notrim=true)\n"
    "      --quiesce            run a hook around snapshots, fsfreeze by default\n"
    "                           (quiesce=true)\n"
    "      --quiesce-hook PATH  that hook (quiesce_hook=PATH; with --quiesce)\n"
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
    "See rbdx(8).\n", RBDX_MAX_CONNECTIONS);
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

enum { OPT_EXCLUSIVE = 256, OPT_NOTRIM, OPT_IO_TIMEOUT, OPT_REATTACH, OPT_RESIZE,
       OPT_ID, OPT_CONF, OPT_KEYRING, OPT_FORMAT, OPT_FORCE, OPT_CONNINFO, OPT_ENGINE,
       OPT_QUIESCE, OPT_QUIESCE_HOOK };

static const struct option long_opts[] = {
  { "connections", required_argument, NULL, 'c' },
  { "read-only", no_argument, NULL, 'r' },
  { "exclusive", no_argument, NULL, OPT_EXCLUSIVE },
  { "notrim", no_argument, NULL, OPT_NOTRIM },
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
  { "quiesce", no_argument, NULL, OPT_QUIESCE },
  { "quiesce-hook", required_argument, NULL, OPT_QUIESCE_HOOK },
  { "help", no_argument, NULL, 'h' },
  { NULL, 0, NULL, 0 },
};

static void
parse_cli (int argc, char **argv, struct cli *c)
{
  int ch;

  cli_init (c);
  optind = 1;
  opterr = 0;      /* our own messages, prefixed "rbdx:" */
  while ((ch = getopt_long (argc, argv, ":c:rd:o:h", long_opts, NULL)) != -1) {
    switch (ch) {
    case 'c':
      {
        char *end;
        long n = strtol (optarg, &end, 10);
        if (end == optarg || *end || n < 1 || n > RBDX_MAX_CONNECTIONS)
          die (2, "--connections must be a number from 1 to %d, not '%s'",
               RBDX_MAX_CONNECTIONS, optarg);
        c->o.connections = (unsigned) n;
      }
      c->o.connections_set = true;
      break;
    case 'r': c->o.read_only = true; break;
    case OPT_EXCLUSIVE: cli_add_param (&c->o, "exclusive=", "true"); break;
    case OPT_NOTRIM: cli_add_param (&c->o, "notrim=", "true"); break;
    case OPT_QUIESCE: cli_add_param (&c->o, "quiesce=", "true"); break;
    case OPT_QUIESCE_HOOK: cli_add_param (&c->o, "quiesce_hook=", optarg); break;
    case 'd':
      c->o.device = rbdx_device_index (optarg);
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
    case OPT_ID: cli_add_param (&c->o, "id=", optarg); break;
    case OPT_CONF: cli_add_param (&c->o, "conf=", optarg); break;
    case OPT_KEYRING: cli_add_param (&c->o, "keyring=", optarg); break;
    case 'o':
      if (!strchr (optarg, '=') || optarg[0] == '=')
        die (2, "-o wants KEY=VALUE, not '%s'", optarg);
      cli_add_param (&c->o, "", optarg);
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

static const struct command {
  const char *name;
  int (*run) (struct cli *c);
} commands[] = {
  { "map", cmd_map },
  { "unmap", cmd_unmap },
  { "attach", cmd_attach },
  { "list-mapped", cmd_list },
  { "list", cmd_list },
  { "status", cmd_status },
  { NULL, NULL },
};

/* What parse_cli allocated (the supervisor has its own copy: it is a
 * forked child). */
static void
cli_free (struct cli *c)
{
  for (size_t i = 0; i < c->o.nparams; i++)
    free (c->o.params[i]);
  free (c->o.params);
  free (c->args);
}

/* $RBDX_RUN_DIR and $RBDX_DEV_DIR must be absolute: the supervisor
 * changes to / and would read a relative one against another directory
 * than the command that started it. */
static bool
env_dirs_ok (void)
{
  static const char *const vars[] = { "RBDX_RUN_DIR", "RBDX_DEV_DIR" };
  char shown[1024];

  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv (vars[i]);

    if (v && *v && *v != '/') {
      fprintf (stderr, "rbdx: %s='%s': must be an absolute path\n", vars[i],
               rbdx_printable (v, shown, sizeof shown));
      return false;
    }
  }
  return true;
}

int
main (int argc, char **argv)
{
  struct cli c;
  char shown[1024];
  const char *base = argc > 0 ? strrchr (argv[0], '/') : NULL;

  if (!env_dirs_ok ())
    return 2;

  /* The rbd-nbd personality (nbd-compat.h): entered by that name, or as
   * `rbdx nbd-compat ARGS...`. */
  base = base ? base + 1 : argc > 0 ? argv[0] : "";
  if (!strcmp (base, "rbd-nbd"))
    return rbdx_nbd_main (argc, argv);
  if (argc >= 2 && !strcmp (argv[1], "nbd-compat"))
    return rbdx_nbd_main (argc - 1, argv + 1);
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
  for (const struct command *k = commands; k->name; k++)
    if (!strcmp (argv[1], k->name)) {
      int r = k->run (&c);
      cli_free (&c);
      return r;
    }
  cli_free (&c);
  fprintf (stderr, "rbdx: unknown command '%s'\n",
           rbdx_printable (argv[1], shown, sizeof shown));
  usage (stderr);
  return 2;
}

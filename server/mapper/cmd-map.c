/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/cmd-map.c: `rbdx map` and `rbdx attach` (see cli.h, rbdx.pod):
 * check what is mapped, start a supervisor (supervise.h), print the
 * mapping. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "budget.h"
#include "conninfo.h"
#include "json.h"
#include "keyring.h"
#include "mapped.h"
#include "netlink.h"
#include "rbdx/cephargs.h"
#include "state.h"
#include "target.h"

static void
print_mapping (bool json, int index, const char *target, unsigned conns,
               long server, long sup, bool read_only)
{
  json_object *o;
  char dev[32];

  snprintf (dev, sizeof dev, "/dev/nbd%d", index);
  if (!json) {
    printf ("%s\n", dev);
    return;
  }
  o = rbdx_json_object ();
  rbdx_json_add_string (o, "device", dev);
  rbdx_json_add_string (o, rbdx_target_is_uri (target) ? "uri" : "image", target);
  rbdx_json_add_uint (o, "connections", conns);
  rbdx_json_add_bool (o, "read_only", read_only);
  rbdx_json_add_pid (o, "server_pid", server);
  rbdx_json_add_int (o, "supervisor_pid", sup);
  rbdx_json_print (stdout, o);
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
  cli_add_param (o, "writers=", "shared");
}

/* Without id=, the cephx id of $CEPH_ARGS (rbdx/cephargs.h) becomes an
 * id= parameter.  The server would take the same id from the environment
 * it inherits, but a mapping's state keeps only its parameters, and
 * `rbdx attach` runs later from another environment (a package upgrade,
 * an operator's shell): it must connect as the same client, not as
 * client.admin.  Nothing else of $CEPH_ARGS is kept (it may hold a key);
 * one the id parser refuses is left for the server to report. */
static void
id_from_env (struct rbdx_map_opts *o)
{
  char id[RBDX_CEPHX_ID_MAX + 1], why[600];

  if (o->is_uri)
    return;
  for (size_t i = 0; i < o->nparams; i++)
    if (!strncmp (o->params[i], "id=", 3))
      return;
  if (rbdx_ceph_args_id (getenv ("CEPH_ARGS"), id, sizeof id, why,
                         sizeof why) == 1)
    cli_add_param (o, "id=", id);
}

/* The mapping of @p c's target that a map may print instead of making
 * one: in the same mode (read-only or not) and, with --device, on that
 * device; connected; one whose server stated an image identity is not
 * taken by name (the supervisor compares identities).  NULL if none:
 * then a read-only map of a read-write mapping makes a device of its
 * own, and so does a map --device elsewhere. */
static struct rbdx_state *
same_mapping (const struct cli *c, struct rbdx_state *all, int n)
{
  struct rbdx_state *st;

  for (int i = 0; i < n && (st = rbdx_mapped_find (c->o.target, all + i, n - i));
       i = (int) (st - all) + 1)
    if (!*st->identity && st->read_only == c->o.read_only &&
        (c->o.device < 0 || c->o.device == st->index) &&
        rbdx_device_connected (st->index))
      return st;
  return NULL;
}

/* A mapping found for a map: printed as the map's result only while its
 * supervisor runs.  Without it nothing serves the device (its server
 * stops with it), and its I/O would fail once --reattach-timeout passed. */
static void
alive_or_die (const struct rbdx_state *st)
{
  if (!rbdx_proc_is (st->supervisor, st->supervisor_start))
    die (1, "%s is mapped on /dev/nbd%d, but its supervisor is gone and "
         "nothing serves the device: `rbdx attach /dev/nbd%d` gives it a "
         "new one", st->target, st->index, st->index);
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

/* The node's connection budget (budget.h): $RBDX_NODE_CONNECTIONS, else
 * connections= in RBDX_BUDGET_FILE, else the default.  Dies on a bad one. */
static unsigned
node_budget (void)
{
  const char *env = getenv ("RBDX_NODE_CONNECTIONS");
  char text[4096], err[256];
  unsigned total = RBDX_NODE_CONNECTIONS_DEFAULT;
  size_t len;
  FILE *f;
  int r;

  if (env && *env) {
    if (rbdx_budget_parse (env, 0, &total, err, sizeof err) < 0)
      die (2, "%s", err);
    return total;
  }
  f = fopen (RBDX_BUDGET_FILE, "re");
  if (!f) {
    if (errno != ENOENT)
      die (1, "%s: %s", RBDX_BUDGET_FILE, strerror (errno));
    return total;
  }
  /* The whole file or an error: a budget cut mid-number, or a directory
   * read as empty, would be another budget than the operator's. */
  len = fread (text, 1, sizeof text - 1, f);
  text[len] = '\0';
  if (ferror (f))
    die (1, "%s: %s", RBDX_BUDGET_FILE, strerror (errno));
  if (len == sizeof text - 1 && fgetc (f) != EOF)
    die (2, "%s: longer than %zu bytes", RBDX_BUDGET_FILE, sizeof text - 1);
  if (memchr (text, '\0', len))
    die (2, "%s: holds a NUL byte", RBDX_BUDGET_FILE);
  fclose (f);
  r = rbdx_budget_parse (text, 1, &total, err, sizeof err);
  if (r == -EINVAL)
    die (2, "%s: %s", RBDX_BUDGET_FILE, err);
  return total;
}

/* How many connections the new mapping gets: @p requested if given and
 * it fits, else the CPUs (at most 16) or what the budget has left.  Dies
 * naming the budget when nothing fits. */
static unsigned
budget_connections (unsigned requested, const struct rbdx_state *all, int n)
{
  unsigned used = 0, total = node_budget ();
  char err[512];
  int i, r;

  /* Only mappings served here cost Ceph clients on this node (an NBD URI
   * has no local server: no socket). */
  for (i = 0; i < n; i++)
    if (all[i].socket[0])
      used += all[i].connections;
  r = rbdx_budget_choose (requested, cli_default_connections (), total, used,
                          err, sizeof err);
  if (r < 0)
    die (1, "%s", err);
  return (unsigned) r;
}

void
cli_write_keyring (struct cli *c, const char *keyring)
{
  char why[600];
  size_t total;

  if (rbdx_keyring_write (keyring, c->o.keyring_file, sizeof c->o.keyring_file,
                          why, sizeof why) < 0) {
    c->o.keyring_file[0] = '\0';
    die (1, "%s", why);
  }
  cli_add_param (&c->o, "keyring=", c->o.keyring_file);
  /* cli_check_args counted the parameters without this one. */
  if (!cli_params_fit (c->o.params, c->o.nparams, &total)) {
    rbdx_state_remove_keyring (c->o.keyring_file);
    c->o.keyring_file[0] = '\0';
    die (2, "the plugin parameters of %s take %zu bytes with the keyring's "
         "keyring=; a mapping keeps at most %zu", c->o.target, total,
         sizeof ((struct rbdx_state *) NULL)->params - 1);
  }
}

/* Wipe and free the keyring contents --keyfile gave (cli.h). */
static void
drop_keyring_text (struct cli *c)
{
  if (c->keyring_text) {
    explicit_bzero (c->keyring_text, strlen (c->keyring_text));
    free (c->keyring_text);
    c->keyring_text = NULL;
  }
}

int
cmd_map (struct cli *c)
{
  static struct rbdx_state all[MAX_MAPPED];   /* 8 MiB: not on the stack */
  struct rbdx_state *st;
  unsigned requested;
  int n, index, r;
  long server, sup;
  unsigned conns;
  const char *msg;

  struct rbdx_conninfo ci = { 0 };

  if (c->conninfo) {
    cli_load_conninfo (c->conninfo, &ci);
    cli_conninfo_to_map (c, &ci);
  }
  else
    cli_set_target (c, c->args + 1, c->nargs - 1);
  /* --connections (or the connection info's); else the node budget
   * decides below, once the mappings are counted under the lock. */
  requested = c->o.connections;
  if (!c->o.connections)
    c->o.connections = cli_default_connections ();
  default_writers (&c->o);
  id_from_env (&c->o);
  cli_check_args (c->o.target, c->o.params, c->o.nparams);
  set_engine (c, NULL);
  if (geteuid () != 0)
    die (1, "mapping a device needs root (CAP_SYS_ADMIN for the kernel's NBD "
         "netlink interface)");
  /* A Unix socket path has at most 107 bytes (the supervisor's socket). */
  if (strlen (rbdx_run_dir ()) > 80)
    die (1, "the run directory %s is too long (80 bytes at most)", rbdx_run_dir ());
  require_nbd_driver ();
  rbdx_mapped_lock ();
  n = rbdx_mapped_load (all, MAX_MAPPED);
  /* Mapping what is mapped succeeds, like rbdmap re-runs do.  A name is
   * not an identity: a mapping whose server stated its image identity is
   * compared by identity, which the supervisor learns from a new server
   * (the name may mean another image since). */
  st = same_mapping (c, all, n);
  if (st) {
    alive_or_die (st);
    rbdx_conninfo_free (&ci);
    drop_keyring_text (c);
    if (c->conninfo)
      cli_print_device_info (st->index, st->target);
    else
      print_mapping (c->json, st->index, st->target, st->connections,
                     (long) st->server, (long) st->supervisor, st->read_only);
    return 0;
  }
  if (!c->o.is_uri)
    c->o.connections = budget_connections (requested, all, n);
  /* Every check passed: now the keyring of a connection_info or of
   * --keyfile, which no signal may leave behind until the supervisor
   * owns it (it is forked in rbdx_supervise_start, which unblocks
   * these). */
  cli_end_signals (SIG_BLOCK);
  if (ci.keyring || c->keyring_text)
    cli_write_keyring (c, ci.keyring ? ci.keyring : c->keyring_text);
  rbdx_conninfo_free (&ci);
  drop_keyring_text (c);
  r = rbdx_supervise_start (&c->o, &index, &server, &sup, &conns, &msg);
  if (r < 0) {
    rbdx_state_remove_keyring (c->o.keyring_file);
    die (1, "%s: %s", c->o.target, msg);
  }
  if (r == 1) {
    struct rbdx_state dup;
    if (rbdx_state_load (index, &dup) < 0)
      die (1, "%s: mapped on /dev/nbd%d, whose state is gone", c->o.target, index);
    alive_or_die (&dup);
    if (c->conninfo)
      cli_print_device_info (index, dup.target);
    else
      print_mapping (c->json, index, dup.target, dup.connections, (long) dup.server,
                     (long) dup.supervisor, dup.read_only);
    return 0;
  }
  if (c->conninfo) {
    cli_print_device_info (index, c->o.target);
    return 0;
  }
  print_mapping (c->json, index, c->o.target, conns, server, sup, c->o.read_only);
  return 0;
}

int
cmd_attach (struct cli *c)
{
  struct rbdx_state st;
  char old_keyring[sizeof c->o.keyring_file] = "";
  bool wrote = false;
  int index, r;
  long server, sup;
  unsigned conns;
  const char *msg;

  if (c->nargs < 2)
    die (2, "attach wants a device, e.g. rbdx attach /dev/nbd0");
  index = rbdx_device_index (c->args[1]);
  if (index < 0)
    die (2, "attach wants a device like /dev/nbd0, not '%s'", c->args[1]);
  if (geteuid () != 0)
    die (1, "attaching a device needs root");
  require_nbd_driver ();
  rbdx_mapped_lock ();
  if (!rbdx_device_connected (index))
    die (1, "/dev/nbd%d is not connected: use rbdx map", index);
  r = rbdx_state_load (index, &st);
  if (r == 0 && rbdx_proc_is (st.supervisor, st.supervisor_start)) {
    char canon[RBDX_TARGET_MAX];
    const char *why;

    /* An operator who named the wrong device is told, not "attached". */
    if (c->nargs >= 3 &&
        (rbdx_target_canonical (c->args[2], canon, sizeof canon, &why) < 0 ||
         strcmp (canon, st.target) != 0))
      die (1, "/dev/nbd%d serves %s, not %s: nothing was changed", index,
           st.target, c->args[2]);
    /* Its supervisor re-attaches by itself; ask it to try now. */
    kill (st.supervisor, SIGUSR1);
    drop_keyring_text (c);
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
    if (rbdx_mapped_server_running (&st))
      c->o.orphan = (long) st.server;
    snprintf (c->o.identity, sizeof c->o.identity, "%s", st.identity);
    /* The new supervisor takes over the keyring the mapping owns. */
    snprintf (c->o.keyring_file, sizeof c->o.keyring_file, "%s", st.keyring_file);
    /* A device mapped with a cookie (rbd-nbd's --cookie) keeps it: the
     * kernel refuses a reconfigure naming another backend. */
    if (!*c->o.cookie && *st.backend && strncmp (st.backend, "rbdx:", 5) != 0 &&
        (size_t) snprintf (c->o.cookie, sizeof c->o.cookie, "%s", st.backend) >=
        sizeof c->o.cookie)
      die (1, "/dev/nbd%d: the backend identifier in its state file is longer "
           "than %zu bytes", index, sizeof c->o.cookie - 1);
  }
  set_engine (c, r == 0 ? st.engine : NULL);
  if (c->nargs >= 3)
    cli_set_target (c, c->args + 2, c->nargs - 2);
  else if (r == 0) {
    char *p = st.params, *sep;
    snprintf (c->o.target, sizeof c->o.target, "%s", st.target);
    c->o.is_uri = rbdx_target_is_uri (st.target);
    c->o.read_only = st.read_only;
    while ((sep = strchr (p, RBDX_PARAM_SEP))) {
      *sep = '\0';
      cli_add_param (&c->o, "", p);
      p = sep + 1;
    }
    if (!c->resize_poll_set)
      c->o.resize_poll = st.resize_poll;
  }
  else
    die (1, "nothing is known about /dev/nbd%d: give the image spec or URI it was "
         "mapped from", index);
  if (!c->o.connections)
    c->o.connections = cli_default_connections ();
  cli_check_args (c->o.target, c->o.params, c->o.nparams);
  c->o.device = index;
  c->o.attach = true;
  c->o.connections_set = true;
  /* --keyfile: a keyring of the new supervisor's own; a failed attach
   * (which keeps the mapping's keyring, supervise.h) removes it, one
   * that succeeds the one the mapping had. */
  if (c->keyring_text) {
    snprintf (old_keyring, sizeof old_keyring, "%s", c->o.keyring_file);
    cli_end_signals (SIG_BLOCK);
    cli_write_keyring (c, c->keyring_text);
    drop_keyring_text (c);
    wrote = true;
  }
  if (rbdx_supervise_start (&c->o, &index, &server, &sup, &conns, &msg) != 0) {
    if (wrote)
      rbdx_state_remove_keyring (c->o.keyring_file);
    die (1, "%s: %s", c->o.target, msg);
  }
  if (wrote && strcmp (old_keyring, c->o.keyring_file) != 0)
    rbdx_state_remove_keyring (old_keyring);
  print_mapping (c->json, index, c->o.target, conns, server, sup, c->o.read_only);
  return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/cmd-nbd.c: the rbd-nbd personality (see nbd-compat.h): runs
 * a parsed rbd-nbd command line through the mapper's own commands.
 *
 * map and attach become `rbdx map` / `rbdx attach` (cmd-map.c) with the
 * Ceph options as plugin parameters, unmap becomes `rbdx unmap --force`
 * (rbd-nbd disconnects a device whatever holds it), detach kills the
 * device's supervisor and server so the kernel waits for an attach,
 * -f and -d stay until the device is unmapped (a signal detaches),
 * list-mapped is cmd-nbd-list.c.  Messages start "rbd-nbd:" and every
 * failure exits 1, as rbd-nbd's (Ceph src/tools/rbd_nbd/rbd-nbd.cc).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rbdx/cephargs.h"
#include "rbdx/options.h"

#include "cli.h"
#include "keyring.h"
#include "mapped.h"
#include "nbd-compat.h"
#include "state.h"
#include "supervise.h"
#include "target.h"

static const char *
rbdx_nbd_usage (void)
{
  return
    "Usage: rbd-nbd [options] map <image-or-snap-spec>    Map image to nbd device\n"
    "               detach <device|image-or-snap-spec>    Detach image from nbd device\n"
    "               [options] attach <image-or-snap-spec> Attach image to nbd device\n"
    "               unmap <device|image-or-snap-spec>     Unmap nbd device\n"
    "               [options] list-mapped                 List mapped nbd devices\n"
    "(rbdx's rbd-nbd personality: the image is served by rbdx with N connections;\n"
    " see rbdx(8), RBD-NBD COMPATIBILITY)\n"
    "Map and attach options:\n"
    "  --device <device path>        Specify nbd device path (/dev/nbd{num})\n"
    "  --encryption-format luks|luks1|luks2\n"
    "                                Image encryption format (default: luks)\n"
    "  --encryption-passphrase-file  Path of file containing passphrase for unlocking image encryption\n"
    "  --exclusive                   Forbid writes by other clients\n"
    "  --notrim                      Turn off trim/discard\n"
    "  --io-timeout <sec>            Set nbd IO timeout (0: never time out)\n"
    "  --max_part <limit>            Override for module param max_part\n"
    "  --nbds_max <limit>            Override for module param nbds_max\n"
    "  --quiesce                     Use quiesce callbacks\n"
    "  --quiesce-hook <path>         Specify quiesce hook path\n"
    "  -f, -d                        Stay in the foreground until unmapped; a signal\n"
    "                                detaches (logs in rbdx's run directory\n"
    "                                unless --log-file is given)\n"
    "  --read-only                   Map read-only\n"
    "  --reattach-timeout <sec>      Set nbd re-attach timeout\n"
    "                                (default: 30)\n"
    "  --try-netlink                 Use the nbd netlink interface (always used)\n"
    "  --show-cookie                 Show device cookie\n"
    "  --cookie                      Specify device cookie\n"
    "  --snap-id <snap-id>           Specify snapshot by ID\n"
    "  --connections <n>             rbdx: NBD connections, 1 to 16 (default: CPUs)\n"
    "\n"
    "Unmap and detach options:\n"
    "  --device <device path>        Specify nbd device path (/dev/nbd{num})\n"
    "\n"
    "List options:\n"
    "  --format plain|json|xml Output format (default: plain)\n"
    "  --pretty-format         Pretty formatting (json and xml)\n"
    "\n"
    "Ceph options (anywhere on the line):\n"
    "  --conf/-c FILE    read configuration from the given configuration file\n"
    "  --id ID           set ID portion of my name\n"
    "  --name/-n client.ID set name\n"
    "  --cluster NAME    set cluster name (default: ceph)\n"
    "  -m/--mon_host MONS, --keyring/-k FILE, --keyfile FILE, --log-file FILE\n"
    "  --CEPH_OPTION VALUE, --CEPH_OPTION=VALUE   any Ceph option (see rbdx(8))\n";
}

/* @p value made absolute against the working directory (the supervisor
 * runs in /) into a new string.  The file need not exist (a log file).
 * @p opt names the option in messages. */
static char *
absolute (const char *opt, const char *value)
{
  char cwd[4096], *abs;

  for (const char *p = value; *p; p++)
    if ((unsigned char) *p < 0x20 || *p == 0x7f)
      die (1, "%s: the file name holds a control character", opt);
  if (value[0] == '/')
    abs = strdup (value);
  else if (!getcwd (cwd, sizeof cwd))
    die (1, "%s %s: cannot tell the working directory: %s", opt, value,
         strerror (errno));
  else if (asprintf (&abs, "%s/%s", cwd, value) < 0)
    abs = NULL;
  if (!abs)
    die (1, "out of memory");
  return abs;
}

/* --log-file @p abs (absolute): a regular file, or one to be created.
 * The supervisor and the server append to it as root and the supervisor
 * reads its end back for messages: a FIFO would hold the map (and the
 * map lock) until someone reads it, and a device, a directory or a file
 * of /proc or /sys is no log (/proc/sysrq-trigger takes what is written
 * as commands).  /dev/null, to discard the logs, is let through: the
 * core's check of ceph.log_file= (rbdx_log_path_check). */
static void
check_log_file (const char *abs)
{
  char why[256];

  if (rbdx_log_path_check (abs, why, sizeof why) < 0)
    die (1, "--log-file %s: %s", abs, why);
}

static void
add_path_param (struct cli *c, const char *key, const char *value)
{
  char *abs = absolute (key, value);

  cli_add_param (&c->o, key, abs);
  free (abs);
}

/* --keyfile F: the key never goes on a server's command line (rbdx
 * refuses ceph.keyfile=, target.h): map and attach write it into a
 * keyring file of the mapping's own (keyring.h), given as keyring=. */
static void
keyfile_to_keyring (const struct rbdx_nbd_args *a, struct cli *c, const char *keyfile)
{
  const char *id = rbdx_nbd_param (a, "id");
  char why[600], env_id[RBDX_CEPHX_ID_MAX + 1];
  int r;

  /* --keyfile with --keyring: refused by rbdx_nbd_parse. */
  /* Without --id the server connects as the id of $CEPH_ARGS, which it
   * inherits (rbdx/cephargs.h), as rbd-nbd does: the key is that id's.
   * A $CEPH_ARGS it refuses is the server's to report.  Without either,
   * Ceph's default entity is client.admin (Ceph doc, "--id"). */
  if (!id && rbdx_ceph_args_id (getenv ("CEPH_ARGS"), env_id, sizeof env_id,
                                why, sizeof why) == 1)
    id = env_id;
  r = rbdx_keyring_from_keyfile (keyfile, id ? id : "admin", &c->keyring_text,
                                 why, sizeof why);
  if (r == -ENOMEM)
    die (1, "out of memory");
  if (r < 0)
    die (1, "%s", why);
}

/* The map options of a map or attach. */
static void
to_cli (const struct rbdx_nbd_args *a, struct cli *c)
{
  cli_init (c);
  c->o.read_only = a->read_only || strchr (a->target, '@') || a->snap_id >= 0;
  /* Not given: no timeout set, the kernel's default, as rbd-nbd; 0:
   * never time out (the kernel's NBD driver re-arms a request's timer
   * when no timeout is set). */
  c->o.io_timeout = a->io_timeout < 0 ? 0 : (unsigned) a->io_timeout;
  c->o.reattach_timeout = (unsigned) a->reattach_timeout;
  if (a->connections) {
    c->o.connections = a->connections;
    c->o.connections_set = true;
  }
  for (size_t i = 0; i < a->nparams; i++) {
    const char *p = a->params[i], *eq = strchr (p, '=');
    if (!strncmp (p, "ceph.keyfile=", 13))
      keyfile_to_keyring (a, c, eq + 1);
    else if (!strncmp (p, "ceph.log_file=", 14))
      add_path_param (c, "ceph.log_file=", eq + 1);
    else
      cli_add_param (&c->o, "", p);     /* conf= and keyring= made absolute */
  }
  /* --log-file: the supervisor's and the server's messages too, as
   * rbd-nbd's own log goes there (supervise.h, log_file). */
  if (a->log_file) {
    char *abs = absolute ("--log-file", a->log_file);
    check_log_file (abs);
    if (strlen (abs) >= sizeof c->o.log_file)
      die (1, "--log-file %s: longer than %zu bytes", abs, sizeof c->o.log_file - 1);
    snprintf (c->o.log_file, sizeof c->o.log_file, "%s", abs);
    free (abs);
  }
  if (a->exclusive)
    cli_add_param (&c->o, "exclusive=", "true");
  if (a->notrim)
    cli_add_param (&c->o, "notrim=", "true");
  /* rbd-nbd uses its hook only with --quiesce; the default is rbdx's own
   * (fsfreeze, as rbd-nbd's rbd-nbd_quiesce). */
  if (a->quiesce)
    cli_add_param (&c->o, "quiesce=", "true");
  if (a->quiesce && a->quiesce_hook)
    cli_add_param (&c->o, "quiesce_hook=", a->quiesce_hook);
  if (a->snap_id >= 0) {
    char id[24];
    snprintf (id, sizeof id, "%lld", a->snap_id);
    cli_add_param (&c->o, "snap_id=", id);
  }
  /* Repeated, in rbd-nbd's order: the image's own first. */
  for (int i = 0; i < a->nenc; i++) {
    cli_add_param (&c->o, "encryption_format=", a->encryption_format[i]);
    add_path_param (c, "encryption_passphrase_file=", a->passphrase_file[i]);
  }
}

/* --nbds_max, --max_part: module parameters, for loading the module; a
 * loaded module keeps its own (rbd-nbd.cc, load_module). */
static void
load_module (const struct rbdx_nbd_args *a)
{
  char nbds[32] = "", part[32] = "";
  int status;
  pid_t pid;

  if (a->nbds_max < 0 && a->max_part < 0)
    return;
  if (access ("/sys/module/nbd", F_OK) == 0) {
    fprintf (stderr, "rbd-nbd: ignoring kernel module parameter options: nbd "
             "module already loaded\n");
    return;
  }
  if (a->nbds_max >= 0)
    snprintf (nbds, sizeof nbds, "nbds_max=%d", a->nbds_max);
  if (a->max_part >= 0)
    snprintf (part, sizeof part, "max_part=%d", a->max_part);
  pid = fork ();
  if (pid == 0) {
    const char *args[] = { "modprobe", "nbd", *nbds ? nbds : part,
                           *nbds && *part ? part : NULL, NULL };
    execv ("/sbin/modprobe", (char **) args);
    execv ("/usr/sbin/modprobe", (char **) args);
    _exit (127);
  }
  if (pid < 0 || waitpid (pid, &status, 0) < 0 || !WIFEXITED (status) ||
      WEXITSTATUS (status) != 0)
    die (1, "failed to load nbd kernel module: modprobe nbd %s %s failed", nbds, part);
}

/* cmd_map, printing "DEVICE COOKIE" instead of "DEVICE" for --show-cookie
 * (rbd-nbd.cc, do_map): its output is caught in a memory file. */
static int
map_show_cookie (struct cli *c, const char *cookie)
{
  char line[256] = "";
  int saved, mfd, r;
  ssize_t n;

  fflush (stdout);
  saved = fcntl (1, F_DUPFD_CLOEXEC, 0);
  mfd = memfd_create ("rbd-nbd-map", MFD_CLOEXEC);
  if (saved < 0 || mfd < 0 || dup2 (mfd, 1) < 0)
    die (1, "cannot catch the output of map: %s", strerror (errno));
  r = cmd_map (c);
  fflush (stdout);
  dup2 (saved, 1);
  close (saved);
  n = pread (mfd, line, sizeof line - 1, 0);
  close (mfd);
  line[n > 0 ? n : 0] = '\0';
  line[strcspn (line, "\n")] = '\0';
  printf ("%s %s\n", line, cookie);
  return r;
}

static int
do_map (const struct rbdx_nbd_args *a)
{
  struct cli c;
  char *args[2] = { "map", (char *) a->target };

  to_cli (a, &c);
  c.o.device = a->device_index;
  c.device_set = a->device_index >= 0;
  c.args = args;
  c.nargs = 2;
  if (a->cookie) {
    /* The connection count goes into the kernel's identifier with the
     * cookie (nbd-compat.h), so it is fixed now. */
    if (!c.o.connections)
      c.o.connections = cli_default_connections ();
    c.o.connections_set = true;
    if (rbdx_nbd_backend_make (a->cookie, c.o.connections, c.o.cookie,
                               sizeof c.o.cookie) < 0)
      die (1, "the cookie is too long");
  }
  load_module (a);
  return a->show_cookie && a->cookie ? map_show_cookie (&c, a->cookie) : cmd_map (&c);
}

/* The kernel's backend identifier of /dev/nbd@p index into @p buf: NULL
 * when the kernel shows none (no such attribute).  One that does not fit
 * @p len (none rbdx sets, RBDX_BACKEND_MAX) is an error, never cut. */
static const char *
kernel_backend (int index, char *buf, size_t len)
{
  int r = rbdx_device_backend (index, buf, len);

  if (r == -E2BIG)
    die (1, "/dev/nbd%d: the kernel's backend identifier is longer than %zu "
         "bytes", index, len - 1);
  return r < 0 ? NULL : buf;
}

static int
do_attach (const struct rbdx_nbd_args *a)
{
  struct cli c;
  struct rbdx_state st;
  char dev[32], backend[RBDX_BACKEND_MAX];
  char *args[3] = { "attach", dev, (char *) a->target };
  const char *msg, *kb = kernel_backend (a->device_index, backend, sizeof backend);
  unsigned n = rbdx_nbd_backend_connections (kb);

  snprintf (dev, sizeof dev, "/dev/nbd%d", a->device_index);
  if (!rbdx_nbd_cookie_ok (kb, a->cookie, &msg)) {
    fprintf (stderr, "%s\n", msg);
    return RBDX_NBD_EXIT_FAILURE;
  }
  to_cli (a, &c);
  /* The kernel takes new connections only for the identifier it has. */
  if (a->cookie &&
      (size_t) snprintf (c.o.cookie, sizeof c.o.cookie, "%s", kb) >=
      sizeof c.o.cookie) {
    fprintf (stderr, "rbd-nbd: the kernel's backend identifier of %s is "
             "longer than %zu bytes\n", dev, sizeof c.o.cookie - 1);
    return RBDX_NBD_EXIT_FAILURE;
  }
  /* Without the state file the identifier says how many and which image
   * (nbd-compat.h); with it cmd_attach takes both from there. */
  if (rbdx_state_load (a->device_index, &st) < 0) {
    if (n && !a->connections) {
      c.o.connections = n;
      c.o.connections_set = true;
    }
    rbdx_nbd_backend_identity (kb, c.o.identity, sizeof c.o.identity);
  }
  c.args = args;
  c.nargs = 3;
  return cmd_attach (&c);
}

/* The mapping unmap or detach names, or NULL after rbd-nbd's message. */
static struct rbdx_state *
find_mapping (const struct rbdx_nbd_args *a, struct rbdx_state *all, int n,
              bool need_process)
{
  struct rbdx_state *st = a->spec ? rbdx_nbd_find (a, all, n)
                                  : rbdx_mapped_find (a->device, all, n);

  if (a->spec && !st)
    fprintf (stderr, "rbd-nbd: %s is not mapped\n", a->target);
  else if (need_process && (!st || (!rbdx_proc_is (st->supervisor, st->supervisor_start) &&
                                    !rbdx_mapped_server_running (st)))) {
    if (a->spec)
      fprintf (stderr, "rbd-nbd: %s is not mapped\n", a->target);
    else
      fprintf (stderr, "rbd-nbd: no process attached to %s found\n", a->device);
    return NULL;
  }
  return st;
}

static int
do_unmap (const struct rbdx_nbd_args *a)
{
  static struct rbdx_state all[MAX_MAPPED];
  struct cli c;
  char *args[2] = { "unmap", NULL };
  struct rbdx_state *st = NULL;
  char dev[32];
  int n = rbdx_mapped_load (all, MAX_MAPPED);

  /* A spec: the device of the mapping it names (spec, snap id, device),
   * never another mapping of the image (this unmap is --force). */
  if (a->spec && !(st = find_mapping (a, all, n, false)))
    return RBDX_NBD_EXIT_FAILURE;
  cli_init (&c);
  c.force = true;
  snprintf (dev, sizeof dev, "/dev/nbd%d", st ? st->index : a->device_index);
  args[1] = dev;
  c.args = args;
  c.nargs = 2;
  return cmd_unmap (&c);
}

/* Whether @p pid (started at @p start) is gone.  The supervisor that map
 * or attach forked is this process's child: reap it, or it stays a
 * zombie (waitpid on another process fails with ECHILD, harmlessly). */
static bool
gone (pid_t pid, unsigned long long start)
{
  waitpid (pid, NULL, WNOHANG);
  return !rbdx_proc_is (pid, start);
}

/* Wait up to @p secs for @p pid (started at @p start) to be gone. */
static bool
wait_gone (pid_t pid, unsigned long long start, unsigned secs)
{
  for (unsigned i = 0; i < secs * 10; i++) {
    if (gone (pid, start))
      return true;
    nanosleep (&(struct timespec) { 0, 100000000 }, NULL);
  }
  return gone (pid, start);
}

/* Stop the processes of mapping @p st (SIGKILL, not SIGTERM: a
 * supervisor's SIGTERM means unmap) and wait up to @p secs for them. */
static int
stop_mapping (const struct rbdx_state *st, unsigned secs)
{
  if (rbdx_proc_is (st->supervisor, st->supervisor_start))
    kill (st->supervisor, SIGKILL);
  if (rbdx_mapped_server_running (st))
    kill (st->server, SIGKILL);
  if (!wait_gone (st->supervisor, st->supervisor_start, secs) ||
      (st->server > 0 && !wait_gone (st->server, st->server_start, secs)))
    die (1, "waiting for process exit timed out");
  return 0;
}

/* detach: the device's processes stop and the kernel keeps the device,
 * its I/O waiting for an attach until --reattach-timeout runs out (it
 * was given at map time).  The state file stays for the attach. */
static int
do_detach (const struct rbdx_nbd_args *a)
{
  static struct rbdx_state all[MAX_MAPPED];
  struct rbdx_state *st;
  int n;

  n = rbdx_mapped_load (all, MAX_MAPPED);
  st = find_mapping (a, all, n, true);
  if (!st)
    return RBDX_NBD_EXIT_FAILURE;
  if (geteuid () != 0)
    die (1, "detaching a device needs root");
  return stop_mapping (st, a->reattach_timeout > 5 ? (unsigned) a->reattach_timeout : 5);
}

/* Whether @p pid is this process's child (waitid fails with ECHILD for
 * any other process; WNOWAIT leaves a dead child to be reaped later). */
static bool
is_child (pid_t pid)
{
  siginfo_t info;

  return waitid (P_PID, (id_t) pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0;
}

/* -f, -d: after map or attach, stay until the device is unmapped, as
 * rbd-nbd in the foreground; SIGTERM, SIGINT or SIGHUP here detaches,
 * as they end rbd-nbd (its device then waits for an attach).  Only a
 * mapping this process started is detached: a map of an image that was
 * already mapped (by ceph-csi, say) prints that device and stays, but a
 * signal then ends only this process.  The mapping is the one on
 * @p index (the device attach named), for map (-1) the one whose
 * supervisor this process forked, else the one of @p a's spec, snap id
 * and mode (cmd_map found it mapped): never by the image's text alone,
 * which finds another mapping of it (the head for a read-only or
 * --snap-id map), so a signal would leave this one be.  The logs stay
 * in the run directory unless --log-file named a file. */
static int
stay (const struct rbdx_nbd_args *a, int index)
{
  static struct rbdx_state all[MAX_MAPPED];
  struct rbdx_state *st;
  sigset_t set;
  bool ours;
  int n;

  fflush (stdout);
  /* The map lock map or attach took (mapped.h) is held until exit: an
   * unmap or map meanwhile would wait for this process for good.  The
   * supervisor's copy keeps it until the mapping is recorded. */
  if (rbdx_lock_fd >= 0) {
    close (rbdx_lock_fd);
    rbdx_lock_fd = -1;
  }
  sigemptyset (&set);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGHUP);
  sigprocmask (SIG_BLOCK, &set, NULL);
  n = rbdx_mapped_load (all, MAX_MAPPED);
  st = NULL;
  for (int i = 0; i < n && !st; i++)
    if (index >= 0 ? all[i].index == index : is_child (all[i].supervisor))
      st = &all[i];
  for (int i = 0; i < n && !st; i++)
    if (index < 0 && rbdx_nbd_find (a, &all[i], 1) &&
        all[i].read_only == (a->read_only || a->snap_id >= 0 || strchr (a->target, '@')))
      st = &all[i];
  if (!st)
    die (1, "%s: no supervisor serves it", index >= 0 ? a->device : a->target);
  ours = is_child (st->supervisor);
  for (;;) {
    struct timespec ts = { 0, 200000000 };
    if (sigtimedwait (&set, NULL, &ts) > 0)
      return ours ? stop_mapping (st, 30) : 0;
    if (gone (st->supervisor, st->supervisor_start))
      return 0;
  }
}

int
rbdx_nbd_main (int argc, char **argv)
{
  struct rbdx_nbd_args a;
  int r;

  cli_set_personality ("rbd-nbd", true);
  r = rbdx_nbd_parse (argc, argv, &a);
  if (r == -ENOMEM)
    die (1, "out of memory");
  if (r < 0) {
    fprintf (stderr, "%s\n", a.msg);
    rbdx_nbd_args_free (&a);
    return RBDX_NBD_EXIT_FAILURE;
  }
  if (*a.warning)
    fprintf (stderr, "%s\n", a.warning);
  switch (a.cmd) {
  case RBDX_NBD_HELP: fputs (rbdx_nbd_usage (), stdout); r = 0; break;
  case RBDX_NBD_VERSION: printf ("rbd-nbd (rbdx %s)\n", RBDX_VERSION); r = 0; break;
  case RBDX_NBD_MAP:
    r = do_map (&a);
    if (r == 0 && a.foreground)
      r = stay (&a, -1);
    break;
  case RBDX_NBD_ATTACH:
    r = do_attach (&a);
    if (r == 0 && a.foreground)
      r = stay (&a, a.device_index);
    break;
  case RBDX_NBD_UNMAP: r = do_unmap (&a); break;
  case RBDX_NBD_DETACH: r = do_detach (&a); break;
  case RBDX_NBD_LIST: r = rbdx_nbd_list (&a); break;
  default: r = RBDX_NBD_EXIT_FAILURE; break;
  }
  rbdx_nbd_args_free (&a);
  return r ? RBDX_NBD_EXIT_FAILURE : 0;
}

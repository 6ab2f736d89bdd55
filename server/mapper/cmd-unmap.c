/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/cmd-unmap.c: `rbdx unmap` (see cli.h, rbdx.pod): refuse a busy
 * device, flush it, and take the mapping down: through its supervisor
 * when it runs, else here (teardown.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "conninfo.h"
#include "mapped.h"
#include "netlink.h"
#include "state.h"
#include "target.h"
#include "teardown.h"

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

/* The supervisor is gone: disconnect the device, stop a server that
 * outlived it, forget the mapping. */
static void
teardown_orphan (const struct rbdx_state *st, const char *dev)
{
  struct rbdx_nl *nl;
  int r = rbdx_nl_open (&nl);

  if (r)
    die (1, "cannot use the kernel's NBD netlink interface: %s", strerror (-r));
  r = rbdx_teardown_disconnect (nl, st->index, 0);
  rbdx_nl_close (nl);
  if (r && rbdx_device_connected (st->index))
    die (1, "cannot disconnect %s: %s", dev, strerror (-r));
  if (rbdx_mapped_server_running (st)) {
    kill (st->server, SIGTERM);
    if (!wait_gone (st->server, 30))
      kill (st->server, SIGKILL);
  }
  rbdx_teardown_forget (st->index, st->target, 0);
  rbdx_state_remove_keyring (st->keyring_file);
}

int
cmd_unmap (struct cli *c)
{
  static struct rbdx_state all[MAX_MAPPED];   /* 8 MiB: not on the stack */
  struct rbdx_state *st, tmp = { 0 };
  char dev[64];
  int n, fd, idx;

  struct rbdx_conninfo ci;
  const char *what;
  bool ro = false;

  if (c->conninfo) {
    /* os-brick's disconnect: the volume the connection_info names; one
     * that is not mapped is already disconnected. */
    if (c->nargs != 1)
      die (2, "--connection-info names the volume: no device, spec or URI too");
    cli_load_conninfo (c->conninfo, &ci);
    cli_conninfo_target (c, &ci);
    cli_check_args (c->o.target, NULL, 0);
    /* The attachment it detaches: read-only for access_mode "ro" or a
     * snapshot (as map made it, cmd-conninfo.c), else read-write; never
     * the other mode's device of the volume. */
    ro = ci.read_only || c->o.read_only;
    rbdx_conninfo_free (&ci);
    what = c->o.target;
  }
  else if (c->nargs != 2)
    die (2, "unmap wants one device, image spec or URI");
  else
    what = c->args[1];
  if (geteuid () != 0)
    die (1, "unmapping a device needs root");
  /* A map still starting (up to its server's start timeout) holds the
   * lock and has no state yet: without waiting for it, its image would
   * be "not mapped" here (exit 3; 0 for --connection-info, which os-brick
   * takes for detached) and then be mapped all the same. */
  rbdx_mapped_lock_existing ();
  n = rbdx_mapped_load (all, MAX_MAPPED);
  st = c->conninfo ? rbdx_mapped_find_mode (what, ro, all, n)
                   : rbdx_mapped_find (what, all, n);
  idx = rbdx_device_index (what);
  /* Not mapped: nothing of ours to remove (the keyring files belong to
   * the mappings that wrote them, each removed when its mapping ends). */
  if (!st && c->conninfo)
    return 0;
  if (!st) {
    if (idx < 0 || !rbdx_device_connected (idx))
      die (RBDX_EXIT_NOT_MAPPED, "%s is not mapped", what);
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
      fprintf (stderr, "rbdx: warning: flushing %s: %s\n", dev, strerror (errno));
    close (fd);
  }
  if (rbdx_proc_is (st->supervisor, st->supervisor_start)) {
    /* SIGTERM: the supervisor checks again that the device is not in
     * use (it may have been mounted since); --force: SIGINT, at once. */
    kill (st->supervisor, c->force ? SIGINT : SIGTERM);
    if (!wait_gone (st->supervisor, 90))
      die (1, "the supervisor of %s (pid %ld) did not finish unmapping in 90 s", dev,
           (long) st->supervisor);
  }
  else
    teardown_orphan (st, dev);
  for (int i = 0; i < 100 && rbdx_device_connected (st->index); i++) {
    struct timespec ts = { 0, 100000000 };
    nanosleep (&ts, NULL);
  }
  if (rbdx_device_connected (st->index))
    die (1, "%s is still connected", dev);
  return 0;
}

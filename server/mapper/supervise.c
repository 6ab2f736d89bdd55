/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/supervise.c: the start of a mapping: the fork of the
 * supervisor and its report to `rbdx map` (rbdx_supervise_start), and in
 * the supervisor the server's start, the negotiation, the device's
 * connection (see supervise.h, sup.h).  It calls into sup-loop.c and
 * sup-server.c, never the other way. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/limits.h"
#include "cli.h"
#include "devlinks.h"
#include "nbd-compat.h"
#include "resize.h"
#include "sup.h"

/* Fail before the device was reported mapped: undo everything, tell
 * `rbdx map` why, exit. */
static void __attribute__ ((noreturn, format (printf, 2, 3)))
fail_start (struct sup *s, const char *fmt, ...)
{
  char msg[2048];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  logmsg ("%s", msg);
  close_copies (s);
  stop_server (s);
  /* A failed attach leaves the mapping (and its keyring) as it was. */
  if (!s->o->attach)
    rbdx_state_remove_keyring (s->o->keyring_file);
  if (s->report_fd >= 0) {
    sup_report_err (s->report_fd, "%s", msg);
    close (s->report_fd);
  }
  remove_private_dir (s);
  _exit (1);
}

/* The identity the first connections stated.  Attach: it must be the one
 * recorded at map time.  Map without --device: an image already mapped
 * (by whatever name) is reported as "DUP INDEX" and not mapped twice. */
static void
check_identity (struct sup *s, const struct rbdx_export *e, const int *fds)
{
  char why[1400];
  int dup;

  if (s->o->attach && *s->o->identity && strcmp (e->identity, s->o->identity)) {
    for (unsigned i = 0; i < s->conns; i++)
      close (fds[i]);
    fail_start (s, "%s now serves image %s, not the image %s that /dev/nbd%d was "
                "mapped from", s->o->target, *e->identity ? e->identity : "(unknown)",
                s->o->identity, s->o->device);
  }
  snprintf (s->identity, sizeof s->identity, "%s", e->identity);
  if (s->o->attach || s->o->device >= 0 || !*e->identity ||
      (dup = sup_mapped_elsewhere (e->identity, s->o, why, sizeof why)) == -1)
    return;
  if (dup < 0) {
    for (unsigned i = 0; i < s->conns; i++)
      close (fds[i]);
    fail_start (s, "%s", why);
  }
  for (unsigned i = 0; i < s->conns; i++)
    close (fds[i]);
  logmsg ("image %s is already mapped on /dev/nbd%d", e->identity, dup);
  stop_server (s);
  rbdx_state_remove_keyring (s->o->keyring_file);
  dprintf (s->report_fd, "DUP %d\n", dup);
  close (s->report_fd);
  remove_private_dir (s);
  _exit (0);
}

void
sup_map (const struct rbdx_map_opts *o, int report_fd)
{
  static struct sup sup;
  struct sup *s = &sup;
  int fds[RBDX_MAX_CONNECTIONS], r, tries;
  struct rbdx_export e;
  const char *why = NULL;
  struct rbdx_nl_config cfg;
  char path[400], tail[1024];

  sup_setup (s, o, report_fd);

  if (rbdx_nl_open (&s->cmd) || rbdx_nl_open (&s->mc) || rbdx_nl_subscribe (s->mc))
    fail_start (s, "cannot use the kernel's NBD netlink interface");

  if (o->orphan > 0)
    sup_kill_orphan (s);

  /* An attach to a device recorded as this mapping's (its identity is
   * known): the new server knows /dev/nbdN from the start, for a quiesce
   * before the sockets are handed over. */
  if (!o->is_uri && o->attach && *o->identity && (r = sup_write_device_file (s)))
    fail_start (s, "cannot write %s: %s", s->devfile, strerror (-r));
  if (!o->is_uri) {
    if (spawn_server (s))
      fail_start (s, "cannot start %s: %s", o->engine ? o->engine : o->nbdkit,
                  strerror (errno));
    r = wait_server (s, 120);
    if (r == -2)
      fail_start (s, "rbdx %s of %s was interrupted while its server started: "
                  "nothing was %s", o->attach ? "attach" : "map", o->target,
                  o->attach ? "changed" : "mapped");
    if (r) {
      server_log_tail (s, tail, sizeof tail);
      fail_start (s, "the rbdx server for %s did not start: %s", o->target,
                  *tail ? tail : "(no message)");
    }
  }

  /* A socket file exists once nbdkit has bound it, a moment before it
   * listens: "connection refused" then means "not yet" while our server
   * lives (up to 10 s).  ESTALE: the export changed while connecting. */
  for (tries = 0;; tries++) {
    r = rbdx_negotiate_many (s->connect_to, s->conns, fds, &e, &why);
    if (r == -ESTALE && tries < 3)
      continue;
    if ((r == -ECONNREFUSED || r == -ENOENT) && !o->is_uri && tries < 100 &&
        s->server > 0 && waitpid (s->server, NULL, WNOHANG) == 0) {
      sleep_s (0.1);
      continue;
    }
    break;
  }
  if (r)
    fail_start (s, "cannot connect to %s: %s", o->is_uri ? o->target : "the rbdx server",
                why ? why : strerror (-r));
  check_identity (s, &e, fds);
  /* rbd-nbd's cookie: the kernel's identifier pins the identity too, for
   * an attach that finds no state file (nbd-compat.h), within what an
   * attach reads back (RBDX_NBD_BACKEND_MAX, struct rbdx_map_opts). */
  if (!o->attach && *o->cookie &&
      rbdx_nbd_backend_add_identity (s->backend, RBDX_NBD_BACKEND_MAX,
                                     s->identity) < 0) {
    for (unsigned i = 0; i < s->conns; i++)
      close (fds[i]);
    fail_start (s, "the cookie and the identity %s do not fit the kernel's backend "
                "identifier", s->identity);
  }
  if (s->conns > 1 && !e.multi_conn) {
    for (unsigned i = 0; i < s->conns; i++)
      close (fds[i]);
    if (o->connections_set)
      fail_start (s, "the server does not advertise multi-conn for %s, so more than "
                  "one connection would not be safe: use --connections 1", o->target);
    logmsg ("the server does not advertise multi-conn: using one connection");
    s->conns = 1;
    r = rbdx_negotiate_many (s->connect_to, 1, fds, &e, &why);
    if (r)
      fail_start (s, "cannot connect: %s", why ? why : strerror (-r));
  }
  if (o->is_uri && e.size == (uint64_t) INT64_MAX - 4095) {
    for (unsigned i = 0; i < s->conns; i++)
      close (fds[i]);
    fail_start (s, "%s advertises the largest possible size (an rbdx server with "
                "advertise_size=max): map the image spec instead", o->target);
  }
  /* Our own server advertises the largest size; the real one is in the
   * size file (a stand-in server may not write it: then the handshake's). */
  if (!o->is_uri) {
    uint64_t v = sup_read_size_file (s);
    if (v)
      e.size = v;
    else if (e.size == (uint64_t) INT64_MAX - 4095) {
      for (unsigned i = 0; i < s->conns; i++)
        close (fds[i]);
      fail_start (s, "the rbdx server did not publish the size of %s in %s",
                  o->target, s->sizefile);
    }
  }
  if (e.size == 0) {
    for (unsigned i = 0; i < s->conns; i++)
      close (fds[i]);
    fail_start (s, "%s has size 0: nothing to map", o->target);
  }

  cfg = (struct rbdx_nl_config) {
    .index = o->device, .size = e.size,
    .block_size = rbdx_kernel_block_size (e.min_block),
    .server_flags = e.flags | (o->read_only ? (1u << 1) : 0),
    .io_timeout = o->io_timeout, .dead_conn_timeout = o->reattach_timeout,
    .backend = s->backend,
  };
  if (o->attach)
    r = rbdx_nl_reconfigure (s->cmd, o->device, s->backend, fds, s->conns, 0);
  else
    r = rbdx_nl_connect (s->cmd, &cfg, fds, s->conns, &s->index);
  if (r) {
    for (unsigned i = 0; i < s->conns; i++)
      close (fds[i]);
    if (o->attach && r == -EINVAL)
      fail_start (s, "cannot re-attach /dev/nbd%d: not connected, or connected to "
                  "another backend than %s", o->device, s->backend);
    if (o->device >= 0)
      fail_start (s, "cannot connect /dev/nbd%d: %s", o->device, errno_text (r));
    fail_start (s, "cannot connect an NBD device: %s", errno_text (r));
  }
  /* The kernel picked the device: tell the server before anything can
   * mount it, so its quiesce hook gets /dev/nbdN (server-args.h). */
  if (!o->is_uri && (r = sup_write_device_file (s)) < 0) {
    if (!o->attach)
      rbdx_nl_disconnect (s->cmd, s->index);
    for (unsigned i = 0; i < s->conns; i++)
      close (fds[i]);
    fail_start (s, "cannot write %s for the quiesce hook: %s", s->devfile,
                strerror (-r));
  }
  sup_add_copies (s, fds, s->conns, e.size);
  s->dev_size = o->attach ? rbdx_device_bytes (s->index) : e.size;
  if ((o->attach && s->dev_size != e.size) || !o->is_uri)
    s->next_poll = 0;       /* follow the size at once */
  else
    s->next_poll = now () + o->resize_poll;

  /* Usable: the block device node and its size are there. */
  snprintf (path, sizeof path, "/dev/nbd%d", s->index);
  for (tries = 0; tries < 100; tries++) {
    struct stat st;
    if (stat (path, &st) == 0 && S_ISBLK (st.st_mode) && rbdx_device_bytes (s->index) > 0)
      break;
    sleep_s (0.1);
  }
  if (tries == 100) {
    rbdx_nl_disconnect (s->cmd, s->index);
    fail_start (s, "%s did not appear with a size within 10 s", path);
  }
  /* A mapping that is not recorded could not be listed, unmapped by
   * name or healed, and a map of the same image would map it again (a
   * full /run, a tmpfs of a few MiB). */
  if ((r = sup_save_state (s)) < 0) {
    if (!o->attach)
      rbdx_nl_disconnect (s->cmd, s->index);
    fail_start (s, "cannot write the state of %s in %s: %s%s", path,
                rbdx_run_dir (), strerror (-r),
                o->attach ? " (the device is left as it was)" : "");
  }
  /* Recorded: map, attach and unmap may go on (never LOCK_UN: the lock
   * stays `rbdx map`'s until it exits). */
  if (rbdx_lock_fd >= 0) {
    close (rbdx_lock_fd);
    rbdx_lock_fd = -1;
  }
  /* None over another mapping's: `map --connection-info` then prints
   * the device itself as the path (cli_print_device_info). */
  if (!o->is_uri &&
      (r = rbdx_devlink_add (o->target, s->index, sup_devlink_live)) < 0)
    logmsg ("no devlink of %s to %s (its path is the device): %s", o->target, path,
            r == -EEXIST ? "the name is another mapping's, or not a devlink"
                         : strerror (-r));
  logmsg ("%s %s with %u connection(s), %llu bytes", path,
          o->attach ? "re-attached" : "mapped", s->conns,
          (unsigned long long) e.size);
  dprintf (report_fd, "OK %d %ld %u\n", s->index, (long) s->server, s->conns);
  close (report_fd);
  s->report_fd = -1;
  sup_run (s);
}

int
rbdx_supervise_start (const struct rbdx_map_opts *o, int *index_out,
                      long *server_out, long *sup_out, unsigned *conns_out,
                      const char **msg)
{
  /* One report: "ERR " and at most SUP_REPORT_MAX - 1 bytes (sup.h). */
  static char why[SUP_REPORT_MAX + 16];
  char buf[SUP_REPORT_MAX + 16];
  size_t used = 0;
  int pfd[2], idx;
  long server;
  unsigned conns;
  ssize_t r;
  pid_t pid;

  if (pipe2 (pfd, O_CLOEXEC) == -1) {
    snprintf (why, sizeof why, "pipe: %s", strerror (errno));
    *msg = why;
    return -1;
  }
  fflush (NULL);
  pid = fork ();
  if (pid < 0) {
    snprintf (why, sizeof why, "fork: %s", strerror (errno));
    *msg = why;
    return -1;
  }
  if (pid == 0) {
    close (pfd[0]);
    sup_map (o, pfd[1]);
  }
  /* The supervisor owns what the caller wrote for it (o->keyring_file):
   * the signals the caller blocked while writing it may end us again. */
  cli_end_signals (SIG_UNBLOCK);
  close (pfd[1]);
  while (used < sizeof buf - 1 &&
         (r = read (pfd[0], buf + used, sizeof buf - 1 - used)) != 0) {
    if (r < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    used += (size_t) r;
  }
  close (pfd[0]);
  buf[used] = '\0';
  buf[strcspn (buf, "\n")] = '\0';
  if (sscanf (buf, "DUP %d", &idx) == 1) {
    waitpid (pid, NULL, 0);
    *index_out = idx;
    return 1;
  }
  if (sscanf (buf, "OK %d %ld %u", &idx, &server, &conns) == 3) {
    *index_out = idx;
    *server_out = server;
    *sup_out = pid;
    *conns_out = conns;
    return 0;
  }
  waitpid (pid, NULL, 0);
  snprintf (why, sizeof why, "%s", strncmp (buf, "ERR ", 4) == 0 ? buf + 4
            : "the supervisor died before mapping the device");
  *msg = why;
  return -1;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/sup-loop.c: the supervisor process: its setup, the loop
 * that keeps the device served, its signals, and the unmap (see sup.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "negotiate.h"
#include "params.h"
#include "sup.h"
#include "teardown.h"

/* A failure before the supervisor can log: the mapping (not an attach)
 * ends here, and the keyring it owns with it. */
static void __attribute__ ((noreturn))
setup_exit (const struct rbdx_map_opts *o)
{
  if (!o->attach)
    rbdx_state_remove_keyring (o->keyring_file);
  _exit (1);
}

/* Close every descriptor from 3 up but the @p n in @p keep (-1 entries
 * ignored). */
static void
close_all_but (const int *keep, size_t n)
{
  unsigned from = 3;
  size_t i;

  for (;;) {
    int next = -1;            /* the lowest kept descriptor >= from */

    for (i = 0; i < n; i++)
      if (keep[i] >= (int) from && (next < 0 || keep[i] < next))
        next = keep[i];
    if (next < 0) {
      close_range (from, ~0U, 0);
      return;
    }
    if ((unsigned) next > from)
      close_range (from, (unsigned) next - 1, 0);
    from = (unsigned) next + 1;
  }
}

void
sup_setup (struct sup *s, const struct rbdx_map_opts *o, int report_fd)
{
  int null, logfd, r;
  sigset_t mask;
  char path[600];
  const char *um;

  /* The flock belongs to the open file description that `rbdx map`
   * holds too: our copy is kept until the mapping is recorded
   * (sup_save_state), so a `rbdx map` killed meanwhile does not let
   * another map or unmap in while this one is still half done. */
  memset (s, 0, sizeof *s);
  s->o = o;
  s->report_fd = report_fd;
  s->index = o->device;
  s->conns = o->connections;
  snprintf (s->identity, sizeof s->identity, "%s", o->identity);
  setsid ();
  if (chdir ("/") == -1)
    setup_exit (o);
  signal (SIGPIPE, SIG_IGN);
  sigemptyset (&mask);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGUSR1);
  sigaddset (&mask, SIGCHLD);
  sigaddset (&mask, SIGHUP);
  sigprocmask (SIG_BLOCK, &mask, NULL);
  sigdelset (&mask, SIGHUP);
  s->sigfd = signalfd (-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);

  /* A Unix socket path has at most 107 bytes. */
  if (strlen (rbdx_run_dir ()) > 80) {
    sup_report_err (report_fd, "the run directory %s is too long (80 bytes at most)",
             rbdx_run_dir ());
    setup_exit (o);
  }
  if (snprintf (s->dir, sizeof s->dir, "%s/sup-%ld", rbdx_run_dir (), (long) getpid ()) < 0 ||
      snprintf (s->sock, sizeof s->sock, "%s/nbd.sock", s->dir) < 0 ||
      snprintf (s->srvlog, sizeof s->srvlog, "%s%s", *o->log_file ? o->log_file : s->dir,
                *o->log_file ? "" : "/server.log") < 0 ||
      snprintf (s->sizefile, sizeof s->sizefile, "%s/size", s->dir) < 0 ||
      snprintf (s->devfile, sizeof s->devfile, "%s/quiesce-device", s->dir) < 0)
    setup_exit (o);
  /* The server's metrics file: the one given (metrics_file=, already
   * absolute), else ours in the private directory. */
  um = rbdx_param_find (o->params, o->nparams, "metrics_file");
  if ((size_t) snprintf (s->metrics, sizeof s->metrics, "%s%s", um ? um : s->dir,
                         um ? "" : "/metrics.prom") >= sizeof s->metrics) {
    sup_report_err (report_fd, "metrics_file=%s: longer than %zu bytes", um,
             sizeof s->metrics - 1);
    setup_exit (o);
  }
  /* Either identifier fits s->backend whole. */
  _Static_assert (RBDX_BACKEND_MAX >= sizeof o->cookie &&
                  RBDX_BACKEND_MAX >= sizeof "rbdx:" - 1 + sizeof o->target,
                  "a backend identifier does not fit RBDX_BACKEND_MAX");
  if (*o->cookie)
    snprintf (s->backend, sizeof s->backend, "%s", o->cookie);
  else
    snprintf (s->backend, sizeof s->backend, "rbdx:%s", o->target);
  s->connect_to = o->is_uri ? o->target : s->sock;
  if (!o->is_uri && o->engine) {
    snprintf (s->engine_to, sizeof s->engine_to, "%s%.300s",
              RBDX_ENGINE_PREFIX, s->sock);
    s->connect_to = s->engine_to;
  }
  /* Named by our pid: one there is a dead supervisor's that nothing
   * cleaned up (remove_stale_dirs runs at list and map). */
  r = mkdir (s->dir, 0700);
  if (r == -1 && errno == EEXIST) {
    int e = rbdx_state_remove_private_dir (s->dir);
    r = e == 0 ? mkdir (s->dir, 0700) : -1;
    if (e < 0)
      errno = -e;
  }
  if (r == -1) {
    sup_report_err (report_fd, "cannot create %s: %s", s->dir, strerror (errno));
    setup_exit (o);
  }
  /* Ours in the private directory, or the one given (rbd-nbd's
   * --log-file, absolute): the server's messages go there too. */
  if (snprintf (path, sizeof path, "%s%s", *o->log_file ? o->log_file : s->dir,
                *o->log_file ? "" : "/supervisor.log") < 0)
    setup_exit (o);
  logfd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
  if (logfd < 0 && *o->log_file) {
    sup_report_err (report_fd, "cannot open the log file %s: %s", path, strerror (errno));
    rmdir (s->dir);
    setup_exit (o);
  }
  null = open ("/dev/null", O_RDWR);
  if (null >= 0)
    dup2 (null, 0);
  if (logfd >= 0) {
    dup2 (logfd, 1);
    dup2 (logfd, 2);
  }
  else if (null >= 0) {
    /* No log (our own could not be created): never the caller's
     * stdout and stderr, which may be pipes it reads to their end. */
    dup2 (null, 1);
    dup2 (null, 2);
  }
  /* Nothing else of the caller's stays open for the mapping's life: a
   * descriptor it left without O_CLOEXEC (rbd-nbd --show-cookie's copy
   * of stdout, the pipe of a caller that reads the output to its end,
   * an attach daemon's sockets) would keep that caller waiting as long
   * as the device is mapped.  Kept: the report pipe, the map lock's
   * copy (above), the signalfd, the log and /dev/null. */
  {
    const int keep[] = { report_fd, rbdx_lock_fd, s->sigfd, logfd, null };

    close_all_but (keep, sizeof keep / sizeof keep[0]);
  }
  logmsg ("supervising %s for %s", o->target, o->attach ? "re-attach" : "map");
}

static void __attribute__ ((noreturn))
unmap_and_exit (struct sup *s, bool disconnect)
{
  if (disconnect) {
    int r = rbdx_teardown_disconnect (s->cmd, s->index, 30);
    logmsg ("disconnecting /dev/nbd%d: %s", s->index, r ? errno_text (r) : "ok");
  }
  close_copies (s);
  stop_server (s);
  rbdx_teardown_forget (s->index, s->o->target, getpid ());
  rbdx_state_remove_keyring (s->o->keyring_file);
  logmsg ("/dev/nbd%d unmapped", s->index);
  remove_private_dir (s);
  _exit (0);
}

/* SIGTERM (rbdx unmap, systemd stopping the unit): unmap unless the
 * device is in use, as `rbdx unmap` checks it, so that a signal never
 * pulls a device from under a mounted filesystem (its dirty pages would
 * be lost with write errors the application never sees); the page cache
 * of one not in use is written back first.  @return true to unmap. */
static bool
may_unmap (struct sup *s)
{
  char dev[32];
  int fd;

  snprintf (dev, sizeof dev, "/dev/nbd%d", s->index);
  fd = open (dev, O_RDONLY | O_EXCL | O_CLOEXEC);
  if (fd < 0 && errno == EBUSY) {
    logmsg ("asked to unmap (SIGTERM), but %s is in use (mounted or held "
            "open exclusively): it stays mapped; unmount it, then `rbdx "
            "unmap` (or `rbdx unmap --force`)", dev);
    return false;
  }
  if (fd >= 0) {
    if (fsync (fd) == -1 && errno != EROFS && errno != EINVAL)
      logmsg ("flushing %s: %s", dev, strerror (errno));
    close (fd);
  }
  return true;
}

static void
on_signal (struct sup *s)
{
  struct signalfd_siginfo si;
  int status;
  pid_t pid;

  while (read (s->sigfd, &si, sizeof si) == (ssize_t) sizeof si) {
    switch (si.ssi_signo) {
    case SIGTERM:
      if (!may_unmap (s))
        break;
      /* fall through */
    case SIGINT:              /* at once: Ctrl-C, `rbdx unmap --force` */
      logmsg ("asked to unmap (signal %u)", si.ssi_signo);
      unmap_and_exit (s, true);
    case SIGUSR1:
      s->usr1 = true;
      break;
    case SIGCHLD:
      while ((pid = waitpid (-1, &status, WNOHANG)) > 0) {
        if (pid != s->server)
          continue;
        logmsg ("the server (pid %ld) %s %d", (long) pid,
                WIFSIGNALED (status) ? "was killed by signal" : "exited with status",
                WIFSIGNALED (status) ? WTERMSIG (status) : WEXITSTATUS (status));
        s->server = 0;
        /* Back off when it keeps dying at once. */
        s->restart_delay = now () - s->server_started > 30 ? 0.5
          : (s->restart_delay < 0.5 ? 0.5 : s->restart_delay * 2);
        if (s->restart_delay > 16)
          s->restart_delay = 16;
        s->next_server_start = now () + s->restart_delay;
      }
      break;
    }
  }
}

void
sup_run (struct sup *s)
{
  for (;;) {
    struct pollfd p[2 + 2 * RBDX_MAX_CONNECTIONS];
    size_t np = 0, i;
    double t;
    unsigned n;
    int r;

    p[np++] = (struct pollfd) { .fd = s->sigfd, .events = POLLIN };
    p[np++] = (struct pollfd) { .fd = rbdx_nl_fd (s->mc), .events = POLLIN };
    /* events 0: only POLLHUP/POLLERR, i.e. the kernel shut the socket
     * down (it marked that connection dead). */
    for (i = 0; i < s->ncopies; i++)
      p[np++] = (struct pollfd) { .fd = s->copies[i].fd, .events = 0 };
    r = poll (p, np, 200);
    if (r < 0 && errno != EINTR) {
      logmsg ("poll: %s", strerror (errno));
      sleep_s (0.2);
    }
    if (r > 0) {
      if (p[0].revents)
        on_signal (s);
      if (p[1].revents)
        sup_read_link_dead (s);
      /* Drop the copies of sockets the kernel shut down. */
      sup_drop_shut_copies (s, p + 2);
    }
    t = now ();
    if (s->usr1) {
      /* Only retry now: guessing a count could hand the kernel sockets it
       * has no dead slot for, which it drops silently. */
      s->usr1 = false;
      rbdx_relink_retry_now (&s->relink);
      s->restart_delay = 0;
      if (s->server == 0)
        s->next_server_start = 0;
      logmsg ("asked to re-attach: %u connection(s) known dead", s->relink.dead);
    }
    if (!s->o->is_uri && s->server == 0 && t >= s->next_server_start) {
      if (spawn_server (s) == 0) {
        s->restarts++;
        sup_save_state (s);
      }
      else
        s->next_server_start = t + 1;
    }
    n = rbdx_relink_to_send (&s->relink, s->conns, t);
    if (n)
      reattach (s, n);
    if (s->grow_to)
      sup_finish_growth (s);
    if (s->o->resize_poll && !s->relink.dead && t >= s->next_poll) {
      if (s->o->is_uri) {
        s->next_poll = t + s->o->resize_poll;
        poll_size (s);
      }
      else {
        s->next_poll = t + 0.2;     /* a local file: cheap */
        sup_follow_size_file (s);
      }
    }
    /* A LINK_DEAD event lost (multicast overrun): the kernel shut those
     * sockets down, so their copies are gone; count from the copies. */
    n = rbdx_relink_check_lost (&s->relink, s->conns, (unsigned) s->ncopies, t);
    if (n)
      logmsg ("%u connection(s) found dead without an event", n);
    if (!rbdx_device_connected (s->index)) {
      if (++s->disconnected_ticks >= 10) {
        logmsg ("/dev/nbd%d was disconnected by someone else", s->index);
        unmap_and_exit (s, false);
      }
    }
    else
      s->disconnected_ticks = 0;
  }
}

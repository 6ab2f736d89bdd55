/* SPDX-License-Identifier: BSD-3-Clause */
/* server/supervise.c: see supervise.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "links.h"
#include "negotiate.h"
#include "netlink.h"
#include "state.h"
#include "supervise.h"
#include "teardown.h"

#define MAX_CONNS 16
/* Logical block size given to the kernel: 512 bytes, as rbd-nbd does, so
 * partition tables and 512-byte I/O keep working; more when the export's
 * minimum block size says so (a LUKS2 image's 4096-byte crypto sector),
 * up to the page size the kernel's NBD driver accepts. */
#define KERNEL_BLOCK_SIZE 512
#define KERNEL_BLOCK_SIZE_MAX 4096

struct copy {
  int fd;            /* our duplicate of a socket the kernel holds */
  uint64_t size;     /* export size that connection negotiated, bytes */
  bool retiring;     /* shut down for a growth, waiting for the kernel */
};

struct sup {
  const struct rbdx_map_opts *o;
  unsigned conns;
  char dir[256], sock[300], srvlog[300], sizefile[300];
  char backend[RBDX_TARGET_MAX + 8];
  const char *connect_to;
  pid_t server;
  int index;
  struct rbdx_nl *cmd, *mc;
  int sigfd, report_fd;
  uint64_t dev_size;
  struct copy copies[2 * MAX_CONNS];
  size_t ncopies;
  unsigned dead;           /* dead slots counted, not yet refilled */
  double dead_since, next_reattach, last_reattach_msg;
  uint64_t grow_to;
  double grow_since, next_poll, next_server_start, server_started;
  double restart_delay;
  unsigned disconnected_ticks;
  bool usr1;
  bool said_no_size;
  double short_since;      /* when fewer live copies than slots were first seen */
  double last_event;       /* last LINK_DEAD event */
  /* The image identity the server stated at map time ("" if none): every
   * server started later is pinned to it (identity=), and a re-attach to
   * a server stating another identity is refused. */
  char identity[320];
  unsigned long reattaches, resizes, restarts;   /* for rbdx status */
  char metrics[300];       /* our server's metrics_file */
};

static void save_state (struct sup *s);

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void
sleep_s (double s)
{
  struct timespec ts = { (time_t) s, (long) ((s - (double) (time_t) s) * 1e9) };
  nanosleep (&ts, NULL);
}

static void __attribute__ ((format (printf, 1, 2)))
logmsg (const char *fmt, ...)
{
  char when[32];
  time_t t = time (NULL);
  struct tm tm;
  va_list ap;

  strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%S", localtime_r (&t, &tm));
  fprintf (stderr, "%s rbdx[%ld]: ", when, (long) getpid ());
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  fflush (stderr);
}

/* The last few non-empty lines of the server's log, joined with "; ". */
static void
server_log_tail (const struct sup *s, char *buf, size_t len)
{
  char text[4096], *lines[8];
  int fd = open (s->srvlog, O_RDONLY | O_CLOEXEC), n = 0, i;
  off_t end;
  ssize_t r;

  buf[0] = '\0';
  if (fd < 0)
    return;
  end = lseek (fd, 0, SEEK_END);
  lseek (fd, end > (off_t) sizeof text - 1 ? end - (off_t) sizeof text + 1 : 0, SEEK_SET);
  r = read (fd, text, sizeof text - 1);
  close (fd);
  if (r <= 0)
    return;
  text[r] = '\0';
  for (char *p = strtok (text, "\n"); p; p = strtok (NULL, "\n")) {
    if (n == 8) {
      memmove (lines, lines + 1, 7 * sizeof *lines);
      n = 7;
    }
    lines[n++] = p;
  }
  for (i = n > 3 ? n - 3 : 0; i < n; i++) {
    size_t used = strlen (buf);
    snprintf (buf + used, len - used, "%s%s", used ? "; " : "", lines[i]);
  }
}

static void
close_copies (struct sup *s)
{
  for (size_t i = 0; i < s->ncopies; i++)
    close (s->copies[i].fd);
  s->ncopies = 0;
}

static void
stop_server (struct sup *s)
{
  int i;

  if (s->server <= 0)
    return;
  kill (s->server, SIGTERM);
  for (i = 0; i < 300; i++) {
    if (waitpid (s->server, NULL, WNOHANG) == s->server)
      break;
    sleep_s (0.1);
  }
  if (i == 300) {
    logmsg ("the server (pid %ld) did not stop in 30 s: killing it", (long) s->server);
    kill (s->server, SIGKILL);
    waitpid (s->server, NULL, 0);
  }
  s->server = 0;
}

static void
remove_private_dir (struct sup *s)
{
  char path[400];
  unlink (s->sock);
  unlink (s->srvlog);
  unlink (s->sizefile);
  unlink (s->metrics);
  snprintf (path, sizeof path, "%s/supervisor.log", s->dir);
  unlink (path);
  rmdir (s->dir);
}

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
  if (s->report_fd >= 0) {
    dprintf (s->report_fd, "ERR %s\n", msg);
    close (s->report_fd);
  }
  remove_private_dir (s);
  _exit (1);
}

static int
spawn_server (struct sup *s)
{
  const struct rbdx_map_opts *o = s->o;
  char **argv = calloc (o->nparams + 16, sizeof *argv);
  char size_param[320], id_param[340], metrics_param[320];
  size_t n = 0, i;
  pid_t pid, parent;

  if (!argv)
    return -ENOMEM;
  if (snprintf (size_param, sizeof size_param, "size_file=%s", s->sizefile) < 0) {
    free (argv);
    return -EINVAL;
  }
  argv[n++] = (char *) o->nbdkit;
  argv[n++] = "--foreground";
  argv[n++] = "--unix";
  argv[n++] = s->sock;
  if (o->read_only)
    argv[n++] = "--readonly";
  argv[n++] = (char *) o->plugin;
  argv[n++] = (char *) o->target;
  /* Our own server tells every connection the largest size and publishes
   * the image's real size in a file: growth then needs no new connections
   * (see server/README.md). */
  argv[n++] = size_param;
  argv[n++] = "advertise_size=max";
  /* Request counters for `rbdx status` (nbdkit-rbdx-plugin(1), METRICS). */
  snprintf (metrics_param, sizeof metrics_param, "metrics_file=%s", s->metrics);
  argv[n++] = metrics_param;
  argv[n++] = "metrics_interval=2";
  /* Once the image is known, a restarted server serves exactly it, even
   * if its name now means another image (rename, re-create). */
  if (*s->identity) {
    snprintf (id_param, sizeof id_param, "identity=%s", s->identity);
    argv[n++] = id_param;
  }
  for (i = 0; i < o->nparams; i++)
    argv[n++] = o->params[i];
  argv[n] = NULL;

  unlink (s->sock);
  parent = getpid ();
  pid = fork ();
  if (pid == 0) {
    /* The server dies with its supervisor, by SIGKILL: nbdkit --exit-with-
     * parent would send SIGTERM, after which nbdkit 1.32 answers the
     * kernel's requests with NBD_ESHUTDOWN (I/O errors) and never exits
     * while the kernel keeps the connections open.  Killed, its
     * connections die and the kernel holds the I/O for `rbdx attach`. */
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (getppid () != parent)
      _exit (1);
    int fd = open (s->srvlog, O_WRONLY | O_CREAT | O_APPEND, 0600);
    int null = open ("/dev/null", O_RDONLY);
    sigset_t none;
    if (fd >= 0) {
      dup2 (fd, 1);
      dup2 (fd, 2);
    }
    if (null >= 0)
      dup2 (null, 0);
    close_range (3, ~0U, 0);   /* nothing of ours leaks into the server */
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    signal (SIGPIPE, SIG_DFL);
    execvp (argv[0], argv);
    dprintf (2, "rbdx: cannot run %s: %s\n", argv[0], strerror (errno));
    _exit (127);
  }
  free (argv);
  if (pid < 0)
    return -errno;
  s->server = pid;
  s->server_started = now ();
  logmsg ("started the server, pid %ld, on %s", (long) pid, s->sock);
  return 0;
}

/* Wait until the server accepts a connection, or exits.  0 or -1. */
static int
wait_server (struct sup *s, double secs)
{
  double until = now () + secs;
  struct stat st;
  int status;

  while (now () < until) {
    if (waitpid (s->server, &status, WNOHANG) == s->server) {
      s->server = 0;
      return -1;
    }
    if (stat (s->sock, &st) == 0 && S_ISSOCK (st.st_mode))
      return 0;
    sleep_s (0.05);
  }
  return -1;
}

static void
add_copies (struct sup *s, const int *fds, size_t n, uint64_t size)
{
  for (size_t i = 0; i < n; i++) {
    if (s->ncopies == sizeof s->copies / sizeof s->copies[0]) {
      close (fds[i]);
      continue;
    }
    s->copies[s->ncopies++] = (struct copy) { .fd = fds[i], .size = size };
  }
}

static const char *
errno_text (int e)
{
  switch (e) {
  case -EBUSY: return "the device is already connected";
  case -EPERM: case -EACCES: return "not permitted (needs root: CAP_SYS_ADMIN)";
  case -ENOENT: return "the kernel has no nbd driver (modprobe nbd)";
  default: return strerror (-e);
  }
}

/* Hand the kernel fresh sockets for the dead slots counted. */
static void
reattach (struct sup *s)
{
  int fds[MAX_CONNS];
  struct rbdx_export e;
  const char *why = NULL;
  unsigned n = s->dead > s->conns ? s->conns : s->dead;
  int r;

  r = rbdx_negotiate_many (s->connect_to, n, fds, &e, &why);
  if (r == 0 && *s->identity && strcmp (e.identity, s->identity) != 0) {
    for (unsigned i = 0; i < n; i++)
      close (fds[i]);
    why = "the server now serves another image than the one mapped";
    r = -ESTALE;
  }
  if (r) {
    if (now () - s->last_reattach_msg > 5) {
      logmsg ("cannot reconnect %u connection(s) yet: %s", n, why ? why : strerror (-r));
      s->last_reattach_msg = now ();
    }
    s->next_reattach = now () + 0.5;
    return;
  }
  r = rbdx_nl_reconfigure (s->cmd, s->index, s->backend, fds, n, 0);
  if (r) {
    logmsg ("NBD_CMD_RECONFIGURE with %u socket(s) failed: %s", n, errno_text (r));
    for (unsigned i = 0; i < n; i++)
      close (fds[i]);
    s->next_reattach = now () + 1;
    return;
  }
  add_copies (s, fds, n, e.size);
  s->reattaches += n;
  save_state (s);
  logmsg ("re-attached %u connection(s) (export size %llu bytes)", n,
          (unsigned long long) e.size);
  s->dead -= n;
  s->dead_since = s->dead ? now () : 0;
}

/* The image size our server publishes (size_file=), 0 if not there. */
static uint64_t
read_size_file (const struct sup *s)
{
  unsigned long long v = 0;
  FILE *f = fopen (s->sizefile, "re");

  if (!f)
    return 0;
  if (fscanf (f, "%llu", &v) != 1)
    v = 0;
  fclose (f);
  return v;
}

/* Spec mode: every connection advertises the largest size, so a resize
 * only needs the device's size changed. */
static void
follow_size_file (struct sup *s)
{
  uint64_t v = read_size_file (s);
  int r;

  if (!v) {
    if (!s->said_no_size)
      logmsg ("no size in %s: resizes are not followed", s->sizefile);
    s->said_no_size = true;
    return;
  }
  if (v == s->dev_size)
    return;
  r = rbdx_nl_reconfigure (s->cmd, s->index, s->backend, NULL, 0, v);
  logmsg ("the image's size changed from %llu to %llu bytes: %s",
          (unsigned long long) s->dev_size, (unsigned long long) v,
          r ? errno_text (r) : "device size set");
  if (!r) {
    s->dev_size = v;
    s->resizes++;
    save_state (s);
  }
}

/* URI mode: ask the server for the export's size now; follow it. */
static void
poll_size (struct sup *s)
{
  struct rbdx_export e;
  const char *why = NULL;
  int fd, r;

  r = rbdx_negotiate (s->connect_to, &fd, &e, &why);
  if (r)
    return;                  /* down: the re-attach path deals with it */
  close (fd);
  if (e.size == s->dev_size || e.size == s->grow_to)
    return;
  if (e.size < s->dev_size) {
    r = rbdx_nl_reconfigure (s->cmd, s->index, s->backend, NULL, 0, e.size);
    logmsg ("the export shrank from %llu to %llu bytes: %s",
            (unsigned long long) s->dev_size, (unsigned long long) e.size,
            r ? errno_text (r) : "device size set");
    if (!r) {
      s->dev_size = e.size;
      s->resizes++;
      save_state (s);
    }
    s->grow_to = 0;
    return;
  }
  /* Growth: retire every connection negotiated at a smaller size.  Our
   * SHUT_WR makes the server read EOF after the requests already sent,
   * answer them and close; the kernel then counts the link dead. */
  s->grow_to = e.size;
  s->grow_since = now ();
  logmsg ("the export grew from %llu to %llu bytes: replacing the connections",
          (unsigned long long) s->dev_size, (unsigned long long) e.size);
  for (size_t i = 0; i < s->ncopies; i++)
    if (s->copies[i].size < e.size && !s->copies[i].retiring) {
      shutdown (s->copies[i].fd, SHUT_WR);
      s->copies[i].retiring = true;
    }
}

static void
finish_growth (struct sup *s)
{
  size_t big = 0;
  int r;

  for (size_t i = 0; i < s->ncopies; i++)
    if (s->copies[i].size >= s->grow_to)
      big++;
  if (big < s->conns || s->dead)
    return;
  r = rbdx_nl_reconfigure (s->cmd, s->index, s->backend, NULL, 0, s->grow_to);
  logmsg ("all %u connections negotiated %llu bytes: %s", s->conns,
          (unsigned long long) s->grow_to, r ? errno_text (r) : "device size set");
  if (!r) {
    s->dev_size = s->grow_to;
    s->grow_to = 0;
    s->resizes++;
    save_state (s);
  }
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
  logmsg ("/dev/nbd%d unmapped", s->index);
  remove_private_dir (s);
  _exit (0);
}

static void
save_state (struct sup *s)
{
  struct rbdx_state st = {
    .index = s->index, .connections = s->conns, .supervisor = getpid (),
    .supervisor_start = rbdx_proc_start (getpid ()),
    .server = s->server, .server_start = rbdx_proc_start (s->server),
    .read_only = s->o->read_only, .resize_poll = s->o->resize_poll,
  };
  int r;

  snprintf (st.target, sizeof st.target, "%s", s->o->target);
  snprintf (st.identity, sizeof st.identity, "%s", s->identity);
  snprintf (st.metrics, sizeof st.metrics, "%s", s->o->is_uri ? "" : s->metrics);
  st.reattaches = s->reattaches;
  st.resizes = s->resizes;
  st.server_restarts = s->restarts;
  snprintf (st.backend, sizeof st.backend, "%s", s->backend);
  snprintf (st.socket, sizeof st.socket, "%s", s->o->is_uri ? "" : s->sock);
  for (size_t i = 0; i < s->o->nparams; i++) {
    size_t used = strlen (st.params);
    snprintf (st.params + used, sizeof st.params - used, "%s%c", s->o->params[i],
              RBDX_PARAM_SEP);
  }
  r = rbdx_state_save (&st);
  if (r)
    logmsg ("cannot write the state of /dev/nbd%d in %s: %s", s->index,
            rbdx_run_dir (), strerror (-r));
}

static void
on_signal (struct sup *s)
{
  struct signalfd_siginfo si;
  int status;
  pid_t pid;

  while (read (s->sigfd, &si, sizeof si) == (ssize_t) sizeof si) {
    switch (si.ssi_signo) {
    case SIGTERM: case SIGINT:
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

static void __attribute__ ((noreturn))
run (struct sup *s)
{
  for (;;) {
    struct pollfd p[2 + 2 * MAX_CONNS];
    size_t np = 0, i;
    double t;
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
      if (p[1].revents) {
        int n = rbdx_nl_read_link_dead (s->mc, s->index);
        if (n < 0)
          logmsg ("reading NBD netlink events failed: %s", strerror (-n));
        if (n > 0) {
          s->last_event = now ();
          logmsg ("%d connection(s) of /dev/nbd%d died", n, s->index);
          if (!s->dead)
            s->dead_since = now ();
          s->dead += (unsigned) n;
        }
      }
      /* Drop the copies of sockets the kernel shut down (from the end, so
       * the indexes of p[] still match). */
      for (i = s->ncopies; i-- > 0;)
        if (p[2 + i].revents & (POLLHUP | POLLERR)) {
          close (s->copies[i].fd);
          s->copies[i] = s->copies[--s->ncopies];
        }
    }
    t = now ();
    if (s->usr1) {
      /* Only retry now: guessing a count could hand the kernel sockets it
       * has no dead slot for, which it drops silently. */
      s->usr1 = false;
      s->next_reattach = 0;
      s->restart_delay = 0;
      if (s->server == 0)
        s->next_server_start = 0;
      logmsg ("asked to re-attach: %u connection(s) known dead", s->dead);
    }
    if (!s->o->is_uri && s->server == 0 && t >= s->next_server_start) {
      if (spawn_server (s) == 0) {
        s->restarts++;
        save_state (s);
      }
      else
        s->next_server_start = t + 1;
    }
    /* Let a burst of LINK_DEAD events arrive before counting them. */
    if (s->dead && t - s->dead_since >= 0.3 && t >= s->next_reattach)
      reattach (s);
    if (s->grow_to)
      finish_growth (s);
    if (s->o->resize_poll && !s->dead && t >= s->next_poll) {
      if (s->o->is_uri) {
        s->next_poll = t + s->o->resize_poll;
        poll_size (s);
      }
      else {
        s->next_poll = t + 0.2;     /* a local file: cheap */
        follow_size_file (s);
      }
    }
    /* A LINK_DEAD event lost (multicast overrun): the kernel shut those
     * sockets down, so their copies are gone.  After 5 s without any event,
     * count from the copies. */
    if (!s->dead && s->ncopies < s->conns) {
      if (!s->short_since)
        s->short_since = t;
      else if (t - s->short_since > 5 && t - s->last_event > 5) {
        s->dead = s->conns - (unsigned) s->ncopies;
        s->dead_since = t - 1;
        logmsg ("%u connection(s) found dead without an event", s->dead);
      }
    }
    else
      s->short_since = 0;
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

/* Another connected mapping of image @p identity in the same mode
 * (read-only or not), or -1. */
static int
mapped_elsewhere (const char *identity, bool read_only)
{
  int idx[256], n = rbdx_state_list (idx, 256);
  struct rbdx_state st;

  for (int i = 0; i < n; i++)
    if (rbdx_state_load (idx[i], &st) == 0 && !strcmp (st.identity, identity) &&
        st.read_only == read_only && rbdx_device_connected (idx[i]))
      return idx[i];
  return -1;
}

/* The identity the first connections stated.  Attach: it must be the one
 * recorded at map time.  Map without --device: an image already mapped
 * (by whatever name) is reported as "DUP INDEX" and not mapped twice. */
static void
check_identity (struct sup *s, const struct rbdx_export *e, const int *fds)
{
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
      (dup = mapped_elsewhere (e->identity, s->o->read_only)) < 0)
    return;
  for (unsigned i = 0; i < s->conns; i++)
    close (fds[i]);
  logmsg ("image %s is already mapped on /dev/nbd%d", e->identity, dup);
  stop_server (s);
  dprintf (s->report_fd, "DUP %d\n", dup);
  close (s->report_fd);
  remove_private_dir (s);
  _exit (0);
}

static void __attribute__ ((noreturn))
supervise (const struct rbdx_map_opts *o, int report_fd)
{
  static struct sup sup;
  struct sup *s = &sup;
  int fds[MAX_CONNS], r, null, logfd, tries;
  struct rbdx_export e;
  const char *why = NULL;
  struct rbdx_nl_config cfg;
  sigset_t mask;
  char path[400], tail[1024];

  /* The flock belongs to the open file description that `rbdx map` still
   * holds: closing our copy (never LOCK_UN) leaves it to the parent. */
  if (rbdx_lock_fd >= 0)
    close (rbdx_lock_fd);
  memset (s, 0, sizeof *s);
  s->o = o;
  s->report_fd = report_fd;
  s->index = o->device;
  s->conns = o->connections;
  snprintf (s->identity, sizeof s->identity, "%s", o->identity);
  setsid ();
  if (chdir ("/") == -1)
    _exit (1);
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
    dprintf (report_fd, "ERR the run directory %s is too long (80 bytes at most)\n",
             rbdx_run_dir ());
    _exit (1);
  }
  if (snprintf (s->dir, sizeof s->dir, "%s/sup-%ld", rbdx_run_dir (), (long) getpid ()) < 0 ||
      snprintf (s->sock, sizeof s->sock, "%s/nbd.sock", s->dir) < 0 ||
      snprintf (s->srvlog, sizeof s->srvlog, "%s/server.log", s->dir) < 0 ||
      snprintf (s->sizefile, sizeof s->sizefile, "%s/size", s->dir) < 0 ||
      snprintf (s->metrics, sizeof s->metrics, "%s/metrics.prom", s->dir) < 0)
    _exit (1);
  snprintf (s->backend, sizeof s->backend, "rbdx:%s", o->target);
  s->connect_to = o->is_uri ? o->target : s->sock;
  if (mkdir (s->dir, 0700) == -1) {
    dprintf (report_fd, "ERR cannot create %s: %s\n", s->dir, strerror (errno));
    _exit (1);
  }
  if (snprintf (path, sizeof path, "%s/supervisor.log", s->dir) < 0)
    _exit (1);
  logfd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  null = open ("/dev/null", O_RDWR);
  if (null >= 0)
    dup2 (null, 0);
  if (logfd >= 0) {
    dup2 (logfd, 1);
    dup2 (logfd, 2);
  }
  logmsg ("supervising %s for %s", o->target, o->attach ? "re-attach" : "map");

  if (rbdx_nl_open (&s->cmd) || rbdx_nl_open (&s->mc) || rbdx_nl_subscribe (s->mc))
    fail_start (s, "cannot use the kernel's NBD netlink interface");

  if (o->orphan > 0) {
    /* Its connections must be dead before we fill their slots: kill it and
     * count the kernel's LINK_DEAD events (5 s at most). */
    int dead = 0, n;
    logmsg ("killing the server of the dead supervisor, pid %ld", o->orphan);
    kill ((pid_t) o->orphan, SIGKILL);
    for (tries = 0; tries < 50 && dead < (int) s->conns; tries++) {
      sleep_s (0.1);
      n = rbdx_nl_read_link_dead (s->mc, o->device);
      if (n > 0)
        dead += n;
    }
    logmsg ("%d connection(s) of /dev/nbd%d died", dead, o->device);
  }

  if (!o->is_uri) {
    if (spawn_server (s))
      fail_start (s, "cannot start %s: %s", o->nbdkit, strerror (errno));
    if (wait_server (s, 120)) {
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
    uint64_t v = read_size_file (s);
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
    .block_size = e.min_block > KERNEL_BLOCK_SIZE && e.min_block <= KERNEL_BLOCK_SIZE_MAX &&
                  !(e.min_block & (e.min_block - 1)) ? e.min_block : KERNEL_BLOCK_SIZE,
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
  add_copies (s, fds, s->conns, e.size);
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
  save_state (s);
  if (!o->is_uri && (r = rbdx_link_add (o->target, s->index)) < 0)
    logmsg ("cannot make the link of %s to %s: %s", o->target, path, strerror (-r));
  logmsg ("%s %s with %u connection(s), %llu bytes", path,
          o->attach ? "re-attached" : "mapped", s->conns,
          (unsigned long long) e.size);
  dprintf (report_fd, "OK %d %ld %u\n", s->index, (long) s->server, s->conns);
  close (report_fd);
  s->report_fd = -1;
  run (s);
}

int
rbdx_supervise_start (const struct rbdx_map_opts *o, int *index_out,
                      long *server_out, long *sup_out, unsigned *conns_out,
                      const char **msg)
{
  static char why[2200];
  char buf[2200];
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
    supervise (o, pfd[1]);
  }
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

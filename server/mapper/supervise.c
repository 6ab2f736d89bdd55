/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/supervise.c: the server process and the start of a mapping
 * (see supervise.h, sup.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/limits.h"
#include "devlinks.h"
#include "params.h"
#include "resize.h"
#include "sup.h"

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

void
close_copies (struct sup *s)
{
  for (size_t i = 0; i < s->ncopies; i++)
    close (s->copies[i].fd);
  s->ncopies = 0;
}

void
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

void
remove_private_dir (struct sup *s)
{
  char path[400];
  unlink (s->sock);
  unlink (s->srvlog);
  unlink (s->sizefile);
  /* Our own metrics file only: one given with metrics_file= stays. */
  snprintf (path, sizeof path, "%s/metrics.prom", s->dir);
  unlink (path);
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

int
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
  if (o->engine) {
    /* The built-in engine (server/engine/engine.h): the same parameters, its
     * control socket where nbdkit would listen. */
    argv[n++] = (char *) o->engine;
    argv[n++] = "--control";
    argv[n++] = s->sock;
    if (o->read_only)
      argv[n++] = "--readonly";
  }
  else {
    argv[n++] = (char *) o->nbdkit;
    argv[n++] = "--foreground";
    argv[n++] = "--threads=" RBDX_NBDKIT_THREADS;
    argv[n++] = "--unix";
    argv[n++] = s->sock;
    if (o->read_only)
      argv[n++] = "--readonly";
    argv[n++] = (char *) o->plugin;
  }
  argv[n++] = (char *) o->target;
  /* Our own server tells every connection the largest size and publishes
   * the image's real size in a file: growth then needs no new connections
   * (see server/mapper/README.md). */
  argv[n++] = size_param;
  argv[n++] = "advertise_size=max";
  /* Request counters for `rbdx status` (nbdkit-rbdx-plugin(1), METRICS),
   * in our private directory unless metrics_file= or metrics_interval=
   * was given (those are among o->params). */
  if (!rbdx_param_find (o->params, o->nparams, "metrics_file")) {
    snprintf (metrics_param, sizeof metrics_param, "metrics_file=%s", s->metrics);
    argv[n++] = metrics_param;
  }
  if (!rbdx_param_find (o->params, o->nparams, "metrics_interval"))
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

/* Hand the kernel fresh sockets for @p n dead slots counted. */
void
reattach (struct sup *s, unsigned n)
{
  int fds[RBDX_MAX_CONNECTIONS];
  struct rbdx_export e;
  const char *why = NULL;
  int r;

  r = rbdx_negotiate_many (s->connect_to, n, fds, &e, &why);
  sup_hand_over (s, r, fds, n, &e, why);
}

/* URI mode: ask the server for the export's size now; follow it. */
void
poll_size (struct sup *s)
{
  struct rbdx_export e;
  const char *why = NULL;
  int fd, r;

  r = rbdx_negotiate (s->connect_to, &fd, &e, &why);
  if (r)
    return;                  /* down: the re-attach path deals with it */
  close (fd);
  sup_export_size (s, e.size);
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
      (dup = sup_mapped_elsewhere (e->identity, s->o->read_only)) < 0)
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

  if (!o->is_uri) {
    if (spawn_server (s))
      fail_start (s, "cannot start %s: %s", o->engine ? o->engine : o->nbdkit,
                  strerror (errno));
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
  sup_save_state (s);
  if (!o->is_uri && (r = rbdx_devlink_add (o->target, s->index)) < 0)
    logmsg ("cannot make the devlink of %s to %s: %s", o->target, path, strerror (-r));
  logmsg ("%s %s with %u connection(s), %llu bytes", path,
          o->attach ? "re-attached" : "mapped", s->conns,
          (unsigned long long) e.size);
  dprintf (report_fd, "OK %d %ld %u\n", s->index, (long) s->server, s->conns);
  close (report_fd);
  s->report_fd = -1;
  sup_run (s);
}

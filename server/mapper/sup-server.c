/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/sup-server.c: the supervisor's server process (start, stop,
 * wait, its log, its private directory) and the negotiations of
 * re-attach and URI size polls (see sup.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server-args.h"
#include "sup.h"

/* The last few non-empty lines of the server's log, joined with "; ". */
void
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
  /* Everything in it is ours, temporary names too (a server killed in
   * a rewrite of its metrics or size file leaves one).  A log file
   * given (--log-file) or metrics_file= is elsewhere and stays. */
  rbdx_state_remove_private_dir (s->dir);
}

int
sup_write_device_file (const struct sup *s)
{
  char tmp[320];
  int fd, e = 0;

  if (!rbdx_server_wants_device_file (s->o))
    return 0;
  snprintf (tmp, sizeof tmp, "%s.new", s->devfile);
  unlink (tmp);
  fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return -errno;
  /* Renamed over the old one: the server never reads half a name. */
  if (dprintf (fd, "/dev/nbd%d\n", s->index) < 0 || fsync (fd) < 0)
    e = errno ? errno : EIO;
  if (close (fd) < 0 && !e)
    e = errno;
  if (!e && rename (tmp, s->devfile) < 0)
    e = errno;
  if (e)
    unlink (tmp);
  return -e;
}

int
spawn_server (struct sup *s)
{
  char **argv = rbdx_server_argv (s->o, s->sock, s->sizefile, s->metrics,
                                 s->identity, s->devfile);
  pid_t pid, parent;

  if (!argv)
    return -ENOMEM;
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
  if (pid < 0) {
    int e = errno;
    rbdx_server_argv_free (argv);
    errno = e;
    return -e;
  }
  rbdx_server_argv_free (argv);
  s->server = pid;
  s->server_started = now ();
  logmsg ("started the server, pid %ld, on %s", (long) pid, s->sock);
  return 0;
}

bool
sup_caller_gone (const struct sup *s)
{
  struct pollfd p = { .fd = s->report_fd, .events = 0 };

  /* The write end of a pipe whose reader is gone polls POLLERR. */
  return s->report_fd >= 0 && poll (&p, 1, 0) == 1 &&
         (p.revents & (POLLERR | POLLHUP));
}

/* Wait until the server accepts a connection, or exits.  0 or -1. */
int
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
    if (sup_caller_gone (s))
      return -2;
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

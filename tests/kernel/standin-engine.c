/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/kernel/standin-engine.c: the built-in engine's stand-in for the
 * UML guest, which cannot reach the cluster.
 *
 * The mapper in the guest runs it as its engine (RBDX_ENGINE).  It
 * records its command line in /share/engine-args (one argument a line),
 * links a size_file= argument to /share/size (which the host's server
 * writes), listens on --control PATH like rbdx-engine, and answers each
 * "CONNECT" with a connection it negotiated with libnbd (the mapper's
 * own server/mapper/negotiate.c) to $STANDIN_URI, default
 * nbd://$NBD_HOST:$NBD_PORT/: the host's nbdkit with the plugin, or the
 * host's rbdx-engine through its --oldstyle test hook.  As the real
 * engine, it hands over one end of a socketpair; two threads copy bytes
 * between the other end and the negotiated socket (already in the
 * transmission phase), so the kernel's requests reach the host's server
 * unchanged, and when the stand-in dies (a "crash" in the tests) the
 * kernel's connections die with it, as with the real engine.
 * A quiesce_device_file=/share/PATH argument (the mapper's file for the
 * quiesce hook's DEVICE) gets the relative link /share/quiesce-device ->
 * PATH, so the host's server can read the file the guest's supervisor
 * writes (test-kernel-quiesce.sh).
 * $STANDIN_IDENTITY, if set, is stated as the identity when the server
 * states none (oldstyle).  With $STANDIN_WAIT=NAME it marks the step
 * "engine-args" once the command line is recorded and listens only after
 * the host's signal NAME, so the host can start its server with the
 * parameters the mapper built (test-kernel-c26-relative-paths.sh).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "mapper/negotiate.h"

struct pipe { int from, to; };

/* Copy until EOF or an error on either side, then end both directions. */
static void *
copy (void *arg)
{
  struct pipe *p = arg;
  char buf[65536];
  ssize_t n;

  while ((n = read (p->from, buf, sizeof buf)) > 0) {
    char *q = buf;
    while (n > 0) {
      ssize_t w = write (p->to, q, (size_t) n);
      if (w <= 0)
        goto out;
      q += w;
      n -= w;
    }
  }
out:
  shutdown (p->from, SHUT_RDWR);
  shutdown (p->to, SHUT_RDWR);
  return NULL;
}

static void
relay (int a, int b)
{
  struct pipe *ab = malloc (sizeof *ab), *ba = malloc (sizeof *ba);
  pthread_t t;

  ab->from = a; ab->to = b;
  ba->from = b; ba->to = a;
  pthread_create (&t, NULL, copy, ab);
  pthread_detach (t);
  pthread_create (&t, NULL, copy, ba);
  pthread_detach (t);
}

static void
answer (int c, const char *uri)
{
  struct rbdx_export e;
  const char *why = NULL, *id;
  char msg[2048];
  int fd, r, sv[2];

  r = recv (c, msg, sizeof msg - 1, 0);
  if (r <= 0)
    return;
  r = rbdx_negotiate (uri, &fd, &e, &why);
  if (r < 0) {
    snprintf (msg, sizeof msg, "ERR %d %s: %s", -r, uri, why ? why : "failed");
    send (c, msg, strlen (msg), MSG_NOSIGNAL);
    return;
  }
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
    close (fd);
    return;
  }
  relay (sv[0], fd);
  id = *e.identity ? e.identity : getenv ("STANDIN_IDENTITY");
  snprintf (msg, sizeof msg, "OK %" PRIu64 " %" PRIu64 " %" PRIu32 " %s",
            e.size, e.flags, e.min_block, id ? id : "");
  rbdx_send_fd (c, msg, sv[1]);
  close (sv[1]);
}

/* Tell the host the command line is recorded (/share/step.engine-args)
 * and wait up to 110 s, within the supervisor's 120 s for its server to
 * listen, for its signal /share/host.NAME. */
static void
wait_host (const char *name)
{
  char path[256];
  FILE *f = fopen ("/share/step.engine-args", "w");

  if (f)
    fclose (f);
  snprintf (path, sizeof path, "/share/host.%s", name);
  for (int i = 0; i < 1100 && access (path, F_OK) < 0; i++)
    usleep (100000);
}

int
main (int argc, char **argv)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  const char *control = NULL, *uri = getenv ("STANDIN_URI");
  const char *wait_for = getenv ("STANDIN_WAIT");
  char def[256];
  FILE *f = fopen ("/share/engine-args", "w");
  int l;

  for (int i = 1; i < argc; i++) {
    if (f)
      fprintf (f, "%s\n", argv[i]);
    if (strcmp (argv[i], "--control") == 0 && i + 1 < argc)
      control = argv[i + 1];
    if (strncmp (argv[i], "quiesce_device_file=/share/", 27) == 0) {
      unlink ("/share/quiesce-device");
      if (symlink (argv[i] + 27, "/share/quiesce-device") < 0)
        perror ("symlink");
    }
    if (strncmp (argv[i], "size_file=", 10) == 0) {
      unlink (argv[i] + 10);
      if (symlink ("/share/size", argv[i] + 10) < 0)
        perror ("symlink");
    }
  }
  if (f)
    fclose (f);
  if (wait_for && *wait_for)
    wait_host (wait_for);
  if (!control || strlen (control) >= sizeof sa.sun_path) {
    fprintf (stderr, "standin-engine: no usable --control PATH\n");
    return 2;
  }
  if (!uri) {
    snprintf (def, sizeof def, "nbd://%s:%s/", getenv ("NBD_HOST"),
              getenv ("NBD_PORT"));
    uri = def;
  }
  signal (SIGPIPE, SIG_IGN);
  strcpy (sa.sun_path, control);
  l = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  unlink (control);
  if (l < 0 || bind (l, (struct sockaddr *) &sa, sizeof sa) < 0 ||
      listen (l, 16) < 0) {
    perror ("standin-engine: control socket");
    return 1;
  }
  for (;;) {
    int c = accept4 (l, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR)
        continue;
      return 1;
    }
    /* The supervisor sends one CONNECT per control connection. */
    answer (c, uri);
    close (c);
  }
}

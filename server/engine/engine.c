/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/engine.c (engine.h): rbdx-engine, the engine process:
 *   rbdx-engine [-v] [--readonly] {--control PATH | --oldstyle PATH}... [--]
 *               [image=]SPEC [KEY=VALUE...]
 *
 * SPEC and KEY=VALUE are the plugin's parameters (nbdkit-rbdx-plugin(1))
 * for one image; pool= (serving a pool by export name) is the plugin's.
 * After "--" every argument is a parameter, even one that starts with
 * '-': the mapper passes "-- image=SPEC ..." (server/mapper/server-args.h).
 * Before it listens, the engine proves the image servable as the plugin
 * does before serving (rbdx_export_probe), so a listening control socket
 * means "ready", and a bad parameter is an exit status 1 naming it.
 *
 * Control socket (AF_UNIX, SOCK_SEQPACKET, at PATH, mode 0600 from its
 * creation (listen.h); the protocol is common/control.h): each message
 * that is exactly "CONNECT" opens one connection (its own librbd
 * context) on a fresh socketpair and is answered "OK SIZE FLAGS
 * MIN_BLOCK IDENTITY" with the client's end of the pair attached
 * (SCM_RIGHTS), any other message "ERR ERRNO MESSAGE".  That end is in the transmission phase: the supervisor
 * hands it to the kernel as it is.
 *
 * --oldstyle PATH is a test hook, not an interface: a stream socket
 * where each connection gets an NBD oldstyle greeting (NBD
 * doc/proto.md, "Oldstyle negotiation") and is then served, so that the
 * benchmark and tests can drive the engine with libnbd or fio's nbd
 * engine, without a kernel.
 *
 * SIGTERM or SIGINT: stop accepting, end every connection after its
 * requests in flight are answered, exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "rbdx/budget.h"
#include "rbdx/cluster.h"
#include "rbdx/conn.h"
#include "rbdx/errors.h"
#include "rbdx/export.h"
#include "rbdx/identity.h"
#include "rbdx/log.h"
#include "rbdx/metrics.h"
#include "rbdx/options.h"
#include "rbdx/printable.h"
#include "rbdx/request.h"

#include "common/control.h"
#include "common/fdpass.h"
#include "common/limits.h"
#include "common/nbd-wire.h"
#include "conns.h"
#include "engine.h"
#include "host.h"
#include "listen.h"

/* Limits against a runaway or bogus local client (the sockets are mode
 * 0600): clients answered at once, and how long an idle control client
 * keeps its thread.  Open connections: RBDX_ENGINE_MAX_OPEN
 * (common/limits.h). */
#define MAX_CLIENTS 32
#define CONTROL_IDLE_S 30

/* Connections served at once (max_connections=); set by prepare(). */
static unsigned max_open = RBDX_ENGINE_MAX_OPEN;
/* The log of refused clients and of connections that failed to open
 * (a cluster error), each rate-limited so that a flood of clients
 * cannot flood the log (rbdx/errors.h). */
static struct rbdx_log_limit refusals = RBDX_LOG_LIMIT_INIT;
static struct rbdx_log_limit open_failures = RBDX_LOG_LIMIT_INIT;

struct engine {
  struct rbdx_options opts;   /* identity= pins the image (options.h) */
  bool readonly;
  const char *control, *oldstyle;
};

static void
usage (FILE *f)
{
  fprintf (f, "usage: rbdx-engine [-v] [--readonly] {--control PATH | --oldstyle "
           "PATH}... [--] [image=]SPEC [KEY=VALUE...]\n");
}

static int
set_param (struct engine *e, const char *arg)
{
  const char *eq = strchr (arg, '=');
  char key[128], err[512], shown[2048], cwd[PATH_MAX], *abs = NULL;
  const char *value;
  int r;

  if (!eq) {
    snprintf (key, sizeof key, "image");
    value = arg;
  }
  else {
    if ((size_t) (eq - arg) >= sizeof key) {
      rbdx_error ("rbdx-engine: parameter '%s': key too long",
                  rbdx_printable (arg, shown, sizeof shown));
      return -1;
    }
    memcpy (key, arg, (size_t) (eq - arg));
    key[eq - arg] = '\0';
    value = eq + 1;
  }
  if (rbdx_options_wants_absolute (key, value)) {
    if (!getcwd (cwd, sizeof cwd) ||
        asprintf (&abs, "%s/%s", cwd, value) < 0) {
      rbdx_error ("rbdx-engine: %s: cannot make the path absolute",
                  rbdx_printable (arg, shown, sizeof shown));
      return -1;
    }
    value = abs;
  }
  r = rbdx_options_set (&e->opts, key, value, err, sizeof err);
  free (abs);
  if (r < 0) {
    rbdx_error ("rbdx-engine: %s", r == -ENOMEM ? "out of memory"
                : rbdx_printable (err, shown, sizeof shown));
    return -1;
  }
  return 0;
}

/* The checks of rbdx/export.h, as the plugin makes them in
 * .config_complete and .get_ready. */
static int
prepare (struct engine *e)
{
  char err[512], shown[2048];
  int r;

  if (e->opts.pool || !e->opts.spec.image) {
    rbdx_error ("rbdx-engine: serves one image: give SPEC (image=), not "
                "pool=");
    return -1;
  }
  if (rbdx_export_configure (&e->opts, err, sizeof err) < 0)
    goto fail;
  /* Replies are written from librbd's callback (reply.c). */
  e->opts.completion = RBDX_COMPLETION_CALLBACK;
  max_open = e->opts.max_connections ? e->opts.max_connections
    : rbdx_budget_default (RBDX_CONN_THREADS, 1);
  if (!e->opts.max_connections && max_open > RBDX_ENGINE_MAX_OPEN)
    max_open = RBDX_ENGINE_MAX_OPEN;
  if (rbdx_export_probe (&e->opts, err, sizeof err) < 0)
    goto fail;
  if (e->opts.metrics_file) {
    r = rbdx_metrics_start (e->opts.metrics_file, e->opts.metrics_interval);
    if (r < 0) {
      rbdx_error ("rbdx-engine: metrics_file=%s: cannot start its writer: %s",
                  rbdx_printable (e->opts.metrics_file, shown, sizeof shown),
                  strerror (-r));
      return -1;
    }
  }
  return 0;

fail:
  rbdx_error ("rbdx-engine: %s", rbdx_printable (err, shown, sizeof shown));
  return -1;
}

/* The transmission flags of @p conn's export: what it can do
 * (rbdx_export_caps) as NBD flags, as nbdkit turns the plugin's .can_*
 * answers into them; no block status (simple replies only). */
static uint16_t
export_flags (const struct rbdx_conn *conn)
{
  struct rbdx_export_caps c;
  uint16_t f = RBDX_NBD_FLAG_HAS_FLAGS;

  rbdx_export_caps (conn, &c);
  f |= c.write ? 0 : RBDX_NBD_FLAG_READ_ONLY;
  f |= c.flush ? RBDX_NBD_FLAG_SEND_FLUSH : 0;
  f |= c.fua ? RBDX_NBD_FLAG_SEND_FUA : 0;
  f |= c.trim ? RBDX_NBD_FLAG_SEND_TRIM : 0;
  f |= c.zero ? RBDX_NBD_FLAG_SEND_WRITE_ZEROES : 0;
  f |= c.fast_zero ? RBDX_NBD_FLAG_SEND_FAST_ZERO : 0;
  f |= c.multi_conn ? RBDX_NBD_FLAG_CAN_MULTI_CONN : 0;
  return f;
}

/* Open a connection and serve it on @p fd (taken in every case).
 * @return the connection or NULL, with a message in @p err. */
static struct rbdx_conn *
open_served (struct engine *e, int fd, char *err, size_t errlen)
{
  struct rbdx_conn *conn;
  int r;

  r = rbdx_conn_open (&e->opts, &e->opts.spec, rbdx_options_pin (&e->opts),
                      e->readonly, &conn, err, errlen);
  if (r < 0) {
    close (fd);
    return NULL;
  }
  r = rbdx_engine_serve (fd, conn);
  if (r < 0) {
    snprintf (err, errlen, "cannot start a connection thread: %s",
              strerror (-r));
    rbdx_conn_close (conn);
    close (fd);
    return NULL;
  }
  return conn;
}

/* Too many open connections for one more: max_connections= (its
 * default: what RLIMIT_NOFILE and pids.max allow, rbdx/budget.h, at most
 * RBDX_ENGINE_MAX_OPEN, a cap against a runaway or bogus client: the
 * mapper uses at most RBDX_MAX_CONNECTIONS per device). */
static bool
full (char *err, size_t errlen)
{
  unsigned open = rbdx_engine_open_count ();

  if (open < max_open)
    return false;
  snprintf (err, errlen, "max_connections=%u reached: %u connections are "
            "open, each with its own librbd context", max_open, open);
  return true;
}

/* Send the answer "ERR ERRNO MESSAGE" (common/control.h). */
static void
control_refuse (int cfd, int errnum, const char *why)
{
  char reply[RBDX_CONTROL_MSG_MAX];

  snprintf (reply, sizeof reply, RBDX_CONTROL_ERR_FMT, errnum, why);
  send (cfd, reply, strlen (reply), MSG_NOSIGNAL);
}

/* One control message (common/control.h): exactly the word CONNECT,
 * compared over all the bytes received (MSG_TRUNC gives the length of a
 * longer message), so "CONNECT\0junk" or "CONNECTX" is an unknown
 * request.  @return false at the client's end (or after the idle
 * timeout). */
static bool
control_message (struct engine *e, int cfd)
{
  char msg[64], reply[RBDX_CONTROL_MSG_MAX], err[512] = "", id[RBDX_IDENT_TEXT_MAX];
  struct rbdx_conn *conn;
  ssize_t n = recv (cfd, msg, sizeof msg, MSG_TRUNC);
  int sv[2];

  if (n <= 0)
    return false;
  if ((size_t) n > sizeof msg ||
      !rbdx_control_is (msg, (size_t) n, RBDX_CONTROL_CONNECT)) {
    control_refuse (cfd, EINVAL, "unknown request");
    return true;
  }
  if (full (err, sizeof err)) {
    rbdx_error_limited (&refusals, "rbdx-engine: connection refused: %s", err);
    control_refuse (cfd, EBUSY, err);
    return true;
  }
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
    int saved = errno;

    snprintf (err, sizeof err, "socketpair: %s", strerror (saved));
    control_refuse (cfd, saved, err);
    return true;
  }
  conn = open_served (e, sv[0], err, sizeof err);
  if (!conn) {
    rbdx_error_limited (&open_failures, "rbdx-engine: %s", err);
    control_refuse (cfd, EIO, err);
    close (sv[1]);
    return true;
  }
  /* conn is served now; it is read here only for what it stated at
   * open, which does not change. */
  rbdx_ident_format (&conn->ctx->ident, id, sizeof id);
  snprintf (reply, sizeof reply, RBDX_CONTROL_OK_FMT,
            rbdx_export_size (&e->opts, conn), (unsigned) export_flags (conn),
            rbdx_request_min_block (conn->ctx), id);
  if (rbdx_send_fd (cfd, reply, sv[1]) < 0)
    rbdx_error ("rbdx-engine: cannot answer the supervisor: %m");
  close (sv[1]);   /* if the supervisor never took it, the connection ends */
  return true;
}

/* The test hook: an oldstyle greeting, then transmission. */
static void
oldstyle_serve (struct engine *e, int fd)
{
  unsigned char g[RBDX_NBD_OLDSTYLE_SIZE] = RBDX_NBD_INIT_MAGIC;
  char err[512];
  struct rbdx_conn *conn;
  uint64_t magic = RBDX_NBD_OLDSTYLE_MAGIC, size;
  int i;

  if (full (err, sizeof err)) {   /* only a close tells the client */
    rbdx_error_limited (&refusals, "rbdx-engine: connection refused: %s", err);
    close (fd);
    return;
  }
  if (rbdx_conn_open (&e->opts, &e->opts.spec, rbdx_options_pin (&e->opts),
                      e->readonly, &conn, err, sizeof err) < 0) {
    rbdx_error_limited (&open_failures, "rbdx-engine: %s", err);
    close (fd);
    return;
  }
  size = rbdx_export_size (&e->opts, conn);
  for (i = 0; i < 8; i++) {
    g[8 + i] = (unsigned char) (magic >> (56 - 8 * i));
    g[16 + i] = (unsigned char) (size >> (56 - 8 * i));
  }
  /* 32 bits of flags: the transmission flags in the low 16. */
  g[26] = (unsigned char) (export_flags (conn) >> 8);
  g[27] = (unsigned char) export_flags (conn);
  if (send (fd, g, sizeof g, MSG_NOSIGNAL) != (ssize_t) sizeof g ||
      rbdx_engine_serve (fd, conn) < 0) {
    rbdx_conn_close (conn);
    close (fd);
  }
}

/* prepare() runs in a thread of its own while the main thread waits for
 * it or for SIGTERM/SIGINT (blocked in every thread, so that only the
 * signalfd takes them): probing an unreachable cluster can take minutes,
 * and a stop during it must end the engine (status 1: it never served). */
struct preparing {
  struct engine *e;
  int result;
  int done[2];                 /* pipe: written when prepare() returned */
};

static void *
prepare_thread (void *arg)
{
  struct preparing *p = arg;
  ssize_t w;

  p->result = prepare (p->e);
  w = write (p->done[1], "x", 1);
  (void) w;
  return NULL;
}

static int
prepare_or_stop (struct engine *e)
{
  struct preparing p = { e, -1, { -1, -1 } };
  struct pollfd fds[2];
  sigset_t set;
  pthread_t t;
  int sfd;

  sigemptyset (&set);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGINT);
  sfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (sfd < 0 || pipe2 (p.done, O_CLOEXEC) < 0 ||
      pthread_create (&t, NULL, prepare_thread, &p) != 0) {
    rbdx_error ("rbdx-engine: cannot start: %m");
    return -1;
  }
  fds[0] = (struct pollfd) { .fd = sfd, .events = POLLIN };
  fds[1] = (struct pollfd) { .fd = p.done[0], .events = POLLIN };
  while (poll (fds, 2, -1) < 0 && errno == EINTR)
    ;
  if (!(fds[1].revents & POLLIN)) {
    rbdx_error ("rbdx-engine: stopped before serving");
    _exit (1);                 /* the prepare thread is inside librados */
  }
  pthread_join (t, NULL);
  close (p.done[0]);
  close (p.done[1]);
  close (sfd);
  return p.result;
}

/* One accepted client of the control socket or of the test hook, in
 * its own thread: opening a librbd context may take as long as the
 * cluster does (or forever while it is unreachable), and the main loop
 * must keep answering signals and other clients meanwhile. */
struct client {
  struct engine *e;
  int fd;
  bool control;
};

static atomic_int clients;     /* client threads running */

static void *
client_thread (void *arg)
{
  struct client *c = arg;

  if (c->control) {
    /* An idle control client does not keep its thread for ever. */
    struct timeval tv = { CONTROL_IDLE_S, 0 };
    setsockopt (c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while (control_message (c->e, c->fd))
      ;
    close (c->fd);
  }
  else
    oldstyle_serve (c->e, c->fd);
  free (c);
  atomic_fetch_sub (&clients, 1);
  return NULL;
}

static void
accept_client (struct engine *e, int lfd, bool control)
{
  struct client *c;
  pthread_attr_t attr;
  pthread_t t;
  int fd = accept4 (lfd, NULL, NULL, SOCK_CLOEXEC);

  if (fd < 0)
    return;
  c = malloc (sizeof *c);
  if (!c || atomic_load (&clients) >= MAX_CLIENTS) {
    rbdx_error_limited (&refusals, "rbdx-engine: %d clients are being "
                        "answered: one refused", MAX_CLIENTS);
    free (c);
    close (fd);
    return;
  }
  *c = (struct client) { e, fd, control };
  atomic_fetch_add (&clients, 1);
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create (&t, &attr, client_thread, c) != 0) {
    atomic_fetch_sub (&clients, 1);
    free (c);
    close (fd);
  }
  pthread_attr_destroy (&attr);
}

/* Close a listening socket of serve() and remove its file: only one
 * that serve() created (rbdx_engine_listen never takes over a file). */
static void
unlisten (int fd, const char *path)
{
  if (fd >= 0) {
    close (fd);
    unlink (path);
  }
}

static int
serve (struct engine *e)
{
  int cfd = -1, ofd = -1, sfd;
  sigset_t set;

  sigemptyset (&set);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGINT);
  sfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (sfd < 0) {
    rbdx_error ("rbdx-engine: signalfd: %m");
    return 1;
  }
  if ((e->control &&
       (cfd = rbdx_engine_listen (e->control, SOCK_SEQPACKET)) < 0) ||
      (e->oldstyle &&
       (ofd = rbdx_engine_listen (e->oldstyle, SOCK_STREAM)) < 0)) {
    /* The control socket may exist by now: a stale one would tell the
     * mapper that an engine is ready. */
    unlisten (cfd, e->control);
    close (sfd);
    rbdx_metrics_stop ();
    return 1;
  }
  rbdx_debug ("rbdx-engine: serving %s", e->opts.spec.image);

  for (;;) {
    struct pollfd p[4] = {
      { .fd = sfd, .events = POLLIN },
      { .fd = cfd, .events = POLLIN },
      { .fd = ofd, .events = POLLIN },
      { .fd = rbdx_engine_reap_fd (), .events = POLLIN },   /* conns.h */
    };

    if (poll (p, 4, -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    if (p[0].revents)
      break;
    if (p[1].revents & POLLIN)
      accept_client (e, cfd, true);
    if (p[2].revents & POLLIN)
      accept_client (e, ofd, false);
    if (p[3].revents & POLLIN)
      rbdx_engine_reap ();
  }
  rbdx_debug ("rbdx-engine: stopping");
  unlisten (cfd, e->control);
  unlisten (ofd, e->oldstyle);
  /* From here no new connection is served (rbdx_engine_serve refuses). */
  rbdx_engine_stop_all ();
  for (int i = 0; i < 50 && atomic_load (&clients) > 0; i++)
    usleep (100000);
  rbdx_metrics_stop ();
  rbdx_conn_close_all ();
  if (atomic_load (&clients) > 0) {
    /* A client thread is still inside librbd (opening an image on an
     * unreachable cluster): exit without running librados' destructors
     * under it.  Nothing it opened has served a request. */
    rbdx_error ("rbdx-engine: %d connection(s) still opening: exiting "
                "without them", atomic_load (&clients));
    _exit (0);
  }
  return 0;
}

int
main (int argc, char **argv)
{
  struct engine e = { 0 };
  int i, r;

  sigset_t set;

  /* SIGTERM and SIGINT are taken by serve()'s signalfd: blocked before
   * any thread starts (librados', the metrics writer's), since every
   * thread inherits the mask and one that did not block them would be
   * killed by them. */
  sigemptyset (&set);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGINT);
  sigprocmask (SIG_BLOCK, &set, NULL);
  signal (SIGPIPE, SIG_IGN);

  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp (a, "--") == 0) {
      /* Parameters only from here on. */
      while (++i < argc)
        if (set_param (&e, argv[i]) < 0)
          return 1;
      break;
    }
    if (strcmp (a, "--help") == 0 || strcmp (a, "-h") == 0) {
      printf ("rbdx-engine: the built-in NBD transmission engine of the "
              "rbdx mapper (rbdx(8), ENGINE).\n");
      usage (stdout);
      return 0;
    }
    if (strcmp (a, "--version") == 0) {
      printf ("rbdx-engine %s\n", RBDX_VERSION);
      return 0;
    }
    if (strcmp (a, "-v") == 0 || strcmp (a, "--verbose") == 0)
      rbdx_engine_verbose (true);
    else if (strcmp (a, "--readonly") == 0 || strcmp (a, "-r") == 0)
      e.readonly = true;
    else if (strcmp (a, "--control") == 0 && i + 1 < argc)
      e.control = argv[++i];
    else if (strcmp (a, "--oldstyle") == 0 && i + 1 < argc)
      e.oldstyle = argv[++i];
    else if (a[0] == '-') {
      usage (stderr);
      return 2;
    }
    else if (set_param (&e, a) < 0)
      return 1;
  }
  if (!e.control && !e.oldstyle) {
    usage (stderr);
    return 2;
  }
  if (!e.opts.spec.image && !e.opts.pool) {
    rbdx_error ("rbdx-engine: no image given (SPEC: [pool/[namespace/]]image"
                "[@snapshot])");
    return 1;
  }
  if (prepare_or_stop (&e) < 0)
    return 1;
  r = serve (&e);
  rbdx_metrics_free ();
  rbdx_options_free (&e.opts);
  return r;
}

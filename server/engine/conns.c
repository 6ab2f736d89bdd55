/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/conns.c: the engine's open connections (conns.h), a
 * registry of struct econn (econn.h): each is served by its reader
 * thread (reader.c); a finished one is joined and freed as soon as the
 * main loop sees done_fd (when no new connection comes: else its thread
 * and stack would stay until one did), when the next connection starts,
 * and all of them at the end.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conns.h"
#include "econn.h"
#include "reader.h"
#include "stopping.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct econn *reg;
/* Counts threads that finished serving (eventfd); made by the main loop
 * before it serves, so before any reader thread starts. */
static int done_fd = -1;

unsigned
rbdx_engine_open_count (void)
{
  struct econn *ec;
  unsigned n = 0;

  pthread_mutex_lock (&reg_lock);
  for (ec = reg; ec; ec = ec->next)
    n += !atomic_load (&ec->finished);
  pthread_mutex_unlock (&reg_lock);
  return n;
}

/* Join and free connections whose thread is done; with @p all, wait
 * for every one. */
static void
reap (bool all)
{
  struct econn **pp, *ec;

  pthread_mutex_lock (&reg_lock);
  pp = &reg;
  while ((ec = *pp)) {
    if (all || atomic_load (&ec->finished)) {
      *pp = ec->next;
      pthread_join (ec->thread, NULL);
      close (ec->efd);
      pthread_mutex_destroy (&ec->lock);
      free (ec);
    }
    else
      pp = &ec->next;
  }
  pthread_mutex_unlock (&reg_lock);
}

int
rbdx_engine_reap_fd (void)
{
  if (done_fd < 0)
    done_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  return done_fd;
}

void
rbdx_engine_reap (void)
{
  eventfd_t n;

  if (done_fd >= 0)
    eventfd_read (done_fd, &n);
  reap (false);
}

/* A connection's thread: the reader, then a word to the main loop.  The
 * struct econn may be freed by reap as soon as the reader returned. */
static void *
serve_thread (void *ec)
{
  econn_reader (ec);
  if (done_fd >= 0)
    eventfd_write (done_fd, 1);
  return NULL;
}

int
rbdx_engine_serve (int fd, struct rbdx_conn *conn)
{
  struct econn *ec;
  int r;

  reap (false);
  ec = calloc (1, sizeof *ec);
  if (!ec)
    return -ENOMEM;
  ec->fd = fd;
  ec->conn = conn;
  ec->efd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (ec->efd < 0) {
    r = -errno;
    free (ec);
    return r;
  }
  pthread_mutex_init (&ec->lock, NULL);
  pthread_mutex_lock (&reg_lock);
  /* Under reg_lock: stop_all sets stopping under it before it reaps. */
  r = econn_stopping () ? -ESHUTDOWN
      : -pthread_create (&ec->thread, NULL, serve_thread, ec);
  if (r == 0) {
    ec->next = reg;
    reg = ec;
  }
  pthread_mutex_unlock (&reg_lock);
  if (r < 0) {
    close (ec->efd);
    pthread_mutex_destroy (&ec->lock);
    free (ec);
  }
  return r;
}

void
rbdx_engine_stop_all (void)
{
  struct econn *ec;

  pthread_mutex_lock (&reg_lock);
  econn_set_stopping ();
  for (ec = reg; ec; ec = ec->next) {
    pthread_mutex_lock (&ec->lock);
    if (!ec->closed)
      shutdown (ec->fd, SHUT_RD);
    pthread_mutex_unlock (&ec->lock);
    econn_wake (ec);
  }
  pthread_mutex_unlock (&reg_lock);
  reap (true);
}

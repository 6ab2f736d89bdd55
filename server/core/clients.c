/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx: which Ceph client a librbd context gets (include/rbdx/clients.h). */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <rados/librados.h>

#include "rbdx/cct.h"
#include "rbdx/clients.h"
#include "rbdx/cluster.h"

/* connections_per_client=: the clients shared by several contexts, each
 * with the options it was made from and how many contexts hold it. */
struct shared_client {
  rados_t c;
  const struct rbdx_options *o;
  unsigned refs;
  bool retired;      /* fenced: no new context gets it (under shared_lock) */
  struct shared_client *next;
};
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shared_client *shared_clients;

/* A connected client of @o's: on its shared Ceph context (cct.h) unless
 * ceph_context= says a context per connection. */
static int
client_connect (const struct rbdx_options *o, rados_t *out, char *err,
                size_t errlen)
{
  if (rbdx_cct_shared (o))
    return rbdx_cct_connect (o, out, err, errlen);
  return rbdx_cluster_connect (o, out, err, errlen);
}

int
rbdx_cluster_acquire (const struct rbdx_options *o, rados_t *out,
                      char *err, size_t errlen)
{
  struct shared_client *s;
  rados_t c;
  int r;

  if (o->connections_per_client <= 1)
    return client_connect (o, out, err, errlen);
  pthread_mutex_lock (&shared_lock);
  for (s = shared_clients; s; s = s->next)
    if (s->o == o && !s->retired && s->refs < o->connections_per_client) {
      s->refs++;
      *out = s->c;
      pthread_mutex_unlock (&shared_lock);
      return 0;
    }
  pthread_mutex_unlock (&shared_lock);
  /* Connecting takes a round trip to the monitors: not under the lock.
   * Two contexts arriving together may each make a client; each still
   * holds at most connections_per_client. */
  s = calloc (1, sizeof *s);
  if (!s) {
    snprintf (err, errlen, "out of memory");
    return -ENOMEM;
  }
  r = client_connect (o, &c, err, errlen);
  if (r < 0) {
    free (s);
    return r;
  }
  s->c = c;
  s->o = o;
  s->refs = 1;
  pthread_mutex_lock (&shared_lock);
  s->next = shared_clients;
  shared_clients = s;
  pthread_mutex_unlock (&shared_lock);
  *out = c;
  return 0;
}

void
rbdx_cluster_release (rados_t c)
{
  struct shared_client **p, *s = NULL;

  pthread_mutex_lock (&shared_lock);
  for (p = &shared_clients; *p; p = &(*p)->next)
    if ((*p)->c == c) {
      s = *p;
      if (--s->refs == 0)
        *p = s->next;
      break;
    }
  pthread_mutex_unlock (&shared_lock);
  if (s && s->refs > 0)
    return;          /* other contexts still use it */
  free (s);
  if (!rbdx_cct_release (c))
    rados_shutdown (c);
}

void
rbdx_cluster_retire (rados_t c)
{
  struct shared_client *s;

  pthread_mutex_lock (&shared_lock);
  for (s = shared_clients; s; s = s->next)
    if (s->c == c) {
      s->retired = true;
      break;
    }
  pthread_mutex_unlock (&shared_lock);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: ceph_context= (see cct.h). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/cct.h"
#include "rbdx/cluster.h"
#include "rbdx/log.h"
#include "rbdx/opterr.h"

static pthread_once_t fixed_once = PTHREAD_ONCE_INIT;
static bool fixed;
static char fixed_release[64] = "unknown";

/* Ceph's "const char *ceph_version_to_str()" (src/common/version.cc),
 * C++ linkage: its mangled name. */
#define CEPH_VERSION_SYMBOL "_Z19ceph_version_to_strv"

/* The first release of each series with the fix (cct.h). */
static bool
release_fixed (int major, int minor, int patch)
{
  if (major >= 19)
    return true;
  if (major == 18)
    return minor > 2 || (minor == 2 && patch >= 4);
  if (major == 17)
    return minor > 2 || (minor == 2 && patch >= 8);
  return false;
}

static void
find_release (void)
{
  const char *(*version) (void) = NULL;
  void (*in_librados) (int *, int *, int *) = rados_version;
  const char *v;
  void *h = NULL, *sym = NULL, *addr;
  int major, minor, patch;
  Dl_info info;

  /* librados' own object, then what it loaded (dlsym on a handle
   * searches the object's dependencies too): libceph-common is not in
   * the global scope of a plugin nbdkit loaded. */
  memcpy (&addr, &in_librados, sizeof addr);
  if (dladdr (addr, &info) && info.dli_fname)
    h = dlopen (info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (h)
    sym = dlsym (h, CEPH_VERSION_SYMBOL);
  if (!sym)
    sym = dlsym (RTLD_DEFAULT, CEPH_VERSION_SYMBOL);
  if (sym) {
    memcpy (&version, &sym, sizeof version);
    v = version ();
    if (v && *v) {
      snprintf (fixed_release, sizeof fixed_release, "%s", v);
      if (sscanf (v, "%d.%d.%d", &major, &minor, &patch) == 3)
        fixed = release_fixed (major, minor, patch);
    }
  }
  if (h)
    dlclose (h);
}

bool
rbdx_cct_fixed (char *release, size_t len)
{
  pthread_once (&fixed_once, find_release);
  if (release && len)
    snprintf (release, len, "%s", fixed_release);
  return fixed;
}

bool
rbdx_cct_shared (const struct rbdx_options *o)
{
  switch (o->ceph_context) {
  case RBDX_CEPH_CONTEXT_SHARED:
    return true;
  case RBDX_CEPH_CONTEXT_CONNECTION:
    return false;
  default:
    return rbdx_cct_fixed (NULL, 0);
  }
}

int
rbdx_cct_check (const struct rbdx_options *o, char *err, size_t errlen)
{
  char release[64];
  bool ok = rbdx_cct_fixed (release, sizeof release);

  if (o->ceph_context == RBDX_CEPH_CONTEXT_SHARED && !ok) {
    /* Worded as every bad parameter; the errno stays -ENOTSUP (this
     * Ceph, not the value, is at fault). */
    (void) rbdx_opt_err (err, errlen, "ceph_context=shared: Ceph %s "
                         "deadlocks with clients on one Ceph context (its "
                         "configuration observers, fixed by "
                         "https://github.com/ceph/ceph/pull/53568: 17.2.8, "
                         "18.2.4 and later); use ceph_context=connection or "
                         "auto", release);
    return -ENOTSUP;
  }
  if (o->ceph_context == RBDX_CEPH_CONTEXT_AUTO)
    rbdx_debug ("rbdx: ceph_context=auto: %s (Ceph %s%s)",
                ok ? "one Ceph context for all connections"
                   : "a Ceph context per connection", release,
                ok ? "" : " lacks the fix of ceph/ceph PR 53568");
  return 0;
}

/* One shared context: an unconnected handle made by
 * rbdx_cluster_configure_shared that owns it; every client on it takes a
 * reference (rados_create_with_context), and @base is kept while any of
 * them lives.
 *
 * @first: the first rados_connect on a context runs alone.  Its
 * messenger starts the context's NetworkStack (the msgr-worker threads);
 * Ceph 18.2.7's NetworkStack::start marks the stack started before the
 * workers have set up their event centres and only the caller that
 * started them waits for that, so a second messenger starting at the
 * same moment submits to a worker not yet set up and aborts
 * ("FAILED ceph_assert(i < MAX_EVENTCENTER && global_centers)" in
 * EventCenter::submit_to from Processor::start, or "pure virtual
 * method called"; seen with four connections opening at once on a
 * fresh context: tests/multiconn/test-ceph-context.sh).  Once one client
 * has connected the workers are up for the context's life, and the
 * connects and shutdowns of its clients overlap freely (with the
 * observer fix: cct.h). */
struct shared_cct {
  rados_t base;
  const struct rbdx_options *o;
  unsigned refs;                 /* clients on it, under cct_lock */
  pthread_mutex_t first;
  bool started;                  /* under first */
  struct shared_cct *next;
};
static pthread_mutex_t cct_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shared_cct *shared_ccts;

/* One client fewer on @s: the last one takes the context with it. */
static void
cct_put (struct shared_cct *s)
{
  struct shared_cct **p;
  bool last;

  pthread_mutex_lock (&cct_lock);
  last = --s->refs == 0;
  if (last)
    for (p = &shared_ccts; *p; p = &(*p)->next)
      if (*p == s) {
        *p = s->next;
        break;
      }
  pthread_mutex_unlock (&cct_lock);
  if (!last)
    return;
  rados_shutdown (s->base);
  pthread_mutex_destroy (&s->first);
  free (s);
}

int
rbdx_cct_connect (const struct rbdx_options *o, rados_t *out,
                  char *err, size_t errlen)
{
  struct shared_cct *s;
  rados_t c;
  int r;

  pthread_mutex_lock (&cct_lock);
  for (s = shared_ccts; s; s = s->next)
    if (s->o == o)
      break;
  if (!s) {
    /* Configuring reads the conf file only: no network, no threads. */
    s = calloc (1, sizeof *s);
    if (!s) {
      pthread_mutex_unlock (&cct_lock);
      snprintf (err, errlen, "out of memory");
      return -ENOMEM;
    }
    r = rbdx_cluster_configure_shared (o, &s->base, err, errlen);
    if (r < 0) {
      pthread_mutex_unlock (&cct_lock);
      free (s);
      return r;
    }
    pthread_mutex_init (&s->first, NULL);
    s->o = o;
    s->next = shared_ccts;
    shared_ccts = s;
  }
  s->refs++;
  pthread_mutex_unlock (&cct_lock);

  r = rados_create_with_context (&c, rados_cct (s->base));
  if (r < 0) {
    snprintf (err, errlen, "cannot create a Ceph handle for client.%s: %s",
              rbdx_options_id (o), strerror (-r));
    cct_put (s);
    return r;
  }
  pthread_mutex_lock (&s->first);
  if (s->started) {
    pthread_mutex_unlock (&s->first);
    r = rbdx_cluster_connect_handle (o, c, err, errlen);
  }
  else {
    r = rbdx_cluster_connect_handle (o, c, err, errlen);
    s->started = r == 0;
    pthread_mutex_unlock (&s->first);
  }
  if (r < 0) {
    rados_shutdown (c);
    cct_put (s);
    return r;
  }
  *out = c;
  return 0;
}

bool
rbdx_cct_release (rados_t c)
{
  rados_config_t cct = rados_cct (c);
  struct shared_cct *s;

  pthread_mutex_lock (&cct_lock);
  for (s = shared_ccts; s; s = s->next)
    if (rados_cct (s->base) == cct)
      break;
  pthread_mutex_unlock (&cct_lock);
  if (!s)
    return false;
  rados_shutdown (c);        /* @c's reference keeps @s until cct_put */
  cct_put (s);
  return true;
}

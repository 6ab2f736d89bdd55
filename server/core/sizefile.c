/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: size_file= publisher (see sizefile.h). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "rbdx/log.h"
#include "rbdx/printable.h"

#include "rbdx/sizefile.h"
#include "rbdx/tmpfile.h"

/* size_lock guards the registry and orders the writes. */
static pthread_mutex_t size_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rbdx_size_entry *entries;
static unsigned long size_seq;

static void
publish_locked (const char *path)
{
  uint64_t min = UINT64_MAX;
  char tmp[4200], suffix[48], shown[2048];
  FILE *f;
  int bad;

  for (const struct rbdx_size_entry *e = entries; e; e = e->next) {
    uint64_t v = atomic_load (e->cur_size);
    if (v < min)
      min = v;
  }
  if (min == UINT64_MAX)
    return;
  /* Created exclusively, never through a link someone left at the
   * name (tmpfile.h): the directory may be a shared one. */
  snprintf (suffix, sizeof suffix, "%ld.%lu", (long) getpid (), ++size_seq);
  f = rbdx_tmpfile_create (path, suffix, 0644, tmp, sizeof tmp);
  if (!f) {
    rbdx_debug ("rbdx: cannot write size_file=%s: %m",
                rbdx_printable (path, shown, sizeof shown));
    return;
  }
  bad = fprintf (f, "%" PRIu64 "\n", min) < 0;
  bad |= fclose (f) == EOF;
  if (bad || rbdx_tmpfile_replace (tmp, path) == -1) {
    rbdx_debug ("rbdx: cannot write size_file=%s: %m",
                rbdx_printable (path, shown, sizeof shown));
    unlink (tmp);
  }
}

void
rbdx_size_register (struct rbdx_size_entry *e, const char *path,
                    const struct rbdx_ident *ident, const char *name,
                    const _Atomic uint64_t *cur_size)
{
  if (!path)
    return;
  e->path = path;
  e->ident = *ident;
  e->name = name;
  e->cur_size = cur_size;
  pthread_mutex_lock (&size_lock);
  if (entries && !rbdx_ident_equal (&entries->ident, ident)) {
    char shown[2048];

    rbdx_debug ("rbdx: %s is another image than the one size_file=%s "
                  "describes: not published", name,
                rbdx_printable (path, shown, sizeof shown));
  }
  else {
    e->next = entries;
    entries = e;
    e->listed = true;
    publish_locked (path);
  }
  pthread_mutex_unlock (&size_lock);
}

void
rbdx_size_changed (struct rbdx_size_entry *e)
{
  pthread_mutex_lock (&size_lock);
  if (e->listed)
    publish_locked (e->path);
  pthread_mutex_unlock (&size_lock);
}

void
rbdx_size_unregister (struct rbdx_size_entry *e)
{
  pthread_mutex_lock (&size_lock);
  if (e->listed) {
    for (struct rbdx_size_entry **p = &entries; *p; p = &(*p)->next)
      if (*p == e) {
        *p = e->next;
        break;
      }
    e->listed = false;
    if (entries)
      publish_locked (e->path);   /* the minimum may rise */
  }
  pthread_mutex_unlock (&size_lock);
}

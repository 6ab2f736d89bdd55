/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/mapped.c: the mappings recorded: loaded (stale ones
 * removed), found by target, and the run directory's lock (see mapped.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/file.h>
#include <unistd.h>

#include "cli.h"
#include "devlinks.h"
#include "mapped.h"
#include "target.h"

int rbdx_lock_fd = -1;      /* see rbdx_mapped_lock; closed by the supervisor */

/* Remove the private directories of supervisors that were killed and
 * so could not clean up (a later supervisor given the same pid could not
 * make its own). */
static void
remove_stale_dirs (void)
{
  DIR *d = opendir (rbdx_run_dir ());
  struct dirent *e;

  if (!d)
    return;
  while ((e = readdir (d))) {
    const char *p = e->d_name + 4;
    size_t len = strspn (p, "0123456789");
    char path[4200];

    if (strncmp (e->d_name, "sup-", 4) != 0 || len == 0 || p[len] ||
        len > 9 || (p[0] == '0' && len > 1))
      continue;
    if (rbdx_pid_alive ((pid_t) atol (p)))
      continue;
    snprintf (path, sizeof path, "%s/%s", rbdx_run_dir (), e->d_name);
    rbdx_state_remove_private_dir (path);
  }
  closedir (d);
}

/* The file names (in RUN_DIR/keyrings/) of the keyrings the @p n saved
 * mappings @p idx name, each state read once: a malloc'd array of
 * @p n names ("" for none), or NULL when a state cannot be read (it may
 * name one) or on ENOMEM. */
static char (*keyrings_named (const int *idx, int n))[256]
{
  char (*names)[256] = calloc ((size_t) n + 1, sizeof *names);
  struct rbdx_state st;

  for (int i = 0; names && i < n; i++) {
    const char *base;
    int r = rbdx_state_load (idx[i], &st);

    if (r == -ENOENT)
      continue;
    if (r < 0) {
      free (names);
      return NULL;
    }
    base = strrchr (st.keyring_file, '/');
    if (base)
      snprintf (names[i], sizeof names[i], "%s", base + 1);
  }
  return names;
}

/* Remove the keyring files no saved mapping names.  Only the holder of
 * RUN_DIR/lock may judge that: every keyring is written under the lock
 * (cmd-map.c), and the lock stays held, by the supervisor when the map
 * is gone, until the state naming the keyring is saved (mapped.h).  Such
 * files are left when a map and its supervisor are both killed
 * (SIGKILL, OOM) before that; nothing of theirs runs then. */
static void
sweep_keyrings (void)
{
  int idx[MAX_MAPPED], n = rbdx_state_list (idx, MAX_MAPPED), fd, i;
  char dir[4200], (*names)[256];
  struct dirent *e;
  DIR *d;

  if (n < 0 || !(names = keyrings_named (idx, n)))
    return;
  snprintf (dir, sizeof dir, "%s/keyrings", rbdx_run_dir ());
  fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  d = fd < 0 ? NULL : fdopendir (fd);
  if (!d) {
    if (fd >= 0)
      close (fd);
    free (names);
    return;
  }
  while ((e = readdir (d))) {
    size_t len = strlen (e->d_name);

    if (e->d_name[0] == '.' || len <= 8 ||
        strcmp (e->d_name + len - 8, ".keyring") != 0)
      continue;
    for (i = 0; i < n && strcmp (names[i], e->d_name) != 0; i++)
      ;
    if (i == n)
      unlinkat (fd, e->d_name, 0);
  }
  closedir (d);
  free (names);
}

/* Whether the connected device of @p st, whose supervisor is gone,
 * still serves that mapping: the kernel keeps the backend identifier
 * given at connect, and refuses a reconfigure naming another, so one
 * that differs is another mapping's (the device was disconnected by
 * someone else, rbd-nbd or another rbdx run directory, and reused: the
 * kernel gives out the lowest free index).  A kernel that shows none
 * (before Linux 5.1), or a state that recorded none, cannot tell: the
 * mapping is taken as it was. */
static bool
still_ours (const struct rbdx_state *st)
{
  char now[RBDX_BACKEND_MAX];
  int r;

  if (!*st->backend)
    return true;
  r = rbdx_device_backend (st->index, now, sizeof now);
  if (r == -ENOENT)
    return true;
  return r == 0 && strcmp (now, st->backend) == 0;
}

int
rbdx_mapped_load (struct rbdx_state *out, int max)
{
  int idx[MAX_MAPPED], n = rbdx_state_list (idx, MAX_MAPPED), k = 0;

  /* An unreadable run directory is not one without mappings: a user
   * that is not root would be told "not mapped" or shown none. */
  if (n == -E2BIG)
    die (1, "the run directory %s records more than %d mappings, more than "
         "rbdx handles: unmap some first", rbdx_run_dir (), MAX_MAPPED);
  if (n < 0)
    die (1, "cannot read the run directory %s: %s%s", rbdx_run_dir (),
         strerror (-n), n == -EACCES ? " (the mappings are root's: run as root)" : "");
  remove_stale_dirs ();

  for (int i = 0; i < n && k < max; i++) {
    int r = rbdx_state_load (idx[i], &out[k]);
    /* The run directory is readable (0755, state.h), its state files
     * are root's: not a list without that mapping either. */
    if (r == -EACCES)
      die (1, "cannot read the run directory %s: %s (the mappings are root's: run as root)",
           rbdx_run_dir (), strerror (-r));
    if (r < 0)
      continue;
    if (!rbdx_proc_is (out[k].supervisor, out[k].supervisor_start) &&
        (!rbdx_device_connected (idx[i]) || !still_ours (&out[k]))) {
      /* Its devlink too: the kernel gives the lowest free device to the
       * next mapping, whose device it would name. */
      if (*out[k].target && !rbdx_target_is_uri (out[k].target))
        rbdx_devlink_remove (out[k].target, idx[i]);
      rbdx_state_remove_keyring (out[k].keyring_file);
      rbdx_state_remove (idx[i]);
      continue;
    }
    k++;
  }
  return k;
}

struct rbdx_state *
rbdx_mapped_find (const char *target, struct rbdx_state *all, int n)
{
  char canon[RBDX_TARGET_MAX];
  const char *why;
  int idx = rbdx_device_index (target);

  for (int i = 0; i < n; i++) {
    if (idx >= 0 && all[i].index == idx)
      return &all[i];
    if (idx < 0 && rbdx_target_canonical (target, canon, sizeof canon, &why) == 0 &&
        strcmp (all[i].target, canon) == 0)
      return &all[i];
  }
  return NULL;
}

struct rbdx_state *
rbdx_mapped_find_mode (const char *target, bool read_only, struct rbdx_state *all,
                       int n)
{
  struct rbdx_state *st;

  for (int i = 0; i < n && (st = rbdx_mapped_find (target, all + i, n - i));
       i = (int) (st - all) + 1)
    if (st->read_only == read_only)
      return st;
  return NULL;
}

bool
rbdx_mapped_server_running (const struct rbdx_state *st)
{
  return st->server > 0 && rbdx_proc_is (st->server, st->server_start);
}

void
rbdx_mapped_lock_existing (void)
{
  char path[4200];
  int fd;

  snprintf (path, sizeof path, "%s/lock", rbdx_run_dir ());
  fd = open (path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT)
      return;
    die (1, "cannot open %s: %s", path, strerror (errno));
  }
  if (flock (fd, LOCK_EX) == -1)
    die (1, "cannot lock %s: %s", path, strerror (errno));
  rbdx_lock_fd = fd;
  sweep_keyrings ();
}

void
rbdx_mapped_lock (void)
{
  char path[4200];
  int fd;

  if (rbdx_state_mkdir ())
    die (1, "cannot create %s: %s", rbdx_run_dir (), strerror (errno));
  snprintf (path, sizeof path, "%s/lock", rbdx_run_dir ());
  fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 || flock (fd, LOCK_EX) == -1)
    die (1, "cannot lock %s: %s", path, strerror (errno));
  rbdx_lock_fd = fd;
  sweep_keyrings ();
}

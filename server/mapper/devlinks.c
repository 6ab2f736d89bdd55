/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/devlinks.c: the /dev/rbdx/POOL/IMAGE symlinks of mapped
 * images (see devlinks.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devlinks.h"

static const char *
dev_dir (void)
{
  const char *d = getenv ("RBDX_DEV_DIR");
  return d && *d ? d : "/dev/rbdx";
}

int
rbdx_devlink_path (const char *spec, char *buf, size_t len)
{
  int n;

  /* The spec parser refuses them; never build a path out of the link
   * directory should one come from elsewhere (an old state file). */
  for (const char *c = spec;; c++) {
    size_t l = strcspn (c, "/@");

    if (l == 0 || (l == 1 && c[0] == '.') ||
        (l == 2 && c[0] == '.' && c[1] == '.'))
      return -EINVAL;
    c += l;
    if (*c == '\0')
      break;
  }
  n = snprintf (buf, len, "%s/%s", dev_dir (), spec);
  return n < 0 || (size_t) n >= len ? -ENAMETOOLONG : 0;
}

/* mkdir -p of the directory part of @p path; below the link directory
 * (@p base bytes of it) every part must be a directory, not a symlink
 * (a devlink of an image named like the namespace): -ENOTDIR. */
static int
make_dirs (const char *path, size_t base)
{
  char dir[PATH_MAX];
  struct stat st;
  char *p;

  snprintf (dir, sizeof dir, "%s", path);
  p = strrchr (dir, '/');
  if (!p)
    return 0;
  *p = '\0';
  for (p = dir + 1;; p++) {
    bool end = *p == '\0';

    if (!end && *p != '/')
      continue;
    *p = '\0';
    if (mkdir (dir, 0755) == -1 && errno != EEXIST)
      return -errno;
    if ((size_t) (p - dir) > base &&
        (lstat (dir, &st) == -1 || !S_ISDIR (st.st_mode)))
      return -ENOTDIR;
    if (end)
      return 0;
    *p = '/';
  }
}

/* Remove the directories of devlink @p path (changed) left empty, up to
 * (not including) the link directory. */
static void
prune_dirs (char *path)
{
  size_t base = strlen (dev_dir ());
  char *p;

  while ((p = strrchr (path, '/')) && (size_t) (p - path) > base) {
    *p = '\0';
    if (rmdir (path) == -1)
      break;
  }
}

/* The N of a devlink @p path that reads "/dev/nbdN"; -1 if it is no
 * symlink or reads anything else. */
static int
link_index (const char *path)
{
  char target[64], *end;
  ssize_t n = readlink (path, target, sizeof target - 1);
  long v;

  if (n <= 0)
    return -1;
  target[n] = '\0';
  if (strncmp (target, "/dev/nbd", 8) != 0 || target[8] < '0' || target[8] > '9')
    return -1;
  errno = 0;
  v = strtol (target + 8, &end, 10);
  if (*end || errno || v < 0 || v > INT_MAX || (target[8] == '0' && target[9]))
    return -1;
  return (int) v;
}

static int
add (const char *path, int index, bool (*live) (int index, const char *spec),
     const char *spec)
{
  char tmp[PATH_MAX + 32], dev[64];
  struct stat st;
  int r, other;

  if ((r = make_dirs (path, strlen (dev_dir ()))) < 0)
    return r;
  if (lstat (path, &st) == 0) {
    /* Never another live mapping's (its "path" was printed to its
     * user), nor anything that is not a devlink (a namespace's
     * directory when an image has the namespace's name). */
    if (!S_ISLNK (st.st_mode) || (other = link_index (path)) < 0)
      return -EEXIST;
    if (other == index)
      return 0;
    if (live && live (other, spec))
      return -EEXIST;
  }
  else if (errno != ENOENT)
    return -errno;
  snprintf (dev, sizeof dev, "/dev/nbd%d", index);
  snprintf (tmp, sizeof tmp, "%s.tmp%ld", path, (long) getpid ());
  unlink (tmp);
  if (symlink (dev, tmp) == -1 || rename (tmp, path) == -1) {
    r = -errno;
    unlink (tmp);
    return r;
  }
  return 0;
}

int
rbdx_devlink_add (const char *spec, int index,
                  bool (*live) (int index, const char *spec))
{
  char path[PATH_MAX];
  int r;

  if ((r = rbdx_devlink_path (spec, path, sizeof path)) < 0)
    return r;
  /* No devlink: none of the directories made for it stays behind. */
  if ((r = add (path, index, live, spec)) < 0)
    prune_dirs (path);
  return r;
}

bool
rbdx_devlink_points_at (const char *spec, int index)
{
  char path[PATH_MAX];
  struct stat st;

  return rbdx_devlink_path (spec, path, sizeof path) == 0 &&
         lstat (path, &st) == 0 && S_ISLNK (st.st_mode) &&
         link_index (path) == index;
}

void
rbdx_devlink_remove (const char *spec, int index)
{
  char path[PATH_MAX], target[64], dev[64];
  ssize_t n;

  if (rbdx_devlink_path (spec, path, sizeof path) < 0)
    return;
  snprintf (dev, sizeof dev, "/dev/nbd%d", index);
  n = readlink (path, target, sizeof target - 1);
  if (n < 0)
    return;
  target[n] = '\0';
  if (strcmp (target, dev) != 0)
    return;          /* another mapping of the name took it over */
  unlink (path);
  prune_dirs (path);
}

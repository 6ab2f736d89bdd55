/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/devlinks.c: the /dev/rbdx/POOL/IMAGE symlinks of mapped
 * images (see devlinks.h). */
#include <errno.h>
#include <limits.h>
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

/* mkdir -p of the directory part of @path. */
static int
make_dirs (const char *path)
{
  char dir[PATH_MAX];
  char *p;

  snprintf (dir, sizeof dir, "%s", path);
  p = strrchr (dir, '/');
  if (!p)
    return 0;
  *p = '\0';
  for (p = dir + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir (dir, 0755) == -1 && errno != EEXIST)
      return -errno;
    *p = '/';
  }
  if (mkdir (dir, 0755) == -1 && errno != EEXIST)
    return -errno;
  return 0;
}

int
rbdx_devlink_add (const char *spec, int index)
{
  char path[PATH_MAX], tmp[PATH_MAX + 32], dev[64];
  int r;

  if ((r = rbdx_devlink_path (spec, path, sizeof path)) < 0 ||
      (r = make_dirs (path)) < 0)
    return r;
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

void
rbdx_devlink_remove (const char *spec, int index)
{
  char path[PATH_MAX], target[64], dev[64], *p;
  size_t base = strlen (dev_dir ());
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
  /* Remove the directories left empty, up to (not including) the base. */
  while ((p = strrchr (path, '/')) && (size_t) (p - path) > base) {
    *p = '\0';
    if (rmdir (path) == -1)
      break;
  }
}

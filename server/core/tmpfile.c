/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx common: exclusive temporary files (see tmpfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rbdx/tmpfile.h"

enum { TRIES = 8 };

FILE *
rbdx_tmpfile_create (const char *path, const char *suffix, mode_t mode,
                     char *tmp, size_t len)
{
  for (int i = 0; i < TRIES; i++) {
    unsigned r = 0;
    int n, fd;
    FILE *f;

    if (i == 0)
      n = snprintf (tmp, len, "%s.%s", path, suffix);
    else {
      if (getrandom (&r, sizeof r, GRND_NONBLOCK) != (ssize_t) sizeof r)
        r = (unsigned) rand ();
      n = snprintf (tmp, len, "%s.%s.%08x", path, suffix, r);
    }
    if (n < 0 || (size_t) n >= len) {
      errno = ENAMETOOLONG;
      return NULL;
    }
    fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) {
      if (errno == EEXIST)
        continue;           /* someone's file or link: never touched */
      return NULL;
    }
    f = fdopen (fd, "w");
    if (!f) {
      int e = errno;
      close (fd);
      unlink (tmp);
      errno = e;
      return NULL;
    }
    return f;
  }
  errno = EEXIST;
  return NULL;
}

int
rbdx_tmpfile_target_check (const char *path)
{
  size_t n = strlen (path);
  struct stat st;

  if (n && path[n - 1] == '/')
    return -EISDIR;
  if (lstat (path, &st) == -1)
    return errno == ENOENT ? 0 : -errno;
  return S_ISREG (st.st_mode) ? 0 : S_ISDIR (st.st_mode) ? -EISDIR : -EEXIST;
}

int
rbdx_tmpfile_replace (const char *tmp, const char *path)
{
  int r = rbdx_tmpfile_target_check (path);

  if (r < 0) {
    errno = -r;
    return -1;
  }
  return rename (tmp, path);
}

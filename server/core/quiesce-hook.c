/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the quiesce parameters and the hook's command line (see
 * quiesce-hook.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rbdx/opterr.h"
#include "rbdx/options.h"
#include "rbdx/quiesce-hook.h"

bool
rbdx_quiesce_is_key (const char *key)
{
  return strcmp (key, "quiesce") == 0 || strcmp (key, "quiesce_hook") == 0 ||
         strcmp (key, "quiesce_timeout") == 0 ||
         strcmp (key, "quiesce_device") == 0 ||
         strcmp (key, "quiesce_device_file") == 0;
}

bool
rbdx_quiesce_device_ok (const char *device)
{
  size_t n = strlen (device);

  if (n == 0 || n > RBDX_QUIESCE_DEVICE_MAX || device[0] == '-')
    return false;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char) device[i] < 0x20 || device[i] == 0x7f)
      return false;
  return true;
}

int
rbdx_quiesce_option_set (struct rbdx_quiesce_options *q, const char *key,
                         const char *value, char *err, size_t errlen)
{
  if (strcmp (key, "quiesce") == 0) {
    int r = rbdx_parse_bool (value);

    if (q->on_set)
      return rbdx_opt_err (err, errlen, "quiesce= given twice");
    if (r < 0)
      return rbdx_opt_err (err, errlen, "quiesce='%s': expected true or false", value);
    q->on = r;
    q->on_set = true;
    return 0;
  }
  if (strcmp (key, "quiesce_hook") == 0) {
    if (value[0] != '/')
      return rbdx_opt_err (err, errlen, "quiesce_hook='%s': must be an absolute path",
                   value);
    return rbdx_opt_set_once (&q->hook, key, value, err, errlen);
  }
  if (strcmp (key, "quiesce_device") == 0) {
    if (!rbdx_quiesce_device_ok (value))
      return rbdx_opt_err (err, errlen, "quiesce_device='%s': expected 1 to 255 "
                   "printable bytes not starting with '-'", value);
    return rbdx_opt_set_once (&q->device, key, value, err, errlen);
  }
  if (strcmp (key, "quiesce_device_file") == 0) {
    if (value[0] != '/')
      return rbdx_opt_err (err, errlen, "quiesce_device_file='%s': must be an "
                           "absolute path", value);
    return rbdx_opt_set_once (&q->device_file, key, value, err, errlen);
  }
  if (strcmp (key, "quiesce_timeout") == 0) {
    char *end;
    unsigned long v;

    if (q->timeout)
      return rbdx_opt_err (err, errlen, "quiesce_timeout= given twice");
    errno = 0;
    v = strtoul (value, &end, 10);
    if (*value < '0' || *value > '9' || *end || errno || v < 1 ||
        v > RBDX_QUIESCE_TIMEOUT_MAX)
      return rbdx_opt_err (err, errlen, "quiesce_timeout='%s': expected whole "
                   "seconds from 1 to %u", value, RBDX_QUIESCE_TIMEOUT_MAX);
    q->timeout = (unsigned) v;
    return 0;
  }
  return rbdx_opt_err (err, errlen, "%s: not a quiesce parameter", key);
}

const char *
rbdx_quiesce_file_kind (unsigned mode)
{
  switch (mode & S_IFMT) {
  case S_IFREG: return "a regular file";
  case S_IFDIR: return "a directory";
  case S_IFIFO: return "a FIFO";
  case S_IFCHR: return "a character device";
  case S_IFBLK: return "a block device";
  case S_IFSOCK: return "a socket";
  case S_IFLNK: return "a symbolic link";
  default: return "of an unknown type";
  }
}

int
rbdx_quiesce_device_file_check (const char *path, char *err, size_t errlen)
{
  struct stat st;

  if (stat (path, &st) < 0) {
    int e = errno;

    /* Missing is the normal case: the mapper writes it later. */
    if (e == ENOENT)
      return 0;
    if (errlen)
      snprintf (err, errlen, "quiesce_device_file='%s': %s", path,
                strerror (e));
    return -e;
  }
  if (!S_ISREG (st.st_mode))
    return rbdx_opt_err (err, errlen, "quiesce_device_file='%s': %s, not a "
                         "regular file", path,
                         rbdx_quiesce_file_kind (st.st_mode));
  return 0;
}

int
rbdx_quiesce_hook_check (const char *path, char *err, size_t errlen)
{
  struct stat st;

  if (path[0] != '/')
    return rbdx_opt_err (err, errlen, "quiesce hook '%s': must be an absolute path",
                 path);
  if (stat (path, &st) < 0) {
    int e = errno;

    if (errlen)
      snprintf (err, errlen, "quiesce hook '%s': %s%s", path, strerror (e),
                e == ENOENT && strcmp (path, RBDX_QUIESCE_HOOK_DEFAULT) == 0
                ? " (rbdx's default hook, installed with the rbdx mapper: "
                  "install it or give quiesce_hook=PATH)" : "");
    return -e;
  }
  if (!S_ISREG (st.st_mode))
    return rbdx_opt_err (err, errlen, "quiesce hook '%s': %s, not a regular "
                         "file", path, rbdx_quiesce_file_kind (st.st_mode));
  if (access (path, X_OK) < 0) {
    if (errlen)
      snprintf (err, errlen, "quiesce hook '%s': not executable", path);
    return -EACCES;
  }
  return 0;
}

const char *
rbdx_quiesce_hook_path (const struct rbdx_quiesce_options *q)
{
  return q->hook ? q->hook : RBDX_QUIESCE_HOOK_DEFAULT;
}

unsigned
rbdx_quiesce_timeout (const struct rbdx_quiesce_options *q)
{
  return q->timeout ? q->timeout : RBDX_QUIESCE_TIMEOUT_DEFAULT;
}

int
rbdx_quiesce_options_complete (const struct rbdx_quiesce_options *q,
                               char *err, size_t errlen)
{
  if (!q->on) {
    if (q->hook || q->timeout || q->device || q->device_file)
      return rbdx_opt_err (err, errlen, "quiesce_hook=, quiesce_timeout=, "
                   "quiesce_device= and quiesce_device_file= need "
                   "quiesce=true");
    return 0;
  }
  /* A hook that is missing or not executable, or a device file that is
   * there but not a regular file, is a bad parameter value (-EINVAL, as
   * the rest of the options), whatever stat or access said; the message
   * names the path and the reason. */
  if (rbdx_quiesce_hook_check (rbdx_quiesce_hook_path (q), err, errlen) < 0)
    return -EINVAL;
  if (q->device_file &&
      rbdx_quiesce_device_file_check (q->device_file, err, errlen) < 0)
    return -EINVAL;
  return 0;
}

int
rbdx_quiesce_device_read (const char *path,
                          char buf[RBDX_QUIESCE_DEVICE_MAX + 1])
{
  char text[RBDX_QUIESCE_DEVICE_MAX + 2];
  char self[32];
  struct stat st;
  size_t n = 0;
  int fd = -1, pfd, e = 0;

  /* A regular file only, checked before the open: opening a FIFO or a
   * device can act (a FIFO's writer, a tape's rewind, a watchdog) and
   * its content is not one whole file (a FIFO gives what its writer
   * wrote so far: a name cut short would pass as another DEVICE).  An
   * O_PATH descriptor opens nothing (open(2)) and pins the inode that
   * is checked; its /proc/self/fd link then opens that inode, whatever
   * the name has been renamed to meanwhile. */
  pfd = open (path, O_PATH | O_CLOEXEC);
  if (pfd < 0)
    return errno == ENOENT ? 0 : -errno;
  if (fstat (pfd, &st) < 0)
    e = errno;
  else if (S_ISDIR (st.st_mode))
    e = EISDIR;
  else if (!S_ISREG (st.st_mode))
    e = EINVAL;
  if (!e) {
    snprintf (self, sizeof self, "/proc/self/fd/%d", pfd);
    fd = open (self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
      e = errno == ENOENT ? ENOTSUP : errno;     /* no /proc mounted */
  }
  close (pfd);
  if (e)
    return -e;
  while (!e && n < sizeof text) {
    ssize_t r = read (fd, text + n, sizeof text - n);

    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      e = errno;
    else if (r == 0)
      break;
    else
      n += (size_t) r;
  }
  close (fd);
  if (e)
    return -e;
  if (n > 0 && text[n - 1] == '\n')
    n--;
  /* Too long, or a NUL that would cut the check short. */
  if (n > RBDX_QUIESCE_DEVICE_MAX || memchr (text, '\0', n))
    return -EINVAL;
  text[n] = '\0';
  if (!rbdx_quiesce_device_ok (text))
    return -EINVAL;
  memcpy (buf, text, n + 1);
  return 1;
}

int
rbdx_quiesce_spec_device_check (const struct rbdx_quiesce_options *q,
                                const char *spec, char *err, size_t errlen)
{
  if (!q->on || q->device || q->device_file || rbdx_quiesce_device_ok (spec))
    return 0;
  return rbdx_opt_err (err, errlen, "quiesce=true: the image spec (%zu bytes) "
                       "cannot be the hook's DEVICE argument (1 to %d bytes, "
                       "not starting with '-'): give quiesce_device=; the "
                       "spec: '%s'", strlen (spec), RBDX_QUIESCE_DEVICE_MAX,
                       spec);
}

int
rbdx_quiesce_hook_argv (const char *hook, const char *device, bool quiesce,
                        const char *argv[4])
{
  if (hook[0] != '/' || !rbdx_quiesce_device_ok (device))
    return -EINVAL;
  argv[0] = hook;
  argv[1] = device;
  argv[2] = quiesce ? "quiesce" : "unquiesce";
  argv[3] = NULL;
  return 0;
}

void
rbdx_quiesce_options_free (struct rbdx_quiesce_options *q)
{
  free (q->hook);
  free (q->device);
  free (q->device_file);
  memset (q, 0, sizeof *q);
}

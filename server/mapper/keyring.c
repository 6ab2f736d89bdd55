/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/keyring.c: the keyring files a mapping owns: written
 * from a connection_info's keyring or from rbd-nbd's --keyfile (see
 * keyring.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keyring.h"
#include "state.h"

int
rbdx_keyring_write (const char *text, char *path, size_t len, char *why,
                    size_t whylen)
{
  char dir[300];
  size_t n = strlen (text);
  int fd, e;

  if (snprintf (dir, sizeof dir, "%s/keyrings", rbdx_run_dir ()) >= (int) sizeof dir ||
      snprintf (path, len, "%s/XXXXXX.keyring", dir) >= (int) len) {
    snprintf (why, whylen, "the run directory %s is too long", rbdx_run_dir ());
    return -ENAMETOOLONG;
  }
  if (rbdx_state_mkdir () < 0 || (mkdir (dir, 0700) == -1 && errno != EEXIST)) {
    e = errno;
    snprintf (why, whylen, "cannot create %s: %s", dir, strerror (e));
    return -e;
  }
  /* A name of its own (O_EXCL, random), owned by this mapping alone: no
   * other volume's name can lead to it, and only the mapping's end
   * removes it (supervise.h, keyring_file). */
  fd = mkostemps (path, 8, O_CLOEXEC);
  if (fd < 0) {
    e = errno;
    snprintf (why, whylen, "cannot create the volume's keyring in %s: %s", dir,
              strerror (e));
    return -e;
  }
  if (fchmod (fd, 0600) == -1 || write (fd, text, n) != (ssize_t) n) {
    e = errno ? errno : EIO;
    close (fd);
    unlink (path);
    snprintf (why, whylen, "cannot write the volume's keyring %s: %s", path, strerror (e));
    return -e;
  }
  if (close (fd) == -1) {
    e = errno;
    unlink (path);
    snprintf (why, whylen, "cannot write the volume's keyring %s: %s", path, strerror (e));
    return -e;
  }
  return 0;
}

static int
refuse (char *why, size_t whylen, const char *what, const char *file)
{
  snprintf (why, whylen, "--keyfile %s: %s", file, what);
  return -EINVAL;
}

int
rbdx_keyring_from_keyfile (const char *keyfile, const char *id, char **text,
                           char *why, size_t whylen)
{
  char buf[4097], *key, *end;
  struct stat st;
  ssize_t n;
  int fd, e, r = 0;

  *text = NULL;
  if (!*id || strspn (id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                      "0123456789._-") != strlen (id)) {
    snprintf (why, whylen, "the Ceph client id '%.64s' is not letters, digits, '.', "
              "'_' or '-' (the keyring of --keyfile names it)", id);
    return -EINVAL;
  }
  /* O_NONBLOCK: a FIFO must not hold the map up before fstat says so. */
  fd = open (keyfile, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    e = errno;
    snprintf (why, whylen, "--keyfile %s: %s", keyfile, strerror (e));
    return -e;
  }
  if (fstat (fd, &st) == -1) {
    e = errno;
    close (fd);
    snprintf (why, whylen, "--keyfile %s: %s", keyfile, strerror (e));
    return -e;
  }
  if (!S_ISREG (st.st_mode))
    r = refuse (why, whylen, "not a regular file", keyfile);
  else if (st.st_mode & S_IWOTH)
    r = refuse (why, whylen, "writable by every user (anyone could have put a key "
                "of their choosing in it): refused", keyfile);
  else if (st.st_size > 4096)
    r = refuse (why, whylen, "larger than 4 KiB: not a key file (it holds just the "
                "base64 key)", keyfile);
  if (r < 0) {
    close (fd);
    return r;
  }
  n = read (fd, buf, sizeof buf - 1);
  e = errno;
  close (fd);
  if (n < 0) {
    snprintf (why, whylen, "--keyfile %s: %s", keyfile, strerror (e));
    return -e;
  }
  buf[n] = '\0';
  key = buf + strspn (buf, " \t\r\n");
  end = key + strcspn (key, " \t\r\n");
  /* A NUL byte would end the string checks below early and let what
   * follows it through (/proc/self/environ is "VAR=value\0..."). */
  if (memchr (buf, '\0', (size_t) n) || end == key ||
      end[strspn (end, " \t\r\n")] != '\0' ||
      strspn (key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
              "0123456789+/=") != (size_t) (end - key))
    r = refuse (why, whylen, "does not hold a key (a key file holds just the base64 "
                "key, as Ceph's keyfile option reads it)", keyfile);
  else {
    *end = '\0';
    if (asprintf (text, "[client.%s]\n\tkey = %s\n", id, key) < 0) {
      *text = NULL;
      snprintf (why, whylen, "out of memory");
      r = -ENOMEM;
    }
  }
  explicit_bzero (buf, sizeof buf);
  return r;
}

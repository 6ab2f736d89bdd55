/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/listen.c (listen.h): the engine's listening sockets.
 *
 * The mode of a socket file is decided at bind(2).  Linux gives the new
 * file the mode of the socket's own inode less the umask (net/unix/
 * af_unix.c, unix_bind: S_IFSOCK | (SOCK_INODE (sock)->i_mode &
 * ~current_umask ())), and fchmod(2) on the unbound socket sets that
 * inode's mode.  So fchmod (0600) before bind creates the file 0600 at
 * once, without changing the process's umask under its other threads
 * (librados has some by now).  The result is checked: a socket file
 * that group or others could use is refused rather than served.
 */
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "rbdx/log.h"
#include "rbdx/printable.h"

#include "listen.h"

int
rbdx_engine_listen (const char *path, int type)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  struct stat st;
  char shown[2048];
  int fd;

  rbdx_printable (path, shown, sizeof shown);
  if (strlen (path) >= sizeof sa.sun_path) {
    rbdx_error ("rbdx-engine: socket path too long: %s", shown);
    return -1;
  }
  strcpy (sa.sun_path, path);
  fd = socket (AF_UNIX, type | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    rbdx_error ("rbdx-engine: socket: %m");
    return -1;
  }
  if (fchmod (fd, 0600) < 0 ||
      bind (fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
    rbdx_error ("rbdx-engine: cannot listen on %s: %m", shown);
    close (fd);
    return -1;
  }
  /* bind made the file: from here a failure removes it. */
  if (lstat (path, &st) < 0) {
    rbdx_error ("rbdx-engine: %s: %m", shown);
    goto fail;
  }
  if ((st.st_mode & 077) != 0) {
    rbdx_error ("rbdx-engine: %s: the socket was created with mode %04o, "
                "not 0600", shown, (unsigned) (st.st_mode & 07777));
    goto fail;
  }
  if (listen (fd, 64) < 0) {
    rbdx_error ("rbdx-engine: cannot listen on %s: %m", shown);
    goto fail;
  }
  return fd;

fail:
  unlink (path);
  close (fd);
  return -1;
}

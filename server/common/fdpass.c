/* SPDX-License-Identifier: BSD-3-Clause */
/* server/common/fdpass.c: see fdpass.h. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "common/fdpass.h"

int
rbdx_send_fd (int sock, const char *msg, int fd)
{
  union { struct cmsghdr h; char b[CMSG_SPACE (sizeof (int))]; } u;
  struct iovec iov = { (void *) msg, strlen (msg) };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
                       .msg_control = u.b, .msg_controllen = sizeof u.b };
  struct cmsghdr *cm = CMSG_FIRSTHDR (&mh);

  memset (&u, 0, sizeof u);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cm), &fd, sizeof fd);
  return sendmsg (sock, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/negotiate.c: each connection's NBD handshake by libnbd,
 * and the socket taken out of the handle for the kernel (see negotiate.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <libnbd.h>
#include <linux/nbd.h>

#include "common/control.h"
#include "negotiate.h"

/* Not in linux/nbd.h of every release; values from the NBD spec. */
#ifndef NBD_FLAG_ROTATIONAL
#define NBD_FLAG_ROTATIONAL (1 << 4)
#endif
#ifndef NBD_FLAG_CAN_MULTI_CONN
#define NBD_FLAG_CAN_MULTI_CONN (1 << 8)
#endif
#ifndef NBD_FLAG_SEND_WRITE_ZEROES
#define NBD_FLAG_SEND_WRITE_ZEROES (1 << 6)
#endif

static __thread char errbuf[512];

/* How long a CONNECT may take (seconds). */
#define ENGINE_TIMEOUT_S 120

static int
libnbd_failed (struct nbd_handle *h, const char **err)
{
  int e = nbd_get_errno ();
  snprintf (errbuf, sizeof errbuf, "%s", nbd_get_error () ? nbd_get_error () : "libnbd failed");
  if (err)
    *err = errbuf;
  nbd_close (h);
  return e == ECONNREFUSED || e == ENOENT ? -e : -EIO;
}

/* "(identity X)" at the end of the export description, if any. */
static void
identity_of (struct nbd_handle *h, char *buf, size_t len)
{
  static const char key[] = "(identity ";
  char *desc = nbd_get_export_description (h), *p;
  size_t n;

  *buf = '\0';
  if (!desc)
    return;
  /* The last one: an image name may hold "(identity " itself. */
  p = NULL;
  for (char *q = strstr (desc, key); q; q = strstr (q + 1, key))
    p = q;
  n = p ? strlen (p + sizeof key - 1) : 0;
  if (n > 1 && n <= len && p[sizeof key - 1 + n - 1] == ')')
    snprintf (buf, len, "%.*s", (int) (n - 1), p + sizeof key - 1);
  /* Only a whole identity in rbdx's own form counts (its escapes keep
   * spaces and ')' out of it); anything else is an unknown identity. */
  if (*buf && rbdx_ident_parse (buf, &(struct rbdx_ident) { 0 }) < 0)
    *buf = '\0';
  free (desc);
}

/* One connection from the built-in engine's control socket at @p path
 * (common/control.h: "CONNECT", answered "OK SIZE FLAGS MIN_BLOCK
 * IDENTITY" with the socket attached, or "ERR ERRNO MESSAGE"). */
static int
engine_connect (const char *path, int *fd_out, struct rbdx_export *exp,
                const char **err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  union { struct cmsghdr h; char b[CMSG_SPACE (sizeof (int))]; } u;
  char msg[RBDX_CONTROL_MSG_MAX];
  struct iovec iov = { msg, sizeof msg - 1 };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
                       .msg_control = u.b, .msg_controllen = sizeof u.b };
  struct cmsghdr *cm;
  unsigned long long size;
  unsigned flags, min_block;
  const char *ident = "";
  ssize_t n;
  int c, fd = -1, e, at = -1;

  if (strlen (path) >= sizeof sa.sun_path)
    return -ENAMETOOLONG;
  strcpy (sa.sun_path, path);
  c = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (c < 0)
    return -errno;
  if (connect (c, (struct sockaddr *) &sa, sizeof sa) < 0) {
    e = errno;
    close (c);
    snprintf (errbuf, sizeof errbuf, "engine control socket %s: %s", path,
              strerror (e));
    if (err)
      *err = errbuf;
    return e == ECONNREFUSED || e == ENOENT ? -e : -EIO;
  }
  /* Opening a librbd context takes as long as the cluster does; an
   * engine that does not answer within ENGINE_TIMEOUT_S is treated like a
   * server that did not start (the supervisor retries). */
  {
    struct timeval tv = { ENGINE_TIMEOUT_S, 0 };
    setsockopt (c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  if (send (c, RBDX_CONTROL_CONNECT, strlen (RBDX_CONTROL_CONNECT),
            MSG_NOSIGNAL) != (ssize_t) strlen (RBDX_CONTROL_CONNECT) ||
      (n = recvmsg (c, &mh, MSG_CMSG_CLOEXEC)) <= 0) {
    snprintf (errbuf, sizeof errbuf, "the engine did not answer: %s",
              strerror (errno ? errno : EPIPE));
    close (c);
    if (err)
      *err = errbuf;
    return -EIO;
  }
  close (c);
  msg[n] = '\0';
  for (cm = CMSG_FIRSTHDR (&mh); cm; cm = CMSG_NXTHDR (&mh, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
      memcpy (&fd, CMSG_DATA (cm), sizeof fd);
  if (strncmp (msg, RBDX_CONTROL_OK, strlen (RBDX_CONTROL_OK)) != 0 ||
      fd < 0 ||
      sscanf (msg + strlen (RBDX_CONTROL_OK), "%llu %u %u%n", &size,
              &flags, &min_block, &at) < 3 || at < 0 ||
      /* The identity is the rest of the answer, whole: one that does
       * not parse is refused, never cut to a part that might. */
      (*(ident = msg + strlen (RBDX_CONTROL_OK) + at) &&
       (*ident++ != ' ' ||
        (*ident && rbdx_ident_parse (ident, &(struct rbdx_ident) { 0 }) < 0)))) {
    const char *text = strncmp (msg, RBDX_CONTROL_ERR,
                                strlen (RBDX_CONTROL_ERR)) == 0
                       ? strchr (msg + strlen (RBDX_CONTROL_ERR), ' ') : NULL;
    snprintf (errbuf, sizeof errbuf, "%.400s", text ? text + 1 : msg);
    if (fd >= 0)
      close (fd);
    if (err)
      *err = errbuf;
    return -EIO;
  }
  if (exp) {
    exp->size = size;
    exp->flags = flags;
    exp->read_only = flags & NBD_FLAG_READ_ONLY;
    exp->multi_conn = flags & NBD_FLAG_CAN_MULTI_CONN;
    exp->min_block = min_block >= 1 && min_block <= 65536 ? min_block : 1;
    snprintf (exp->identity, sizeof exp->identity, "%s", ident);
  }
  *fd_out = fd;
  return 0;
}

int
rbdx_negotiate (const char *target, int *fd_out, struct rbdx_export *exp,
                const char **err)
{
  struct nbd_handle *h;

  if (strncmp (target, RBDX_ENGINE_PREFIX, strlen (RBDX_ENGINE_PREFIX)) == 0)
    return engine_connect (target + strlen (RBDX_ENGINE_PREFIX), fd_out, exp,
                           err);
  h = nbd_create ();
  int64_t size;
  int fd, flags;

  if (!h) {
    if (err)
      *err = "cannot create a libnbd handle";
    return -ENOMEM;
  }
  /* Ask for the description too (NBD_INFO_DESCRIPTION): an rbdx server
   * states the image identity there. */
  if (nbd_set_request_structured_replies (h, false) == -1 ||
      nbd_set_full_info (h, true) == -1)
    return libnbd_failed (h, err);
  if (strstr (target, "://")) {
    if (nbd_connect_uri (h, target) == -1)
      return libnbd_failed (h, err);
  }
  else if (nbd_connect_unix (h, target) == -1)
    return libnbd_failed (h, err);

  size = nbd_get_size (h);
  if (size < 0)
    return libnbd_failed (h, err);
  if (exp) {
    exp->size = (uint64_t) size;
    exp->read_only = nbd_is_read_only (h) == 1;
    exp->multi_conn = nbd_can_multi_conn (h) == 1;
    exp->flags = NBD_FLAG_HAS_FLAGS;
    if (exp->read_only)
      exp->flags |= NBD_FLAG_READ_ONLY;
    if (nbd_can_flush (h) == 1)
      exp->flags |= NBD_FLAG_SEND_FLUSH;
    if (nbd_can_fua (h) == 1)
      exp->flags |= NBD_FLAG_SEND_FUA;
    if (nbd_is_rotational (h) == 1)
      exp->flags |= NBD_FLAG_ROTATIONAL;
    if (nbd_can_trim (h) == 1)
      exp->flags |= NBD_FLAG_SEND_TRIM;
    if (nbd_can_zero (h) == 1)
      exp->flags |= NBD_FLAG_SEND_WRITE_ZEROES;
    if (exp->multi_conn)
      exp->flags |= NBD_FLAG_CAN_MULTI_CONN;
    identity_of (h, exp->identity, sizeof exp->identity);
    {
      int64_t m = nbd_get_block_size (h, LIBNBD_SIZE_MINIMUM);
      exp->min_block = m > 0 && m <= 65536 ? (uint32_t) m : 1;
    }
  }

  /* Take the socket: our duplicate survives nbd_close, which only closes
   * libnbd's descriptor (plain sockets; we never use TLS here). */
  fd = nbd_aio_get_fd (h);
  if (fd < 0)
    return libnbd_failed (h, err);
  fd = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) {
    snprintf (errbuf, sizeof errbuf, "dup: %s", strerror (errno));
    if (err)
      *err = errbuf;
    nbd_close (h);
    return -EIO;
  }
  nbd_close (h);
  /* libnbd made it non-blocking; the kernel does its own waiting. */
  flags = fcntl (fd, F_GETFL);
  if (flags >= 0)
    fcntl (fd, F_SETFL, flags & ~O_NONBLOCK);
  *fd_out = fd;
  return 0;
}

int
rbdx_negotiate_many (const char *target, size_t n, int *fds,
                     struct rbdx_export *exp, const char **err)
{
  struct rbdx_export first = { 0 }, e;
  size_t i;
  int r;

  for (i = 0; i < n; i++) {
    r = rbdx_negotiate (target, &fds[i], &e, err);
    if (r == 0 && i > 0 && (e.size != first.size || e.flags != first.flags ||
                            strcmp (e.identity, first.identity) != 0)) {
      close (fds[i]);
      if (err)
        *err = "the export changed while connecting";
      r = -ESTALE;
    }
    if (r) {
      while (i > 0)
        close (fds[--i]);
      return r;
    }
    if (i == 0)
      first = e;
  }
  if (exp)
    *exp = first;
  return 0;
}

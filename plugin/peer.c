/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx plugin: who the client is (see peer.h). */
#include <inttypes.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "rbdx/printable.h"

#include "peer.h"

/* Append to @buf, which holds @*used bytes of @len (truncating). */
static void
add (char *buf, size_t len, size_t *used, const char *fmt, ...)
{
  va_list ap;
  int n;

  if (*used + 1 >= len)
    return;
  va_start (ap, fmt);
  n = vsnprintf (buf + *used, len - *used, fmt, ap);
  va_end (ap);
  if (n > 0)
    *used += (size_t) n < len - *used ? (size_t) n : len - *used - 1;
}

static void
add_address (char *buf, size_t len, size_t *used)
{
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  char host[NI_MAXHOST], serv[NI_MAXSERV];

  if (nbdkit_peer_name ((struct sockaddr *) &ss, &sl) == -1) {
    add (buf, len, used, "unknown peer");
    return;
  }
  if (ss.ss_family == AF_UNIX) {
    int64_t pid = nbdkit_peer_pid (), uid = nbdkit_peer_uid ();

    add (buf, len, used, "unix socket");
    if (pid >= 0)
      add (buf, len, used, " pid %" PRId64, pid);
    if (uid >= 0)
      add (buf, len, used, " uid %" PRId64, uid);
  }
  else if (getnameinfo ((struct sockaddr *) &ss, sl, host, sizeof host,
                        serv, sizeof serv,
                        NI_NUMERICHOST | NI_NUMERICSERV) == 0)
    add (buf, len, used, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
         host, serv);
  else
    add (buf, len, used, "peer of address family %d", ss.ss_family);
}

#ifdef HAVE_NBDKIT_PEER_TLS_DN
/* " KEY 'VALUE'" for a DN nbdkit returned (NULL: its error is logged
 * already; "": no verified certificate), escaped. */
static void
add_dn (char *buf, size_t len, size_t *used, const char *key, char *dn)
{
  char shown[1024];

  if (dn && *dn)
    add (buf, len, used, " %s '%s'", key,
         rbdx_printable (dn, shown, sizeof shown));
  free (dn);
}
#endif

void
rbdx_peer_describe (char *buf, size_t len)
{
  size_t used = 0;

  buf[0] = '\0';
  add_address (buf, len, &used);
  if (nbdkit_is_tls () != 1)
    return;
  add (buf, len, &used, " TLS");
#ifdef HAVE_NBDKIT_PEER_TLS_DN
  add_dn (buf, len, &used, "dn", nbdkit_peer_tls_dn ());
  add_dn (buf, len, &used, "issuer", nbdkit_peer_tls_issuer_dn ());
#endif
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx plugin: who the client of the current connection is, for the
 * log line of .open: its address (or Unix socket credentials) and, over
 * TLS with X.509 certificates, the Distinguished Names of its certificate
 * and of that certificate's issuer.
 *
 * nbdkit finds the connection from thread-local state, so these work
 * only on the thread of a connection callback (.open here).  The TLS
 * names come from nbdkit_peer_tls_dn and nbdkit_peer_tls_issuer_dn
 * (nbdkit >= 1.40, nbdkit_peer_tls_dn(3)); with older nbdkit headers
 * (HAVE_NBDKIT_PEER_TLS_DN unset by meson) the line has no TLS names.
 */
#ifndef RBDX_PEER_H
#define RBDX_PEER_H

#include <stddef.h>

/** Write a description of the current connection's client into @p buf
 * (@p len bytes, at least 1; truncated to fit, always NUL-terminated):
 * "127.0.0.1:40312", "unix socket pid 123 uid 0", each followed over
 * TLS by " TLS" and, when the client presented a certificate that
 * nbdkit verified (--tls-verify-peer), " dn 'CN=...' issuer 'CN=...'".
 * Names from the certificate are written with control characters and
 * '\\' as \\xHH (the certificate is the client's input).
 * Never fails: what nbdkit cannot tell is left out ("unknown peer" if
 * nothing is known).  Call only from a connection callback's thread. */
void rbdx_peer_describe (char *buf, size_t len);

#endif /* RBDX_PEER_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/engine/listen.h: the engine's listening sockets (listen.c). */
#ifndef RBDX_SERVER_ENGINE_LISTEN_H
#define RBDX_SERVER_ENGINE_LISTEN_H

/** Listen on a new AF_UNIX socket of @p type (SOCK_SEQPACKET for the
 * control socket, SOCK_STREAM for the test hook) bound at @p path,
 * created with mode 0600 (less if the umask says so): it never exists
 * with a wider mode, not even between bind(2) and a chmod.  Never
 * removes what is at @p path (a live engine's socket, or a file).
 * @return the listening fd (close-on-exec, owned by the caller), or -1
 *         after logging why (rbdx_error).  Thread-safe. */
int rbdx_engine_listen (const char *path, int type);

#endif

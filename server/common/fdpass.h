/* SPDX-License-Identifier: BSD-3-Clause */
/* server/common/fdpass.h: a message with a descriptor attached (SCM_RIGHTS), the
 * answer of the built-in engine's control socket (engine.c) and of its
 * test stand-in (tests/kernel/standin-engine.c). */
#ifndef RBDX_SERVER_FDPASS_H
#define RBDX_SERVER_FDPASS_H

/** Send @p msg (a string, without its NUL) on @p sock with a duplicate
 * of @p fd attached (unix(7), SCM_RIGHTS); @p fd stays the caller's.
 * @return 0, or a negative errno of sendmsg.  Thread-safe. */
int rbdx_send_fd (int sock, const char *msg, int fd);

#endif

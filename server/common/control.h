/* SPDX-License-Identifier: BSD-3-Clause */
/* server/common/control.h: the control protocol of the built-in engine,
 * spoken by the engine (server/engine/engine.c) and by the mapper's
 * supervisor (server/mapper/negotiate.c).
 *
 * An AF_UNIX SOCK_SEQPACKET socket, mode 0600.  Each message of the
 * supervisor is one request word, exactly (no NUL, nothing after it):
 * today only RBDX_CONTROL_CONNECT, which opens one connection.  The
 * engine answers each with one message:
 *   "OK SIZE FLAGS MIN_BLOCK IDENTITY"  (RBDX_CONTROL_OK_FMT) with the
 *       client's end of a socketpair attached (SCM_RIGHTS,
 *       common/fdpass.h), already in the transmission phase: SIZE in
 *       bytes, FLAGS the NBD transmission flags (common/nbd-wire.h),
 *       MIN_BLOCK the minimum block size in bytes, IDENTITY the image
 *       identity (include/rbdx/identity.h);
 *   "ERR ERRNO MESSAGE"  (RBDX_CONTROL_ERR_FMT): a positive errno and a
 *       one-line message; the control connection stays usable.
 */
#ifndef RBDX_SERVER_COMMON_CONTROL_H
#define RBDX_SERVER_COMMON_CONTROL_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/** The request word: open a connection. */
#define RBDX_CONTROL_CONNECT "CONNECT"

/** Longest message either side sends, in bytes. */
#define RBDX_CONTROL_MSG_MAX 2048

/** The start of an answer that succeeded, and of one that failed. */
#define RBDX_CONTROL_OK "OK "
#define RBDX_CONTROL_ERR "ERR "

/** printf formats of the answers: (uint64_t size, unsigned flags,
 * uint32_t min_block, const char *identity) and (int errno, const char
 * *message). */
#define RBDX_CONTROL_OK_FMT RBDX_CONTROL_OK "%" PRIu64 " %u %" PRIu32 " %s"
#define RBDX_CONTROL_ERR_FMT RBDX_CONTROL_ERR "%d %s"

/** Whether the message @p msg of @p len bytes (all that was received,
 * MSG_TRUNC's length for a longer one) is exactly the request word
 * @p word: the same length and the same bytes.  Pure. */
static inline bool
rbdx_control_is (const char *msg, size_t len, const char *word)
{
  return len == strlen (word) && memcmp (msg, word, len) == 0;
}

#endif /* RBDX_SERVER_COMMON_CONTROL_H */

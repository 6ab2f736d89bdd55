/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/negotiate.h: NBD connections negotiated by libnbd for the kernel.
 *
 * libnbd does the whole handshake (never by hand here); the socket is then
 * taken out of the handle (dup, then nbd_close, which closes libnbd's own
 * descriptor without sending NBD_CMD_DISC) and handed to the kernel.
 * Structured replies are not requested: the Linux NBD driver (6.1) only
 * parses simple replies (NBD spec, "Structured replies" negotiation).
 * Thread-safe (no shared state).
 */
#ifndef RBDX_SERVER_NEGOTIATE_H
#define RBDX_SERVER_NEGOTIATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rbdx/identity.h"

/** What the server told one connection in the handshake. */
struct rbdx_export {
  uint64_t size;          /**< export size, bytes */
  uint64_t flags;         /**< NBD transmission flags (NBD_FLAG_*), as far
                               as libnbd reports them */
  bool multi_conn;        /**< NBD_FLAG_CAN_MULTI_CONN */
  bool read_only;         /**< NBD_FLAG_READ_ONLY */
  uint32_t min_block;     /**< the export's minimum block size, bytes (NBD
                               "Block size constraints"; 1 when none was
                               advertised): 4096 for a LUKS2 rbdx export */
  /** The image identity an rbdx server states in the export description
   *  ("... (identity POOLID/[NS/]IMAGEID[@SNAPID])", see
   *  include/rbdx/identity.h), or "" when the server states none. */
  char identity[RBDX_IDENT_TEXT_MAX];
};

/** @p target prefix: the control socket of the built-in engine
 *  (server/engine/engine.h), whose connections need no handshake. */
#define RBDX_ENGINE_PREFIX "engine:"

/** Negotiate one connection to @p target: an NBD URI ("nbd://",
 *  "nbd+unix://", ...) when it contains "://"; RBDX_ENGINE_PREFIX and the
 *  path of the built-in engine's control socket (a "CONNECT" there, see
 *  server/engine/engine.c); else the path of a Unix socket (default export).
 *  @param fd_out   a connected socket in transmission phase, blocking,
 *                  close-on-exec; owned by the caller.
 *  @param exp      filled from the handshake (may be NULL).
 *  @param err      receives libnbd's message on failure (static storage of
 *                  this thread, valid until the next call), may be NULL.
 *  @return 0, or -ECONNREFUSED/-ENOENT when nothing listens, else -EIO. */
int rbdx_negotiate (const char *target, int *fd_out, struct rbdx_export *exp,
                    const char **err);

/** Negotiate @p n connections (see rbdx_negotiate) and check that every
 *  one saw the same size and flags.  On failure no descriptor is left open.
 *  @return 0, the first failure's error, or -ESTALE when the connections
 *  disagree (the export changed size, or the name came to mean another
 *  image, while connecting: try again). */
int rbdx_negotiate_many (const char *target, size_t n, int *fds,
                         struct rbdx_export *exp, const char **err);

#endif

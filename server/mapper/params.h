/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/params.h: the KEY=VALUE parameters the mapper hands its
 * server (the plugin's or the built-in engine's, nbdkit-rbdx-plugin(1)).
 *
 * The supervisor runs in / and starts its server there, so a parameter
 * that names a file by a relative path is made absolute against the
 * directory `rbdx` was run from, before the supervisor is forked.  Which
 * parameters name files is the core's one list
 * (rbdx_options_wants_absolute, include/rbdx/options.h), the same the
 * plugin and the engine use.  Single-threaded (getcwd).
 */
#ifndef RBDX_SERVER_PARAMS_H
#define RBDX_SERVER_PARAMS_H

#include <stddef.h>

/** "KEY=VALUE" as the server should get it: a copy of @p kv, with VALUE
 *  made absolute against the current directory ("CWD/VALUE", not
 *  resolved further, as nbdkit_absolute_path does) when KEY names a file
 *  and VALUE is relative.  @p kv must hold a '=' after a non-empty key.
 *  @return a heap string (the caller frees it), or NULL with errno set:
 *  EINVAL (no '=' or an empty key), ENOMEM, or getcwd's error (ENOENT:
 *  the current directory was removed; ERANGE: its path is too long). */
char *rbdx_param_absolute (const char *kv);

/** The value of the last "KEY=" of @p key among @p n @p params, or NULL
 *  when none is given.  Points into @p params.  Pure. */
const char *rbdx_param_find (char *const *params, size_t n, const char *key);

#endif

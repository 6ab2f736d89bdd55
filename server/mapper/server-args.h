/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/server-args.h: the command line of the server the
 * supervisor starts for an image spec.
 *
 * Arguments are data, never options: nbdkit parses its command line with
 * GNU getopt_long, which permutes, so any argument that starts with '-'
 * anywhere would be one of nbdkit's options (--filter=FILE dlopens FILE,
 * --run runs a command).  So every option of ours comes first, then
 * "--" (getopt stops there), then the plugin, and the image is given as
 * image=SPEC, never bare (a bare argument with '=' would be a KEY=VALUE
 * parameter).  The built-in engine (server/engine/engine.c) reads the
 * same shape:
 *
 *   nbdkit --foreground --unix SOCK [--readonly] -- PLUGIN image=SPEC P...
 *   ENGINE --control SOCK [--readonly] -- image=SPEC P...
 *
 * where P... is size_file=, advertise_size=max, metrics_file=,
 * metrics_interval=2, identity= once the image is known,
 * quiesce_device_file= with quiesce=true (rbdx_server_wants_device_file),
 * then the plugin parameters given to `rbdx map` (checked by
 * rbdx_args_check, target.h).  Pure: no I/O; thread-safe.
 */
#ifndef RBDX_SERVER_SERVER_ARGS_H
#define RBDX_SERVER_SERVER_ARGS_H

#include <stdbool.h>

#include "supervise.h"

/** Whether the server for @p o gets quiesce_device_file=: the last
 *  quiesce= among o->params is true (rbdx_parse_bool) and neither
 *  quiesce_device= nor quiesce_device_file= is given.  The file holds
 *  the hook's DEVICE, /dev/nbdN, which the kernel picks only after the
 *  server started (nbdkit-rbdx-plugin(1), quiesce_device_file=). */
bool rbdx_server_wants_device_file (const struct rbdx_map_opts *o);

/** The argv (NULL-terminated) of the server for @p o (o->engine set: the
 *  built-in engine, else o->nbdkit with o->plugin), listening on @p sock,
 *  publishing the size in @p size_file and counters in @p metrics_file,
 *  pinned to image identity @p identity unless it is "", reading the
 *  quiesce hook's DEVICE from @p device_file (NULL: none) when
 *  rbdx_server_wants_device_file.
 *  @return a new array of new strings (free with rbdx_server_argv_free),
 *          or NULL when out of memory. */
char **rbdx_server_argv (const struct rbdx_map_opts *o, const char *sock,
                         const char *size_file, const char *metrics_file,
                         const char *identity, const char *device_file);

/** Free what rbdx_server_argv returned (NULL is fine). */
void rbdx_server_argv_free (char **argv);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/target.h: what the mapper is told to map, by name.
 *
 * A target is an image spec (pool/[namespace/]image[@snap],
 * include/rbdx/spec.h) served by the mapper's own rbdx server, or an NBD
 * URI of someone else's server; a device is /dev/nbdN.  Pure functions:
 * no I/O, thread-safe.
 */
#ifndef RBDX_SERVER_TARGET_H
#define RBDX_SERVER_TARGET_H

#include <stdbool.h>
#include <stddef.h>

/** Whether @p text is a URI (contains "://") rather than an image spec. */
bool rbdx_target_is_uri (const char *text);

/** The canonical form of image spec @p text (rbdx_spec_format), or URI
 *  @p text unchanged, into @p buf of @p len bytes.  Only nbd:// and
 *  nbd+unix:// URIs are accepted: the kernel's NBD driver takes a plain
 *  socket (no TLS, no ssh tunnel).
 *  @param why  on failure, a static message saying why.
 *  @return 0, or -1 (bad spec, unsupported URI, or a canonical form that
 *          does not fit: a name cut short would be another image's). */
int rbdx_target_canonical (const char *text, char *buf, size_t len, const char **why);

/** The device number of "/dev/nbdN" or "nbdN" (N at most 2^20), or -1
 *  when @p text names no NBD device. */
int rbdx_device_index (const char *text);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx plugin: size_file=, the image size every context agrees on.
 *
 * The rbdx mapper serves with advertise_size=max and gives the kernel
 * the size it reads from this file.  The file holds the smallest
 * cur_size of the registered contexts: a grow is published only once
 * every context (each connection's, and the shared writer's, which does
 * the writes) has seen it, so a client that grows its device on the
 * strength of the file never reaches a context that still bounds
 * requests by the old size; a shrink is published as soon as one
 * context sees it.  The file is replaced by writing a temporary file
 * beside it and renaming it over, so a reader never sees a partial
 * value.
 *
 * The file describes one image identity: the first context registered
 * while the registry is empty fixes it, and contexts of any other image
 * (the export's name came to mean another image after a rename) are not
 * registered.  Errors go to nbdkit's debug output only: the export
 * works without the file.
 */
#ifndef RBDX_SIZEFILE_H
#define RBDX_SIZEFILE_H

#include "rbdx/ctx.h"

/** Register @p ctx (a head context with size_file set) and publish.
 * No-op when ctx->size_file is NULL or ctx is of another image than the
 * registered ones.  Thread-safe. */
void rbdx_size_register (struct rbdx_ctx *ctx);

/** @p ctx's cur_size changed: publish again if it is registered.
 * Thread-safe (called from librbd's update-watch thread). */
void rbdx_size_changed (struct rbdx_ctx *ctx);

/** Remove @p ctx if registered and publish what the rest agree on.
 * Thread-safe. */
void rbdx_size_unregister (struct rbdx_ctx *ctx);

#endif /* RBDX_SIZEFILE_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: size_file=, the image size every context agrees on.
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

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rbdx/identity.h"

/** One context's place in the registry, embedded in the context
 * (ctx.h); zero-initialised, then owned by these functions. */
struct rbdx_size_entry {
  struct rbdx_size_entry *next;
  const char *path;               /**< size_file=; not owned. */
  struct rbdx_ident ident;        /**< the image of the context. */
  const char *name;               /**< its name, for messages; borrowed. */
  const _Atomic uint64_t *cur_size;  /**< its current size, bytes. */
  bool listed;                    /**< in the registry now. */
};

/** Register @p e for a head context of image @p ident (named @p name)
 * whose current size is @p cur_size, for size_file @p path, and
 * publish.  No-op when @p path is NULL or the image is another than the
 * registered ones' (said in a debug line).  @p name and @p cur_size
 * must live until rbdx_size_unregister.  Thread-safe. */
void rbdx_size_register (struct rbdx_size_entry *e, const char *path,
                         const struct rbdx_ident *ident, const char *name,
                         const _Atomic uint64_t *cur_size);

/** The size behind @p e changed: publish again if it is registered.
 * Thread-safe (called from a context's update handling, updates.h). */
void rbdx_size_changed (struct rbdx_size_entry *e);

/** Remove @p e if registered and publish what the rest agree on.
 * Thread-safe. */
void rbdx_size_unregister (struct rbdx_size_entry *e);

#endif /* RBDX_SIZEFILE_H */

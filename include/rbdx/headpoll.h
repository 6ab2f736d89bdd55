/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: removal and resize of images served through handles without
 * a header watch (server/core/headpoll.c).
 *
 * A cephx id that may not write (osd 'profile rbd-read-only') cannot
 * watch the image header, so librbd opens the image read-only and
 * nothing tells the handle of `rbd rm`, `rbd snap rm` or a shrink: its
 * reads return zeros for data that is gone.  Such a context registers
 * here, and one thread of the process asks the cluster about every
 * registered image once per RBDX_HEADPOLL_INTERVAL_MS (once per image,
 * whatever the number of contexts on it): the header's size for the
 * snapshot id (cls rbd.get_size, a class read the read-only profile
 * grants), -ENOENT for a removed image or snapshot, and whether the
 * image sits in the trash: `rbd rm` moves it there before deleting its
 * data, `rbd migration prepare` moves the source there (whose data goes
 * stale as the destination is written), and `rbd trash rm` deletes the
 * data of whatever is there; any of them ends the service (C73).
 */
#ifndef RBDX_HEADPOLL_H
#define RBDX_HEADPOLL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rados/librados.h>

#include "rbdx/identity.h"

/** Milliseconds between two checks of one image. */
#define RBDX_HEADPOLL_INTERVAL_MS 1000

/** One registered context; owned by the caller, zero-initialised. */
struct rbdx_headpoll {
  const struct rbdx_ident *ident;
  rados_ioctx_t io;
  const char *name;
  atomic_bool *gone;
  _Atomic uint64_t *cur_size;
  bool registered;
  unsigned long round;      /**< headpoll.c's: the last round it was in */
  struct rbdx_headpoll *next;
};

/** Have @p e's image checked from now on, with @p io (the context's I/O
 * context of the image's pool and namespace; kept until unregistered):
 * a removal (of the image, or of the snapshot @p ident names), or the
 * image in the trash, sets *@p gone (for good), a resize of the head stores the new size in bytes in
 * *@p cur_size.  @p ident, @p name (for messages), @p gone and
 * @p cur_size must outlive the registration.
 * @return 0; -ENOTSUP for an image without an id (format 1: nothing
 * polled, the caller says so); -ENOMEM, -EAGAIN (no thread).
 * Thread-safe. */
int rbdx_headpoll_register (struct rbdx_headpoll *e, rados_ioctx_t io,
                            const struct rbdx_ident *ident, const char *name,
                            atomic_bool *gone, _Atomic uint64_t *cur_size);

/** Stop checking @p e (no-op if not registered); waits for a check of
 * @p e's own in progress (one cluster round trip, made without the
 * registry's lock: the registration and end of other contexts never
 * wait for the cluster), and for the thread to end when @p e was the
 * last.  Thread-safe. */
void rbdx_headpoll_unregister (struct rbdx_headpoll *e);

#endif /* RBDX_HEADPOLL_H */

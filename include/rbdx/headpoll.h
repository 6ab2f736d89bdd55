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
 * data of whatever is there; any of them ends the service (C73).  A
 * read whose data may be zeros for objects already deleted waits for one
 * more check (rbdx_headpoll_confirm, C74).  A context of a clone of a
 * clone, watched or not, registers its ancestors' parent links too
 * (ancestors.h, C79): for a watched one they are all that is checked.
 */
#ifndef RBDX_HEADPOLL_H
#define RBDX_HEADPOLL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rados/librados.h>

#include "rbdx/ancestors.h"
#include "rbdx/identity.h"

/** Milliseconds between two checks of one image. */
#define RBDX_HEADPOLL_INTERVAL_MS 1000

/** A read waiting for rbdx_headpoll_confirm's answer; owned by the
 * caller until @c done runs. */
struct rbdx_headpoll_wait {
  uint64_t offset;            /**< bytes: the read's range, */
  uint64_t count;             /**< checked against the size found */
  /** Called once, on the poller's thread, without headpoll.c's lock:
   * 0 (the image was intact after the read), -ESTALE (removed or in
   * the trash: the read may hold zeros for deleted data), -EINVAL (the
   * head now ends before the read's end), or the negative errno of the
   * check (nothing is known).  Must not block. */
  void (*done) (struct rbdx_headpoll_wait *w, int r);
  struct rbdx_headpoll_wait *next;    /**< headpoll.c's */
};

/** One registered context; owned by the caller, zero-initialised. */
struct rbdx_headpoll {
  const struct rbdx_ident *ident;
  rados_ioctx_t io;
  bool own;                 /**< the image itself is checked (no watch) */
  struct rbdx_ancestors anc;  /**< the links of its ancestors (C79) */
  const char *name;
  atomic_bool *gone;
  _Atomic uint64_t *cur_size;
  uint64_t size_offset;     /**< bytes the header's size has more than
                                 the context's (a LUKS header) */
  char *link;               /**< a clone's parent link at registration
                                 (headpoll.c's), or NULL */
  size_t link_len;
  bool registered;
  unsigned long round;      /**< headpoll.c's: the last round it was in */
  struct rbdx_headpoll_wait *waits;   /**< headpoll.c's: to confirm */
  /* headpoll.c's, for one check answering several contexts: */
  struct rbdx_headpoll_wait *taken;   /**< the waits it answers */
  struct rbdx_headpoll *batch_next;
  int answer;
  uint64_t answer_size;
  bool busy;                          /**< its answers are being given */
  struct rbdx_headpoll *next;
};

/** Flags of rbdx_headpoll_register. */
enum {
  RBDX_HEADPOLL_OWN = 1 << 0,        /**< check the image itself (a handle
                                          without a watch) */
  RBDX_HEADPOLL_ENCRYPTED = 1 << 1,  /**< LUKS loaded (with OWN) */
  RBDX_HEADPOLL_CLONE = 1 << 2,      /**< the image has a parent (with OWN) */
};

/** Have @p e's image checked from now on, with @p io (the context's I/O
 * context of the image's pool and namespace; kept until unregistered):
 * a removal (of the image, or of the snapshot @p ident names), or the
 * image in the trash, sets *@p gone (for good), a resize of the head
 * stores the new size in bytes in *@p cur_size.  @p ident, @p name (for
 * messages), @p gone and @p cur_size must outlive the registration.
 * With @p encrypted, the context's sizes are those of the plaintext,
 * which starts after the format's header: the header's size minus the
 * context's *@p cur_size now is taken as that header's length, asked of
 * the cluster here (a resize between the context's open and this call
 * would be taken for part of it), and subtracted from every size found.
 * With @p clone (the image has a parent), its parent link (parent and
 * overlap) is read here, and any change of it later (`rbd flatten`, a
 * shrink of the clone) sets *@p gone: the handle, which has no watch,
 * keeps the link of its open and would read deleted objects of the
 * clone from that parent (C77).  All of that only with
 * RBDX_HEADPOLL_OWN in @p flags (RBDX_HEADPOLL_ENCRYPTED for
 * @p encrypted, RBDX_HEADPOLL_CLONE for @p clone); without it (a
 * context with a watch) only the ancestors are checked.
 * @p anc (may be NULL or empty; rbdx_ancestors_find) is moved into
 * @p e, which frees it when unregistered (and @p anc is left empty):
 * a change of an ancestor's parent link sets *@p gone (C79).
 * @return 0; -ENOTSUP for an image without an id (format 1: nothing
 * polled, the caller says so; @p anc is left to the caller then, as on
 * every error); -ENOMEM, -EAGAIN (no thread); with @p encrypted or
 * @p clone, the error of the cluster's answer.  Thread-safe. */
int rbdx_headpoll_register (struct rbdx_headpoll *e, rados_ioctx_t io,
                            const struct rbdx_ident *ident, const char *name,
                            atomic_bool *gone, _Atomic uint64_t *cur_size,
                            unsigned flags, struct rbdx_ancestors *anc);

/** Answer @p w after a check of @p e's image (registered) that starts
 * after this call: for a read of @p e's context that completed with
 * data that may be zeros librbd filled in for objects already deleted.
 * `rbd rm` (and `rbd trash rm`, `rbd migration commit`) deletes the data
 * objects only while the image sits in the trash, and its header last;
 * `rbd snap rm` moves the snapshot to the snapshots' trash namespace
 * before the OSDs may drop its data (librbd's SnapshotRemoveRequest:
 * TRASH_SNAP, then RELEASE_SNAP_ID, then REMOVE_SNAP).  So a check that
 * finds no trash entry and then the header with the snapshot outside
 * the snapshots' trash, made after the read, proves the read saw the
 * image's data (an image removed without the trash, format 1 or Ceph
 * before 14, is not covered; nor is a shrink, which deletes the objects
 * past the new end before it writes the new size: those reads of the
 * part cut away may be zeros, for every client of the image).  The
 * read's range (@p w->offset, @p w->count) is checked against the size
 * found.  With ancestors recorded, the check also finds their links as
 * they were (one more round trip each; the only check of a context with
 * a watch: its reads of a clone of a clone whose data may be zeros wait
 * for it, C79).  Reads waiting together, on every context of the image
 * (with the same links), share one check (two cluster round trips).
 * Thread-safe; never blocks. */
void rbdx_headpoll_confirm (struct rbdx_headpoll *e,
                            struct rbdx_headpoll_wait *w);

/** The overlap (bytes of the parent the clone maps) that @p e's
 * registration read from the header, for the caller to compare with
 * its handle's own (rbd_get_overlap): an image flattened or shrunk
 * between the handle's open and the registration would otherwise be
 * taken as it is now while the handle keeps the link it opened with
 * (C77).  @return 0; -ENOENT when @p e has no parent link (not
 * registered as a clone, or the header had no parent); the negative
 * errno of the header's answer.  Thread-safe once registered. */
int rbdx_headpoll_overlap (const struct rbdx_headpoll *e, uint64_t *overlap);

/** Stop checking @p e (no-op if not registered); waits for a check of
 * @p e's own in progress (one cluster round trip, made without the
 * registry's lock: the registration and end of other contexts never
 * wait for the cluster) and for the answers to its reads waiting for a
 * confirmation, and for the thread to end when @p e was the last.
 * Thread-safe. */
void rbdx_headpoll_unregister (struct rbdx_headpoll *e);

#endif /* RBDX_HEADPOLL_H */

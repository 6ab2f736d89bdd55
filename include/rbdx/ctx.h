/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: one NBD connection's librbd context.
 *
 * Each context owns its own rados_t, ioctx and image handle, so
 * connections share no librbd lock, messenger or dispatch thread (the
 * per-client ceiling rbdx exists to avoid).  Requests are submitted with
 * librbd's asynchronous C API and reaped by the context's reactor.
 *
 * A context is bound at open to one image identity (rbdx/identity.h):
 * opened by name, it records the pool id, namespace, image id and
 * snapshot id it found; opened by identity (the shared writer), it opens
 * exactly that image with rbd_open_by_id.  librbd's handle then follows
 * its image through renames and `rbd trash mv` (checked on Ceph 16.2.15).
 *
 * Lifecycle events reach the context through librbd's update watch
 * (rbd_update_watch, a callback on a librbd thread after the image
 * header changed, handled on a thread the context starts for it:
 * updates.h): a resize updates cur_size, the removal of the
 * snapshot a context serves marks it gone (reads and block status then
 * fail with -ESTALE, for good, even if a snapshot of the same name is
 * created again).  A request that fails with -ESHUTDOWN (Ceph's
 * -EBLOCKLISTED: this rados_t was fenced, e.g. by `rbd lock rm` or a lock
 * break) marks the context fenced: every later request fails at once
 * with -ESHUTDOWN without reaching librbd, so nothing is written after
 * the fence.
 *
 * Requests are synchronous (rbdx_ctx_read ...: the nbdkit plugin, whose
 * worker threads block anyway; librbd's callback wakes them, or in the
 * eventfd modes the reactor reaps) or asynchronous (rbdx_ctx_aio: the
 * mapper's engine, replies from librbd's callback).  With completion
 * mode RBDX_COMPLETION_CALLBACK a context has no eventfd or reactor.
 *
 * Thread-safety: after rbdx_ctx_open returns, the I/O functions may be
 * called from any number of threads at once (librbd image handles are
 * thread-safe for I/O); open and close are not concurrent with anything.
 */
#ifndef RBDX_CTX_H
#define RBDX_CTX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

#include "rbdx/extents.h"
#include "rbdx/headpoll.h"
#include "rbdx/options.h"
#include "rbdx/reactor.h"
#include "rbdx/identity.h"
#include "rbdx/op.h"
#include "rbdx/sizefile.h"
#include "rbdx/updates.h"

/** Open-time choices. */
enum rbdx_ctx_flags {
  RBDX_CTX_READONLY = 1 << 0,  /**< rbd_open_read_only (implied by a snapshot). */
  RBDX_CTX_PROBE    = 1 << 1,  /**< read-only handle, no eventfd, reactor or
                                    watch, bounded OSD operations
                                    (rbdx_cluster_connect_probe): check and
                                    close again. */
  RBDX_CTX_SHARED   = 1 << 2,  /**< a shared writer (writer.h), fed by the
                                    threads of several connections, one
                                    at a time (see rbdx_ctx_open). */
};

struct rbdx_ctx {
  struct rbdx_ident ident;   /**< the image (and snapshot) this context is bound to. */
  rados_t cluster;
  rados_ioctx_t io;
  rbd_image_t image;
  int efd;                   /**< eventfd for librbd completions, -1 if none. */
  bool have_reactor;
  struct rbdx_reactor reactor;
  bool readonly;
  uint64_t size;             /**< bytes, as of open (what NBD negotiated). */
  _Atomic uint64_t cur_size; /**< bytes, kept current by the update watch. */
  uint64_t watch_handle;
  bool watching;             /**< rbd_update_watch registered. */
  /** Header updates are handled on a thread the context starts for
   * them, never in librbd's callback (ctx.c, on_update): librbd
   * acknowledges a header-update notification only after the update
   * watchers return, and the lock owner's maintenance operations wait
   * for that ack.  No thread while no update is pending (updates.h). */
  struct rbdx_updates upd;
  bool follows_size;         /**< a head handle whose watch keeps cur_size. */
  atomic_bool gone;          /**< the snapshot served was removed. */
  atomic_bool fenced;        /**< this rados_t was blocklisted. */
  atomic_bool write_rofs;    /**< the last write here that ended failed
                                  with EROFS (the image was non-primary,
                                  or read-only for a migration): a
                                  shared writer then serves no new
                                  connection; a write that succeeds
                                  clears it. */
  atomic_bool rofs_retry;    /**< an EROFS since the last header notify
                                  (rofs.h). */
  _Atomic uint64_t rofs_note_ns;  /**< rbdx_clock_ns of the last update
                                       pass an EROFS started, 0 if none. */
  uint64_t rofs_kick_ns;     /**< rbdx_clock_ns of the last header
                                  notify, 0 if none (the update pass's). */
  /** The image's QoS state (qos.h), set by the connection after open so
   * that the update watch can refresh the limits; NULL for writers. */
  struct rbdx_qos *_Atomic qos;
  atomic_bool dirty;         /**< a write-type request since the last flush. */
  uint64_t features;         /**< RBD_FEATURE_* of the image. */
  uint64_t object_size;      /**< bytes (1 << order). */
  bool cache_on;             /**< effective rbd_cache after image-level
                                  overrides, or a persistent write-back
                                  cache (rbd_persistent_cache_mode). */
  bool encrypted;            /**< LUKS loaded (encryption_format=). */
  uint32_t crypto_sector;    /**< bytes: the loaded format's crypto sector
                                  (512 LUKS1, 4096 LUKS2), 0 without
                                  encryption; set at open. */
  bool notrim;               /**< notrim=true: every zero is written thick
                                  (RBD_WRITE_ZEROES_FLAG_THICK_PROVISION),
                                  so nothing is ever deallocated. */
  char *name;                /**< canonical "pool/[ns/]image[@snap]", owned. */
  bool confirm_reads;         /**< a handle without a watch on a clone:
                                  every read waits for headpoll.c's
                                  confirmation (ctx-io.c, C76). */
  struct rbdx_headpoll poll;  /**< a handle without a watch: its image's
                                  removal and resize, polled (headpoll.h). */
  struct rbdx_size_entry size_entry;  /**< in size_file='s registry
                                          (sizefile.h) while it watches. */
  /** A shared writer that dispatches in its callers' threads
   * (rbd_non_blocking_aio=false, rbdx_ctx_open) lets one of them into
   * librbd at a time: rbdx_ctx_aio queues a request here while another
   * thread submits, and that thread submits it too (ctx-io.c). */
  struct {
    pthread_mutex_t lock;
    struct rbdx_aio *head, *tail;  /**< waiting for the submitter. */
    bool busy;               /**< a thread is submitting. */
    bool on;                 /**< set at open; read-only afterwards. */
  } sub;
};

/** Connect, open the image and set up completion reaping.
 *
 * Without @p ident the image is found by the name in @p spec and the
 * context records the identity it found; with @p ident exactly that
 * image and snapshot are opened (rbd_open_by_id, rbd_snap_set_by_id) and
 * @p spec only names it in messages.
 *
 * The head is opened with rbd_open even for read-only exports and
 * snapshots (falling back to a read-only open when the cephx id may not
 * write): only a read-write handle has the header watch that tells it
 * about a resize or a snapshot removal, and rbdx registers
 * rbd_update_watch on it.  Such a handle takes the exclusive-lock only
 * when it writes; a snapshot handle (rbd_snap_set_by_id) never writes.
 * Probes open read-only (no watch, no lock).
 * In completion mode RBDX_COMPLETION_CALLBACK (the engine, and the
 * plugin's completion=callback) a context (also on a client shared by
 * connections_per_client=) is opened with rbd_non_blocking_aio=false,
 * unless ceph.rbd_non_blocking_aio= or the conf file sets it: the
 * thread that calls rbdx_ctx_aio (or rbdx_ctx_read ...) then runs
 * librbd's dispatch itself and the completion callback may run before
 * rbdx_ctx_aio returns (server/core/DESIGN.md, "The core library and
 * its two hosts").  On an RBDX_CTX_SHARED context so opened, one
 * calling thread at a time dispatches: a request submitted while
 * another thread is in librbd is queued and dispatched by that thread
 * (ctx->sub), so rbdx_ctx_aio never waits for another caller's
 * dispatch.
 *
 * @param o      cluster options (conf, id, keyring, ceph.*).
 * @param spec   the image by name; a snapshot opens read-only.
 * @param ident  NULL, or the exact identity to open.
 * @param flags  RBDX_CTX_* bits.
 * @param out    receives a heap context owned by the caller (free with
 *               rbdx_ctx_close).
 * @param err    a one-line message naming the bad pool, namespace,
 *               image or snapshot on error.
 * @return 0; -ENOENT for a missing pool, namespace, image or snapshot
 *         (with @p ident: it no longer exists); -EPERM/-EACCES when the
 *         cephx id may not open it; any negative errno from
 *         rados_connect, rbd_open, eventfd or the reactor.
 * Starts librados threads (see cluster.h on fork). */
int rbdx_ctx_open (const struct rbdx_options *o, const struct rbdx_spec *spec,
                   const struct rbdx_ident *ident, unsigned flags,
                   struct rbdx_ctx **out, char *err, size_t errlen);

/** Prove the cephx id may read (and with @p write, write) the image's
 * data objects, which live in its data pool (`rbd create --data-pool`)
 * and may need capabilities the header's pool did not: a stat of the
 * first data object, and a write operation that asserts a probe object
 * exists (it never does, so nothing is written; the OSD checks the
 * capability before it evaluates the assertion).
 * @return 0; -EPERM when a capability is missing, with a message naming
 *         the data pool and the capability; another negative errno from
 *         librados with a message.  Thread-safe. */
int rbdx_ctx_check_access (struct rbdx_ctx *ctx, const struct rbdx_options *o,
                           bool write, char *err, size_t errlen);

/** Is [offset, offset+count) inside the image as it is now (cur_size)?
 * Thread-safe. */
bool rbdx_ctx_inside (struct rbdx_ctx *ctx, uint64_t count, uint64_t offset);

/** Close the image, then the ioctx and cluster handle, then the eventfd
 * (librbd never closes it).  No request may be in flight.  NULL is a
 * no-op. */
void rbdx_ctx_close (struct rbdx_ctx *ctx);

/** Read @p count bytes at @p offset into @p buf.  The requests of a
 * context do not check the image's end: the caller does, once per
 * request, with rbdx_request_check (request.h), before librbd would
 * silently clip a request that crosses it.
 * @return 0; a negative errno from librbd; -ESHUTDOWN once fenced;
 *         -ESTALE once the snapshot served was removed; -EIO when librbd
 *         returns fewer bytes than asked (the image shrank meanwhile):
 *         never a short or zero-filled read. */
int rbdx_ctx_read (struct rbdx_ctx *ctx, void *buf, uint32_t count,
                   uint64_t offset);

/** Write; @p fua passes LIBRADOS_OP_FLAG_FADVISE_FUA (rbd_aio_write2).
 * Write, discard and zero mark the context dirty for rbdx_ctx_flush.
 * @return 0, a negative errno from librbd, or -ESHUTDOWN once fenced. */
int rbdx_ctx_write (struct rbdx_ctx *ctx, const void *buf, uint32_t count,
                    uint64_t offset, bool fua);

/** rbd_aio_flush, skipped (0 without calling librbd, so no lock is
 * taken for it) when the cache is off and no write-type request was
 * submitted on this context since the last flush: with the cache off
 * every acknowledged write is already on the OSDs.
 * @return 0 or a negative errno. */
int rbdx_ctx_flush (struct rbdx_ctx *ctx);

/** rbd_aio_discard (may leave partial objects below
 * rbd_discard_granularity_bytes untouched: TRIM only, never zeroing).
 * @return 0 or a negative errno. */
int rbdx_ctx_discard (struct rbdx_ctx *ctx, uint32_t count, uint64_t offset);

/** rbd_aio_write_zeroes: the range reads back as zeros.
 * @param may_hole  true: flags 0 (objects may be removed or truncated),
 *                  unless the context has notrim; false, or with notrim:
 *                  RBD_WRITE_ZEROES_FLAG_THICK_PROVISION keeps the range
 *                  allocated (NBD_CMD_FLAG_NO_HOLE).
 * @return 0 or a negative errno. */
int rbdx_ctx_zero (struct rbdx_ctx *ctx, uint32_t count, uint64_t offset,
                   bool may_hole);

/** One asynchronous request, owned by the caller until @c done runs. */
struct rbdx_aio {
  enum rbdx_op op;           /**< read, write, trim, zero or flush. */
  void *buf;                 /**< read: filled; write: sent; else NULL. */
  uint32_t count;            /**< bytes. */
  uint64_t offset;           /**< bytes. */
  bool fua;                  /**< write: LIBRADOS_OP_FLAG_FADVISE_FUA. */
  bool may_hole;             /**< zero: as in rbdx_ctx_zero. */
  /** Called exactly once with 0 or the negative errno the synchronous
   * function of the same op would return; on a librbd callback thread,
   * or on the submitting thread when the request fails its checks or a
   * flush has nothing to do (possibly before rbdx_ctx_aio returns).  It
   * must not block or wait for another request (it holds up librbd's
   * completion thread). */
  void (*done) (struct rbdx_aio *a, int ret);
  struct rbdx_ctx *ctx;      /**< set by rbdx_ctx_aio. */
  struct rbdx_aio *next;     /**< rbdx_ctx_aio's own (ctx->sub's queue). */
  /** rbdx_ctx_aio's own: a read of a context without a watch whose data
   * may be zeros for deleted objects waits here for headpoll.c's
   * confirmation; @c done then runs on the poller's thread. */
  struct rbdx_headpoll_wait hp;
};

/** Submit @p a with the checks and results of rbdx_ctx_read, _write,
 * _flush, _discard and _zero, completing in librbd's callback (no
 * reactor: the completion mode of the mapper's engine; it also works on
 * a context with a reactor, whose eventfd then only wakes for nothing).
 * Thread-safe. */
void rbdx_ctx_aio (struct rbdx_ctx *ctx, struct rbdx_aio *a);

/** Allocation map of [offset, offset+count) for NBD base:allocation.
 *
 * With fast-diff valid (feature on, rbd_get_flags without
 * RBD_FLAG_FAST_DIFF_INVALID / RBD_FLAG_OBJECT_MAP_INVALID, checked each
 * call) this uses rbd_diff_iterate2(NULL, include_parent=1,
 * whole_object=1), clipped to the request so extents start at
 * @p offset; otherwise the whole range is reported as data.
 * @return 0, -ESTALE once the snapshot served was removed, or a negative
 *         errno from librbd or @p fn. */
int rbdx_ctx_extents (struct rbdx_ctx *ctx, uint32_t count, uint64_t offset,
                      rbdx_extent_fn fn, void *arg);

/** Has this context's client been fenced?  Asks librbd whether it still
 * owns the exclusive lock (rbd_is_exclusive_lock_owner fails with
 * -ESHUTDOWN, i.e. -EBLOCKLISTED, for a blocklisted client: checked on
 * Ceph 16.2.15 after `rbd lock rm`) and marks the context fenced if so,
 * so that nothing more is sent on it.  Called by the update watch (a lock
 * break notifies the header) and before a shared writer is handed to a
 * new connection.  @return ctx->fenced afterwards.  Thread-safe. */
bool rbdx_ctx_check_fenced (struct rbdx_ctx *ctx);

/** Mark @p ctx fenced (its client was blocklisted) and say so once at
 * error level.  For ctx.c and ctx-io.c.  Thread-safe. */
void rbdx_ctx_mark_fenced (struct rbdx_ctx *ctx);

/** Whether the fast path of rbdx_ctx_extents applies right now. */
bool rbdx_ctx_fast_diff_valid (struct rbdx_ctx *ctx);

#endif /* RBDX_CTX_H */

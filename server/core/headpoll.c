/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: polling the headers of images served without a watch
 * (include/rbdx/headpoll.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rbd/librbd.h>

#include "rbdx/ancestors.h"
#include "rbdx/headpoll.h"
#include "rbdx/log.h"

/* le64 at @p p. */
static uint64_t
le64 (const char *p)
{
  uint64_t v = 0;
  int i;

  for (i = 7; i >= 0; i--)
    v = (v << 8) | (uint8_t) p[i];
  return v;
}

/* One poller thread at a time; a new one once the last ended. */
struct poller {
  pthread_t t;
  bool stop;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;  /* CLOCK_REALTIME */
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;  /* polling ended */
static struct rbdx_headpoll *entries;   /* under lock */
static struct poller *current;          /* under lock */

/* What a check found: the image's trash source (RBD_TRASH_IMAGE_SOURCE_*)
 * when it sits in the trash. */
#define NOT_IN_TRASH (-1)

/* le32 at @p p. */
static uint32_t
le32 (const char *p)
{
  const unsigned char *u = (const unsigned char *) p;
  return (uint32_t) u[0] | (uint32_t) u[1] << 8 | (uint32_t) u[2] << 16 |
         (uint32_t) u[3] << 24;
}

/* One read of @e's header (one round trip): the head's size (*@size)
 * or whether the snapshot is in the snapshots' trash (-ENOENT then, or
 * when the header or the snapshot is gone); with @link, also the
 * clone's parent link, as a blob only compared byte for byte: the
 * answers (result, length, bytes) of cls rbd.parent_get (the parent's
 * pool, namespace, image id and snapshot id) and rbd.parent_overlap_get
 * (how much of the parent the clone maps), freed by the caller. */
static int
read_header (const struct rbdx_headpoll *e, uint64_t *size, char **link,
             size_t *link_len)
{
  const struct rbdx_ident *id = e->ident;
  uint64_t snap = id->snap_id == RBDX_NOSNAP ? LIBRADOS_SNAP_HEAD
                                             : id->snap_id;
  char oid[RBDX_IMAGE_ID_MAX + 16], in[8];
  char *out = NULL;
  size_t olen = 0;
  struct rbdx_link_read l;
  int i, r, rval = 0;
  rados_read_op_t op = rados_create_read_op ();

  if (!op)
    return -ENOMEM;
  snprintf (oid, sizeof oid, "rbd_header.%s", id->image_id);
  for (i = 0; i < 8; i++)
    in[i] = (char) (snap >> (8 * i));           /* le64 */
  /* Replies of the size librados finds (a snapshot's name, a namespace). */
  rados_read_op_exec (op, "rbd", id->snap_id == RBDX_NOSNAP ? "get_size"
                                                            : "snapshot_get",
                      in, sizeof in, &out, &olen, &rval);
  if (link)
    rbdx_link_add (op, snap, &l);
  r = rados_read_op_operate (op, e->io, oid, 0);
  rados_release_read_op (op);
  if (r == 0)
    r = rval;
  if (r == 0 && id->snap_id == RBDX_NOSNAP) {
    /* get_size: u8 order, le64 size. */
    if (!out || olen < 9)
      r = -EIO;
    else
      *size = le64 (out + 1);
  }
  else if (r == 0) {
    /* snapshot_get: a cls::rbd::SnapshotInfo, whose encoding
     * (cls/rbd/cls_rbd_types.cc, Ceph 16-18) is a 6-byte header
     * (version, compat, le32 length), the le64 id, then the namespace:
     * a 6-byte header and its le32 type, 2 for the trash. */
    if (!out || olen < 24)
      r = -EIO;
    else if (le32 (out + 20) == 2)
      r = -ENOENT;
  }
  if (link) {
    if (r == 0)
      r = rbdx_link_pack (&l, link, link_len);
    else
      rbdx_link_discard (&l);
  }
  if (out)
    rados_buffer_free (out);
  return r;
}

/* Whether @e's image sits in the trash (*@trash its source) or else the
 * size of the head now (*@size, unchanged for a snapshot); -ENOENT
 * when the image or the snapshot is gone or the snapshot is being
 * removed; -EXDEV when a clone's parent link is no longer the one of
 * the registration; other errors (cluster unreachable, ...) say
 * nothing.
 * `rbd rm` first moves the image to the trash as "removing", then
 * deletes its data objects, then the header, then the trash entry;
 * `rbd migration prepare` moves its source there, and `rbd trash rm`
 * deletes the data of any image there.  Nothing here would stop that
 * deletion (no watch), so an image in the trash is served no more.
 * The trash is asked first: no entry, then the header (with the
 * snapshot outside the snapshots' trash, and a clone's parent link as
 * it was), proves that no deletion had begun when the trash answered
 * (one that had begun and ended since took the header with it), which
 * rbdx_headpoll_confirm relies on.  A handle without a watch keeps the
 * parent link of its open: after `rbd flatten` or a shrink of the
 * clone (which lowers the overlap) librbd would read the clone's
 * deleted objects from the parent it remembers (C77).  Then the links
 * of the clone's ancestors (-ENOLINK when one changed: C79), which is
 * all that is checked for a context with a watch. */
static int
head_state (const struct rbdx_headpoll *e, uint64_t *size, int *trash)
{
  rbd_trash_image_info_t t;
  char *link = NULL;
  size_t len = 0;
  int r;

  *trash = NOT_IN_TRASH;
  if (!e->own)                  /* the context's watch covers the image */
    return rbdx_ancestors_check (&e->anc);
  r = rbd_trash_get (e->io, e->ident->image_id, &t);
  if (r == 0) {
    *trash = (int) t.source;
    rbd_trash_get_cleanup (&t);
    return 0;
  }
  if (r != -ENOENT)
    return r < 0 ? r : -EIO;
  r = read_header (e, size, e->link ? &link : NULL, &len);
  if (r == 0 && e->link &&
      (len != e->link_len || memcmp (link, e->link, len) != 0))
    r = -EXDEV;
  free (link);
  if (r == 0)
    r = rbdx_ancestors_check (&e->anc);
  return r;
}

/* Why an image in the trash is no longer served, for the log. */
static const char *
trash_reason (int source)
{
  switch (source) {
  case RBD_TRASH_IMAGE_SOURCE_REMOVING:
    return "is being removed (rbd rm)";
  case RBD_TRASH_IMAGE_SOURCE_MIGRATION:
    return "is the source of a migration (rbd migration prepare): its "
           "data here goes stale as the new image is written";
  case RBD_TRASH_IMAGE_SOURCE_MIRRORING:
    return "was moved to the trash by rbd-mirror, to be removed";
  default:
    return "was moved to the trash, from where `rbd trash rm` deletes its "
           "data, which a handle without a header watch cannot guard";
  }
}

/* Whether @a and @b may share one check: the same image, and what a
 * check compares (the parent link) the same. */
static bool
same_check (const struct rbdx_headpoll *a, const struct rbdx_headpoll *b)
{
  return rbdx_ident_equal (a->ident, b->ident) && a->own == b->own &&
         a->link_len == b->link_len &&
         (!a->link_len || memcmp (a->link, b->link, a->link_len) == 0) &&
         rbdx_ancestors_equal (&a->anc, &b->anc);
}

/* Apply what was found for @first's image to every entry of it. */
static void
apply (struct rbdx_headpoll *first, int r, uint64_t size, int trash)
{
  struct rbdx_headpoll *e;

  for (e = first; e; e = e->next) {
    if (!rbdx_ident_equal (e->ident, first->ident))
      continue;
    if (r == -ENOENT) {
      if (!atomic_exchange (e->gone, true))
        rbdx_error ("rbdx: %s: the %s was removed: reads and block status "
                    "on this connection fail with EIO from now on", e->name,
                    e->ident->snap_id == RBDX_NOSNAP ? "image" : "snapshot");
    }
    else if (r == -ENOLINK) {
      if (same_check (e, first) && !atomic_exchange (e->gone, true))
        rbdx_error ("rbdx: %s: an image this clone was cloned from, "
                    "directly or not, was flattened or removed: librbd keeps "
                    "the chain of parents it opened, which may read deleted "
                    "objects as zeros, so reads and block status on this "
                    "connection fail with EIO from now on (a new connection "
                    "sees the image as it is)", e->name);
    }
    else if (r == -EXDEV) {
      /* A context registered after the change holds the new link. */
      if (same_check (e, first) && !atomic_exchange (e->gone, true))
        rbdx_error ("rbdx: %s: the clone's parent link changed (rbd "
                    "flatten, or a shrink of the clone): this connection's "
                    "handle, without a header watch, cannot follow it, and "
                    "its reads and block status fail with EIO from now on "
                    "(a new connection sees the image as it is)", e->name);
    }
    else if (r == 0 && trash != NOT_IN_TRASH) {
      if (!atomic_exchange (e->gone, true))
        rbdx_error ("rbdx: %s: the image %s: reads and block status on "
                    "this connection fail with EIO from now on", e->name,
                    trash_reason (trash));
    }
    else if (r == 0 && e->own && e->ident->snap_id == RBDX_NOSNAP) {
      uint64_t plain = size > e->size_offset ? size - e->size_offset : 0;

      if (atomic_exchange (e->cur_size, plain) != plain)
        rbdx_debug ("rbdx: %s: resized to %" PRIu64 " bytes", e->name,
                    plain);
    }
  }
}

/* The entry whose check runs now, without the lock (under lock). */
static struct rbdx_headpoll *polling;
static unsigned long round_no;

/* One check of every image registered, each once.  Called under lock,
 * which is let go during each cluster round trip: a registration or the
 * end of another context never waits for the cluster (an OSD that does
 * not answer would hold them up for as long).  The entry being checked
 * stays registered meanwhile (rbdx_headpoll_unregister waits for it). */
static void
poll_all (void)
{
  struct rbdx_headpoll *e, *f;
  uint64_t size = 0;
  int r, trash;

  round_no++;
  for (;;) {
    for (e = entries; e; e = e->next)
      if (e->round != round_no && !atomic_load (e->gone))
        break;
    if (!e)
      return;
    for (f = entries; f; f = f->next)
      if (same_check (f, e))
        f->round = round_no;      /* one check per image and link */
    polling = e;
    pthread_mutex_unlock (&lock);
    r = head_state (e, &size, &trash);
    pthread_mutex_lock (&lock);
    polling = NULL;
    pthread_cond_broadcast (&idle);
    apply (e, r, size, trash);
  }
}

/* A registration wants a round at once (under lock). */
static bool round_now;

/* Answer the reads waiting on one entry and on every entry that shares
 * its check (the other connections of the image), each with one check
 * that starts after they were queued.  Called under lock, let go during
 * the check and while the answers are given (their callbacks take locks
 * of their own); the entries stay registered meanwhile (busy), and the
 * first goes to the end of the list afterwards, so that reads that keep
 * coming on one image never starve another's.
 * @return false if no entry had reads waiting. */
static bool
confirm_one (void)
{
  struct rbdx_headpoll *e, *f, *batch = NULL, **q;
  struct rbdx_headpoll_wait *w, *next;
  uint64_t size = 0;
  int r, trash = NOT_IN_TRASH;

  for (e = entries; e && !e->waits; e = e->next)
    ;
  if (!e)
    return false;
  for (f = entries; f; f = f->next)
    if (f->waits && same_check (f, e)) {
      f->taken = f->waits;
      f->waits = NULL;
      f->busy = true;
      f->batch_next = batch;
      batch = f;
    }
  /* Checked even when e is gone: a context of the image opened since
   * (after `rbd trash restore`, say) may be in the batch. */
  pthread_mutex_unlock (&lock);
  r = head_state (e, &size, &trash);
  pthread_mutex_lock (&lock);
  apply (e, r, size, trash);
  for (f = batch; f; f = f->batch_next) {
    f->answer = atomic_load (f->gone) ? -ESTALE : r;  /* apply's verdict */
    f->answer_size = atomic_load (f->cur_size);
  }
  pthread_mutex_unlock (&lock);
  for (f = batch; f; f = f->batch_next)
    for (w = f->taken; w; w = next) {
      next = w->next;         /* w may be freed by done */
      /* Shrunk meanwhile: the end the client sees comes before. */
      if (f->answer == 0 && f->ident->snap_id == RBDX_NOSNAP &&
          (w->offset > f->answer_size ||
           w->count > f->answer_size - w->offset))
        w->done (w, -EINVAL);
      else
        w->done (w, f->answer);
    }
  pthread_mutex_lock (&lock);
  for (f = batch; f; f = f->batch_next) {
    f->taken = NULL;
    f->busy = false;
  }
  pthread_cond_broadcast (&idle);
  /* To the end of the list: the reads of the others come first next. */
  for (q = &entries; *q != e; q = &(*q)->next)
    ;
  *q = e->next;
  for (; *q; q = &(*q)->next)
    ;
  *q = e;
  e->next = NULL;
  return true;
}

/* Whether the time (CLOCK_REALTIME, the condition's) of @p next came. */
static bool
due (const struct timespec *next)
{
  struct timespec now;

  clock_gettime (CLOCK_REALTIME, &now);
  return now.tv_sec > next->tv_sec ||
         (now.tv_sec == next->tv_sec && now.tv_nsec >= next->tv_nsec);
}

static void *
run (void *arg)
{
  struct poller *p = arg;
  struct timespec next = { 0, 0 };

  pthread_mutex_lock (&lock);
  while (!p->stop) {
    if (round_now || due (&next)) {
      round_now = false;
      poll_all ();
      clock_gettime (CLOCK_REALTIME, &next);
      next.tv_sec += RBDX_HEADPOLL_INTERVAL_MS / 1000;
      next.tv_nsec += (long) (RBDX_HEADPOLL_INTERVAL_MS % 1000) * 1000000L;
      if (next.tv_nsec >= 1000000000L) {
        next.tv_sec++;
        next.tv_nsec -= 1000000000L;
      }
    }
    /* Reads that keep coming never hold up the rounds of other images. */
    while (!round_now && !due (&next) && confirm_one ())
      ;
    /* Woken early by a registration (its image is checked at once), a
     * read to confirm, or the stop. */
    if (!p->stop && !round_now)
      (void) pthread_cond_timedwait (&cond, &lock, &next);
  }
  pthread_mutex_unlock (&lock);
  return NULL;
}

void
rbdx_headpoll_confirm (struct rbdx_headpoll *e, struct rbdx_headpoll_wait *w)
{
  pthread_mutex_lock (&lock);
  if (!e->registered) {       /* a caller's bug: answer, never hang */
    pthread_mutex_unlock (&lock);
    w->done (w, -ESTALE);
    return;
  }
  w->next = e->waits;
  e->waits = w;
  pthread_cond_broadcast (&cond);
  pthread_mutex_unlock (&lock);
}

int
rbdx_headpoll_register (struct rbdx_headpoll *e, rados_ioctx_t io,
                        const struct rbdx_ident *ident, const char *name,
                        atomic_bool *gone, _Atomic uint64_t *cur_size,
                        unsigned flags, struct rbdx_ancestors *anc)
{
  struct poller *p;
  uint64_t raw = 0, plain = atomic_load (cur_size);
  bool encrypted = flags & RBDX_HEADPOLL_ENCRYPTED;
  bool clone = flags & RBDX_HEADPOLL_CLONE;
  int r;

  if (strncmp (ident->image_id, "name:", 5) == 0)
    return -ENOTSUP;
  e->ident = ident;
  e->io = io;
  e->own = flags & RBDX_HEADPOLL_OWN;
  e->size_offset = 0;
  e->link = NULL;
  e->link_len = 0;
  e->anc.n = 0;
  e->anc.a = NULL;
  if (!e->own)
    encrypted = clone = false;
  if ((encrypted && ident->snap_id == RBDX_NOSNAP) || clone) {
    r = read_header (e, &raw, clone ? &e->link : NULL, &e->link_len);
    if (r < 0)
      return r;
    if (encrypted && ident->snap_id == RBDX_NOSNAP && raw > plain)
      e->size_offset = raw - plain;
  }
  e->name = name;
  e->gone = gone;
  e->cur_size = cur_size;
  pthread_mutex_lock (&lock);
  if (!current) {
    p = calloc (1, sizeof *p);
    r = p ? pthread_create (&p->t, NULL, run, p) : ENOMEM;
    if (r != 0) {
      pthread_mutex_unlock (&lock);
      free (p);
      free (e->link);
      e->link = NULL;
      return -r;
    }
    current = p;
  }
  if (anc) {                            /* moved here */
    e->anc = *anc;
    anc->n = 0;
    anc->a = NULL;
  }
  e->next = entries;
  entries = e;
  e->registered = true;
  e->waits = NULL;
  e->busy = false;
  round_now = true;                   /* check the new image at once */
  pthread_cond_broadcast (&cond);
  pthread_mutex_unlock (&lock);
  return 0;
}

int
rbdx_headpoll_overlap (const struct rbdx_headpoll *e, uint64_t *overlap)
{
  const char *b = e->link;
  size_t plen, vlen;
  int vr;

  if (!b)
    return -ENOENT;
  /* read_header's blob: parent_get's (result, length, bytes), then
   * parent_overlap_get's, a std::optional<uint64_t> (u8 present, le64). */
  memcpy (&plen, b + sizeof (int), sizeof plen);
  b += sizeof (int) + sizeof plen + plen;
  memcpy (&vr, b, sizeof vr);
  memcpy (&vlen, b + sizeof vr, sizeof vlen);
  b += sizeof vr + sizeof vlen;
  if (vr < 0)
    return vr;
  if (vlen < 1 || b[0] == 0)
    return -ENOENT;
  if (vlen < 9)
    return -EIO;
  *overlap = le64 (b + 1);
  return 0;
}

void
rbdx_headpoll_unregister (struct rbdx_headpoll *e)
{
  struct rbdx_headpoll **q;
  struct poller *p = NULL;

  if (!e->registered)
    return;
  pthread_mutex_lock (&lock);
  while (polling == e || e->waits || e->busy)
    pthread_cond_wait (&idle, &lock);
  for (q = &entries; *q; q = &(*q)->next)
    if (*q == e) {
      *q = e->next;
      break;
    }
  e->registered = false;
  free (e->link);
  e->link = NULL;
  rbdx_ancestors_free (&e->anc);
  if (!entries) {
    p = current;
    current = NULL;
    p->stop = true;
    pthread_cond_broadcast (&cond);
  }
  pthread_mutex_unlock (&lock);
  if (p) {
    pthread_join (p->t, NULL);
    free (p);
  }
}

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

#include "rbdx/headpoll.h"
#include "rbdx/log.h"

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

/* Whether @id's image sits in the trash (*@trash its source) or else
 * the size of the head now (*@size, unchanged for a snapshot); -ENOENT
 * when the image or the snapshot is gone or the snapshot is being
 * removed; other errors (cluster unreachable, ...) say nothing.
 * `rbd rm` first moves the image to the trash as "removing", then
 * deletes its data objects, then the header, then the trash entry;
 * `rbd migration prepare` moves its source there, and `rbd trash rm`
 * deletes the data of any image there.  Nothing here would stop that
 * deletion (no watch), so an image in the trash is served no more.
 * The trash is asked first: no entry, then the header (with the
 * snapshot outside the snapshots' trash), proves that no deletion had
 * begun when the trash answered (one that had begun and ended since
 * took the header with it), which rbdx_headpoll_confirm relies on. */
static int
head_state (rados_ioctx_t io, const struct rbdx_ident *id, uint64_t *size,
            int *trash)
{
  char oid[RBDX_IMAGE_ID_MAX + 16], in[8], out[16];
  uint64_t snap = id->snap_id == RBDX_NOSNAP ? LIBRADOS_SNAP_HEAD
                                             : id->snap_id;
  rbd_trash_image_info_t t;
  uint32_t type;
  int i, r;

  *trash = NOT_IN_TRASH;
  r = rbd_trash_get (io, id->image_id, &t);
  if (r == 0) {
    *trash = (int) t.source;
    rbd_trash_get_cleanup (&t);
    return 0;
  }
  if (r != -ENOENT)
    return r < 0 ? r : -EIO;
  snprintf (oid, sizeof oid, "rbd_header.%s", id->image_id);
  for (i = 0; i < 8; i++)
    in[i] = (char) (snap >> (8 * i));           /* le64 */
  if (id->snap_id != RBDX_NOSNAP) {
    /* cls rbd.snapshot_get: a cls::rbd::SnapshotInfo, whose encoding
     * (cls/rbd/cls_rbd_types.cc, Ceph 16-18) is a 6-byte header
     * (version, compat, le32 length), the le64 id, then the namespace:
     * a 6-byte header and its le32 type, 2 for the trash. */
    rados_read_op_t op = rados_create_read_op ();
    char *reply = NULL;
    size_t len = 0;
    int rval = 0;

    if (!op)
      return -ENOMEM;
    /* The reply's size follows the snapshot's name: librados allocates. */
    rados_read_op_exec (op, "rbd", "snapshot_get", in, sizeof in, &reply,
                        &len, &rval);
    r = rados_read_op_operate (op, io, oid, 0);
    rados_release_read_op (op);
    if (r == 0)
      r = rval;
    if (r == 0 && (!reply || len < 24))
      r = -EIO;
    if (r == 0) {
      const unsigned char *u = (const unsigned char *) reply;

      type = (uint32_t) u[20] | (uint32_t) u[21] << 8 |
             (uint32_t) u[22] << 16 | (uint32_t) u[23] << 24;
      r = type == 2 ? -ENOENT : 0;
    }
    if (reply)
      rados_buffer_free (reply);
    return r;
  }
  r = rados_exec (io, oid, "rbd", "get_size", in, sizeof in, out, sizeof out);
  if (r < 0)
    return r;
  if (r < 9)                                    /* u8 order, le64 size */
    return -EIO;
  *size = 0;
  for (i = 7; i >= 0; i--)
    *size = (*size << 8) | (uint8_t) out[1 + i];
  return 0;
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
    else if (r == 0 && trash != NOT_IN_TRASH) {
      if (!atomic_exchange (e->gone, true))
        rbdx_error ("rbdx: %s: the image %s: reads and block status on "
                    "this connection fail with EIO from now on", e->name,
                    trash_reason (trash));
    }
    else if (r == 0 && e->ident->snap_id == RBDX_NOSNAP) {
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
      if (rbdx_ident_equal (f->ident, e->ident))
        f->round = round_no;      /* one check per image */
    polling = e;
    pthread_mutex_unlock (&lock);
    r = head_state (e->io, e->ident, &size, &trash);
    pthread_mutex_lock (&lock);
    polling = NULL;
    pthread_cond_broadcast (&idle);
    apply (e, r, size, trash);
  }
}

/* A registration wants a round at once (under lock). */
static bool round_now;

/* Answer the reads waiting on one entry, each with one check of its
 * image that starts after they were queued.  Called under lock, let go
 * during the check and while the answers are given (their callbacks
 * take locks of their own); the entry stays registered meanwhile
 * (polling), and goes to the end of the list afterwards, so that reads
 * that keep coming on one context never starve another's.
 * @return false if no entry had reads waiting. */
static bool
confirm_one (void)
{
  struct rbdx_headpoll *e, **q;
  struct rbdx_headpoll_wait *w, *next;
  uint64_t size = 0;
  int r = 0, trash = NOT_IN_TRASH;
  bool gone;

  for (e = entries; e && !e->waits; e = e->next)
    ;
  if (!e)
    return false;
  w = e->waits;
  e->waits = NULL;
  polling = e;
  gone = atomic_load (e->gone);
  pthread_mutex_unlock (&lock);
  if (!gone)
    r = head_state (e->io, e->ident, &size, &trash);
  pthread_mutex_lock (&lock);
  if (!gone)
    apply (e, r, size, trash);
  if (atomic_load (e->gone))  /* removed, in the trash (apply) */
    r = -ESTALE;
  size = atomic_load (e->cur_size);
  pthread_mutex_unlock (&lock);
  for (; w; w = next) {
    next = w->next;           /* w may be freed by done */
    /* Shrunk meanwhile: the end the client sees comes before. */
    if (r == 0 && e->ident->snap_id == RBDX_NOSNAP &&
        (w->offset > size || w->count > size - w->offset))
      w->done (w, -EINVAL);
    else
      w->done (w, r);
  }
  pthread_mutex_lock (&lock);
  polling = NULL;
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
                        bool encrypted)
{
  struct poller *p;
  uint64_t raw = 0, plain = atomic_load (cur_size);
  int r, trash;

  if (strncmp (ident->image_id, "name:", 5) == 0)
    return -ENOTSUP;
  e->size_offset = 0;
  if (encrypted && ident->snap_id == RBDX_NOSNAP) {
    r = head_state (io, ident, &raw, &trash);
    if (r < 0)
      return r;
    if (trash == NOT_IN_TRASH && raw > plain)
      e->size_offset = raw - plain;
  }
  e->ident = ident;
  e->io = io;
  e->name = name;
  e->gone = gone;
  e->cur_size = cur_size;
  pthread_mutex_lock (&lock);
  if (!current) {
    p = calloc (1, sizeof *p);
    if (!p) {
      pthread_mutex_unlock (&lock);
      return -ENOMEM;
    }
    r = pthread_create (&p->t, NULL, run, p);
    if (r != 0) {
      pthread_mutex_unlock (&lock);
      free (p);
      return -r;
    }
    current = p;
  }
  e->next = entries;
  entries = e;
  e->registered = true;
  e->waits = NULL;
  round_now = true;                   /* check the new image at once */
  pthread_cond_broadcast (&cond);
  pthread_mutex_unlock (&lock);
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
  while (polling == e || e->waits)
    pthread_cond_wait (&idle, &lock);
  for (q = &entries; *q; q = &(*q)->next)
    if (*q == e) {
      *q = e->next;
      break;
    }
  e->registered = false;
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

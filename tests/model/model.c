/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/model/model.c: a model-checked random test of an rbdx export.
 *
 * Random sequences of READ, WRITE (with and without FUA), FLUSH, TRIM,
 * WRITE_ZEROES (with and without NO_HOLE, FAST_ZERO and FUA) and
 * BLOCK_STATUS (base:allocation) go out asynchronously and in parallel
 * over 1 to --connections libnbd handles, and every reply is checked
 * against an in-memory model of the image.  Mixed in, with libnbd's
 * strict mode off: requests the NBD spec forbids (past the end, zero
 * length, longer than the advertised maximum block size, unknown or
 * misplaced flags), each of which must get an error (the one the spec
 * names, where it names one) without costing the connection; and
 * abrupt disconnects (a handle closed with requests in flight, then a
 * new connection).  At the end the image read with `rbd export` must
 * equal the model in every byte the model knows.
 *
 * The model, per byte of the image (NBD doc/proto.md, "Ordering of
 * messages and writes", NBD_FLAG_CAN_MULTI_CONN, NBD_CMD_TRIM,
 * NBD_CMD_WRITE_ZEROES):
 *   - its content is known (all zero at the start, the data of the
 *     last WRITE, zero after a WRITE_ZEROES) or unknown (after a TRIM,
 *     which may leave data; after a refused request, or one whose reply
 *     never came, that could have modified it);
 *   - after a connection was dropped with a modification in flight,
 *     that modification may still land at any time: a later write
 *     there leaves the byte unknown too, until the server has closed
 *     its end of the dropped connection (seen with sock_diag on the
 *     Unix socket: nbdkit closes it only after the connection's
 *     requests have returned), for good where that cannot be seen;
 *   - while a modifying request covering it is in flight, a READ or
 *     BLOCK_STATUS is not checked there (also when the modification
 *     is sent after the read);
 *   - --visibility=spec: a completed write is visible to later reads
 *     on its own connection; on the other connections only once a FUA
 *     reply for it, or the reply to a FLUSH sent (on any connection)
 *     after its reply, has arrived: with multi-conn the effects of
 *     FLUSH and FUA are visible across all connections when the reply
 *     is sent (NBD_FLAG_CAN_MULTI_CONN);
 *   - --visibility=rbdx (the default): rbdx documents more than the
 *     spec (README.md "Multi-conn and the exclusive lock",
 *     nbdkit-rbdx-plugin(1) DESCRIPTION): rbd_cache is off on every
 *     handle, so an acknowledged write is on the OSDs and every other
 *     connection reads it at once.
 * BLOCK_STATUS must never report NBD_STATE_ZERO over a byte the model
 * knows to hold non-zero data; its extents must start at the requested
 * offset, be non-empty and stay inside the export.
 *
 * Requests that change data never overlap another modification in
 * flight (the spec leaves the result of racing writes undefined); reads
 * may overlap anything.
 *
 * Checks on the forbidden requests:
 *   past the end: READ, TRIM, BLOCK_STATUS NBD_EINVAL; WRITE,
 *     WRITE_ZEROES NBD_ENOSPC (proto.md "Error values", WRITE_ZEROES);
 *   unknown flag, or a flag the command does not take: NBD_EINVAL
 *     (proto.md "Error values");
 *   zero length: the spec leaves the result unspecified; it must be an
 *     error (nbdkit refuses it), any error;
 *   longer than the maximum block size: TRIM, WRITE_ZEROES and
 *     BLOCK_STATUS may succeed or fail with NBD_EOVERFLOW or NBD_EINVAL
 *     (proto.md "Block size constraints"); READ and WRITE with such a
 *     payload are a client error the spec gives no server answer for,
 *     so they may succeed (then they are checked like any other) or
 *     fail with NBD_EINVAL, NBD_EOVERFLOW or NBD_ENOMEM, unless
 *     --strict-oversized, which demands an error;
 * and after each the connection must still be up (NBD: the server
 * SHOULD NOT disconnect).  A refused request that could modify data
 * makes its range (inside the image) unknown, except FAST_ZERO refused
 * with NBD_ENOTSUP, which SHOULD NOT alter the export (proto.md
 * NBD_CMD_WRITE_ZEROES) and which rbdx refuses before touching it.
 *
 * Usage: model [OPTIONS] URI
 *   --seed N            random seed (printed; default 1)
 *   --requests N        requests to issue (default 2000)
 *   --seconds S         stop issuing after S seconds (default 60)
 *   --connections N     at most N connections, 1-4 (default 4)
 *   --depth N           at most N requests in flight per connection
 *                       (default 8)
 *   --visibility spec|rbdx   what the model may rely on (above)
 *   --hangup half|close how a connection is dropped with requests in
 *                       flight: close (nbd_close at once), or half
 *                       (the default: shut down the sending side once
 *                       the queued requests are out, discard the
 *                       replies until the server closes, then
 *                       nbd_close).  nbdkit before 1.34 may abort on
 *                       close (raw_send_socket: Assertion `sock >= 0',
 *                       when several replies meet a closed socket);
 *                       half is the same hang-up for the plugin
 *                       without that
 *   --strict-oversized  oversized READ/WRITE must fail
 *   --rbd-image SPEC    at the end compare `rbd export SPEC -` (run
 *                       with CEPH_CONF from the environment) with the
 *                       model
 *
 * Exit 0 when every check passed, 1 on the first failure (which names
 * the seed, the request number, the connection, the offsets and the
 * differing bytes), 2 on bad usage.
 */
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nbd-check.h"

#define MAX_CONNS 4
#define UNKNOWN_TAG UINT32_MAX
#define ZERO_BIT (UINT32_C (1) << 31)   /* tag of a WRITE_ZEROES */
#define VIS_ALL 0xff                    /* visible on every connection */
#define VIS_NOBODY 0xfe                 /* pending, its connection gone */
#define SERIALS 0xfc                    /* connection serials 0..0xfb */

enum cmd { C_READ, C_WRITE, C_FLUSH, C_TRIM, C_ZERO, C_BS };
static const char *cmd_name[] = {
  "READ", "WRITE", "FLUSH", "TRIM", "WRITE_ZEROES", "BLOCK_STATUS"
};

/* What kind of forbidden request a request is. */
enum bad { B_NONE, B_RANGE, B_ZERO_LEN, B_OVERSIZED, B_FLAGS };
static const char *bad_name[] = {
  "", " (past the end)", " (zero length)", " (oversized)", " (bad flag)"
};

/* One request, kept from issue to reply (or abandonment). */
struct req {
  uint64_t num;           /* request number, 1.. (also the data tag) */
  enum cmd cmd;
  enum bad bad;
  uint32_t flags;
  uint64_t offset, count;
  int slot;               /* connection slot */
  unsigned serial;        /* connection serial */
  uint64_t sent_acks;     /* acks counted when it was sent */
  unsigned char *buf;     /* READ/WRITE data */
  unsigned char *mask;    /* READ/BLOCK_STATUS: byte checkable */
  uint32_t *ext;          /* BLOCK_STATUS: (length, flags) pairs */
  size_t next;
  bool ext_seen;
  bool abandoned;
  struct req *prev_live, *next_live;
};

/* A completed write not yet visible on every connection (spec mode). */
struct pending {
  uint32_t tag;
  uint64_t offset, count;
  unsigned serial;
  uint64_t ack;
};

struct conn {
  struct nbd_handle *h;
  unsigned serial;
  unsigned in_flight;
};

/* The modifications abandoned with one dropped connection, tainting
 * their ranges until the server has closed its end of that connection
 * (nbdkit closes it only after its requests have returned). */
struct abandoned {
  uint32_t server_ino;          /* Unix socket inode of the server's end */
  uint64_t *ranges;             /* start, end pairs */
  size_t n;
  struct abandoned *next;
};
static struct abandoned *abandoned_list;

/* Options. */
static uint64_t seed = 1, n_requests = 2000;
static double seconds = 60;
static int max_conns = 4, depth = 8;
static bool spec_mode, strict_oversized, hangup_half = true;
static const char *rbd_image, *uri;

/* The model. */
static uint64_t size, obj_size = 1 * MiB, max_block;
static bool max_advertised;
static uint32_t *tag;          /* content: 0 zero, UNKNOWN_TAG, else a tag */
static unsigned char *vis;     /* VIS_ALL, VIS_NOBODY or a serial */
static unsigned char *taint;   /* abandoned modifications that may land
                                  (a count; 255 sticks) */

static struct conn conns[MAX_CONNS];
static unsigned next_serial;
static struct req *live;       /* requests in flight */
static struct pending *pend;
static size_t n_pend, pend_cap;
static uint64_t acks, issued;
static uint64_t rng_state;

/* Statistics. */
static uint64_t n_cmd[6], n_bad[5], n_abrupt, n_opened, n_closed, n_watched,
  checked_bytes, zero_claims, n_fast_refused, n_oversized_ok;

static uint64_t
rnd (void)                      /* splitmix64 */
{
  uint64_t z = (rng_state += UINT64_C (0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static uint64_t
below (uint64_t n)
{
  return n ? rnd () % n : 0;
}

static bool
chance (unsigned percent)
{
  return below (100) < percent;
}

/* The byte TAG puts at OFFSET: never 0 for a WRITE, so BLOCK_STATUS
 * zero claims are checkable, and different per tag and offset, so a
 * misplaced or stale block is caught. */
static inline unsigned char
value_of (uint32_t t, uint64_t offset)
{
  uint64_t x;

  if (t == 0 || (t & ZERO_BIT))
    return 0;
  x = (offset ^ ((uint64_t) t << 40)) * UINT64_C (0x9e3779b97f4a7c15);
  x ^= x >> 29;
  x *= UINT64_C (0xbf58476d1ce4e5b9);
  x ^= x >> 32;
  return (unsigned char) (x ? x : 0x5a);
}

static void
describe_tag (uint32_t t, char *out, size_t len)
{
  if (t == 0)
    snprintf (out, len, "the image's initial zeros");
  else if (t == UNKNOWN_TAG)
    snprintf (out, len, "unknown");
  else
    snprintf (out, len, "%s of request #%" PRIu32,
              (t & ZERO_BIT) ? "WRITE_ZEROES" : "WRITE", t & ~ZERO_BIT);
}

/* Print the differing bytes of [OFFSET, OFFSET+COUNT) of GOT (where
 * MASK, if given, is set) and fail. */
static void __attribute__ ((noreturn))
mismatch (const struct req *r, const char *what, const unsigned char *got,
          const unsigned char *mask, uint64_t offset, uint64_t count)
{
  uint64_t i, shown = 0, total = 0, first = 0;
  char d[64];

  for (i = 0; i < count; i++) {
    unsigned char want = value_of (tag[offset + i], offset + i);
    if ((mask && !mask[i]) || got[i] == want)
      continue;
    if (total++ == 0)
      first = offset + i;
    if (shown < 16) {
      describe_tag (tag[offset + i], d, sizeof d);
      fprintf (stderr, "  offset %" PRIu64 " (0x%" PRIx64 "): got 0x%02x, "
               "expected 0x%02x (%s)\n", offset + i, offset + i, got[i],
               want, d);
      shown++;
    }
  }
  if (r)
    FAIL ("seed %" PRIu64 ", request #%" PRIu64 " %s on connection %u "
          "(slot %d), offset %" PRIu64 " length %" PRIu64 ": %s: %" PRIu64
          " bytes differ, the first at offset %" PRIu64, seed, r->num,
          cmd_name[r->cmd], r->serial, r->slot, r->offset, r->count, what,
          total, first);
  FAIL ("seed %" PRIu64 ": %s: %" PRIu64 " bytes differ, the first at "
        "offset %" PRIu64, seed, what, total, first);
}

static void __attribute__ ((noreturn, format (printf, 2, 3)))
req_fail (const struct req *r, const char *fmt, ...)
{
  char msg[512];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  FAIL ("seed %" PRIu64 ", request #%" PRIu64 " %s%s flags 0x%x on "
        "connection %u (slot %d), offset %" PRIu64 " length %" PRIu64 ": %s",
        seed, r->num, cmd_name[r->cmd], bad_name[r->bad], r->flags,
        r->serial, r->slot, r->offset, r->count, msg);
}

static bool
modifies (enum cmd c)
{
  return c == C_WRITE || c == C_TRIM || c == C_ZERO;
}

/* The part of [OFFSET, OFFSET+COUNT) inside the image. */
static bool
clamp (uint64_t offset, uint64_t count, uint64_t *start, uint64_t *end)
{
  if (offset >= size || count == 0)
    return false;
  *start = offset;
  *end = count > size - offset ? size : offset + count;
  return true;
}

static bool
overlaps_live_modification (uint64_t offset, uint64_t count)
{
  for (struct req *r = live; r; r = r->next_live) {
    uint64_t s, e;
    if (!modifies (r->cmd) || !clamp (r->offset, r->count, &s, &e))
      continue;
    if (s < offset + count && offset < e)
      return true;
  }
  return false;
}

/* A modification covering [S, E) goes out: reads and block status in
 * flight must not rely on these bytes. */
static void
unmask_readers (uint64_t s, uint64_t e)
{
  for (struct req *r = live; r; r = r->next_live) {
    uint64_t rs, re, a, b;
    if (!r->mask || !clamp (r->offset, r->count, &rs, &re))
      continue;
    a = s > rs ? s : rs;
    b = e < re ? e : re;
    if (a < b)
      memset (r->mask + (a - r->offset), 0, b - a);
  }
}

/* Bytes of [S, E) a read on SERIAL may rely on now. */
static void
make_mask (struct req *r, uint64_t s, uint64_t e)
{
  uint64_t i;

  r->mask = xmalloc (r->count);
  memset (r->mask, 0, r->count);
  for (i = s; i < e; i++)
    r->mask[i - r->offset] = tag[i] != UNKNOWN_TAG &&
      (vis[i] == VIS_ALL || vis[i] == r->serial);
  for (struct req *m = live; m; m = m->next_live) {
    uint64_t ms, me, a, b;
    if (!modifies (m->cmd) || !clamp (m->offset, m->count, &ms, &me))
      continue;
    a = ms > s ? ms : s;
    b = me < e ? me : e;
    if (a < b)
      memset (r->mask + (a - r->offset), 0, b - a);
  }
}

/* One sock_diag query for the Unix socket with inode INO: 1 if it
 * exists (and *PEER, if given, is its peer's inode), 0 if not, -1 if
 * the kernel cannot say (no sock_diag). */
static int
unix_diag (uint32_t ino, uint32_t *peer)
{
  struct {
    struct nlmsghdr nlh;
    struct unix_diag_req req;
  } q = {
    .nlh = { .nlmsg_len = sizeof q, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
             .nlmsg_flags = NLM_F_REQUEST },
    .req = { .sdiag_family = AF_UNIX, .udiag_states = ~0U,
             .udiag_ino = ino, .udiag_show = UDIAG_SHOW_PEER,
             .udiag_cookie = { ~0U, ~0U } },
  };
  union {
    struct nlmsghdr nlh;
    char buf[8192];
  } a;
  int fd = socket (AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  ssize_t n;
  int r = -1;

  if (fd == -1)
    return -1;
  if (send (fd, &q, sizeof q, 0) != sizeof q)
    goto out;
  n = recv (fd, &a, sizeof a, 0);
  if (n < (ssize_t) sizeof (struct nlmsghdr) || !NLMSG_OK (&a.nlh, n))
    goto out;
  if (a.nlh.nlmsg_type == NLMSG_ERROR) {
    const struct nlmsgerr *e = NLMSG_DATA (&a.nlh);
    r = e->error == -ENOENT ? 0 : -1;
    goto out;
  }
  if (a.nlh.nlmsg_type != SOCK_DIAG_BY_FAMILY)
    goto out;
  r = 1;
  if (peer) {
    const struct unix_diag_msg *m = NLMSG_DATA (&a.nlh);
    struct rtattr *at = (struct rtattr *) (m + 1);
    int len = (int) a.nlh.nlmsg_len - NLMSG_LENGTH (sizeof *m);
    *peer = 0;
    for (; RTA_OK (at, len); at = RTA_NEXT (at, len))
      if (at->rta_type == UNIX_DIAG_PEER)
        memcpy (peer, RTA_DATA (at), sizeof *peer);
  }
out:
  close (fd);
  return r;
}

/* The inode of the server's end of Unix socket FD, or 0 when it cannot
 * be known (TCP, no sock_diag). */
static uint32_t
server_end (int fd)
{
  struct stat st;
  uint32_t peer = 0;

  if (fstat (fd, &st) == -1 || unix_diag ((uint32_t) st.st_ino, &peer) != 1)
    return 0;
  return peer;
}

/* Lift the taint of every dropped connection whose server end is gone. */
static void
release_abandoned (void)
{
  struct abandoned **p = &abandoned_list, *a;

  while ((a = *p)) {
    if (unix_diag (a->server_ino, NULL) != 0) {
      p = &a->next;
      continue;
    }
    for (size_t i = 0; i < a->n; i += 2)
      for (uint64_t b = a->ranges[i]; b < a->ranges[i + 1]; b++)
        if (taint[b] != 255)
          taint[b]--;
    *p = a->next;
    free (a->ranges);
    free (a);
  }
}

static void
set_unknown (uint64_t s, uint64_t e)
{
  for (uint64_t i = s; i < e; i++)
    tag[i] = UNKNOWN_TAG;
}

/* A modification's reply arrived with success: its bytes take T. */
static void
apply (const struct req *r, uint32_t t)
{
  uint64_t s, e, i;
  bool everywhere = !spec_mode || (r->flags & LIBNBD_CMD_FLAG_FUA);
  unsigned char v = everywhere ? VIS_ALL : (unsigned char) r->serial;

  if (!clamp (r->offset, r->count, &s, &e))
    return;
  for (i = s; i < e; i++) {
    tag[i] = taint[i] ? UNKNOWN_TAG : t;
    vis[i] = v;
  }
  if (!everywhere && t != UNKNOWN_TAG) {
    if (n_pend == pend_cap) {
      pend_cap = pend_cap ? 2 * pend_cap : 64;
      pend = realloc (pend, pend_cap * sizeof *pend);
      if (!pend)
        FAIL ("out of memory");
    }
    pend[n_pend++] = (struct pending) {
      .tag = t, .offset = s, .count = e - s, .serial = r->serial,
      .ack = acks,
    };
  }
}

/* A FLUSH sent when SENT_ACKS replies had arrived has been answered:
 * every write answered before it is now visible everywhere. */
static void
flushed (uint64_t sent_acks)
{
  size_t i, k = 0;

  for (i = 0; i < n_pend; i++) {
    struct pending *p = &pend[i];
    if (p->ack > sent_acks) {
      pend[k++] = *p;
      continue;
    }
    for (uint64_t b = p->offset; b < p->offset + p->count; b++)
      if (tag[b] == p->tag)
        vis[b] = VIS_ALL;
  }
  n_pend = k;
}

/* Connection SERIAL is gone: what only it could see is nobody's. */
static void
orphan_pending (unsigned serial)
{
  for (size_t i = 0; i < n_pend; i++) {
    struct pending *p = &pend[i];
    if (p->serial != serial)
      continue;
    for (uint64_t b = p->offset; b < p->offset + p->count; b++)
      if (tag[b] == p->tag && vis[b] == serial)
        vis[b] = VIS_NOBODY;
    p->serial = VIS_NOBODY;
  }
}

static void
unlink_req (struct req *r)
{
  if (r->prev_live)
    r->prev_live->next_live = r->next_live;
  else
    live = r->next_live;
  if (r->next_live)
    r->next_live->prev_live = r->prev_live;
  conns[r->slot].in_flight--;
}

static void
free_req (struct req *r)
{
  free (r->buf);
  free (r->mask);
  free (r->ext);
  free (r);
}

static void
check_read (struct req *r)
{
  uint64_t s, e, i;

  if (!clamp (r->offset, r->count, &s, &e))
    return;
  for (i = s; i < e; i++) {
    if (!r->mask[i - r->offset])
      continue;
    checked_bytes++;
    if (r->buf[i - r->offset] != value_of (tag[i], i))
      mismatch (r, "READ returned other data than the model holds",
                r->buf + (s - r->offset), r->mask + (s - r->offset), s, e - s);
  }
}

static void
check_extents (struct req *r)
{
  uint64_t pos = r->offset, i;
  size_t k;

  if (!r->ext_seen)
    req_fail (r, "BLOCK_STATUS reply without base:allocation extents");
  if (r->next == 0)
    req_fail (r, "BLOCK_STATUS reply with no extent");
  /* NBD_CMD_FLAG_REQ_ONE: a single extent. */
  if ((r->flags & LIBNBD_CMD_FLAG_REQ_ONE) && r->next != 2)
    req_fail (r, "REQ_ONE, but %zu extents came back", r->next / 2);
  for (k = 0; k < r->next; k += 2) {
    uint32_t len = r->ext[k], fl = r->ext[k + 1];
    if (len == 0)
      req_fail (r, "extent %zu has length 0", k / 2);
    if (len > size - pos)
      req_fail (r, "extent %zu (%" PRIu32 " bytes at %" PRIu64 ") ends past "
                "the export (%" PRIu64 " bytes)", k / 2, len, pos, size);
    if (fl & LIBNBD_STATE_ZERO) {
      uint64_t end = pos + len < r->offset + r->count ? pos + len
                                                      : r->offset + r->count;
      zero_claims++;
      for (i = pos; i < end; i++) {
        if (!r->mask[i - r->offset])
          continue;
        checked_bytes++;
        if (value_of (tag[i], i) != 0) {
          char d[64];
          describe_tag (tag[i], d, sizeof d);
          req_fail (r, "extent %zu (offset %" PRIu64 ", %" PRIu32 " bytes, "
                    "flags 0x%x) claims zeros, but byte %" PRIu64 " holds "
                    "0x%02x (%s)", k / 2, pos, len, fl, i, value_of (tag[i], i),
                    d);
        }
      }
    }
    pos += len;
    if (pos >= r->offset + r->count)
      break;
  }
}

static int
extent_cb (void *user_data, const char *metacontext, uint64_t offset,
           uint32_t *entries, size_t nr_entries, int *error)
{
  struct req *r = user_data;

  if (r->abandoned || strcmp (metacontext, LIBNBD_CONTEXT_BASE_ALLOCATION))
    return 0;
  if (offset != r->offset)
    req_fail (r, "extents start at %" PRIu64, offset);
  r->ext_seen = true;
  r->ext = realloc (r->ext, (r->next + nr_entries) * sizeof *r->ext);
  if (!r->ext)
    FAIL ("out of memory");
  memcpy (r->ext + r->next, entries, nr_entries * sizeof *entries);
  r->next += nr_entries;
  return 0;
}

/* The errors a forbidden request may get (0: success allowed too);
 * returns the number of entries in ALLOWED. */
static int
allowed_errors (const struct req *r, int allowed[4], bool *success_ok)
{
  *success_ok = false;
  switch (r->bad) {
  case B_RANGE:
    allowed[0] = r->cmd == C_WRITE || r->cmd == C_ZERO ? ENOSPC : EINVAL;
    return 1;
  case B_FLAGS:
    allowed[0] = EINVAL;
    return 1;
  case B_ZERO_LEN:
    return 0;                   /* any error */
  case B_OVERSIZED:
    if (r->cmd == C_READ || r->cmd == C_WRITE) {
      *success_ok = !strict_oversized;
      allowed[0] = EINVAL; allowed[1] = EOVERFLOW; allowed[2] = ENOMEM;
      return 3;
    }
    *success_ok = true;
    allowed[0] = EINVAL; allowed[1] = EOVERFLOW;
    return 2;
  default:
    return 0;
  }
}

static int
done_cb (void *user_data, int *error)
{
  struct req *r = user_data;
  int err = *error;
  uint64_t s, e;

  if (r->abandoned)
    return 1;
  unlink_req (r);
  acks++;

  if (r->bad != B_NONE) {
    int allowed[4], n, i;
    bool success_ok, ok = false;

    n = allowed_errors (r, allowed, &success_ok);
    if (err == 0 && !success_ok)
      req_fail (r, "succeeded, but the request is invalid and must fail");
    if (err != 0) {
      for (i = 0; i < n; i++)
        ok |= allowed[i] == err;
      if (n && !ok)
        req_fail (r, "failed with %s, expected %s%s%s", errname (err),
                  errname (allowed[0]), n > 1 ? " or " : "",
                  n > 1 ? errname (allowed[1]) : "");
      n_bad[r->bad]++;
      /* Refused: whatever it might have touched is unknown now. */
      if (modifies (r->cmd) && clamp (r->offset, r->count, &s, &e))
        set_unknown (s, e);
      free_req (r);
      return 1;
    }
    n_bad[r->bad]++;
    n_oversized_ok++;
    /* An oversized request that succeeded is checked like any other. */
  }

  if (err != 0) {
    if (r->cmd == C_ZERO && (r->flags & LIBNBD_CMD_FLAG_FAST_ZERO) &&
        (r->flags & LIBNBD_CMD_FLAG_NO_HOLE) && err == ENOTSUP) {
      /* rbdx: thick zeroing is not fast, refused before any change. */
      n_fast_refused++;
      free_req (r);
      return 1;
    }
    req_fail (r, "failed: %s", errname (err));
  }
  if (r->cmd == C_ZERO && (r->flags & LIBNBD_CMD_FLAG_FAST_ZERO) &&
      (r->flags & LIBNBD_CMD_FLAG_NO_HOLE))
    req_fail (r, "FAST_ZERO with NO_HOLE succeeded; rbdx documents "
              "NBD_ENOTSUP for it");

  switch (r->cmd) {
  case C_READ:
    check_read (r);
    break;
  case C_WRITE:
    apply (r, (uint32_t) r->num);
    break;
  case C_ZERO:
    apply (r, (uint32_t) r->num | ZERO_BIT);
    break;
  case C_TRIM:
    if (clamp (r->offset, r->count, &s, &e))
      set_unknown (s, e);
    break;
  case C_FLUSH:
    flushed (r->sent_acks);
    break;
  case C_BS:
    check_extents (r);
    break;
  }
  free_req (r);
  return 1;
}

static void
issue (int slot, enum cmd c, enum bad bad, uint64_t offset, uint64_t count,
       uint32_t flags)
{
  struct conn *cn = &conns[slot];
  struct req *r = calloc (1, sizeof *r);
  nbd_completion_callback cb = { .callback = done_cb };
  nbd_extent_callback ecb = { .callback = extent_cb };
  uint64_t s, e;
  int64_t cookie = -1;

  if (!r)
    FAIL ("out of memory");
  r->num = ++issued;
  r->cmd = c;
  r->bad = bad;
  r->flags = flags;
  r->offset = offset;
  r->count = count;
  r->slot = slot;
  r->serial = cn->serial;
  r->sent_acks = acks;
  cb.user_data = ecb.user_data = r;
  n_cmd[c]++;

  if (modifies (c) && clamp (offset, count, &s, &e))
    unmask_readers (s, e);
  if ((c == C_READ || c == C_BS) && clamp (offset, count, &s, &e))
    make_mask (r, s, e);
  else if (c == C_READ || c == C_BS) {
    r->mask = xmalloc (1);
    r->mask[0] = 0;
  }

  r->next_live = live;
  r->prev_live = NULL;
  if (live)
    live->prev_live = r;
  live = r;
  cn->in_flight++;

  switch (c) {
  case C_READ:
    r->buf = xmalloc (count);
    cookie = nbd_aio_pread (cn->h, r->buf, count, offset, cb, flags);
    break;
  case C_WRITE:
    r->buf = xmalloc (count);
    for (uint64_t i = 0; i < count; i++)
      r->buf[i] = value_of ((uint32_t) r->num, offset + i);
    cookie = nbd_aio_pwrite (cn->h, r->buf, count, offset, cb, flags);
    break;
  case C_FLUSH:
    cookie = nbd_aio_flush (cn->h, cb, flags);
    break;
  case C_TRIM:
    cookie = nbd_aio_trim (cn->h, count, offset, cb, flags);
    break;
  case C_ZERO:
    cookie = nbd_aio_zero (cn->h, count, offset, cb, flags);
    break;
  case C_BS:
    cookie = nbd_aio_block_status (cn->h, count, offset, ecb, cb, flags);
    break;
  }
  if (cookie == -1)
    req_fail (r, "libnbd refused to send it: %s (%s)", nbd_get_error (),
              errname (nbd_get_errno ()));
}

static void
open_slot (int slot)
{
  struct conn *cn = &conns[slot];
  char name[32];

  cn->serial = next_serial;
  next_serial = (next_serial + 1) % SERIALS;
  snprintf (name, sizeof name, "conn%u", cn->serial);
  cn->h = nbd_create ();
  if (!cn->h)
    FAIL ("nbd_create: %s", nbd_get_error ());
  nbd_set_handle_name (cn->h, name);
  OK (nbd_add_meta_context (cn->h, LIBNBD_CONTEXT_BASE_ALLOCATION));
  if (nbd_connect_uri (cn->h, uri) == -1)
    FAIL ("seed %" PRIu64 ": connection %u: nbd_connect_uri %s: %s", seed,
          cn->serial, uri, nbd_get_error ());
  OK (nbd_set_strict_mode (cn->h, 0));
  cn->in_flight = 0;
  n_opened++;

  if ((uint64_t) nbd_get_size (cn->h) != size)
    FAIL ("connection %u: export size %" PRId64 ", expected %" PRIu64,
          cn->serial, nbd_get_size (cn->h), size);
  /* rbdx advertises all of these on a writable export (README.md). */
  EQ (nbd_is_read_only (cn->h), 0);
  EQ (nbd_can_flush (cn->h), 1);
  EQ (nbd_can_fua (cn->h), 1);
  EQ (nbd_can_trim (cn->h), 1);
  EQ (nbd_can_zero (cn->h), 1);
  EQ (nbd_can_fast_zero (cn->h), 1);
  EQ (nbd_can_meta_context (cn->h, LIBNBD_CONTEXT_BASE_ALLOCATION), 1);
  /* Both image kinds of this test get multi-conn: cache off, and
   * either no exclusive-lock or the shared writer. */
  if (max_conns > 1)
    EQ (nbd_can_multi_conn (cn->h), 1);
}

/* Drain connection SLOT, then NBD_CMD_DISC and close it. */
static void poll_once (int timeout_ms);

static void
close_slot_cleanly (int slot)
{
  struct conn *cn = &conns[slot];
  double end = now_s () + 300;

  while (cn->in_flight > 0) {
    if (now_s () > end)
      FAIL ("seed %" PRIu64 ": connection %u: %u requests still in flight "
            "after 300 s", seed, cn->serial, cn->in_flight);
    poll_once (1000);
  }
  OK (nbd_shutdown (cn->h, 0));
  nbd_close (cn->h);
  cn->h = NULL;
  orphan_pending (cn->serial);
  n_closed++;
}

/* --hangup=half: let libnbd finish sending what it has queued (replies
 * that arrive meanwhile are handled as usual), shut down our sending
 * side, and discard everything the server still sends until it closes:
 * nbdkit has then finished every request it read (it closes once its
 * workers are done), so nothing can land later. */
static void
half_close (struct conn *cn)
{
  double end = now_s () + 300;
  char sink[65536];
  int fd;

  while (nbd_aio_get_direction (cn->h) & LIBNBD_AIO_DIRECTION_WRITE) {
    struct pollfd p = { .fd = nbd_aio_get_fd (cn->h), .events = POLLOUT };
    if (now_s () > end)
      FAIL ("connection %u: could not send its queued requests in 300 s",
            cn->serial);
    if (poll (&p, 1, 1000) > 0) {
      if (p.revents & POLLOUT)
        nbd_aio_notify_write (cn->h);
      else
        nbd_aio_notify_read (cn->h);
    }
    if (nbd_aio_is_dead (cn->h))
      FAIL ("seed %" PRIu64 ": connection %u died before the hang-up: %s",
            seed, cn->serial, nbd_get_error ());
  }
  fd = nbd_aio_get_fd (cn->h);
  if (shutdown (fd, SHUT_WR) == -1)
    FAIL ("shutdown: %m");
  for (;;) {
    struct pollfd p = { .fd = fd, .events = POLLIN };
    ssize_t n;
    if (now_s () > end)
      FAIL ("seed %" PRIu64 ": connection %u: the server did not close "
            "within 300 s of the hang-up", seed, cn->serial);
    if (poll (&p, 1, 1000) <= 0)
      continue;
    n = read (fd, sink, sizeof sink);
    if (n == 0 || (n == -1 && errno != EINTR && errno != EAGAIN))
      break;
  }
}

/* Close connection SLOT with its requests in flight: their replies
 * never come; what they could modify is unknown, and with
 * --hangup=close tainted (they may still land) until the server has
 * closed its end of the connection. */
static void
close_slot_abruptly (int slot)
{
  struct conn *cn = &conns[slot];
  struct req *r, *next;
  uint64_t s, e;
  struct req *dead = NULL;
  struct abandoned *a = NULL;

  if (!hangup_half) {
    uint32_t ino = server_end (nbd_aio_get_fd (cn->h));
    if (ino) {
      a = calloc (1, sizeof *a);
      if (!a)
        FAIL ("out of memory");
      a->server_ino = ino;
    }
  }
  for (r = live; r; r = next) {
    next = r->next_live;
    if (r->slot != slot)
      continue;
    unlink_req (r);
    r->abandoned = true;
    if (modifies (r->cmd) && clamp (r->offset, r->count, &s, &e)) {
      set_unknown (s, e);
      if (!hangup_half) {
        /* Tainted until the server has closed its end, for good when
         * that cannot be seen. */
        for (uint64_t b = s; b < e; b++)
          if (taint[b] != 255)
            taint[b] = a ? taint[b] + 1 : 255;
        if (a) {
          a->ranges = realloc (a->ranges, (a->n + 2) * sizeof *a->ranges);
          if (!a->ranges)
            FAIL ("out of memory");
          a->ranges[a->n++] = s;
          a->ranges[a->n++] = e;
        }
      }
    }
    r->next_live = dead;
    dead = r;
  }
  if (a) {
    a->next = abandoned_list;
    abandoned_list = a;
    n_watched++;
  }
  if (hangup_half)
    half_close (cn);
  nbd_close (cn->h);            /* no callback touches the model now */
  cn->h = NULL;
  for (r = dead; r; r = next) {
    next = r->next_live;
    free_req (r);
  }
  orphan_pending (cn->serial);
  n_abrupt++;
}

static void
poll_once (int timeout_ms)
{
  struct pollfd fds[MAX_CONNS];
  int slots[MAX_CONNS], n = 0, i;

  for (i = 0; i < max_conns; i++) {
    struct conn *cn = &conns[i];
    unsigned dir;

    if (!cn->h)
      continue;
    dir = nbd_aio_get_direction (cn->h);
    fds[n].fd = nbd_aio_get_fd (cn->h);
    fds[n].events = ((dir & LIBNBD_AIO_DIRECTION_READ) ? POLLIN : 0) |
                    ((dir & LIBNBD_AIO_DIRECTION_WRITE) ? POLLOUT : 0);
    fds[n].revents = 0;
    slots[n++] = i;
  }
  if (poll (fds, n, timeout_ms) == -1 && errno != EINTR)
    FAIL ("poll: %m");
  for (i = 0; i < n; i++) {
    struct conn *cn = &conns[slots[i]];
    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR))
      nbd_aio_notify_read (cn->h);
    else if (fds[i].revents & POLLOUT)
      nbd_aio_notify_write (cn->h);
    if (nbd_aio_is_dead (cn->h) || nbd_aio_is_closed (cn->h))
      FAIL ("seed %" PRIu64 " after request #%" PRIu64 ": connection %u "
            "died: %s", seed, issued, cn->serial, nbd_get_error ());
  }
}

/* A random valid range of at least 1 byte. */
static void
random_range (uint64_t *offset, uint64_t *count, uint64_t max_len)
{
  uint64_t len, off, k = below (100);

  if (k < 35)
    len = 1 + below (4096);
  else if (k < 65)
    len = 4096 * (1 + below (16));
  else if (k < 85)
    len = chance (50) ? 4096 * (1 + below (256)) : 1 + below (MiB);
  else if (k < 95)
    len = 1 + below (4 * MiB);
  else
    len = 1 + below (8 * MiB);
  if (len > max_len)
    len = max_len;
  if (len > size)
    len = size;

  k = below (100);
  if (k < 40)
    off = below (size / 4096) * 4096;
  else if (k < 70)
    off = below (size);
  else if (k < 95) {
    /* Around an object boundary. */
    int64_t delta = (int64_t) below (16385) - 8192;
    off = below (size / obj_size + 1) * obj_size;
    if (chance (50))
      delta = delta / 512 * 512;
    off = (int64_t) off + delta < 0 ? 0 : (uint64_t) ((int64_t) off + delta);
  }
  else
    off = size - len;           /* up to the very end */
  if (off > size - len)
    off = size - len;
  *offset = off;
  *count = len;
}

/* One forbidden request on SLOT. */
static void
issue_bad (int slot)
{
  static const enum cmd cmds[] = { C_READ, C_WRITE, C_TRIM, C_ZERO, C_BS };
  enum cmd c = cmds[below (5)];
  uint64_t offset, count;
  uint32_t flags = 0;
  enum bad bad = (enum bad) (1 + below (4));

  switch (bad) {
  case B_RANGE:
    count = 1 + below (64 * KiB);
    if (chance (50))
      offset = size - (count > 1 ? below (count - 1) + 1 : 0);   /* straddles */
    else
      offset = size + below (GiB);                           /* beyond */
    if (offset + count <= size)
      offset = size - count + 1;
    break;
  case B_ZERO_LEN:
    count = 0;
    offset = chance (80) ? below (size) : size;
    break;
  case B_OVERSIZED:
    if (size <= max_block || !max_advertised) {
      bad = B_FLAGS;
      goto flags;
    }
    count = max_block + 1 + below (size - max_block);
    offset = below (size - count + 1);
    break;
  case B_FLAGS:
  default:
  flags:
    random_range (&offset, &count, 64 * KiB);
    switch (below (4)) {
    case 0: flags = UINT32_C (1) << (5 + below (11)); break;  /* unknown */
    case 1: flags = LIBNBD_CMD_FLAG_NO_HOLE;                  /* not ZERO */
      if (c == C_ZERO) c = C_WRITE;
      break;
    case 2: flags = LIBNBD_CMD_FLAG_FAST_ZERO;
      if (c == C_ZERO) c = C_READ;
      break;
    default: flags = LIBNBD_CMD_FLAG_REQ_ONE;                 /* not BS */
      if (c == C_BS) c = C_TRIM;
      break;
    }
    break;
  }
  if (modifies (c) && count && offset < size &&
      overlaps_live_modification (offset, count < size - offset
                                          ? count : size - offset))
    return;
  issue (slot, c, bad, offset, count, flags);
}

/* One valid request on SLOT. */
static void
issue_valid (int slot)
{
  uint64_t k = below (100), offset = 0, count = 0;
  enum cmd c;
  uint32_t flags = 0;
  int tries;

  if (k < 30) c = C_READ;
  else if (k < 55) c = C_WRITE;
  else if (k < 62) c = C_FLUSH;
  else if (k < 71) c = C_TRIM;
  else if (k < 86) c = C_ZERO;
  else c = C_BS;

  if (c == C_FLUSH) {
    issue (slot, c, B_NONE, 0, 0, 0);
    return;
  }
  for (tries = 0; ; tries++) {
    random_range (&offset, &count, c == C_READ || c == C_WRITE
                                   ? 4 * MiB : max_block);
    if (!modifies (c) || !overlaps_live_modification (offset, count))
      break;
    if (tries == 8) {
      c = C_READ;               /* the area is busy: read it instead */
      if (count > 4 * MiB)
        count = 4 * MiB;
      break;
    }
  }
  switch (c) {
  case C_WRITE:
    if (chance (30)) flags |= LIBNBD_CMD_FLAG_FUA;
    break;
  case C_TRIM:
    if (chance (20)) flags |= LIBNBD_CMD_FLAG_FUA;
    break;
  case C_ZERO:
    if (chance (35)) flags |= LIBNBD_CMD_FLAG_NO_HOLE;
    if (chance (35)) flags |= LIBNBD_CMD_FLAG_FAST_ZERO;
    if (chance (20)) flags |= LIBNBD_CMD_FLAG_FUA;
    break;
  case C_BS:
    if (chance (20)) flags |= LIBNBD_CMD_FLAG_REQ_ONE;
    break;
  default:
    break;
  }
  issue (slot, c, B_NONE, offset, count, flags);
}

static int
open_count (void)
{
  int i, n = 0;
  for (i = 0; i < max_conns; i++)
    n += conns[i].h != NULL;
  return n;
}

static int
random_open_slot (void)
{
  int i, n = open_count (), k = (int) below ((uint64_t) n);
  for (i = 0; i < max_conns; i++)
    if (conns[i].h && k-- == 0)
      return i;
  abort ();
}

/* Compare `rbd export IMAGE -` with the model. */
static void
compare_export (void)
{
  char cmd[1024];
  unsigned char *buf = xmalloc (MiB);
  uint64_t pos = 0, known = 0, unknown = 0, i;
  size_t n;
  FILE *p;

  snprintf (cmd, sizeof cmd, "rbd export --no-progress '%s' -", rbd_image);
  p = popen (cmd, "r");
  if (!p)
    FAIL ("popen %s: %m", cmd);
  while ((n = fread (buf, 1, MiB, p)) > 0) {
    if (pos + n > size)
      FAIL ("rbd export gave more than %" PRIu64 " bytes", size);
    for (i = 0; i < n; i++) {
      if (tag[pos + i] == UNKNOWN_TAG) {
        unknown++;
        continue;
      }
      known++;
      if (buf[i] != value_of (tag[pos + i], pos + i))
        mismatch (NULL, "rbd export differs from the model", buf, NULL,
                  pos, n);
    }
    pos += n;
  }
  if (pclose (p) != 0)
    FAIL ("%s failed", cmd);
  if (pos != size)
    FAIL ("rbd export gave %" PRIu64 " bytes, expected %" PRIu64, pos, size);
  printf ("model: rbd export of %s equals the model in all %" PRIu64
          " known bytes (%" PRIu64 " unknown)\n", rbd_image, known, unknown);
  free (buf);
}

static void
usage_exit (char **argv)
{
  check_args (argv, false, "[--seed N] [--requests N] [--seconds S] "
              "[--connections 1-4] [--depth N] [--visibility spec|rbdx] "
              "[--hangup half|close] [--strict-oversized] [--rbd-image SPEC] "
              "URI");
}

int
main (int argc, char *argv[])
{
  double start, end;
  int i;

  check_name (argv[0]);
  for (i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp (a, "--strict-oversized") == 0) {
      strict_oversized = true;
      continue;
    }
    if (a[0] != '-') {
      if (uri)
        usage_exit (argv);
      uri = a;
      continue;
    }
    if (!v)
      usage_exit (argv);
    i++;
    if (strcmp (a, "--seed") == 0) seed = strtoull (v, NULL, 0);
    else if (strcmp (a, "--requests") == 0) n_requests = strtoull (v, NULL, 0);
    else if (strcmp (a, "--seconds") == 0) seconds = atof (v);
    else if (strcmp (a, "--connections") == 0) max_conns = atoi (v);
    else if (strcmp (a, "--depth") == 0) depth = atoi (v);
    else if (strcmp (a, "--rbd-image") == 0) rbd_image = v;
    else if (strcmp (a, "--hangup") == 0) {
      if (strcmp (v, "close") == 0) hangup_half = false;
      else if (strcmp (v, "half") != 0) usage_exit (argv);
    }
    else if (strcmp (a, "--visibility") == 0) {
      if (strcmp (v, "spec") == 0) spec_mode = true;
      else if (strcmp (v, "rbdx") != 0) usage_exit (argv);
    }
    else usage_exit (argv);
  }
  if (!uri || max_conns < 1 || max_conns > MAX_CONNS || depth < 1)
    usage_exit (argv);
  rng_state = seed;
  setvbuf (stdout, NULL, _IOLBF, 0);

  /* The first connection tells the size and the limits. */
  {
    struct nbd_handle *h = connect_to (uri, false);
    int64_t mb = nbd_get_block_size (h, LIBNBD_SIZE_MAXIMUM);
    size = (uint64_t) nbd_get_size (h);
    /* Without one the spec's default maximum payload is 32 MiB; only
     * an advertised maximum makes longer requests forbidden. */
    max_block = mb > 0 ? (uint64_t) mb : 32 * MiB;
    max_advertised = mb > 0;
    OK (nbd_shutdown (h, 0));
    nbd_close (h);
  }
  if (size < 2 * MiB)
    FAIL ("the export is too small: %" PRIu64 " bytes", size);
  tag = calloc (size, sizeof *tag);
  vis = malloc (size);
  taint = calloc (size, 1);
  if (!tag || !vis || !taint)
    FAIL ("out of memory for the model of %" PRIu64 " bytes", size);
  memset (vis, VIS_ALL, size);
  printf ("model: seed %" PRIu64 ", up to %" PRIu64 " requests in %.0f s, "
          "1-%d connections, depth %d, visibility %s, hang-up %s, export %"
          PRIu64 " bytes, maximum block %" PRIu64 "\n", seed, n_requests,
          seconds, max_conns, depth, spec_mode ? "spec" : "rbdx",
          hangup_half ? "half" : "close", size, max_block);

  /* Start with a random number of connections. */
  {
    int n = 1 + (int) below ((uint64_t) max_conns);
    for (i = 0; i < n; i++)
      open_slot (i);
  }

  start = now_s ();
  end = start + seconds;
  while (issued < n_requests && now_s () < end) {
    int burst = 1 + (int) below (8), b;

    /* Connection events. */
    if (chance (1) && chance (40)) {
      int slot = random_open_slot ();
      close_slot_abruptly (slot);
      open_slot (slot);
    }
    else if (chance (1)) {
      if (open_count () < max_conns) {
        for (i = 0; conns[i].h; i++)
          ;
        open_slot (i);
      }
      else if (open_count () > 1)
        close_slot_cleanly (random_open_slot ());
    }

    for (b = 0; b < burst && issued < n_requests; b++) {
      int slot = random_open_slot ();
      if (conns[slot].in_flight >= (unsigned) depth)
        break;
      if (chance (4))
        issue_bad (slot);
      else
        issue_valid (slot);
    }
    poll_once (live ? 100 : 0);
    if (abandoned_list)
      release_abandoned ();
  }

  /* Drain; then a final FLUSH makes every answered write visible. */
  {
    double limit = now_s () + 300;
    while (live) {
      if (now_s () > limit)
        FAIL ("seed %" PRIu64 ": requests still in flight 300 s after the "
              "last was sent", seed);
      poll_once (1000);
    }
    issue (random_open_slot (), C_FLUSH, B_NONE, 0, 0, 0);
    while (live)
      poll_once (1000);
  }
  for (i = 0; i < max_conns; i++)
    if (conns[i].h)
      close_slot_cleanly (i);

  printf ("model: seed %" PRIu64 ": %" PRIu64 " requests in %.1f s: %" PRIu64
          " READ, %" PRIu64 " WRITE, %" PRIu64 " FLUSH, %" PRIu64 " TRIM, %"
          PRIu64 " WRITE_ZEROES, %" PRIu64 " BLOCK_STATUS; forbidden: %"
          PRIu64 " past the end, %" PRIu64 " zero length, %" PRIu64
          " oversized (%" PRIu64 " served), %" PRIu64 " bad flags; %" PRIu64
          " FAST_ZERO refused; %" PRIu64 " connections opened, %" PRIu64
          " closed cleanly, %" PRIu64 " dropped with requests in flight (%"
          PRIu64 " watched until the server closed its end); %"
          PRIu64 " bytes checked, %" PRIu64 " zero extents checked\n", seed,
          issued, now_s () - start, n_cmd[C_READ], n_cmd[C_WRITE],
          n_cmd[C_FLUSH], n_cmd[C_TRIM], n_cmd[C_ZERO], n_cmd[C_BS],
          n_bad[B_RANGE], n_bad[B_ZERO_LEN], n_bad[B_OVERSIZED],
          n_oversized_ok, n_bad[B_FLAGS], n_fast_refused, n_opened, n_closed,
          n_abrupt, n_watched, checked_bytes, zero_claims);

  if (rbd_image)
    compare_export ();
  while (abandoned_list) {
    struct abandoned *a = abandoned_list;
    abandoned_list = a->next;
    free (a->ranges);
    free (a);
  }
  free (tag);
  free (vis);
  free (taint);
  free (pend);
  return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* nbd-commands: every NBD command and every advertised property of an
 * rbdx export (NBD doc/proto.md "Transmission phase", "Block size
 * constraints", "Metadata querying"; export description from
 * NBD_INFO_DESCRIPTION).
 *
 * Usage:
 *   nbd-commands props URI SPEC CAN_WRITE MULTI_CONN [CONTENT]
 *     Check the handshake: no CACHE, not rotational, block sizes
 *     1/4096/32 MiB, description naming SPEC, base:allocation, FLUSH,
 *     read-only iff !CAN_WRITE (and then no TRIM/WRITE_ZEROES),
 *     multi-conn == MULTI_CONN.  With CONTENT, the export must read
 *     back exactly as that file.
 *   nbd-commands full URI SPEC MULTI_CONN SEED OUT
 *     A writable export of a default-feature image (exclusive-lock,
 *     object-map, fast-diff; 4 MiB objects, 24 MiB) whose contents are
 *     SEED, with data only in object 3.  Checks props (multi-conn ==
 *     MULTI_CONN), then READ, WRITE, WRITE+FUA, FLUSH, BLOCK_STATUS,
 *     TRIM, WRITE_ZEROES (plain, NO_HOLE, FAST_ZERO, NO_HOLE|FAST_ZERO)
 *     against an in-memory shadow of the image, and writes the shadow
 *     to OUT for the caller to compare with `rbd export`.
 */
#include "nbd-check.h"

#define OBJ (4 * MiB)

static void
check_props (struct nbd_handle *h, const char *spec, int can_write,
             int multi_conn)
{
  char *desc;

  EQ (nbd_is_read_only (h), !can_write);
  EQ (nbd_can_multi_conn (h), multi_conn);
  EQ (nbd_can_cache (h), 0);
  EQ (nbd_is_rotational (h), 0);
  EQ (nbd_can_flush (h), 1);
  EQ (nbd_can_meta_context (h, LIBNBD_CONTEXT_BASE_ALLOCATION), 1);
  EQ (nbd_get_block_size (h, LIBNBD_SIZE_MINIMUM), 1);
  EQ (nbd_get_block_size (h, LIBNBD_SIZE_PREFERRED), 4096);
  EQ (nbd_get_block_size (h, LIBNBD_SIZE_MAXIMUM), 33554432);
  if (can_write) {
    EQ (nbd_can_fua (h), 1);
    EQ (nbd_can_trim (h), 1);
    EQ (nbd_can_zero (h), 1);
    EQ (nbd_can_fast_zero (h), 1);
  }
  else {
    EQ (nbd_can_trim (h), 0);
    EQ (nbd_can_zero (h), 0);
  }

  desc = nbd_get_export_description (h);
  if (!desc)
    FAIL ("no export description: %s", nbd_get_error ());
  if (!strstr (desc, spec))
    FAIL ("export description \"%s\" does not name the image \"%s\"",
          desc, spec);
  free (desc);
}

/* One BLOCK_STATUS reply, with runs of equal flags merged. */
struct runs {
  uint64_t offset;              /* what libnbd says the extents start at */
  size_t n;
  uint64_t start[64], len[64];
  uint32_t flags[64];
  int calls;
};

static int
extent_cb (void *arg, const char *ctx, uint64_t offset, uint32_t *e,
           size_t nr, int *error)
{
  struct runs *r = arg;
  uint64_t pos = offset;
  size_t i;

  if (strcmp (ctx, LIBNBD_CONTEXT_BASE_ALLOCATION) != 0)
    return 0;
  r->calls++;
  r->offset = offset;
  r->n = 0;
  for (i = 0; i + 1 < nr; i += 2) {
    uint32_t f = e[i + 1] & (LIBNBD_STATE_HOLE | LIBNBD_STATE_ZERO);

    if (r->n > 0 && r->flags[r->n - 1] == f)
      r->len[r->n - 1] += e[i];
    else {
      if (r->n == 64)
        FAIL ("more than 64 extent runs");
      r->start[r->n] = pos;
      r->len[r->n] = e[i];
      r->flags[r->n] = f;
      r->n++;
    }
    pos += e[i];
  }
  return 0;
}

#define DATA 0
#define HOLE (LIBNBD_STATE_HOLE | LIBNBD_STATE_ZERO)

struct want_run { uint64_t start, len; uint32_t flags; };

/* BLOCK_STATUS of [OFFSET, OFFSET+COUNT) must be exactly the runs in
 * WANT (the first starting at OFFSET, the last ending at its end). */
static void
expect_status (struct nbd_handle *h, uint64_t offset, uint64_t count,
               uint32_t flags, const struct want_run *want, size_t nwant)
{
  struct runs r = { 0 };
  size_t i;

  OK (nbd_block_status (h, count, offset,
                        (nbd_extent_callback) { .callback = extent_cb,
                                                .user_data = &r }, flags));
  EQ (r.calls, 1);
  EQ (r.offset, offset);
  for (i = 0; i < r.n && i < nwant; i++)
    if (r.start[i] != want[i].start || r.len[i] != want[i].len ||
        r.flags[i] != want[i].flags)
      break;
  if (i == r.n && i == nwant)
    return;
  fprintf (stderr, "block status of [%" PRIu64 ", +%" PRIu64 ") flags 0x%x:"
           "\n  got:", offset, count, flags);
  for (i = 0; i < r.n; i++)
    fprintf (stderr, " [%" PRIu64 ", +%" PRIu64 ")=%s", r.start[i], r.len[i],
             r.flags[i] == DATA ? "data" : r.flags[i] == HOLE ? "hole|zero"
             : "other");
  fprintf (stderr, "\n  expected:");
  for (i = 0; i < nwant; i++)
    fprintf (stderr, " [%" PRIu64 ", +%" PRIu64 ")=%s", want[i].start,
             want[i].len, want[i].flags == DATA ? "data" : "hole|zero");
  fputc ('\n', stderr);
  FAIL ("unexpected BLOCK_STATUS extents");
}

static void
full (struct nbd_handle *h, const char *seed, const char *out)
{
  const uint64_t size = 24 * MiB;
  unsigned char *shadow, *buf;
  uint64_t off, len;
  double t;

  EQ (nbd_get_size (h), size);
  shadow = load_file (seed, size);
  buf = xmalloc (OBJ);

  /* READ: what `rbd import` wrote (object 3) and holes elsewhere. */
  verify_range (h, shadow, 0, size, "READ of the imported image");

  /* WRITE: 64 KiB at 4096 in object 0. */
  off = 4096; len = 64 * KiB;
  fill_pattern (shadow + off, len, off, 1);
  OK (nbd_pwrite (h, shadow + off, len, off, 0));
  verify_range (h, shadow, 0, OBJ, "READ after WRITE");

  /* BLOCK_STATUS base:allocation while objects 0 and 3 hold data and
   * 1, 2, 4, 5 were never written.  Extents start at the requested
   * offset even inside an object. */
  {
    const struct want_run whole[] = {
      { 0, OBJ, DATA }, { OBJ, 2 * OBJ, HOLE },
      { 3 * OBJ, OBJ, DATA }, { 4 * OBJ, 2 * OBJ, HOLE },
    };
    const struct want_run inside[] = {
      { 2 * MiB + 123, 2 * MiB - 123, DATA }, { OBJ, 2 * MiB + 123, HOLE },
    };
    const struct want_run one[] = { { 2 * MiB + 123, 2 * MiB - 123, DATA } };
    const struct want_run hole[] = { { 5 * MiB + 7, 3 * MiB, HOLE } };
    const struct want_run tail[] = {
      { 13 * MiB + 1, 3 * MiB - 1, DATA }, { 4 * OBJ, 8 * MiB - 4096, HOLE },
    };

    expect_status (h, 0, size, 0, whole, 4);
    expect_status (h, 2 * MiB + 123, 4 * MiB, 0, inside, 2);
    expect_status (h, 2 * MiB + 123, 4 * MiB, LIBNBD_CMD_FLAG_REQ_ONE,
                   one, 1);
    expect_status (h, 5 * MiB + 7, 3 * MiB, 0, hole, 1);
    expect_status (h, 13 * MiB + 1, size - 4096 - (13 * MiB + 1), 0,
                   tail, 2);
  }

  /* WRITE with FUA, unaligned, crossing into object 1. */
  off = OBJ - 1000; len = 5000;
  fill_pattern (shadow + off, len, off, 2);
  OK (nbd_pwrite (h, shadow + off, len, off, LIBNBD_CMD_FLAG_FUA));
  verify_range (h, shadow, OBJ - 64 * KiB, 128 * KiB, "READ after WRITE+FUA");

  /* FLUSH. */
  OK (nbd_flush (h, 0));

  /* TRIM of a whole object, 4 MiB aligned, after filling it: it then
   * reads as zeros. */
  off = OBJ; len = OBJ;
  fill_pattern (shadow + off, len, off, 3);
  OK (nbd_pwrite (h, shadow + off, len, off, 0));
  verify_range (h, shadow, off, len, "READ of object 1 before TRIM");
  OK (nbd_trim (h, len, off, 0));
  memset (shadow + off, 0, len);
  OK (nbd_pread (h, buf, len, off, 0));
  ALL (buf, 0, len, off, "READ of a whole trimmed object");

  /* WRITE_ZEROES without and with NO_HOLE, unaligned, inside data. */
  off = 2 * OBJ; len = 1 * MiB;
  fill_pattern (shadow + off, len, off, 4);
  OK (nbd_pwrite (h, shadow + off, len, off, 0));
  off = 2 * OBJ + 4096 + 7; len = 65536 + 13;
  OK (nbd_zero (h, len, off, 0));
  memset (shadow + off, 0, len);
  off = 2 * OBJ + 512 * KiB + 3; len = 100000;
  OK (nbd_zero (h, len, off, LIBNBD_CMD_FLAG_NO_HOLE));
  memset (shadow + off, 0, len);
  verify_range (h, shadow, 2 * OBJ, 2 * MiB, "READ after WRITE_ZEROES");

  /* WRITE_ZEROES of a whole object, with and without NO_HOLE. */
  off = 2 * OBJ; len = OBJ;
  OK (nbd_zero (h, len, off, LIBNBD_CMD_FLAG_NO_HOLE));
  memset (shadow + off, 0, len);
  verify_range (h, shadow, off, len, "READ after WRITE_ZEROES NO_HOLE");
  fill_pattern (shadow + off, len, off, 5);
  OK (nbd_pwrite (h, shadow + off, len, off, 0));
  OK (nbd_zero (h, len, off, 0));
  memset (shadow + off, 0, len);
  verify_range (h, shadow, off, len, "READ after WRITE_ZEROES of an object");

  /* FAST_ZERO: holes allowed, so it succeeds (and quickly). */
  off = 3 * OBJ + 1 * MiB; len = 256 * KiB;
  fill_pattern (shadow + off, len, off, 6);
  OK (nbd_pwrite (h, shadow + off, len, off, 0));
  t = now_s ();
  OK (nbd_zero (h, 64 * KiB, off + 1, LIBNBD_CMD_FLAG_FAST_ZERO));
  if (now_s () - t > 2.0)
    FAIL ("WRITE_ZEROES+FAST_ZERO took %.1f s", now_s () - t);
  memset (shadow + off + 1, 0, 64 * KiB);
  /* NO_HOLE|FAST_ZERO: zeros must be written, which is not fast:
   * NBD_ENOTSUP at once and the data stays. */
  t = now_s ();
  ERR (nbd_zero (h, 64 * KiB, off + 128 * KiB,
                 LIBNBD_CMD_FLAG_NO_HOLE | LIBNBD_CMD_FLAG_FAST_ZERO), ENOTSUP);
  if (now_s () - t > 2.0)
    FAIL ("failing NO_HOLE|FAST_ZERO took %.1f s", now_s () - t);
  ALIVE (h);
  verify_range (h, shadow, off, len, "READ after FAST_ZERO requests");

  /* The whole image once more, then hand the shadow to the caller. */
  OK (nbd_flush (h, 0));
  verify_range (h, shadow, 0, size, "final READ of the whole image");
  save_file (out, shadow, size);
  free (buf);
  free (shadow);
}

int
main (int argc, char *argv[])
{
  struct nbd_handle *h;
  const char *mode, *uri, *spec;

  check_name (argv[0]);
  if (argc < 4)
    goto usage;
  mode = argv[1]; uri = argv[2]; spec = argv[3];

  h = connect_to (uri, true);
  if (strcmp (mode, "props") == 0 && (argc == 6 || argc == 7)) {
    check_props (h, spec, atoi (argv[4]), atoi (argv[5]));
    if (argc == 7) {
      int64_t size = nbd_get_size (h);
      unsigned char *want = load_file (argv[6], size);

      verify_range (h, want, 0, size, "READ of the whole export");
      free (want);
    }
    else {
      char b[4096];
      OK (nbd_pread (h, b, sizeof b, 0, 0));
    }
  }
  else if (strcmp (mode, "full") == 0 && argc == 7) {
    check_props (h, spec, 1, atoi (argv[4]));
    full (h, argv[5], argv[6]);
  }
  else
    goto usage;
  OK (nbd_shutdown (h, 0));
  nbd_close (h);
  return 0;

usage:
  fprintf (stderr, "usage: nbd-commands props URI SPEC CAN_WRITE MULTI_CONN "
           "[CONTENT]\n       nbd-commands full URI SPEC MULTI_CONN SEED OUT\n");
  return 2;
}

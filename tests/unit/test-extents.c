/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: the extent walker (include/rbdx/extents.h).
 *
 * Proves that, whatever ranges librbd reports, the extents handed to
 * the callback start exactly at the requested offset, are contiguous,
 * have no zero lengths and cover exactly [offset, offset+length):
 * ranges are clipped at both ends, gaps and exists=false ranges become
 * holes, ranges outside the request or of length zero are ignored, a
 * callback error stops the walk and is returned, and offsets near the
 * 64-bit limits do not overflow.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rbdx/extents.h"

#define KiB UINT64_C(1024)
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)

#define MAX_EXTENTS 32

struct extent {
  uint64_t offset, length;
  bool hole;
};

/* What the callback saw; fail_at makes call number fail_at return -EIO. */
struct recorder {
  struct extent e[MAX_EXTENTS];
  size_t n;
  size_t calls;
  size_t fail_at;
};

static int
record (void *arg, uint64_t offset, uint64_t length, bool hole)
{
  struct recorder *r = arg;

  if (r->calls++ == r->fail_at)
    return -EIO;
  assert_true (r->n < MAX_EXTENTS);
  r->e[r->n].offset = offset;
  r->e[r->n].length = length;
  r->e[r->n].hole = hole;
  r->n++;
  return 0;
}

static void
start (struct rbdx_extent_walk *w, struct recorder *r,
       uint64_t offset, uint64_t length)
{
  memset (r, 0, sizeof *r);
  r->fail_at = SIZE_MAX;
  rbdx_extent_walk_init (w, offset, length, record, r);
}

/* The recorded extents are non-empty, contiguous, and cover exactly
 * [offset, offset+length). */
static void
assert_covers (const struct recorder *r, uint64_t offset, uint64_t length)
{
  uint64_t pos = offset;
  size_t i;

  for (i = 0; i < r->n; i++) {
    assert_true (r->e[i].length > 0);
    assert_int_equal (r->e[i].offset, pos);
    assert_true (r->e[i].length <= offset + length - pos);
    pos += r->e[i].length;
  }
  assert_int_equal (pos, offset + length);
}

static void
assert_extent (const struct recorder *r, size_t i,
               uint64_t offset, uint64_t length, bool hole)
{
  assert_true (i < r->n);
  assert_int_equal (r->e[i].offset, offset);
  assert_int_equal (r->e[i].length, length);
  assert_int_equal (r->e[i].hole, hole);
}

#define DATA false
#define HOLE true

static void
test_no_ranges (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  start (&w, &r, 4 * MiB, 8 * MiB);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 1);
  assert_extent (&r, 0, 4 * MiB, 8 * MiB, HOLE);
  assert_covers (&r, 4 * MiB, 8 * MiB);
}

static void
test_single_range_exact (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  start (&w, &r, 4 * MiB, 4 * MiB);
  assert_int_equal (rbdx_extent_walk_add (&w, 4 * MiB, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 1);
  assert_extent (&r, 0, 4 * MiB, 4 * MiB, DATA);
}

static void
test_clip_start (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  /* A whole 4 MiB object starting before the requested offset. */
  start (&w, &r, 5 * MiB, 6 * MiB);
  assert_int_equal (rbdx_extent_walk_add (&w, 4 * MiB, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 2);
  assert_extent (&r, 0, 5 * MiB, 3 * MiB, DATA);
  assert_extent (&r, 1, 8 * MiB, 3 * MiB, HOLE);
  assert_covers (&r, 5 * MiB, 6 * MiB);
}

static void
test_clip_end (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  /* A whole object running past the end of the request. */
  start (&w, &r, 0, 6 * MiB);
  assert_int_equal (rbdx_extent_walk_add (&w, 4 * MiB, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 2);
  assert_extent (&r, 0, 0, 4 * MiB, HOLE);
  assert_extent (&r, 1, 4 * MiB, 2 * MiB, DATA);
  assert_covers (&r, 0, 6 * MiB);
}

static void
test_clip_both_ends (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  /* A request inside a single object. */
  start (&w, &r, 4 * MiB + 512, 4096);
  assert_int_equal (rbdx_extent_walk_add (&w, 4 * MiB, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 1);
  assert_extent (&r, 0, 4 * MiB + 512, 4096, DATA);
}

static void
test_gaps_become_holes (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  start (&w, &r, 0, 16 * MiB);
  assert_int_equal (rbdx_extent_walk_add (&w, 4 * MiB, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 12 * MiB, 2 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 5);
  assert_extent (&r, 0, 0, 4 * MiB, HOLE);
  assert_extent (&r, 1, 4 * MiB, 4 * MiB, DATA);
  assert_extent (&r, 2, 8 * MiB, 4 * MiB, HOLE);
  assert_extent (&r, 3, 12 * MiB, 2 * MiB, DATA);
  assert_extent (&r, 4, 14 * MiB, 2 * MiB, HOLE);
  assert_covers (&r, 0, 16 * MiB);
}

static void
test_adjacent_data (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  start (&w, &r, 0, 12 * MiB);
  assert_int_equal (rbdx_extent_walk_add (&w, 0, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 4 * MiB, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 8 * MiB, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  /* No hole in between, and nothing left for finish. */
  assert_int_equal (r.n, 3);
  assert_extent (&r, 0, 0, 4 * MiB, DATA);
  assert_extent (&r, 1, 4 * MiB, 4 * MiB, DATA);
  assert_extent (&r, 2, 8 * MiB, 4 * MiB, DATA);
  assert_covers (&r, 0, 12 * MiB);
}

static void
test_exists_false_is_hole (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  start (&w, &r, 2 * MiB, 8 * MiB);
  assert_int_equal (rbdx_extent_walk_add (&w, 0, 4 * MiB, false), 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 4 * MiB, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 8 * MiB, 4 * MiB, false), 0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 3);
  assert_extent (&r, 0, 2 * MiB, 2 * MiB, HOLE);
  assert_extent (&r, 1, 4 * MiB, 4 * MiB, DATA);
  assert_extent (&r, 2, 8 * MiB, 2 * MiB, HOLE);
  assert_covers (&r, 2 * MiB, 8 * MiB);
}

static void
test_zero_length_ignored (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  start (&w, &r, 0, 8 * MiB);
  /* Inside the request, at its start and at a gap: none emit anything,
   * not even the hole before them. */
  assert_int_equal (rbdx_extent_walk_add (&w, 0, 0, true), 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 2 * MiB, 0, true), 0);
  assert_int_equal (r.n, 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 4 * MiB, 2 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 6 * MiB, 0, false), 0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 3);
  assert_extent (&r, 0, 0, 4 * MiB, HOLE);
  assert_extent (&r, 1, 4 * MiB, 2 * MiB, DATA);
  assert_extent (&r, 2, 6 * MiB, 2 * MiB, HOLE);
  assert_covers (&r, 0, 8 * MiB);
}

static void
test_outside_ranges_ignored (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  start (&w, &r, 8 * MiB, 8 * MiB);
  /* Entirely before, and ending exactly at the offset. */
  assert_int_equal (rbdx_extent_walk_add (&w, 0, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 4 * MiB, 4 * MiB, true), 0);
  assert_int_equal (r.n, 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 10 * MiB, 2 * MiB, true), 0);
  /* Starting exactly at the end, and entirely after. */
  assert_int_equal (rbdx_extent_walk_add (&w, 16 * MiB, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 32 * MiB, 4 * MiB, true), 0);
  assert_int_equal (r.n, 2);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 3);
  assert_extent (&r, 0, 8 * MiB, 2 * MiB, HOLE);
  assert_extent (&r, 1, 10 * MiB, 2 * MiB, DATA);
  assert_extent (&r, 2, 12 * MiB, 4 * MiB, HOLE);
  assert_covers (&r, 8 * MiB, 8 * MiB);
}

static void
test_overlap_after_end_ignored (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  /* Once a range has reached the end, a later range straddling the end
   * (an overlapping report) has nothing left to add: no zero-length
   * extent. */
  start (&w, &r, 0, 6 * MiB);
  assert_int_equal (rbdx_extent_walk_add (&w, 4 * MiB, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 5 * MiB, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 2);
  assert_covers (&r, 0, 6 * MiB);

  /* Overlap with data already reported inside the range: only the new
   * part is added. */
  start (&w, &r, 0, 8 * MiB);
  assert_int_equal (rbdx_extent_walk_add (&w, 0, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 2 * MiB, 4 * MiB, false), 0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 3);
  assert_extent (&r, 0, 0, 4 * MiB, DATA);
  assert_extent (&r, 1, 4 * MiB, 2 * MiB, HOLE);
  assert_extent (&r, 2, 6 * MiB, 2 * MiB, HOLE);
  assert_covers (&r, 0, 8 * MiB);
}

static void
test_empty_request (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  /* A zero-length walk reports nothing, whatever it is fed. */
  start (&w, &r, 4 * MiB, 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 0, 8 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_add (&w, 4 * MiB, 4 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 0);
}

static void
test_error_in_gap_hole (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  /* The hole before the data fails: the data is not reported. */
  start (&w, &r, 0, 8 * MiB);
  r.fail_at = 0;
  assert_int_equal (rbdx_extent_walk_add (&w, 4 * MiB, 2 * MiB, true), -EIO);
  assert_int_equal (r.calls, 1);
  assert_int_equal (r.n, 0);
}

static void
test_error_in_data (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  start (&w, &r, 0, 8 * MiB);
  r.fail_at = 1;
  assert_int_equal (rbdx_extent_walk_add (&w, 4 * MiB, 2 * MiB, true), -EIO);
  assert_int_equal (r.calls, 2);
  assert_int_equal (r.n, 1);
  assert_extent (&r, 0, 0, 4 * MiB, HOLE);

  /* Data with no gap before it: the first call fails. */
  start (&w, &r, 0, 8 * MiB);
  r.fail_at = 0;
  assert_int_equal (rbdx_extent_walk_add (&w, 0, 2 * MiB, true), -EIO);
  assert_int_equal (r.calls, 1);
  assert_int_equal (r.n, 0);
}

static void
test_error_in_finish (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  start (&w, &r, 0, 8 * MiB);
  r.fail_at = 1;
  assert_int_equal (rbdx_extent_walk_add (&w, 0, 2 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_finish (&w), -EIO);
  assert_int_equal (r.calls, 2);
  assert_int_equal (r.n, 1);
}

static void
test_error_value_propagates (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;

  /* Whatever errno the callback returns comes back unchanged. */
  start (&w, &r, 0, MiB);
  r.fail_at = 0;
  assert_int_equal (rbdx_extent_walk_finish (&w), -EIO);
}

static void
test_large_offsets (void **state)
{
  const uint64_t off = 8 * GiB, len = UINT64_C (0xFFFFF000);
  struct rbdx_extent_walk w;
  struct recorder r;

  /* A request of almost 4 GiB beyond the 32-bit range. */
  start (&w, &r, off, len);
  assert_int_equal (rbdx_extent_walk_add (&w, off - 4 * MiB, 8 * MiB, true),
                    0);
  assert_int_equal (rbdx_extent_walk_add (&w, off + 2 * GiB, 4 * MiB, true),
                    0);
  assert_int_equal (rbdx_extent_walk_add (&w, off + len - MiB, 4 * MiB, true),
                    0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 5);
  assert_extent (&r, 0, off, 4 * MiB, DATA);
  assert_extent (&r, 1, off + 4 * MiB, 2 * GiB - 4 * MiB, HOLE);
  assert_extent (&r, 2, off + 2 * GiB, 4 * MiB, DATA);
  assert_extent (&r, 3, off + 2 * GiB + 4 * MiB,
                 len - MiB - 2 * GiB - 4 * MiB, HOLE);
  assert_extent (&r, 4, off + len - MiB, MiB, DATA);
  assert_covers (&r, off, len);

  /* Lengths over 4 GiB are not truncated to 32 bits. */
  start (&w, &r, 0, 16 * GiB + 512);
  assert_int_equal (rbdx_extent_walk_add (&w, 8 * GiB, 5 * GiB, true), 0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 3);
  assert_extent (&r, 0, 0, 8 * GiB, HOLE);
  assert_extent (&r, 1, 8 * GiB, 5 * GiB, DATA);
  assert_extent (&r, 2, 13 * GiB, 3 * GiB + 512, HOLE);
}

static void
test_near_uint64_max (void **state)
{
  const uint64_t end = UINT64_MAX, off = end - 64 * MiB;
  struct rbdx_extent_walk w;
  struct recorder r;

  /* A request ending exactly at 2^64 - 1, with an object clipped at its
   * start and one ending exactly at the end. */
  start (&w, &r, off, end - off);
  assert_int_equal (rbdx_extent_walk_add (&w, off - MiB, 2 * MiB, true), 0);
  assert_int_equal (rbdx_extent_walk_add (&w, end - 4 * MiB, 4 * MiB, true),
                    0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 3);
  assert_extent (&r, 0, off, MiB, DATA);
  assert_extent (&r, 1, off + MiB, 64 * MiB - 5 * MiB, HOLE);
  assert_extent (&r, 2, end - 4 * MiB, 4 * MiB, DATA);
  assert_covers (&r, off, end - off);

  /* The largest size nbdkit allows (INT64_MAX), read to its end. */
  start (&w, &r, INT64_MAX - 0xFFFFF000, 0xFFFFF000);
  assert_int_equal (rbdx_extent_walk_add (&w, INT64_MAX - 4 * MiB, 4 * MiB,
                                          true), 0);
  assert_int_equal (rbdx_extent_walk_finish (&w), 0);
  assert_int_equal (r.n, 2);
  assert_extent (&r, 1, INT64_MAX - 4 * MiB, 4 * MiB, DATA);
  assert_covers (&r, INT64_MAX - 0xFFFFF000, 0xFFFFF000);
}

/* A pseudo-random sequence of ascending, possibly overlapping, possibly
 * empty ranges around a request always yields a contiguous cover. */
static void
test_random_cover (void **state)
{
  struct rbdx_extent_walk w;
  struct recorder r;
  uint64_t seed = 42, off, len, pos, l;
  int round, i;

  for (round = 0; round < 200; round++) {
#define RAND() (seed = seed * UINT64_C(6364136223846793005) \
                + UINT64_C(1442695040888963407), seed >> 33)
    off = RAND () % (64 * KiB);
    len = RAND () % (64 * KiB) + 1;
    start (&w, &r, off, len);
    pos = RAND () % (16 * KiB);
    for (i = 0; i < 8; i++) {
      l = RAND () % (16 * KiB);
      assert_int_equal (rbdx_extent_walk_add (&w, pos, l, RAND () & 1), 0);
      /* Usually move past the range, sometimes overlap it. */
      pos += RAND () % 4 ? l + RAND () % (8 * KiB) : l / 2;
    }
    assert_int_equal (rbdx_extent_walk_finish (&w), 0);
    assert_covers (&r, off, len);
#undef RAND
  }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_no_ranges),
    cmocka_unit_test (test_single_range_exact),
    cmocka_unit_test (test_clip_start),
    cmocka_unit_test (test_clip_end),
    cmocka_unit_test (test_clip_both_ends),
    cmocka_unit_test (test_gaps_become_holes),
    cmocka_unit_test (test_adjacent_data),
    cmocka_unit_test (test_exists_false_is_hole),
    cmocka_unit_test (test_zero_length_ignored),
    cmocka_unit_test (test_outside_ranges_ignored),
    cmocka_unit_test (test_overlap_after_end_ignored),
    cmocka_unit_test (test_empty_request),
    cmocka_unit_test (test_error_in_gap_hole),
    cmocka_unit_test (test_error_in_data),
    cmocka_unit_test (test_error_in_finish),
    cmocka_unit_test (test_error_value_propagates),
    cmocka_unit_test (test_large_offsets),
    cmocka_unit_test (test_near_uint64_max),
    cmocka_unit_test (test_random_cover),
  };

  return cmocka_run_group_tests (tests, NULL, NULL);
}

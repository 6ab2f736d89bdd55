/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: what the supervisor does when the export's size
 * changes (server/mapper/resize.h).
 *
 * Image spec (size file): any change is set at once, a missing size is
 * reported.  NBD URI: a shrink is set at once; growth retires exactly the
 * connections negotiated at a smaller size (once each) and is finished
 * only when the device has all its connections at the new size and no
 * dead link waits.  The kernel's logical block size follows the export's
 * minimum block size only for powers of two from 512 to 4096.  No root,
 * no kernel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "mapper/resize.h"

#define GiB (UINT64_C (1) << 30)

static void
test_from_file (void **state)
{
  (void) state;
  assert_int_equal (rbdx_resize_from_file (GiB, 0), RBDX_RESIZE_UNKNOWN);
  assert_int_equal (rbdx_resize_from_file (GiB, GiB), RBDX_RESIZE_NOTHING);
  assert_int_equal (rbdx_resize_from_file (GiB, 2 * GiB), RBDX_RESIZE_SET);
  assert_int_equal (rbdx_resize_from_file (2 * GiB, GiB), RBDX_RESIZE_SET);
}

static void
test_from_export (void **state)
{
  (void) state;
  assert_int_equal (rbdx_resize_from_export (GiB, 0, GiB), RBDX_RESIZE_NOTHING);
  assert_int_equal (rbdx_resize_from_export (2 * GiB, 0, GiB), RBDX_RESIZE_SET);
  assert_int_equal (rbdx_resize_from_export (GiB, 0, 2 * GiB), RBDX_RESIZE_GROW);
  /* Growth to that size runs already. */
  assert_int_equal (rbdx_resize_from_export (GiB, 2 * GiB, 2 * GiB), RBDX_RESIZE_NOTHING);
  /* It grew further, or shrank back below the device, meanwhile. */
  assert_int_equal (rbdx_resize_from_export (GiB, 2 * GiB, 3 * GiB), RBDX_RESIZE_GROW);
  assert_int_equal (rbdx_resize_from_export (GiB, 2 * GiB, GiB / 2), RBDX_RESIZE_SET);
}

static void
test_must_retire (void **state)
{
  struct rbdx_copy small = { .fd = -1, .size = GiB };
  struct rbdx_copy retiring = { .fd = -1, .size = GiB, .retiring = true };
  struct rbdx_copy big = { .fd = -1, .size = 2 * GiB };

  (void) state;
  assert_true (rbdx_resize_must_retire (&small, 2 * GiB));
  assert_false (rbdx_resize_must_retire (&retiring, 2 * GiB));
  assert_false (rbdx_resize_must_retire (&big, 2 * GiB));
  assert_false (rbdx_resize_must_retire (&big, GiB));
}

static void
test_growth_done (void **state)
{
  struct rbdx_copy c[6] = {
    { .size = GiB, .retiring = true }, { .size = GiB, .retiring = true },
    { .size = 2 * GiB }, { .size = 2 * GiB }, { .size = 3 * GiB }, { .size = GiB },
  };

  (void) state;
  /* Two of four connections at the new size. */
  assert_false (rbdx_resize_growth_done (2 * GiB, c, 4, 4, 0));
  /* Four of them (one even larger), retiring copies still around. */
  c[5].size = 2 * GiB;
  assert_true (rbdx_resize_growth_done (2 * GiB, c, 6, 4, 0));
  /* A dead link waits for its socket. */
  assert_false (rbdx_resize_growth_done (2 * GiB, c, 6, 4, 1));
  /* No copies at all. */
  assert_false (rbdx_resize_growth_done (2 * GiB, c, 0, 1, 0));
}

static void
test_kernel_block_size (void **state)
{
  (void) state;
  assert_int_equal (rbdx_kernel_block_size (0), 512);
  assert_int_equal (rbdx_kernel_block_size (1), 512);
  assert_int_equal (rbdx_kernel_block_size (256), 512);
  assert_int_equal (rbdx_kernel_block_size (512), 512);
  assert_int_equal (rbdx_kernel_block_size (1024), 1024);
  assert_int_equal (rbdx_kernel_block_size (4096), 4096);
  assert_int_equal (rbdx_kernel_block_size (3000), 512);
  assert_int_equal (rbdx_kernel_block_size (8192), 512);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_from_file),
    cmocka_unit_test (test_from_export),
    cmocka_unit_test (test_must_retire),
    cmocka_unit_test (test_growth_done),
    cmocka_unit_test (test_kernel_block_size),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit test of server/core/errors.c (include/rbdx/errors.h): the NBD
 * error of a failed request (rbdx_nbd_error), and the rate limit of
 * error logs (rbdx_log_limit_take and rbdx_error_limited, with the
 * host's rbdx_error captured).  A window is made to pass by
 * moving the limit's window_start back (its fields are public), so no
 * test waits for the clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rbdx/errors.h"
#include "rbdx/log.h"

static char last[2048];
static unsigned logged;

void
rbdx_error (const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (last, sizeof last, fmt, ap);
  va_end (ap);
  logged++;
}

void
rbdx_debug (const char *fmt, ...)
{
  (void) fmt;
}

/* A burst is taken, the rest of the window is dropped and counted; the
 * first taken after the window tells how many were dropped, once. */
static void
take_counts_what_it_drops (void **state)
{
  static struct rbdx_log_limit l = RBDX_LOG_LIMIT_INIT;
  char tail[80];
  int i;

  (void) state;
  for (i = 0; i < RBDX_LOG_BURST; i++) {
    assert_true (rbdx_log_limit_take (&l, tail, sizeof tail));
    assert_string_equal (tail, "");
  }
  for (i = 0; i < 7; i++) {
    strcpy (tail, "x");
    assert_false (rbdx_log_limit_take (&l, tail, sizeof tail));
    assert_string_equal (tail, "");
  }
  l.window_start -= RBDX_LOG_WINDOW_S;
  assert_true (rbdx_log_limit_take (&l, tail, sizeof tail));
  assert_string_equal (tail, "; 7 more errors were not logged");
  assert_true (rbdx_log_limit_take (&l, tail, sizeof tail));
  assert_string_equal (tail, "");
}

/* rbdx_error_limited: the same decisions, one rbdx_error a message
 * taken, the count at the end of the first after a drop. */
static void
limited_logs_through_take (void **state)
{
  static struct rbdx_log_limit l = RBDX_LOG_LIMIT_INIT;
  int i;

  (void) state;
  logged = 0;
  for (i = 0; i < RBDX_LOG_BURST + 5; i++)
    rbdx_error_limited (&l, "refused %d", i);
  assert_int_equal (logged, RBDX_LOG_BURST);
  assert_string_equal (last, "refused 19");
  l.window_start -= RBDX_LOG_WINDOW_S;
  rbdx_error_limited (&l, "refused %s", "again");
  assert_int_equal (logged, RBDX_LOG_BURST + 1);
  assert_string_equal (last, "refused again; 5 more errors were not logged");
}

/* Two limits are independent: a flood of one kind never silences
 * another. */
static void
limits_are_independent (void **state)
{
  static struct rbdx_log_limit a = RBDX_LOG_LIMIT_INIT;
  static struct rbdx_log_limit b = RBDX_LOG_LIMIT_INIT;
  char tail[80];
  int i;

  (void) state;
  for (i = 0; i < 3 * RBDX_LOG_BURST; i++)
    (void) rbdx_log_limit_take (&a, tail, sizeof tail);
  assert_true (rbdx_log_limit_take (&b, tail, sizeof tail));
  assert_string_equal (tail, "");
}

/* A read or block status the cluster failed is NBD_EIO unless its
 * range or memory was at fault (C72: EPERM after the pool was deleted);
 * writes keep what names their fault (read-only image, no space), but
 * an OSD's EPERM is NBD_EIO for them too. */
static void
errors_by_kind_of_request (void **state)
{
  static const int read_eio[] = {
    EPERM, EACCES, EROFS, ENOSPC, EDQUOT, EFBIG, ENOTSUP, ERANGE, ENOENT,
    ESHUTDOWN, ESTALE, ETIMEDOUT, EIO, ENXIO,
  };
  static const enum rbdx_op reads[] = { RBDX_OP_READ, RBDX_OP_BLOCK_STATUS };
  size_t i, k;

  (void) state;
  for (k = 0; k < 2; k++) {
    for (i = 0; i < sizeof read_eio / sizeof read_eio[0]; i++)
      assert_int_equal (rbdx_nbd_error (reads[k], -read_eio[i]), EIO);
    assert_int_equal (rbdx_nbd_error (reads[k], -EINVAL), EINVAL);
    assert_int_equal (rbdx_nbd_error (reads[k], -ENOMEM), ENOMEM);
    assert_int_equal (rbdx_nbd_error (reads[k], -EOVERFLOW), EOVERFLOW);
  }
  for (k = RBDX_OP_WRITE; k <= RBDX_OP_FLUSH; k++) {
    assert_int_equal (rbdx_nbd_error (k, -EROFS), EPERM);
    assert_int_equal (rbdx_nbd_error (k, -EACCES), EPERM);
    assert_int_equal (rbdx_nbd_error (k, -EDQUOT), ENOSPC);
    assert_int_equal (rbdx_nbd_error (k, -ENOSPC), ENOSPC);
    assert_int_equal (rbdx_nbd_error (k, -ESHUTDOWN), EIO);
    assert_int_equal (rbdx_nbd_error (k, -ENOENT), EIO);
    assert_int_equal (rbdx_nbd_error (k, -ERANGE), EINVAL);
    assert_int_equal (rbdx_nbd_error (k, -EPERM), EIO);
  }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (take_counts_what_it_drops),
    cmocka_unit_test (limited_logs_through_take),
    cmocka_unit_test (limits_are_independent),
    cmocka_unit_test (errors_by_kind_of_request),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

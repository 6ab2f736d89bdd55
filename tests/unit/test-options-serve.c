/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: the parameters that change what an export does
 * (include/rbdx/options.h): notrim= and snap_id=.
 *
 * Proves that each is parsed as documented (booleans as nbdkit takes
 * them, given once), refused with -EINVAL and a message naming the key
 * and value otherwise, and that rbdx_options_complete applies its
 * combination rules.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rbdx/options.h"
#include "unit-check.h"
#include "unit-options.h"


/* set_bad, and the message names the parameter. */
static void
set_bad_key (struct rbdx_options *o, const char *key, const char *value,
             char err[ERRLEN])
{
  set_bad (o, key, value, err);
  assert_contains (err, key);
}

static void
test_notrim (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  assert_false (o->notrim);
  set_bad_key (o, "notrim", "maybe", err);
  assert_contains (err, "maybe");
  assert_false (o->notrim_set);
  set_ok (o, "notrim", "Yes");
  assert_true (o->notrim);
  set_bad_key (o, "notrim", "false", err);
  assert_contains (err, "twice");
  assert_true (o->notrim);
  /* notrim= and exclusive= are separate flags. */
  assert_false (o->exclusive_set);
  set_ok (o, "exclusive", "on");
  assert_true (o->exclusive);
  set_ok (o, "image", "img");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), 0);
}

static void
test_notrim_off (void **state)
{
  struct rbdx_options *o = *state;

  set_ok (o, "notrim", "0");
  assert_false (o->notrim);
  assert_true (o->notrim_set);
}

static void
test_snap_id (void **state)
{
  static const char *const bad[] = {
    "-1", "+1", "x", "1x", "1K", " 1", "18446744073709551614",
    "18446744073709551615", "99999999999999999999",
  };
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    set_bad_key (o, "snap_id", bad[i], err);
    assert_contains (err, bad[i]);
    assert_false (o->snap_id_set);
  }
  set_ok (o, "snap_id", "18446744073709551613");   /* CEPH_NOSNAP - 1 */
  assert_true (o->snap_id == UINT64_MAX - 2);
  set_bad_key (o, "snap_id", "4", err);
  assert_contains (err, "twice");
  set_ok (o, "image", "p/img");
  assert_true (rbdx_options_snapshot (o));
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), 0);
}

/* snap_id= with a snapshot spec, without an image, with pool=. */
static void
test_snap_id_combinations (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  set_ok (o, "snap_id", "4");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), -EINVAL);
  set_ok (o, "image", "p/img@s");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), -EINVAL);
  assert_contains (err, "snap_id=");
  rbdx_options_free (o);
  set_ok (o, "snap_id", "4");
  set_ok (o, "pool", "p");
  set_ok (o, "image", "img");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), -EINVAL);
  assert_contains (err, "pool=");
}

/* identity= with snap_id=: a snapshot identity of exactly that id. */
static void
test_snap_id_identity (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  set_ok (o, "image", "p/img");
  set_ok (o, "snap_id", "4");
  set_ok (o, "identity", "2/abc@4");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), 0);
  rbdx_options_free (o);
  set_ok (o, "image", "p/img");
  set_ok (o, "snap_id", "4");
  set_ok (o, "identity", "2/abc@5");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), -EINVAL);
  assert_contains (err, "identity=");
  rbdx_options_free (o);
  set_ok (o, "image", "p/img");
  set_ok (o, "snap_id", "4");
  set_ok (o, "identity", "2/abc");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), -EINVAL);
  rbdx_options_free (o);
  set_ok (o, "image", "p/img");
  set_ok (o, "identity", "2/abc@4");
  assert_int_equal (rbdx_options_complete (o, err, sizeof err), -EINVAL);
}

#define T(f) cmocka_unit_test_setup_teardown (f, options_setup, options_teardown)

int
main (void)
{
  const struct CMUnitTest tests[] = {
    T (test_notrim),
    T (test_notrim_off),
    T (test_snap_id),
    T (test_snap_id_combinations),
    T (test_snap_id_identity),
  };

  /* The id of a $CEPH_ARGS of the caller's would become the id in
   * rbdx_options_complete (test-cephargs.c tests that). */
  unsetenv ("CEPH_ARGS");
  return cmocka_run_group_tests (tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: the parameters that change what an export does
 * (include/rbdx/options.h): notrim=.
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

#define ERRLEN 256

#define assert_contains(haystack, needle)                               \
  do {                                                                  \
    if (strstr ((haystack), (needle)) == NULL)                          \
      fail_msg ("\"%s\" does not contain \"%s\"", (haystack), (needle)); \
  } while (0)

static int
setup (void **state)
{
  *state = calloc (1, sizeof (struct rbdx_options));
  return *state ? 0 : -1;
}

static int
teardown (void **state)
{
  rbdx_options_free (*state);
  free (*state);
  return 0;
}

static void
set_ok (struct rbdx_options *o, const char *key, const char *value)
{
  char err[ERRLEN];

  assert_int_equal (rbdx_options_set (o, key, value, err, sizeof err), 0);
  assert_string_equal (err, "");
}

static void
set_bad (struct rbdx_options *o, const char *key, const char *value,
         char err[ERRLEN])
{
  memset (err, 'X', ERRLEN);
  assert_int_equal (rbdx_options_set (o, key, value, err, ERRLEN), -EINVAL);
  assert_non_null (memchr (err, '\0', ERRLEN));
  assert_contains (err, key);
}

static void
test_notrim (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  assert_false (o->notrim);
  set_bad (o, "notrim", "maybe", err);
  assert_contains (err, "maybe");
  assert_false (o->notrim_set);
  set_ok (o, "notrim", "Yes");
  assert_true (o->notrim);
  set_bad (o, "notrim", "false", err);
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

#define T(f) cmocka_unit_test_setup_teardown (f, setup, teardown)

int
main (void)
{
  const struct CMUnitTest tests[] = {
    T (test_notrim),
    T (test_notrim_off),
  };

  return cmocka_run_group_tests (tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: image identities (include/rbdx/identity.h).
 *
 * Proves that rbdx_ident_format and rbdx_ident_parse round-trip every
 * form (head and snapshot, with and without a namespace), that equality
 * looks at every part, and that malformed text is rejected with -EINVAL
 * leaving the output untouched.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rbdx/identity.h"

static void
roundtrip (const char *text, int64_t pool, const char *ns, const char *image,
           uint64_t snap)
{
  struct rbdx_ident id, again;
  char buf[512];

  assert_int_equal (rbdx_ident_parse (text, &id), 0);
  assert_int_equal (id.pool_id, pool);
  assert_string_equal (id.ns, ns);
  assert_string_equal (id.image_id, image);
  assert_true (id.snap_id == snap);
  assert_int_equal (rbdx_ident_format (&id, buf, sizeof buf), strlen (text));
  assert_string_equal (buf, text);
  assert_int_equal (rbdx_ident_parse (buf, &again), 0);
  assert_true (rbdx_ident_equal (&id, &again));
}

static void
test_roundtrip (void **state)
{
  roundtrip ("2/1015e593c829", 2, "", "1015e593c829", RBDX_NOSNAP);
  roundtrip ("2/1015e593c829@4", 2, "", "1015e593c829", 4);
  roundtrip ("17/tenant-a/abc@0", 17, "tenant-a", "abc", 0);
  roundtrip ("0/ns/with/slashes/abc", 0, "ns/with/slashes", "abc",
             RBDX_NOSNAP);
  roundtrip ("3/name:old-format", 3, "", "name:old-format", RBDX_NOSNAP);
}

static void
test_equal (void **state)
{
  struct rbdx_ident a, b;

  assert_int_equal (rbdx_ident_parse ("2/ns/abc@4", &a), 0);
  b = a;
  assert_true (rbdx_ident_equal (&a, &b));
  b.pool_id = 3;
  assert_false (rbdx_ident_equal (&a, &b));
  b = a;
  b.snap_id = RBDX_NOSNAP;
  assert_false (rbdx_ident_equal (&a, &b));
  b = a;
  b.ns[0] = '\0';
  assert_false (rbdx_ident_equal (&a, &b));
  b = a;
  b.image_id[0] = 'x';
  assert_false (rbdx_ident_equal (&a, &b));
}

static void
test_malformed (void **state)
{
  static const char *const bad[] = {
    "", "abc", "/abc", "x/abc", "-1/abc", "2/", "2//abc", "2/abc@",
    "2/abc@x", "2/abc@-1", "2/abc@18446744073709551615",
    "2/abc@18446744073709551614", "2/ns/",
    "99999999999999999999/abc",
    "2/0123456789012345678901234567890123456789012345678901234567890123",
  };
  struct rbdx_ident id;

  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset (&id, 0x5a, sizeof id);
    assert_int_equal (rbdx_ident_parse (bad[i], &id), -EINVAL);
    assert_int_equal (id.image_id[0], 0x5a);
  }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_roundtrip),
    cmocka_unit_test (test_equal),
    cmocka_unit_test (test_malformed),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: image identities (include/rbdx/identity.h).
 *
 * Proves that rbdx_ident_format and rbdx_ident_parse round-trip every
 * form (head and snapshot, with and without a namespace), that equality
 * looks at every part, and that malformed text is rejected with -EINVAL
 * leaving the output untouched; and that identity= is an ordinary
 * parameter of include/rbdx/options.h: stored, refused when malformed or
 * given twice, and checked against image= and pool= by
 * rbdx_options_complete.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rbdx/identity.h"
#include "rbdx/options.h"

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
  /* Bytes outside [A-Za-z0-9._:+-] (and '/' in a namespace) are %XX. */
  roundtrip ("2/1015e593c829%20x/abc", 2, "1015e593c829 x", "abc",
             RBDX_NOSNAP);
  roundtrip ("2/a%40b%25c%0A/id@3", 2, "a@b%c\n", "id", 3);
  roundtrip ("2/name:a%40b%2Fc%29", 2, "", "name:a@b/c)", RBDX_NOSNAP);
  roundtrip ("2/%C3%A9/x", 2, "\xc3\xa9", "x", RBDX_NOSNAP);
}

/* The attack of the namespace "<victim's image id> x": its image's
 * identity, split at whitespace by a reader, must never become the
 * identity of the victim's image in the default namespace. */
static void
test_no_cut (void **state)
{
  struct rbdx_ident a = { .pool_id = 2, .ns = "1015e593c829 x",
                          .image_id = "77aa", .snap_id = RBDX_NOSNAP };
  struct rbdx_ident b;
  char buf[RBDX_IDENT_TEXT_MAX];

  rbdx_ident_format (&a, buf, sizeof buf);
  assert_null (strpbrk (buf, " \t\n\r()"));
  assert_int_equal (rbdx_ident_parse (buf, &b), 0);
  assert_true (rbdx_ident_equal (&a, &b));
  /* The longest identity fits RBDX_IDENT_TEXT_MAX. */
  a.pool_id = INT64_MAX;
  memset (a.ns, ' ', RBDX_NS_MAX);
  a.ns[RBDX_NS_MAX] = '\0';
  memset (a.image_id, '@', RBDX_IMAGE_ID_MAX);
  a.image_id[RBDX_IMAGE_ID_MAX] = '\0';
  a.snap_id = UINT64_MAX - 2;
  assert_true (rbdx_ident_format (&a, buf, sizeof buf) < sizeof buf);
  assert_int_equal (rbdx_ident_parse (buf, &b), 0);
  assert_true (rbdx_ident_equal (&a, &b));
  /* A short buffer gets a NUL-terminated prefix and the full length. */
  assert_int_equal (rbdx_ident_format (&a, buf, 8), 19 + 1 + 3 * 255 + 1 +
                    3 * 63 + 1 + 20);
  assert_int_equal (strlen (buf), 7);
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
    /* Raw bytes that are escaped, bad or needless escapes, a NUL. */
    "2/ns x/abc", "2/ns/a b", "2/ns/abc\n", "2/a%2fb/x", "2/%41/x",
    "2/a%2/x", "2/a%/x", "2/a%GG/x", "2/a%00b/x", "2/ns/a%",
    "2/n(s)/abc",
  };
  struct rbdx_ident id;

  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset (&id, 0x5a, sizeof id);
    assert_int_equal (rbdx_ident_parse (bad[i], &id), -EINVAL);
    assert_int_equal (id.image_id[0], 0x5a);
  }
}

/* Complete options of image @p image with identity @p id; the result. */
static int
complete_pinned (const char *image, const char *pool, const char *id,
                 char *err, size_t errlen)
{
  struct rbdx_options o = { 0 };
  int r;

  if (image)
    assert_int_equal (rbdx_options_set (&o, "image", image, err, errlen), 0);
  if (pool)
    assert_int_equal (rbdx_options_set (&o, "pool", pool, err, errlen), 0);
  assert_int_equal (rbdx_options_set (&o, "identity", id, err, errlen), 0);
  assert_true (o.identity_set);
  assert_ptr_equal (rbdx_options_pin (&o), &o.identity);
  r = rbdx_options_complete (&o, err, errlen);
  rbdx_options_free (&o);
  return r;
}

static void
test_option (void **state)
{
  struct rbdx_options o = { 0 };
  char err[256];

  assert_null (rbdx_options_pin (&o));
  assert_int_equal (rbdx_options_set (&o, "identity", "3/ns/abc@7", err,
                                      sizeof err), 0);
  assert_int_equal (o.identity.pool_id, 3);
  assert_string_equal (o.identity.ns, "ns");
  assert_string_equal (o.identity.image_id, "abc");
  assert_int_equal (o.identity.snap_id, 7);
  assert_int_equal (rbdx_options_set (&o, "identity", "3/abc", err,
                                      sizeof err), -EINVAL);
  assert_non_null (strstr (err, "twice"));
  rbdx_options_free (&o);

  assert_int_equal (rbdx_options_set (&o, "identity", "2/", err, sizeof err),
                    -EINVAL);
  assert_non_null (strstr (err, "identity='2/': expected POOLID"));
  assert_false (o.identity_set);
  rbdx_options_free (&o);

  assert_int_equal (complete_pinned ("rbd/x", NULL, "1/abc", err,
                                     sizeof err), 0);
  assert_int_equal (complete_pinned ("rbd/x@s", NULL, "1/abc@4", err,
                                     sizeof err), 0);
  /* A head identity for a snapshot, a snapshot identity for a head, no
   * image, pool=: each refused. */
  assert_int_equal (complete_pinned ("rbd/x@s", NULL, "1/abc", err,
                                     sizeof err), -EINVAL);
  assert_non_null (strstr (err, "identity= pins"));
  assert_int_equal (complete_pinned ("rbd/x", NULL, "1/abc@4", err,
                                     sizeof err), -EINVAL);
  assert_int_equal (complete_pinned (NULL, "rbd", "1/abc", err, sizeof err),
                    -EINVAL);
  assert_int_equal (complete_pinned ("x", "rbd", "1/abc", err, sizeof err),
                    -EINVAL);
  assert_non_null (strstr (err, "without pool="));
  /* The identity's namespace is the spec's (a namespace cannot be
   * renamed); a pinned image of another namespace is refused. */
  assert_int_equal (complete_pinned ("rbd/ns/x", NULL, "1/ns/abc", err,
                                     sizeof err), 0);
  assert_int_equal (complete_pinned ("rbd/x", NULL, "1/ns/abc", err,
                                     sizeof err), -EINVAL);
  assert_non_null (strstr (err, "namespace 'ns'"));
  assert_int_equal (complete_pinned ("rbd/ns/x", NULL, "1/abc", err,
                                     sizeof err), -EINVAL);
  assert_int_equal (complete_pinned ("rbd/ns/x", NULL, "1/nt/abc", err,
                                     sizeof err), -EINVAL);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_roundtrip),
    cmocka_unit_test (test_no_cut),
    cmocka_unit_test (test_equal),
    cmocka_unit_test (test_malformed),
    cmocka_unit_test (test_option),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

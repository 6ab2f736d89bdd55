/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: image spec parsing (include/rbdx/spec.h).
 *
 * Proves that rbdx_spec_parse accepts every form of the rbd CLI grammar
 * [pool/[namespace/]]image[@snapshot] (with and without a default pool),
 * that rbdx_spec_format prints the canonical form and reports the
 * needed length on truncation like snprintf, that rbdx_spec_copy and
 * rbdx_spec_free behave, and that every malformed spec is rejected with
 * -EINVAL, a `why` message, and `out` left untouched.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rbdx/spec.h"
#include "rbdx/utf8.h"

/* Parse text (which must be valid) and check every member; NULL in an
 * expected ns/snap means "absent". */
static void
check_valid (const char *text, const char *default_pool,
             const char *pool, const char *ns, const char *image,
             const char *snap)
{
  struct rbdx_spec s = { 0 };
  const char *why = NULL;

  assert_int_equal (rbdx_spec_parse (text, default_pool, &s, &why), 0);
  assert_null (why);
  assert_non_null (s.pool);
  assert_string_equal (s.pool, pool);
  if (ns) {
    assert_non_null (s.ns);
    assert_string_equal (s.ns, ns);
  }
  else
    assert_null (s.ns);
  assert_non_null (s.image);
  assert_string_equal (s.image, image);
  if (snap) {
    assert_non_null (s.snap);
    assert_string_equal (s.snap, snap);
  }
  else
    assert_null (s.snap);
  rbdx_spec_free (&s);
}

static void
test_valid_image (void **state)
{
  check_valid ("img", NULL, RBDX_DEFAULT_POOL, NULL, "img", NULL);
  check_valid ("img", "mypool", "mypool", NULL, "img", NULL);
  check_valid ("img@snap", NULL, RBDX_DEFAULT_POOL, NULL, "img", "snap");
  check_valid ("img@snap", "mypool", "mypool", NULL, "img", "snap");
  /* A lone character per component is enough. */
  check_valid ("i@s", NULL, "rbd", NULL, "i", "s");
}

static void
test_valid_pool_image (void **state)
{
  check_valid ("pool/img", NULL, "pool", NULL, "img", NULL);
  /* An explicit pool wins over the default pool. */
  check_valid ("pool/img", "other", "pool", NULL, "img", NULL);
  check_valid ("pool/img@snap", NULL, "pool", NULL, "img", "snap");
  check_valid ("pool/img@snap", "other", "pool", NULL, "img", "snap");
}

static void
test_valid_pool_ns_image (void **state)
{
  check_valid ("pool/ns/img", NULL, "pool", "ns", "img", NULL);
  check_valid ("pool/ns/img", "other", "pool", "ns", "img", NULL);
  check_valid ("pool/ns/img@snap", NULL, "pool", "ns", "img", "snap");
  check_valid ("pool/ns/img@snap", "other", "pool", "ns", "img", "snap");
}

static void
test_valid_unusual_characters (void **state)
{
  /* Anything but '/', '@', control characters and bytes that are not
   * UTF-8 is part of a name, including spaces, dots and non-ASCII
   * UTF-8. */
  check_valid ("my pool/name.space/img-1_a@snap.2", NULL,
               "my pool", "name.space", "img-1_a", "snap.2");
  check_valid ("p\xc3\xa9/\xc3\xa9mg", NULL, "p\xc3\xa9", NULL,
               "\xc3\xa9mg", NULL);
}

static void
test_valid_max_length (void **state)
{
  char text[RBDX_SPEC_MAX + 1];
  struct rbdx_spec s = { 0 };

  /* Exactly RBDX_SPEC_MAX bytes with a pool is accepted. */
  memset (text, 'a', RBDX_SPEC_MAX);
  text[RBDX_SPEC_MAX] = '\0';
  text[1] = '/';
  assert_int_equal (rbdx_spec_parse (text, NULL, &s, NULL), 0);
  assert_int_equal (strlen (s.image), RBDX_SPEC_MAX - 2);
  assert_int_equal (rbdx_spec_format (&s, NULL, 0), RBDX_SPEC_MAX);
  rbdx_spec_free (&s);

  /* Without one, the canonical form "rbd/..." is what must fit. */
  memset (text, 'a', RBDX_SPEC_MAX);
  text[RBDX_SPEC_MAX - 4] = '\0';
  assert_int_equal (rbdx_spec_parse (text, NULL, &s, NULL), 0);
  assert_int_equal (rbdx_spec_format (&s, NULL, 0), RBDX_SPEC_MAX);
  rbdx_spec_free (&s);
}

static void check_invalid_with (const char *text, const char *default_pool);

/* Caught by the round-trip check of tests/fuzz/fuzz-spec.c: an image of 1021 to 1024 bytes with
 * no pool was accepted, but its canonical form "rbd/IMAGE" (what the
 * mapper passes to the plugin) was then too long to parse. */
static void
test_canonical_form_parses_again (void **state)
{
  char text[RBDX_SPEC_MAX + 1], buf[RBDX_SPEC_MAX + 1];
  struct rbdx_spec s = { 0 }, again = { 0 };
  const char *why = NULL;
  size_t len;

  for (len = RBDX_SPEC_MAX - 6; len <= RBDX_SPEC_MAX; len++) {
    memset (text, 'a', len);
    text[len] = '\0';
    if (len + strlen ("rbd/") > RBDX_SPEC_MAX) {
      check_invalid_with (text, NULL);
      check_invalid_with (text, "rbd");
      continue;
    }
    assert_int_equal (rbdx_spec_parse (text, NULL, &s, NULL), 0);
    assert_true (rbdx_spec_format (&s, buf, sizeof buf) < sizeof buf);
    assert_int_equal (rbdx_spec_parse (buf, NULL, &again, &why), 0);
    assert_string_equal (again.image, s.image);
    rbdx_spec_free (&again);
    rbdx_spec_free (&s);
  }

  /* The same with a longer default pool (pool= of the plugin). */
  memset (text, 'a', RBDX_SPEC_MAX - 7);
  text[RBDX_SPEC_MAX - 7] = '\0';
  assert_int_equal (rbdx_spec_parse (text, "mypool", &s, NULL), 0);
  assert_int_equal (rbdx_spec_format (&s, NULL, 0), RBDX_SPEC_MAX);
  rbdx_spec_free (&s);
  text[RBDX_SPEC_MAX - 7] = 'a';
  text[RBDX_SPEC_MAX - 6] = '\0';
  check_invalid_with (text, "mypool");
}

static void
test_why_may_be_null (void **state)
{
  struct rbdx_spec s = { 0 };

  assert_int_equal (rbdx_spec_parse ("pool/img", NULL, &s, NULL), 0);
  rbdx_spec_free (&s);
  assert_int_equal (rbdx_spec_parse ("", NULL, &s, NULL), -EINVAL);
  assert_int_equal (rbdx_spec_parse ("a/b/c/d", NULL, &s, NULL), -EINVAL);
  assert_null (s.pool);
}

/* Parse text (which must be invalid): -EINVAL, a non-empty why, and
 * out exactly as it was before the call. */
static void
check_invalid_with (const char *text, const char *default_pool)
{
  static char sentinel[] = "sentinel";
  struct rbdx_spec s = { sentinel, sentinel, sentinel, sentinel };
  const char *why = NULL;

  assert_int_equal (rbdx_spec_parse (text, default_pool, &s, &why), -EINVAL);
  assert_non_null (why);
  assert_true (strlen (why) > 0);
  assert_ptr_equal (s.pool, sentinel);
  assert_ptr_equal (s.ns, sentinel);
  assert_ptr_equal (s.image, sentinel);
  assert_ptr_equal (s.snap, sentinel);
}

static void
check_invalid (const char *text)
{
  check_invalid_with (text, NULL);
  check_invalid_with (text, "mypool");
}

static void
test_invalid_empty (void **state)
{
  check_invalid ("");
  check_invalid (NULL);
}

static void
test_invalid_empty_component (void **state)
{
  check_invalid ("/img");          /* empty pool */
  check_invalid ("/ns/img");       /* empty pool, with namespace */
  check_invalid ("pool//img");     /* empty namespace */
  check_invalid ("pool/");         /* empty image */
  check_invalid ("pool/ns/");      /* empty image, with namespace */
  check_invalid ("pool/@snap");    /* empty image, with snapshot */
  check_invalid ("@snap");         /* empty image, no pool */
  check_invalid ("img@");          /* empty snapshot */
  check_invalid ("pool/ns/img@");  /* empty snapshot, full form */
  check_invalid ("/");
  check_invalid ("//");
  check_invalid ("@");
}

static void
test_invalid_separators (void **state)
{
  check_invalid ("a/b/c/d");       /* three '/' */
  check_invalid ("a/b/c/");
  check_invalid ("img@a@b");       /* two '@' */
  check_invalid ("img@@b");
  check_invalid ("pool@x/img");    /* '/' after '@' ('@' in the pool) */
  check_invalid ("pool/ns@x/img"); /* '/' after '@' ('@' in the namespace) */
  check_invalid ("img@snap/x");    /* '/' in the snapshot */
}

static void
test_invalid_control_characters (void **state)
{
  check_invalid ("im\tg");
  check_invalid ("\x7f");
  check_invalid ("img\x7f");
  check_invalid ("pool/\nimg");
  check_invalid ("img@sn\rap");
  check_invalid ("\x01pool/img");
  check_invalid ("pool/n\x1fs/img");
}

/* The one check of names and values (rbdx_spec_has_unsafe_char, with
 * rbdx_utf8_char under it): well-formed UTF-8 passes, whatever its
 * length; a byte of no well-formed sequence (RFC 3629 section 4) and a
 * C1 control are refused, as C0 controls and DEL are. */
static void
test_unsafe_char_check (void **state)
{
  static const char *const ok[] = {
    "", "img", "a b~", "\xc3\xa9",            /* e acute, U+00E9 */
    "\xe4\xb8\xad\xe6\x96\x87",              /* two CJK, U+4E2D U+6587 */
    "\xf0\x9f\x98\x80",                      /* U+1F600, 4 bytes */
    "\xc2\xa0", "\xed\x9f\xbf", "\xee\x80\x80", /* U+00A0, U+D7FF, U+E000 */
    "\xf4\x8f\xbf\xbf",                      /* U+10FFFF, the last */
    "p\xc3\xa9/\xe6\x96\x87@\xc3\xa9",
  };
  static const char *const bad[] = {
    "\xff", "bad\xffname", "\xfe", "\x80", "a\xbf",   /* no lead byte */
    "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf",       /* overlong '/' */
    "\xf0\x80\x80\xaf", "\xe0\x9f\xbf",
    "\xed\xa0\x80", "\xed\xbf\xbf",               /* surrogates */
    "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",       /* above U+10FFFF */
    "\xc3", "\xe4\xb8", "\xf0\x9f\x98", "x\xe4\xb8", /* cut short */
    "\xe4\xb8x", "\xf0\x9f\x98x", "\xc3\xc3\xa9",
    "\xc2\x9b", "u\xc2\x9b" "31mRED", "\xc2\x80", "\xc2\x9f", /* C1 */
    "\n", "a\tb", "\x1b[2J", "\x7f", "\xc3\xa9\x01",  /* C0, DEL */
    "\xe2\x80\xae" "img", "a\xe2\x80\xaa", "\xe2\x80\x8f", /* bidi */
    "\xe2\x81\xa6", "\xe2\x81\xa9", "\xd8\x9c",
  };

  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    if (rbdx_spec_has_unsafe_char (ok[i]))
      fail_msg ("'%s' (ok[%zu]) refused", ok[i], i);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (!rbdx_spec_has_unsafe_char (bad[i]))
      fail_msg ("bad[%zu] accepted", i);

  /* The lengths under it. */
  assert_int_equal (rbdx_utf8_char ("a"), 1);
  assert_int_equal (rbdx_utf8_char ("\xc3\xa9"), 2);
  assert_int_equal (rbdx_utf8_char ("\xe4\xb8\xad"), 3);
  assert_int_equal (rbdx_utf8_char ("\xf0\x9f\x98\x80"), 4);
  assert_int_equal (rbdx_utf8_char (""), 0);
  assert_int_equal (rbdx_utf8_char ("\xc2\x9b"), 0);
  assert_int_equal (rbdx_utf8_char ("\xe4\xb8"), 0);
  /* Around the bidirectional controls: U+200D (ZWJ, in emoji), U+202F,
   * U+2065 and U+206A are kept. */
  assert_int_equal (rbdx_utf8_char ("\xe2\x80\xae"), 0);
  assert_int_equal (rbdx_utf8_char ("\xe2\x80\x8d"), 3);
  assert_int_equal (rbdx_utf8_char ("\xe2\x80\xaf"), 3);
  assert_int_equal (rbdx_utf8_char ("\xe2\x81\xa5"), 3);
  assert_int_equal (rbdx_utf8_char ("\xe2\x81\xaa"), 3);
  assert_int_equal (rbdx_utf8_char ("\xd8\x9b"), 2);
}

/* Specs with such bytes are refused, naming why; the default pool too,
 * since it becomes part of the canonical form. */
static void
test_invalid_not_utf8 (void **state)
{
  struct rbdx_spec s = { 0 };
  const char *why = NULL;

  check_invalid ("bad\xffname");
  check_invalid ("rbd/u\xc2\x9b" "31mRED");
  check_invalid ("rbd/\xed\xa0\x80/img");
  check_invalid ("img@\xc0\xaf");
  check_invalid ("\xe4\xb8");
  check_invalid ("p\xfe/img");
  check_invalid_with ("img", "p\xff");
  check_invalid_with ("img", "p\xc2\x85");
  assert_int_equal (rbdx_spec_parse ("rbd/a\xff", NULL, &s, &why), -EINVAL);
  assert_non_null (strstr (why, "not UTF-8"));
  assert_int_equal (rbdx_spec_parse ("rbd/a\xc2\x9b", NULL, &s, &why), -EINVAL);
  assert_non_null (strstr (why, "control character"));

  /* Multibyte UTF-8 is accepted in every component. */
  check_valid ("\xe6\xb1\xa0/\xe5\x90\x8d/\xe5\x83\x8f@\xf0\x9f\x98\x80", NULL,
               "\xe6\xb1\xa0", "\xe5\x90\x8d", "\xe5\x83\x8f", "\xf0\x9f\x98\x80");
  check_valid ("img", "\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9", NULL, "img", NULL);
}

static void
test_invalid_too_long (void **state)
{
  char text[RBDX_SPEC_MAX + 2];

  memset (text, 'a', RBDX_SPEC_MAX + 1);
  text[RBDX_SPEC_MAX + 1] = '\0';
  check_invalid (text);

  /* Too long even though it has an otherwise valid shape. */
  memcpy (text, "pool/ns/", 8);
  check_invalid (text);
}

static void
test_invalid_empty_default_pool (void **state)
{
  /* An empty default pool cannot yield an empty pool name. */
  check_invalid_with ("img", "");
}

/* "." and ".." as any name: the mapper's links are DEV_DIR/SPEC, where they
 * would name the link directory or its parent. */
static void
test_invalid_dot_names (void **state)
{
  const char *why = NULL;
  struct rbdx_spec s = { 0 };

  check_invalid (".");              /* image, pool from the default */
  check_invalid ("..");
  check_invalid ("../img");         /* pool */
  check_invalid ("./img");
  check_invalid ("pool/../img");    /* namespace */
  check_invalid ("pool/./img");
  check_invalid ("pool/..");        /* image */
  check_invalid ("pool/ns/.");
  check_invalid ("pool/..@snap");
  check_invalid ("pool/img@..");    /* snapshot */
  check_invalid ("pool/ns/img@.");
  check_invalid_with ("img", "..");  /* the default pool */
  check_invalid_with ("img", ".");

  assert_int_equal (rbdx_spec_parse ("../img", NULL, &s, &why), -EINVAL);
  assert_string_equal (why, "the pool name is '.' or '..'");
  assert_int_equal (rbdx_spec_parse ("p/../img", NULL, &s, &why), -EINVAL);
  assert_string_equal (why, "the namespace name is '.' or '..'");
  assert_int_equal (rbdx_spec_parse ("p/..", NULL, &s, &why), -EINVAL);
  assert_string_equal (why, "the image name is '.' or '..'");
  assert_int_equal (rbdx_spec_parse ("p/i@.", NULL, &s, &why), -EINVAL);
  assert_string_equal (why, "the snapshot name is '.' or '..'");

  /* Other names with dots stay names. */
  check_valid (".../.a/..b@.c.", NULL, "...", ".a", "..b", ".c.");
  assert_true (rbdx_spec_name_is_dots ("."));
  assert_true (rbdx_spec_name_is_dots (".."));
  assert_false (rbdx_spec_name_is_dots ("..."));
  assert_false (rbdx_spec_name_is_dots (""));
  assert_false (rbdx_spec_name_is_dots (".x"));
}

static void
test_format (void **state)
{
  static const struct {
    const char *text, *canonical;
  } cases[] = {
    { "img", "rbd/img" },
    { "img@snap", "rbd/img@snap" },
    { "pool/img", "pool/img" },
    { "pool/img@snap", "pool/img@snap" },
    { "pool/ns/img", "pool/ns/img" },
    { "pool/ns/img@snap", "pool/ns/img@snap" },
  };
  struct rbdx_spec s = { 0 };
  char buf[64];
  size_t i;

  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_int_equal (rbdx_spec_parse (cases[i].text, NULL, &s, NULL), 0);
    memset (buf, 'X', sizeof buf);
    assert_int_equal (rbdx_spec_format (&s, buf, sizeof buf),
                      strlen (cases[i].canonical));
    assert_string_equal (buf, cases[i].canonical);
    rbdx_spec_free (&s);
  }

  /* The default pool shows up in the canonical form. */
  assert_int_equal (rbdx_spec_parse ("img@snap", "mypool", &s, NULL), 0);
  assert_int_equal (rbdx_spec_format (&s, buf, sizeof buf),
                    strlen ("mypool/img@snap"));
  assert_string_equal (buf, "mypool/img@snap");
  rbdx_spec_free (&s);
}

static void
test_format_truncation (void **state)
{
  const char *full = "pool/ns/img@snap";
  size_t n = strlen (full);
  struct rbdx_spec s = { 0 };
  char buf[32];

  assert_int_equal (rbdx_spec_parse (full, NULL, &s, NULL), 0);

  /* Exactly enough room. */
  assert_int_equal (rbdx_spec_format (&s, buf, n + 1), n);
  assert_string_equal (buf, full);

  /* One byte short: truncated, NUL-terminated, full length returned. */
  memset (buf, 'X', sizeof buf);
  assert_int_equal (rbdx_spec_format (&s, buf, n), n);
  assert_true (rbdx_spec_format (&s, buf, n) >= n);
  assert_int_equal (strlen (buf), n - 1);
  assert_memory_equal (buf, full, n - 1);

  /* Much too short. */
  memset (buf, 'X', sizeof buf);
  assert_int_equal (rbdx_spec_format (&s, buf, 5), n);
  assert_string_equal (buf, "pool");
  assert_int_equal (buf[5], 'X');   /* nothing written past len */

  /* len 1: only the NUL; len 0 with NULL buf: just the length. */
  assert_int_equal (rbdx_spec_format (&s, buf, 1), n);
  assert_string_equal (buf, "");
  assert_int_equal (rbdx_spec_format (&s, NULL, 0), n);

  rbdx_spec_free (&s);
}

static void
test_copy (void **state)
{
  struct rbdx_spec a = { 0 }, b = { 0 };
  char buf[64];

  assert_int_equal (rbdx_spec_parse ("pool/ns/img@snap", NULL, &a, NULL), 0);
  assert_int_equal (rbdx_spec_copy (&b, &a), 0);
  /* Deep copy: equal strings, distinct storage. */
  assert_string_equal (b.pool, "pool");
  assert_string_equal (b.ns, "ns");
  assert_string_equal (b.image, "img");
  assert_string_equal (b.snap, "snap");
  assert_ptr_not_equal (b.pool, a.pool);
  assert_ptr_not_equal (b.ns, a.ns);
  assert_ptr_not_equal (b.image, a.image);
  assert_ptr_not_equal (b.snap, a.snap);
  /* The copy survives the original. */
  rbdx_spec_free (&a);
  rbdx_spec_format (&b, buf, sizeof buf);
  assert_string_equal (buf, "pool/ns/img@snap");
  rbdx_spec_free (&b);

  /* Absent ns and snap stay absent. */
  assert_int_equal (rbdx_spec_parse ("img", NULL, &a, NULL), 0);
  assert_int_equal (rbdx_spec_copy (&b, &a), 0);
  assert_string_equal (b.pool, RBDX_DEFAULT_POOL);
  assert_null (b.ns);
  assert_string_equal (b.image, "img");
  assert_null (b.snap);
  rbdx_spec_free (&a);
  rbdx_spec_free (&b);
}

static void
test_spec_free (void **state)
{
  struct rbdx_spec s = { 0 };

  /* Safe on a zeroed struct, and zeroes what it frees. */
  rbdx_spec_free (&s);
  assert_int_equal (rbdx_spec_parse ("pool/ns/img@snap", NULL, &s, NULL), 0);
  rbdx_spec_free (&s);
  assert_null (s.pool);
  assert_null (s.ns);
  assert_null (s.image);
  assert_null (s.snap);
  /* ...so freeing twice is harmless. */
  rbdx_spec_free (&s);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_valid_image),
    cmocka_unit_test (test_valid_pool_image),
    cmocka_unit_test (test_valid_pool_ns_image),
    cmocka_unit_test (test_valid_unusual_characters),
    cmocka_unit_test (test_valid_max_length),
    cmocka_unit_test (test_canonical_form_parses_again),
    cmocka_unit_test (test_why_may_be_null),
    cmocka_unit_test (test_invalid_empty),
    cmocka_unit_test (test_invalid_empty_component),
    cmocka_unit_test (test_invalid_separators),
    cmocka_unit_test (test_invalid_control_characters),
    cmocka_unit_test (test_unsafe_char_check),
    cmocka_unit_test (test_invalid_not_utf8),
    cmocka_unit_test (test_invalid_too_long),
    cmocka_unit_test (test_invalid_dot_names),
    cmocka_unit_test (test_invalid_empty_default_pool),
    cmocka_unit_test (test_format),
    cmocka_unit_test (test_format_truncation),
    cmocka_unit_test (test_copy),
    cmocka_unit_test (test_spec_free),
  };

  return cmocka_run_group_tests (tests, NULL, NULL);
}

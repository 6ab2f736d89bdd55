/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit test of the escaping of values for log lines
 * (server/core/printable.c, include/rbdx/printable.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rbdx/printable.h"

static void
test_plain_unchanged (void **state)
{
  char out[64];

  assert_string_equal (rbdx_printable ("rbd/img@snap", out, sizeof out),
                       "rbd/img@snap");
  assert_string_equal (rbdx_printable_line ("conf='/a b'", out, sizeof out),
                       "conf='/a b'");
  assert_string_equal (rbdx_printable ("", out, sizeof out), "");
}

/* Every C0 byte, DEL and '\\' as \xHH; bytes >= 0x80 (UTF-8) as they
 * are. */
static void
test_controls_escaped (void **state)
{
  char out[64];

  assert_string_equal (rbdx_printable ("a\nb\rc\x1b[2J\x7f\\\xc3\xa9", out,
                                       sizeof out),
                       "a\\x0ab\\x0dc\\x1b[2J\\x7f\\x5c\xc3\xa9");
  assert_string_equal (rbdx_printable ("\x01\x1f", out, sizeof out),
                       "\\x01\\x1f");
}

/* The line form leaves '\\' alone, so text escaped already (by
 * rbdx_printable or the mapper's quoting) comes out unchanged. */
static void
test_line_idempotent (void **state)
{
  char once[64], twice[64], line[64];

  rbdx_printable ("x\nFORGED\x1b[31m\\", once, sizeof once);
  assert_string_equal (rbdx_printable_line (once, twice, sizeof twice), once);
  assert_string_equal (rbdx_printable_line ("id='a\\nb' x\ny", line,
                                            sizeof line),
                       "id='a\\nb' x\\x0ay");
}

/* Cut to fit, never in the middle of an escape, always terminated; 4
 * bytes per input byte plus 1 always hold the whole input. */
/* C1 controls in UTF-8 (U+009B is CSI), lone or cut bytes >= 0x80,
 * overlong forms and surrogates are escaped byte by byte; well-formed
 * UTF-8 (2, 3 and 4 bytes, U+00A0 the first after C1) is kept. */
static void
test_c1_and_bad_utf8 (void **state)
{
  char out[128], again[128];

  (void) state;
  assert_string_equal (rbdx_printable ("a\xc2\x9b" "2J\xc2\x80", out, sizeof out),
                       "a\\xc2\\x9b" "2J\\xc2\\x80");
  assert_string_equal (rbdx_printable ("\x9b" "2J\xff\xc3", out, sizeof out),
                       "\\x9b" "2J\\xff\\xc3");
  assert_string_equal (rbdx_printable ("\xc0\xaf\xed\xa0\x80", out, sizeof out),
                       "\\xc0\\xaf\\xed\\xa0\\x80");
  assert_string_equal (rbdx_printable ("\xc2\xa0\xe2\x82\xac\xf0\x9f\x98\x80", out,
                                       sizeof out),
                       "\xc2\xa0\xe2\x82\xac\xf0\x9f\x98\x80");
  /* A right-to-left override (U+202E) is escaped: it would show the
   * rest of a log line reversed. */
  assert_string_equal (rbdx_printable ("rbd/\xe2\x80\xae" "gmi", out, sizeof out),
                       "rbd/\\xe2\\x80\\xae" "gmi");
  /* A character is never cut: 3 bytes of room take "a" and no half euro. */
  assert_string_equal (rbdx_printable ("a\xe2\x82\xac", out, 3), "a");
  /* The line form stays idempotent over its own output. */
  rbdx_printable_line ("x\xc2\x9by\xe2\x82\xac", out, sizeof out);
  assert_string_equal (rbdx_printable_line (out, again, sizeof again), out);
}

/* The field form escapes ' ' as well: a spec "rbd/a 4 1234" must stay
 * one column of `rbdx list-mapped`, never become a connections and a
 * server column of its own. */
static void
test_field_no_blanks (void **state)
{
  char out[64];

  assert_string_equal (rbdx_printable_field ("rbd/a 4 1234", out, sizeof out),
                       "rbd/a\\x204\\x201234");
  assert_string_equal (rbdx_printable_field ("a\tb\\c\xc3\xa9", out, sizeof out),
                       "a\\x09b\\x5cc\xc3\xa9");
  assert_string_equal (rbdx_printable_field ("rbd/ns/img@s", out, sizeof out),
                       "rbd/ns/img@s");
}

static void
test_truncation (void **state)
{
  char out[9];

  memset (out, 'z', sizeof out);
  assert_string_equal (rbdx_printable ("\n\n\n", out, 8), "\\x0a");
  assert_string_equal (rbdx_printable ("abcdefghij", out, 8), "abcdefg");
  assert_string_equal (rbdx_printable ("ab\n", out, 6), "ab");
  assert_string_equal (rbdx_printable ("abc", out, 1), "");
  assert_string_equal (rbdx_printable ("a", out, 2), "a");
  assert_string_equal (rbdx_printable ("\n\\", out, 9), "\\x0a\\x5c");
  assert_string_equal (rbdx_printable_line ("\\\n", out, 6), "\\\\x0a");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_plain_unchanged),
    cmocka_unit_test (test_controls_escaped),
    cmocka_unit_test (test_line_idempotent),
    cmocka_unit_test (test_truncation),
    cmocka_unit_test (test_field_no_blanks),
    cmocka_unit_test (test_c1_and_bad_utf8),
  };

  return cmocka_run_group_tests (tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/unit-check.h: assertions the cmocka unit tests share.
 * Include after <cmocka.h> and <string.h>. */
#ifndef RBDX_TESTS_UNIT_CHECK_H
#define RBDX_TESTS_UNIT_CHECK_H

/* Assert that haystack contains needle, printing both when not. */
#define assert_contains(haystack, needle)                               \
  do {                                                                  \
    if (strstr ((haystack), (needle)) == NULL)                          \
      fail_msg ("\"%s\" does not contain \"%s\"", (haystack), (needle)); \
  } while (0)

#endif

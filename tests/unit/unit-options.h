/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/unit-options.h: applying one parameter, for the unit tests
 * of include/rbdx/options.h.  Include after <cmocka.h>, <errno.h>,
 * <stdlib.h>, <string.h>, "rbdx/options.h" and "unit-check.h"; define
 * ERRLEN first for message buffers other than 256 bytes. */
#ifndef RBDX_TESTS_UNIT_OPTIONS_H
#define RBDX_TESTS_UNIT_OPTIONS_H

#ifndef ERRLEN
#define ERRLEN 256
#endif

/* cmocka setup and teardown: *state is a zeroed struct rbdx_options. */
static inline int
options_setup (void **state)
{
  *state = calloc (1, sizeof (struct rbdx_options));
  return *state ? 0 : -1;
}

static inline int
options_teardown (void **state)
{
  rbdx_options_free (*state);
  free (*state);
  return 0;
}

/* Apply key=value, which must succeed and leave the message empty. */
static inline void
set_ok (struct rbdx_options *o, const char *key, const char *value)
{
  char err[ERRLEN];

  memset (err, 'X', sizeof err);
  assert_int_equal (rbdx_options_set (o, key, value, err, sizeof err), 0);
  assert_string_equal (err, "");
}

/* Apply key=value, which must fail with -EINVAL and a message (in err,
 * NUL-terminated, not empty). */
static inline void
set_bad (struct rbdx_options *o, const char *key, const char *value,
         char err[ERRLEN])
{
  memset (err, 'X', ERRLEN);
  assert_int_equal (rbdx_options_set (o, key, value, err, ERRLEN), -EINVAL);
  assert_non_null (memchr (err, '\0', ERRLEN));
  assert_true (strlen (err) > 0);
}

#endif

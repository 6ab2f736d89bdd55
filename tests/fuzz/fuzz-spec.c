/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness: image specs (include/rbdx/spec.h, server/core/spec.c).
 *
 * Input: "SPEC" parsed with no default pool, or "POOL\nSPEC" parsed with
 * POOL as the default pool when POOL is itself a valid pool name (as
 * the plugin does with pool= and the image's own pool).  Checked:
 *   - a rejected spec gives -EINVAL with a non-empty reason and leaves
 *     the output untouched;
 *   - an accepted one has non-empty pool and image, ns and snap absent
 *     or non-empty, no separator inside a component, and fits
 *     RBDX_SPEC_MAX in canonical form;
 *   - rbdx_spec_format's length matches what it writes and truncates
 *     like snprintf, and its output parses again (without a default
 *     pool) to the same spec;
 *   - rbdx_spec_copy gives an equal spec; nothing leaks (LeakSanitizer).
 * Built and run by tests/fuzz/run (suite fuzz).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/spec.h"
#include "fuzz-check.h"

static bool
same_str (const char *a, const char *b)
{
  return (!a && !b) || (a && b && strcmp (a, b) == 0);
}

static bool
same_spec (const struct rbdx_spec *a, const struct rbdx_spec *b)
{
  return same_str (a->pool, b->pool) && same_str (a->ns, b->ns) &&
         same_str (a->image, b->image) && same_str (a->snap, b->snap);
}

/* A name that may stand for a pool: non-empty, no separator, no control
 * character. */
static bool
valid_pool (const char *p)
{
  if (*p == '\0')
    return false;
  for (; *p; p++)
    if (*p == '/' || *p == '@' || (unsigned char) *p < 0x20 || *p == 0x7f)
      return false;
  return true;
}

static void
check_component (const char *c, bool may_be_null, const char *forbidden)
{
  if (!c) {
    CHECK (may_be_null);
    return;
  }
  CHECK (*c != '\0');
  CHECK (strpbrk (c, forbidden) == NULL);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char *input = malloc (size + 1), *text, *nl, *buf;
  const char *default_pool = NULL, *why = NULL;
  struct rbdx_spec s, again = { 0 }, copy = { 0 };
  char small[8];
  size_t n, n2;
  int r;

  if (!input)
    return 0;
  memcpy (input, data, size);
  input[size] = '\0';   /* an embedded NUL ends the text early: fine */
  text = input;
  nl = strchr (input, '\n');
  if (nl) {
    *nl = '\0';
    if (valid_pool (input))
      default_pool = input;
    text = nl + 1;
  }

  memset (&s, 0xa5, sizeof s);
  r = rbdx_spec_parse (text, default_pool, &s, &why);
  if (r < 0) {
    struct rbdx_spec untouched;

    CHECK (r == -EINVAL);
    CHECK (why != NULL && why[0] != '\0');
    memset (&untouched, 0xa5, sizeof untouched);
    CHECK (memcmp (&s, &untouched, sizeof s) == 0);
    free (input);
    return 0;
  }
  CHECK (r == 0);

  check_component (s.pool, false, "/@");
  check_component (s.ns, true, "/@");
  check_component (s.image, false, "/@");
  check_component (s.snap, true, "/");

  /* Length first (like snprintf with size 0), then the text. */
  n = rbdx_spec_format (&s, NULL, 0);
  CHECK (n <= RBDX_SPEC_MAX);
  buf = malloc (n + 1);
  CHECK (buf != NULL);
  n2 = rbdx_spec_format (&s, buf, n + 1);
  CHECK (n2 == n);
  CHECK (strlen (buf) == n);
  /* Truncation keeps a NUL-terminated prefix and the full length. */
  CHECK (rbdx_spec_format (&s, small, sizeof small) == n);
  CHECK (strlen (small) == (n < sizeof small ? n : sizeof small - 1));
  CHECK (strncmp (small, buf, strlen (small)) == 0);

  /* The canonical form names its pool, so no default is needed. */
  why = NULL;
  r = rbdx_spec_parse (buf, NULL, &again, &why);
  if (r != 0)
    fprintf (stderr, "fuzz-spec: canonical form '%s' does not parse: %s\n",
             buf, why ? why : "?");
  CHECK (r == 0);
  CHECK (same_spec (&s, &again));

  CHECK (rbdx_spec_copy (&copy, &s) == 0);
  CHECK (same_spec (&s, &copy));

  rbdx_spec_free (&copy);
  CHECK (!copy.pool && !copy.ns && !copy.image && !copy.snap);
  rbdx_spec_free (&again);
  rbdx_spec_free (&s);
  free (buf);
  free (input);
  return 0;
}

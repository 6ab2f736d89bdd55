/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: image spec parsing and printing (see include/rbdx/spec.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/spec.h"
#include "rbdx/utf8.h"

static int
set_why (const char **why, const char *msg)
{
  if (why)
    *why = msg;
  return -EINVAL;
}

/* Duplicate [begin, end) into a new string; NULL on ENOMEM. */
static char *
dup_range (const char *begin, const char *end)
{
  size_t n = (size_t) (end - begin);
  char *s = malloc (n + 1);

  if (s) {
    memcpy (s, begin, n);
    s[n] = '\0';
  }
  return s;
}

bool
rbdx_spec_has_unsafe_char (const char *s)
{
  size_t n;

  for (; *s; s += n)
    if ((n = rbdx_utf8_char (s)) == 0)
      return true;
  return false;
}

bool
rbdx_spec_name_is_dots (const char *name)
{
  return name[0] == '.' && (name[1] == '\0' ||
                            (name[1] == '.' && name[2] == '\0'));
}

int
rbdx_spec_parse (const char *text, const char *default_pool,
                 struct rbdx_spec *out, const char **why)
{
  const char *slash[2] = { NULL, NULL };
  const char *at = NULL, *p, *end, *img;
  size_t nslash = 0;
  struct rbdx_spec s = { 0 };

  if (text == NULL || *text == '\0')
    return set_why (why, "the image spec is empty");
  if (strlen (text) > RBDX_SPEC_MAX)
    return set_why (why, "the image spec is too long");

  if (rbdx_spec_has_unsafe_char (text))
    return set_why (why, "the image spec contains a control character or "
                    "a byte that is not UTF-8");
  /* The default pool becomes part of the canonical form, which must
   * parse again. */
  if (default_pool && rbdx_spec_has_unsafe_char (default_pool))
    return set_why (why, "the pool name contains a control character or "
                    "a byte that is not UTF-8");
  for (p = text; *p; p++) {
    if (*p == '/') {
      if (at)
        return set_why (why, "'/' after '@' (the snapshot name cannot "
                        "contain '/')");
      if (nslash == 2)
        return set_why (why, "too many '/' (expected "
                        "[pool/[namespace/]]image[@snapshot])");
      slash[nslash++] = p;
    }
    else if (*p == '@') {
      if (at)
        return set_why (why, "more than one '@'");
      at = p;
    }
  }
  end = p;

  /* Without a pool component the canonical form gains "POOL/": it must
   * fit RBDX_SPEC_MAX too, or rbdx_spec_format would print a spec that
   * no longer parses (the mapper hands that form to the plugin). */
  if (nslash == 0 &&
      strlen (default_pool ? default_pool : RBDX_DEFAULT_POOL) + 1 +
      (size_t) (end - text) > RBDX_SPEC_MAX)
    return set_why (why, "the image spec is too long once its pool is "
                    "added");

  img = nslash ? slash[nslash - 1] + 1 : text;
  if (nslash >= 1 && slash[0] == text)
    return set_why (why, "the pool name is empty");
  if (nslash == 2 && slash[1] == slash[0] + 1)
    return set_why (why, "the namespace name is empty");
  if ((at ? at : end) == img)
    return set_why (why, "the image name is empty");
  if (at && at + 1 == end)
    return set_why (why, "the snapshot name is empty");

  if (nslash >= 1)
    s.pool = dup_range (text, slash[0]);
  else
    s.pool = strdup (default_pool ? default_pool : RBDX_DEFAULT_POOL);
  if (nslash == 2)
    s.ns = dup_range (slash[0] + 1, slash[1]);
  s.image = dup_range (img, at ? at : end);
  if (at)
    s.snap = dup_range (at + 1, end);

  if (!s.pool || !s.image || (nslash == 2 && !s.ns) || (at && !s.snap)) {
    rbdx_spec_free (&s);
    if (why)
      *why = "out of memory";
    return -ENOMEM;
  }
  if (s.pool[0] == '\0') {
    rbdx_spec_free (&s);
    return set_why (why, "the pool name is empty");
  }
  /* The mapper's links are DEV_DIR/SPEC: "." or ".." would leave it. */
  if (rbdx_spec_name_is_dots (s.pool) || (s.ns && rbdx_spec_name_is_dots (s.ns)) ||
      rbdx_spec_name_is_dots (s.image) || (s.snap && rbdx_spec_name_is_dots (s.snap))) {
    const char *what = rbdx_spec_name_is_dots (s.pool) ? "the pool name is '.' or '..'"
      : s.ns && rbdx_spec_name_is_dots (s.ns) ? "the namespace name is '.' or '..'"
      : rbdx_spec_name_is_dots (s.image) ? "the image name is '.' or '..'"
      : "the snapshot name is '.' or '..'";

    rbdx_spec_free (&s);
    return set_why (why, what);
  }
  *out = s;
  return 0;
}

size_t
rbdx_spec_format (const struct rbdx_spec *spec, char *buf, size_t len)
{
  int n = snprintf (buf, len, "%s/%s%s%s%s%s",
                    spec->pool,
                    spec->ns ? spec->ns : "", spec->ns ? "/" : "",
                    spec->image,
                    spec->snap ? "@" : "", spec->snap ? spec->snap : "");
  return n < 0 ? 0 : (size_t) n;
}

int
rbdx_spec_copy (struct rbdx_spec *dst, const struct rbdx_spec *src)
{
  struct rbdx_spec s = { 0 };

  s.pool = strdup (src->pool);
  s.image = strdup (src->image);
  s.ns = src->ns ? strdup (src->ns) : NULL;
  s.snap = src->snap ? strdup (src->snap) : NULL;
  if (!s.pool || !s.image || (src->ns && !s.ns) || (src->snap && !s.snap)) {
    rbdx_spec_free (&s);
    return -ENOMEM;
  }
  *dst = s;
  return 0;
}

void
rbdx_spec_free (struct rbdx_spec *spec)
{
  free (spec->pool);
  free (spec->ns);
  free (spec->image);
  free (spec->snap);
  memset (spec, 0, sizeof *spec);
}

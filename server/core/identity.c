/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: image identities (see include/rbdx/identity.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "rbdx/identity.h"

bool
rbdx_ident_equal (const struct rbdx_ident *a, const struct rbdx_ident *b)
{
  return a->pool_id == b->pool_id && a->snap_id == b->snap_id &&
    strcmp (a->image_id, b->image_id) == 0 && strcmp (a->ns, b->ns) == 0;
}

/* A byte printed as itself; '/' only inside the namespace. */
static bool
plain (unsigned char c, bool ns)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
    (c >= '0' && c <= '9') || strchr ("._:+-", c) != NULL ||
    (ns && c == '/');
}

/* Append @p s escaped to buf[*at..len), counting past the end. */
static void
put_escaped (const char *s, bool ns, char *buf, size_t len, size_t *at)
{
  static const char hex[] = "0123456789ABCDEF";

  for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
    char e[3] = { (char) *p };
    size_t n = 1;

    if (!plain (*p, ns)) {
      e[0] = '%';
      e[1] = hex[*p >> 4];
      e[2] = hex[*p & 15];
      n = 3;
    }
    for (size_t i = 0; i < n; i++, (*at)++)
      if (*at + 1 < len)
        buf[*at] = e[i];
  }
}

size_t
rbdx_ident_format (const struct rbdx_ident *id, char *buf, size_t len)
{
  char head[32];
  size_t at;
  int n;

  n = snprintf (head, sizeof head, "%" PRId64 "/", id->pool_id);
  at = n < 0 ? 0 : (size_t) n;
  if (len)
    snprintf (buf, len, "%s", head);
  put_escaped (id->ns, true, buf, len, &at);
  if (*id->ns) {
    if (at + 1 < len)
      buf[at] = '/';
    at++;
  }
  put_escaped (id->image_id, false, buf, len, &at);
  if (id->snap_id != RBDX_NOSNAP) {
    n = snprintf (head, sizeof head, "@%" PRIu64, id->snap_id);
    for (int i = 0; i < n; i++, at++)
      if (at + 1 < len)
        buf[at] = head[i];
  }
  if (len)
    buf[at < len ? at : len - 1] = '\0';
  return at;
}

/* A decimal number filling [s, end) exactly. */
static int
decimal (const char *s, const char *end, uint64_t max, uint64_t *v)
{
  char *stop;

  if (s == end || *s < '0' || *s > '9')
    return -EINVAL;
  errno = 0;
  *v = strtoull (s, &stop, 10);
  return errno || stop != end || *v > max ? -EINVAL : 0;
}

static int
hexval (char c)
{
  return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
    : -1;
}

/* Decode [s, end) into out[0..max], refusing raw bytes rbdx_ident_format
 * would have escaped, bad escapes and an escaped NUL. */
static int
unescape (const char *s, const char *end, bool ns, char *out, size_t max)
{
  size_t n = 0;

  for (; s < end; s++) {
    int c = (unsigned char) *s;

    if (c == '%') {
      int hi = end - s > 2 ? hexval (s[1]) : -1;
      int lo = hi >= 0 ? hexval (s[2]) : -1;

      if (lo < 0 || (c = hi * 16 + lo) == 0)
        return -EINVAL;
      s += 2;
    }
    else if (!plain ((unsigned char) c, ns))
      return -EINVAL;
    if (n == max)
      return -EINVAL;
    out[n++] = (char) c;
  }
  out[n] = '\0';
  return 0;
}

int
rbdx_ident_parse (const char *text, struct rbdx_ident *out)
{
  const char *first, *last, *at, *end = text + strlen (text);
  struct rbdx_ident id = { .snap_id = RBDX_NOSNAP };
  char again[RBDX_IDENT_TEXT_MAX];
  uint64_t v;

  first = strchr (text, '/');
  if (!first || decimal (text, first, INT64_MAX, &v) < 0)
    return -EINVAL;
  id.pool_id = (int64_t) v;
  last = strrchr (text, '/');
  at = strrchr (last, '@');
  if (at) {
    if (decimal (at + 1, end, UINT64_MAX - 2, &id.snap_id) < 0)
      return -EINVAL;
    end = at;
  }
  if (last > first &&
      (last == first + 1 ||
       unescape (first + 1, last, true, id.ns, RBDX_NS_MAX) < 0))
    return -EINVAL;
  if (end == last + 1 ||
      unescape (last + 1, end, false, id.image_id, RBDX_IMAGE_ID_MAX) < 0)
    return -EINVAL;
  /* One text per identity: "%41" for 'A' or lower-case hex is refused. */
  if (rbdx_ident_format (&id, again, sizeof again) >= sizeof again ||
      strcmp (again, text) != 0)
    return -EINVAL;
  *out = id;
  return 0;
}

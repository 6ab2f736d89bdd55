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

size_t
rbdx_ident_format (const struct rbdx_ident *id, char *buf, size_t len)
{
  char snap[32] = "";
  int n;

  if (id->snap_id != RBDX_NOSNAP)
    snprintf (snap, sizeof snap, "@%" PRIu64, id->snap_id);
  n = snprintf (buf, len, "%" PRId64 "/%s%s%s%s", id->pool_id, id->ns,
                *id->ns ? "/" : "", id->image_id, snap);
  return n < 0 ? 0 : (size_t) n;
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

int
rbdx_ident_parse (const char *text, struct rbdx_ident *out)
{
  const char *first, *last, *at, *end = text + strlen (text);
  struct rbdx_ident id = { .snap_id = RBDX_NOSNAP };
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
  if (last > first) {
    if ((size_t) (last - first - 1) > RBDX_NS_MAX || last == first + 1)
      return -EINVAL;
    memcpy (id.ns, first + 1, (size_t) (last - first - 1));
  }
  if (end == last + 1 || (size_t) (end - last - 1) > RBDX_IMAGE_ID_MAX)
    return -EINVAL;
  memcpy (id.image_id, last + 1, (size_t) (end - last - 1));
  *out = id;
  return 0;
}

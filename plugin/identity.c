/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx: image identities (see include/rbdx/identity.h). */
#include <inttypes.h>
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

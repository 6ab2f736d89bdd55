/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/nbd-backend.c: the rbd-nbd personality's kernel backend
 * identifiers (see nbd-compat.h): the cookie rbd-nbd puts there, then
 * what rbdx adds for a stateless attach (the connection count and the
 * image identity).  Pure: no I/O. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/spec.h"
#include "nbd-compat.h"

/* Where the personality's backend identifiers end the cookie (a ';' is
 * not a cookie character), and where the identity follows the count. */
#define CONNS_TAG ";rbdx:connections="
#define IDENT_TAG ";rbdx:identity="

int
rbdx_nbd_backend_make (const char *cookie, unsigned connections, char *buf, size_t len)
{
  size_t n = (size_t) snprintf (buf, len, "%s" CONNS_TAG "%u", cookie, connections);
  return n < len ? 0 : -ENAMETOOLONG;
}

const char *
rbdx_nbd_cookie_of (const char *backend, char *buf, size_t len)
{
  const char *end;

  if (!backend || strncmp (backend, "rbdx:", 5) == 0)
    backend = "";
  end = strstr (backend, CONNS_TAG);
  snprintf (buf, len, "%.*s", (int) (end ? (size_t) (end - backend) : strlen (backend)),
            backend);
  return buf;
}

unsigned
rbdx_nbd_backend_connections (const char *backend)
{
  const char *tag = backend ? strstr (backend, CONNS_TAG) : NULL;
  char *end;
  unsigned long n;

  if (!tag)
    return 0;
  tag += strlen (CONNS_TAG);
  n = strtoul (tag, &end, 10);
  return end != tag && (!*end || *end == ';') && n >= 1 && n <= 16 ? (unsigned) n : 0;
}

int
rbdx_nbd_backend_add_identity (char *buf, size_t len, const char *identity)
{
  size_t have = strlen (buf);

  if (!strstr (buf, CONNS_TAG) || strstr (buf, IDENT_TAG) || !*identity ||
      rbdx_spec_has_unsafe_char (identity))
    return 0;
  if (have + strlen (IDENT_TAG) + strlen (identity) >= len)
    return -ENAMETOOLONG;
  snprintf (buf + have, len - have, IDENT_TAG "%s", identity);
  return 0;
}

const char *
rbdx_nbd_backend_identity (const char *backend, char *buf, size_t len)
{
  const char *conns = backend ? strstr (backend, CONNS_TAG) : NULL;
  const char *tag = conns ? strstr (conns, IDENT_TAG) : NULL;

  snprintf (buf, len, "%s", tag ? tag + strlen (IDENT_TAG) : "");
  return buf;
}

bool
rbdx_nbd_cookie_ok (const char *backend, const char *cookie, const char **msg)
{
  /* Longer than any valid @p cookie: a longer one, cut here, still
   * differs from it. */
  char have[RBDX_NBD_COOKIE_MAX + 64];

  rbdx_nbd_cookie_of (backend, have, sizeof have);
  *msg = NULL;
  if (*have) {
    if (!cookie)
      *msg = "rbd-nbd: must specify cookie to attach";
    else if (strcmp (have, cookie) != 0)
      *msg = "rbd-nbd: cookie mismatch";
  }
  else if (cookie)
    *msg = backend && *backend ? "rbd-nbd: cookie mismatch"
           : "rbd-nbd: kernel does not have cookie support";
  return *msg == NULL;
}

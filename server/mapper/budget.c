/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/budget.c: the node's connection budget (see budget.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"

static int
parse_count (const char *s, size_t len, unsigned *out)
{
  char buf[32], *end;
  unsigned long long v;

  while (len && isspace ((unsigned char) *s))
    s++, len--;
  while (len && isspace ((unsigned char) s[len - 1]))
    len--;
  if (len == 0 || len >= sizeof buf || !isdigit ((unsigned char) *s))
    return -EINVAL;
  memcpy (buf, s, len);
  buf[len] = '\0';
  errno = 0;
  v = strtoull (buf, &end, 10);
  if (errno || *end || v < 1 || v > RBDX_NODE_CONNECTIONS_MAX)
    return -EINVAL;
  *out = (unsigned) v;
  return 0;
}

int
rbdx_budget_parse (const char *text, int is_file, unsigned *out,
                   char *err, size_t errlen)
{
  const char *line = text, *nl, *eq;
  unsigned v, n = 0;
  int found = 0, lineno = 0;
  size_t len, k;

  if (!is_file) {
    if (parse_count (text, strlen (text), out) < 0) {
      snprintf (err, errlen, "RBDX_NODE_CONNECTIONS='%.40s': expected a "
                "number of connections, 1 to %d", text,
                RBDX_NODE_CONNECTIONS_MAX);
      return -EINVAL;
    }
    return 0;
  }
  for (; *line; line = nl ? nl + 1 : line + strlen (line)) {
    nl = strchr (line, '\n');
    len = nl ? (size_t) (nl - line) : strlen (line);
    lineno++;
    eq = memchr (line, '#', len);     /* '#' starts a comment */
    if (eq)
      len = (size_t) (eq - line);
    k = 0;
    while (k < len && isspace ((unsigned char) line[k]))
      k++;
    if (k == len || line[k] == '#') {
      if (!nl)
        break;
      continue;
    }
    eq = memchr (line + k, '=', len - k);
    if (!eq || (size_t) (eq - (line + k)) < 11
        || strncmp (line + k, "connections", 11) != 0
        || strspn (line + k + 11, " \t") != (size_t) (eq - (line + k) - 11)
        || parse_count (eq + 1, len - (size_t) (eq + 1 - line), &v) < 0) {
      snprintf (err, errlen, "line %d: expected connections=N (N from 1 to "
                "%d), not '%.*s'", lineno, RBDX_NODE_CONNECTIONS_MAX,
                (int) (len > 60 ? 60 : len), line);
      return -EINVAL;
    }
    n = v;
    found = 1;
    if (!nl)
      break;
  }
  if (!found)
    return -ENOENT;
  *out = n;
  return 0;
}

int
rbdx_budget_choose (unsigned requested, unsigned fallback, unsigned total,
                    unsigned used, char *err, size_t errlen)
{
  unsigned left = used < total ? total - used : 0;

  if (left == 0) {
    snprintf (err, errlen, "the node's connection budget is used up: %u of "
              "%u connections are held by mapped devices (raise it with "
              "RBDX_NODE_CONNECTIONS or connections= in /etc/rbdx/budget)",
              used, total);
    return -ENOSPC;
  }
  if (requested) {
    if (requested > left) {
      snprintf (err, errlen, "--connections %u does not fit the node's "
                "connection budget: %u of %u are held by mapped devices, "
                "%u left (RBDX_NODE_CONNECTIONS, /etc/rbdx/budget)",
                requested, used, total, left);
      return -ENOSPC;
    }
    return (int) requested;
  }
  return (int) (fallback < left ? fallback : left);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/params.c: the parameters the mapper hands its server:
 * relative file names made absolute, lookup by key (see params.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rbdx/options.h"

#include "params.h"

char *
rbdx_param_absolute (const char *kv)
{
  const char *eq = strchr (kv, '=');
  char key[128], cwd[PATH_MAX], *out;
  size_t klen;

  if (!eq || eq == kv) {
    errno = EINVAL;
    return NULL;
  }
  klen = (size_t) (eq - kv);
  /* No key that names a file is this long: such a key is left alone (and
   * refused by the server as unknown). */
  if (klen >= sizeof key)
    return strdup (kv);
  memcpy (key, kv, klen);
  key[klen] = '\0';
  if (!rbdx_options_wants_absolute (key, eq + 1))
    return strdup (kv);
  if (!getcwd (cwd, sizeof cwd))
    return NULL;
  if (asprintf (&out, "%s=%s%s%s", key, cwd, strcmp (cwd, "/") ? "/" : "",
                eq + 1) < 0) {
    errno = ENOMEM;
    return NULL;
  }
  return out;
}

const char *
rbdx_param_find (char *const *params, size_t n, const char *key)
{
  size_t klen = strlen (key);
  const char *found = NULL;

  for (size_t i = 0; i < n; i++)
    if (strncmp (params[i], key, klen) == 0 && params[i][klen] == '=')
      found = params[i] + klen + 1;
  return found;
}

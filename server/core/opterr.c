/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: messages and file checks of the parameter parsers (see
 * opterr.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rbdx/opterr.h"

int
rbdx_opt_err (char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;

  if (errlen) {
    va_start (ap, fmt);
    vsnprintf (err, errlen, fmt, ap);
    va_end (ap);
  }
  return -EINVAL;
}

int
rbdx_opt_set_once (char **slot, const char *key, const char *value,
                   char *err, size_t errlen)
{
  if (*slot)
    return rbdx_opt_err (err, errlen, "%s= given twice ('%s' and '%s')",
                         key, *slot, value);
  *slot = strdup (value);
  return *slot ? 0 : -ENOMEM;
}

int
rbdx_opt_check_file (const char *key, const char *path, char *err, size_t errlen)
{
  struct stat st;

  if (!path)
    return 0;
  if (stat (path, &st) != 0 || access (path, R_OK) != 0)
    return rbdx_opt_err (err, errlen, "%s='%s': cannot read it: %s",
                         key, path, strerror (errno));
  if (!S_ISREG (st.st_mode))
    return rbdx_opt_err (err, errlen, "%s='%s': not a regular file", key, path);
  return 0;
}

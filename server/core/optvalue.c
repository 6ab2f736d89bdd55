/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the value parsers of the parameters (sizes, booleans),
 * which parameters name files, and Ceph option names compared as Ceph
 * reads them (see options.h).  Pure. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rbdx/options.h"

int
rbdx_parse_size (const char *text, uint64_t *v)
{
  static const char units[] = "KMGTPE";
  unsigned long long n;
  const char *u;
  char *end;
  int shift = 0;

  if (!text || *text < '0' || *text > '9')
    return -EINVAL;
  errno = 0;
  n = strtoull (text, &end, 10);
  if (errno)
    return -EINVAL;
  if (*end && (u = strchr (units, *end)) != NULL) {
    shift = 10 * (int) (u - units + 1);
    end++;
    if (*end == 'i')
      end++;
    if (*end == 'B')
      end++;
  }
  if (*end || (shift && n > (UINT64_MAX >> shift)))
    return -EINVAL;
  *v = (uint64_t) n << shift;
  return 0;
}

int
rbdx_parse_ceph_uint (const char *text, uint64_t *v)
{
  static const char units[] = "KMGTPE";
  const char *p = text, *u;
  uint64_t n = 0, scale = 1;

  if (!p)
    return -EINVAL;
  if (*p == '+')
    p++;
  if (*p < '0' || *p > '9')
    return -EINVAL;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (n > ((uint64_t) LLONG_MAX - (uint64_t) (*p - '0')) / 10)
      return -EINVAL;
    n = n * 10 + (uint64_t) (*p - '0');
  }
  if (*p) {
    if (p[1] || !(u = strchr (units, *p)))
      return -EINVAL;
    for (long i = 0; i <= u - units; i++)
      scale *= 1000;
    if (n > (uint64_t) LLONG_MAX / scale)
      return -EINVAL;
  }
  *v = n * scale;
  return 0;
}

bool
rbdx_cluster_name_valid (const char *name)
{
  if (name == NULL || *name == '\0')
    return false;
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
          (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
      return false;
  return true;
}

int
rbdx_parse_bool (const char *value)
{
  static const char *const yes[] = { "1", "true", "yes", "on" };
  static const char *const no[] = { "0", "false", "no", "off" };
  size_t i;

  for (i = 0; i < 4; i++) {
    if (strcasecmp (value, yes[i]) == 0)
      return 1;
    if (strcasecmp (value, no[i]) == 0)
      return 0;
  }
  return -EINVAL;
}

/* Ceph's separators: '-' and ' ' stand for '_' in an option name. */
static char
sep (char c)
{
  return c == '-' || c == ' ' ? '_' : c;
}

bool
rbdx_ceph_name_eq (const char *a, const char *b)
{
  for (; *a && *b; a++, b++)
    if (sep (*a) != sep (*b))
      return false;
  return *a == *b;
}

void
rbdx_ceph_name_normalize (char *name)
{
  for (; *name; name++)
    *name = sep (*name);
}

bool
rbdx_options_wants_absolute (const char *key, const char *value)
{
  static const char *const keys[] = {
    "conf", "keyring", "size_file", "encryption_passphrase_file",
    "quiesce_hook", "quiesce_device_file",
    "metrics_file", NULL
  };
  static const char *const ceph[] = {
    "keyring", "keyfile", "log_file", "admin_socket", NULL
  };

  if (!*value || *value == '/' || strchr (value, '$'))
    return false;
  for (size_t i = 0; keys[i]; i++)
    if (strcmp (key, keys[i]) == 0)
      return true;
  /* As rbdx_options_set_ceph names them: ceph.log-file too. */
  for (size_t i = 0; strncmp (key, "ceph.", 5) == 0 && ceph[i]; i++)
    if (rbdx_ceph_name_eq (key + 5, ceph[i]))
      return true;
  return false;
}

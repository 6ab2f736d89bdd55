/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/target.c: a target (image spec or NBD URI) in canonical
 * form, and /dev/nbdN names (see target.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/spec.h"
#include "target.h"

bool
rbdx_target_is_uri (const char *t)
{
  return strstr (t, "://") != NULL;
}

/* The kernel needs a plain socket: no TLS (nbds://), no ssh tunnel. */
static bool
uri_supported (const char *t)
{
  return strncmp (t, "nbd://", 6) == 0 || strncmp (t, "nbd+unix://", 11) == 0;
}

int
rbdx_target_canonical (const char *text, char *buf, size_t len, const char **why)
{
  struct rbdx_spec spec = { 0 };

  if (rbdx_target_is_uri (text)) {
    if (!uri_supported (text)) {
      *why = "only nbd:// and nbd+unix:// URIs can be mapped (the kernel "
             "cannot speak TLS or go through ssh)";
      return -1;
    }
    if (strlen (text) >= len) {
      *why = "too long";
      return -1;
    }
    snprintf (buf, len, "%s", text);
    return 0;
  }
  if (rbdx_spec_parse (text, NULL, &spec, why) < 0)
    return -1;
  /* Never map a name cut short: it would be another image's. */
  if (rbdx_spec_format (&spec, buf, len) >= len) {
    rbdx_spec_free (&spec);
    *why = "too long";
    return -1;
  }
  rbdx_spec_free (&spec);
  return 0;
}

int
rbdx_device_index (const char *text)
{
  const char *p = text;
  char *end;
  long i;

  if (strncmp (p, "/dev/", 5) == 0)
    p += 5;
  if (strncmp (p, "nbd", 3) != 0)
    return -1;
  i = strtol (p + 3, &end, 10);
  if (end == p + 3 || *end || i < 0 || i > 1 << 20)
    return -1;
  return (int) i;
}

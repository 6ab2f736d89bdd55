/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/target.c: a target (image spec or NBD URI) in canonical
 * form, the check that keeps specs and parameters data, and /dev/nbdN
 * names (see target.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/options.h"
#include "rbdx/printable.h"
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

static int __attribute__ ((format (printf, 3, 4)))
refuse (char *why, size_t whylen, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (why, whylen, fmt, ap);
  va_end (ap);
  return -1;
}

/* Keys a KEY=VALUE of `rbdx map` may not have. */
static const char *
forbidden_key (const char *key, size_t klen)
{
  static const struct { const char *key, *why; } keys[] = {
    { "image", "the image is the spec: give it once, as SPEC" },
    { "pool", "rbdx map serves one image (pool= is the plugin's pool mode)" },
    { "key", "a raw key on a command line is readable by every user "
      "(ps, /proc/PID/cmdline): put it in a keyring file only root can read "
      "and give keyring=FILE (or --keyring FILE)" },
  };
  char name[64];

  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (strlen (keys[i].key) == klen && !strncmp (key, keys[i].key, klen))
      return keys[i].why;
  /* ceph.key=, ceph.keyfile=: as the plugin and the engine refuse them. */
  if (klen > 5 && klen - 5 < sizeof name && !strncmp (key, "ceph.", 5)) {
    memcpy (name, key + 5, klen - 5);
    name[klen - 5] = '\0';
    return rbdx_ceph_option_refused (name);
  }
  return NULL;
}

static int
check_param (const char *p, char *why, size_t whylen)
{
  const char *eq = strchr (p, '='), *why_key;
  char b[256];
  size_t klen, i;

  if (!eq || eq == p)
    return refuse (why, whylen, "parameter '%s' is not KEY=VALUE", rbdx_printable (p, b, sizeof b));
  klen = (size_t) (eq - p);
  for (i = 0; i < klen; i++) {
    char c = p[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alpha && (i == 0 || !((c >= '0' && c <= '9') || c == '_' || c == '.'))) {
      char k[65], kb[4 * sizeof k];
      size_t n = klen < 64 ? klen : 64;

      memcpy (k, p, n);
      k[n] = '\0';
      return refuse (why, whylen, "parameter '%s': '%s' is not a parameter name "
                     "(a letter, then letters, digits, '_' or '.')",
                     rbdx_printable (p, b, sizeof b), rbdx_printable (k, kb, sizeof kb));
    }
  }
  if ((why_key = forbidden_key (p, klen)))
    return refuse (why, whylen, "parameter %.*s= refused: %s", (int) klen, p, why_key);
  if (eq[1] == '-')
    return refuse (why, whylen, "parameter '%s': the value starts with '-'",
                   rbdx_printable (p, b, sizeof b));
  if (rbdx_spec_has_unsafe_char (eq + 1))
    return refuse (why, whylen, "parameter '%s': the value holds a control character "
                   "or a byte that is not UTF-8",
                   rbdx_printable (p, b, sizeof b));
  /* librados makes the cluster name a path component (/etc/ceph/$cluster.conf):
   * refused here, before any server starts. */
  if (((klen == 7 && !strncmp (p, "cluster", 7)) ||
       (klen == 12 && !strncmp (p, "ceph.cluster", 12))) &&
      !rbdx_cluster_name_valid (eq + 1))
    return refuse (why, whylen, "parameter '%s': a Ceph cluster name is letters, "
                   "digits, '_' and '-' only", rbdx_printable (p, b, sizeof b));
  return 0;
}

int
rbdx_args_check (const char *target, char *const *params, size_t nparams,
                 char *why, size_t whylen)
{
  char b[256];

  if (rbdx_spec_has_unsafe_char (target))
    return refuse (why, whylen, "%s '%s' holds a control character or a byte "
                   "that is not UTF-8",
                   rbdx_target_is_uri (target) ? "NBD URI" : "image spec",
                   rbdx_printable (target, b, sizeof b));
  if (!rbdx_target_is_uri (target)) {
    for (const char *c = target; *c; c++)
      if (*c == '-' && (c == target || c[-1] == '/' || c[-1] == '@'))
        return refuse (why, whylen, "image spec '%s': %s starts with '-' (refused: a "
                       "server could take it for an option)", rbdx_printable (target, b, sizeof b),
                       c == target ? "it" : "a component");
    if (strchr (target, '='))
      return refuse (why, whylen, "image spec '%s' contains '=' (refused: a server "
                     "could take it for a KEY=VALUE parameter)",
                     rbdx_printable (target, b, sizeof b));
  }
  for (size_t i = 0; i < nparams; i++)
    if (check_param (params[i], why, whylen) < 0)
      return -1;
  return 0;
}

int
rbdx_device_index (const char *text)
{
  const char *p;
  long i = 0;

  /* Exactly "/dev/nbd" and a decimal without a sign, blank or leading
   * zero: "nbd0", "nbd-0", "nbd 0", "nbd00" are image specs (rbd/nbd0),
   * never /dev/nbd0 (strtol took them all for 0). */
  if (strncmp (text, "/dev/nbd", 8) != 0)
    return -1;
  p = text + 8;
  if (*p < '0' || *p > '9' || (p[0] == '0' && p[1]))
    return -1;
  for (; *p >= '0' && *p <= '9'; p++)
    if ((i = i * 10 + (*p - '0')) > 1 << 20)
      return -1;
  return *p ? -1 : (int) i;
}

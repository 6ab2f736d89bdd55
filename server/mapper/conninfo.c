/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/conninfo.c: a Cinder RBD connection_info parsed with
 * json-c into the map options it stands for (see conninfo.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "rbdx/options.h"
#include "rbdx/printable.h"

#include "conninfo.h"

static int __attribute__ ((format (printf, 3, 4)))
bad (char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (err, errlen, fmt, ap);
  va_end (ap);
  return -EINVAL;
}

static int
add (struct rbdx_conninfo *ci, const char *key, const char *value)
{
  char *p;

  if (ci->nparams == RBDX_CONNINFO_MAX_PARAMS)
    return -EINVAL;
  if (asprintf (&p, "%s=%s", key, value) < 0)
    return -ENOMEM;
  ci->params[ci->nparams++] = p;
  return 0;
}

static const char *
str (json_object *o, const char *key)
{
  json_object *v;

  if (!json_object_object_get_ex (o, key, &v) ||
      !json_object_is_type (v, json_type_string))
    return NULL;
  return json_object_get_string (v);
}

/* "host:port,host:port" from the parallel hosts and ports arrays; IPv6
 * addresses in brackets, as Ceph's mon_host wants them. */
static int
mon_host (struct rbdx_conninfo *ci, json_object *data, char *err,
          size_t errlen)
{
  json_object *hosts, *ports;
  char buf[2048] = "";
  size_t i, n;

  if (!json_object_object_get_ex (data, "hosts", &hosts) ||
      json_object_is_type (hosts, json_type_null))
    return 0;                   /* the conf file's monitors */
  if (!json_object_is_type (hosts, json_type_array))
    return bad (err, errlen, "connection_info: %s is not a list", "hosts");
  if (!json_object_object_get_ex (data, "ports", &ports) ||
      !json_object_is_type (ports, json_type_array))
    ports = NULL;
  n = json_object_array_length (hosts);
  for (i = 0; i < n; i++) {
    const char *h = json_object_get_string (json_object_array_get_idx (hosts, i));
    const char *p = ports && i < json_object_array_length (ports)
      ? json_object_get_string (json_object_array_get_idx (ports, i)) : NULL;
    bool v6 = h && strchr (h, ':') && h[0] != '[';

    if (!h || !*h)
      return bad (err, errlen, "connection_info: %s has an empty entry", "hosts");
    size_t used = strlen (buf);
    int w = snprintf (buf + used, sizeof buf - used, "%s%s%s%s%s%s",
                      i ? "," : "", v6 ? "[" : "", h, v6 ? "]" : "",
                      p && *p ? ":" : "", p && *p ? p : "");

    /* Never a monitor list cut short: it would name other hosts. */
    if (w < 0 || (size_t) w >= sizeof buf - used)
      return bad (err, errlen, "connection_info: %s make a mon_host longer "
                  "than %zu bytes", "hosts", sizeof buf - 1);
  }
  return n ? add (ci, "mon_host", buf) : 0;
}

/* Cinder's front-end QoS keys and the plugin's qos.* names. */
static const struct { const char *cinder, *rbdx; } qos_keys[] = {
  { "total_iops_sec", "qos.iops_limit" },
  { "read_iops_sec", "qos.read_iops_limit" },
  { "write_iops_sec", "qos.write_iops_limit" },
  { "total_bytes_sec", "qos.bps_limit" },
  { "read_bytes_sec", "qos.read_bps_limit" },
  { "write_bytes_sec", "qos.write_bps_limit" },
  { "total_iops_sec_max", "qos.iops_burst" },
  { "read_iops_sec_max", "qos.read_iops_burst" },
  { "write_iops_sec_max", "qos.write_iops_burst" },
  { "total_bytes_sec_max", "qos.bps_burst" },
  { "read_bytes_sec_max", "qos.read_bps_burst" },
  { "write_bytes_sec_max", "qos.write_bps_burst" },
};

static int
qos_specs (struct rbdx_conninfo *ci, json_object *data, char *err,
           size_t errlen)
{
  json_object *q, *v;
  char num[32];
  int r;

  if (!json_object_object_get_ex (data, "qos_specs", &q) ||
      json_object_is_type (q, json_type_null))
    return 0;
  if (!json_object_is_type (q, json_type_object))
    return bad (err, errlen, "connection_info: %s is not an object", "qos_specs");
  for (size_t i = 0; i < sizeof qos_keys / sizeof qos_keys[0]; i++) {
    const char *s;
    char *end;
    unsigned long long n;

    if (!json_object_object_get_ex (q, qos_keys[i].cinder, &v) ||
        json_object_is_type (v, json_type_null))
      continue;
    s = json_object_get_string (v);       /* numbers and strings alike */
    errno = 0;
    n = strtoull (s, &end, 10);
    if (errno || end == s || *end || s[0] == '-')
      return bad (err, errlen, "connection_info: qos_specs.%s is not a whole "
                  "number", qos_keys[i].cinder);
    if (n == 0)
      continue;                  /* Cinder: 0 means no limit */
    snprintf (num, sizeof num, "%llu", n);
    if ((r = add (ci, qos_keys[i].rbdx, num)) < 0)
      return r;
  }
  return 0;
}

int
rbdx_conninfo_parse (const char *text, struct rbdx_conninfo *ci, char *err,
                     size_t errlen)
{
  json_object *root, *data, *v;
  const char *s, *name;
  int r = -EINVAL;

  memset (ci, 0, sizeof *ci);
  root = json_tokener_parse (text);
  if (!root || !json_object_is_type (root, json_type_object)) {
    json_object_put (root);
    return bad (err, errlen, "connection_info: %s", "not a JSON object");
  }
  data = root;
  if ((s = str (root, "driver_volume_type")) && strcmp (s, "rbd") != 0) {
    bad (err, errlen, "connection_info: driver_volume_type is '%s', not rbd", s);
    goto out;
  }
  if (json_object_object_get_ex (root, "data", &v) &&
      json_object_is_type (v, json_type_object))
    data = v;
  name = str (data, "name");
  if (!name || !strchr (name, '/') || strlen (name) >= sizeof ci->spec) {
    bad (err, errlen, "connection_info: %s must be \"POOL/VOLUME\"", "data.name");
    goto out;
  }
  snprintf (ci->spec, sizeof ci->spec, "%s", name);
  if ((s = str (data, "volume_id")))
    snprintf (ci->volume_id, sizeof ci->volume_id, "%s", s);
  if ((s = str (data, "access_mode")) && strcmp (s, "ro") == 0)
    ci->read_only = true;
  if (json_object_object_get_ex (data, "auth_enabled", &v) &&
      json_object_get_boolean (v) && (s = str (data, "auth_username")) && *s &&
      (r = add (ci, "id", s)) < 0)
    goto out;
  if ((s = str (data, "cluster_name")) && *s && !rbdx_cluster_name_valid (s)) {
    /* librados makes it a path component (/etc/ceph/$cluster.conf). */
    char b[256];

    r = bad (err, errlen, "connection_info: data.cluster_name '%s' is no Ceph "
             "cluster name (letters, digits, '_' and '-' only)",
             rbdx_printable (s, b, sizeof b));
    goto out;
  }
  if (s && *s && strcmp (s, "ceph") != 0 &&
      (r = add (ci, "cluster", s)) < 0)
    goto out;
  if ((s = str (data, "keyring")) && *s && !(ci->keyring = strdup (s))) {
    r = -ENOMEM;
    goto out;
  }
  if ((r = mon_host (ci, data, err, errlen)) < 0 ||
      (r = qos_specs (ci, data, err, errlen)) < 0)
    goto out;
  r = 0;
out:
  json_object_put (root);
  if (r < 0)
    rbdx_conninfo_free (ci);
  return r;
}

char *
rbdx_conninfo_read (const char *path)
{
  FILE *f = strcmp (path, "-") == 0 ? stdin : fopen (path, "re");
  char *buf = NULL;
  size_t len = 0, n;

  if (!f)
    return NULL;
  for (;;) {
    char *b = realloc (buf, len + 65536 + 1);
    if (!b) {
      free (buf);
      buf = NULL;
      break;
    }
    buf = b;
    n = fread (buf + len, 1, 65536, f);
    len += n;
    if (n < 65536)
      break;
    if (len > 16 << 20) {         /* not a connection_info */
      free (buf);
      buf = NULL;
      errno = EFBIG;
      break;
    }
  }
  if (buf)
    buf[len] = '\0';
  if (f != stdin)
    fclose (f);
  return buf;
}

void
rbdx_conninfo_free (struct rbdx_conninfo *ci)
{
  for (size_t i = 0; i < ci->nparams; i++)
    free (ci->params[i]);
  ci->nparams = 0;
  if (ci->keyring) {
    explicit_bzero (ci->keyring, strlen (ci->keyring));
    free (ci->keyring);
    ci->keyring = NULL;
  }
}

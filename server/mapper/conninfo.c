/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/conninfo.c: a Cinder RBD connection_info parsed with
 * json-c into the map options it stands for (see conninfo.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
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

/* Every field is checked for its JSON type: a value of another type is
 * refused naming the field, never read as "absent" (an auth_username of
 * 5 would map as client.admin) nor converted (a "true" string taken for
 * a boolean).  null is absent, as Python's None that Cinder sends for
 * unset fields (auth_username without rbd_user, keyring, secret_uuid). */
static const char *const type_names[] = {
  [json_type_null] = "null", [json_type_boolean] = "a boolean",
  [json_type_double] = "a number with a fraction or exponent",
  [json_type_int] = "a number",
  [json_type_object] = "an object", [json_type_array] = "a list",
  [json_type_string] = "a string",
};

/* @p o's member @p key as @p want: 0 with *v NULL when absent or null,
 * 1 with *v set, or -EINVAL naming @p in KEY ("data.name") and both
 * types. */
static int
member (json_object *o, const char *in, const char *key, enum json_type want,
        json_object **v, char *err, size_t errlen)
{
  enum json_type t;

  *v = NULL;
  if (!json_object_object_get_ex (o, key, v) || !*v)
    return 0;
  t = json_object_get_type (*v);
  if (t != want) {
    *v = NULL;
    return bad (err, errlen, "connection_info: %s%s is %s, not %s", in, key,
                type_names[t], type_names[want]);
  }
  return 1;
}

/* A string member: NULL when absent or null; a NUL inside is refused
 * (C would cut the value there: "rbd/a\u0000b" is not "rbd/a"). */
static int
string (json_object *o, const char *in, const char *key, const char **s,
        char *err, size_t errlen)
{
  json_object *v;
  int r = member (o, in, key, json_type_string, &v, err, errlen);

  *s = NULL;
  if (r <= 0)
    return r;
  *s = json_object_get_string (v);
  if (strlen (*s) != (size_t) json_object_get_string_len (v))
    return bad (err, errlen, "connection_info: %s%s holds a NUL byte", in,
                key);
  return 1;
}

/* "host:port,host:port" from the parallel hosts and ports lists; IPv6
 * addresses in brackets, as Ceph's mon_host wants them.  Cinder sends
 * both as lists of strings of the same length (its _get_mon_addrs);
 * a port may also be a JSON number. */
static int
mon_host (struct rbdx_conninfo *ci, json_object *data, char *err,
          size_t errlen)
{
  json_object *hosts, *ports;
  char buf[2048] = "", b[256], pnum[16];
  size_t i, n, np;
  int r;

  if ((r = member (data, "data.", "hosts", json_type_array, &hosts, err,
                   errlen)) < 0 ||
      (r = member (data, "data.", "ports", json_type_array, &ports, err,
                   errlen)) < 0)
    return r;
  if (!hosts)
    return 0;                   /* the conf file's monitors */
  n = json_object_array_length (hosts);
  np = ports ? json_object_array_length (ports) : 0;
  if (np && np != n)
    return bad (err, errlen, "connection_info: data.hosts and data.ports "
                "differ in length (%zu and %zu)", n, np);
  for (i = 0; i < n; i++) {
    json_object *hv = json_object_array_get_idx (hosts, i);
    json_object *pv = np ? json_object_array_get_idx (ports, i) : NULL;
    const char *h, *p = NULL;
    bool v6;

    if (!json_object_is_type (hv, json_type_string))
      return bad (err, errlen, "connection_info: data.hosts[%zu] is %s, not "
                  "a string", i, type_names[json_object_get_type (hv)]);
    h = json_object_get_string (hv);
    if (!*h || strlen (h) != (size_t) json_object_get_string_len (hv))
      return bad (err, errlen, "connection_info: data.hosts[%zu] is empty or "
                  "holds a NUL byte", i);
    /* One monitor per entry: a separator of Ceph's mon_host list would
     * make one entry several monitors. */
    if (h[strcspn (h, ",; \t\n\r")])
      return bad (err, errlen, "connection_info: data.hosts[%zu] '%s' is not "
                  "one host", i, rbdx_printable (h, b, sizeof b));
    if (pv && json_object_is_type (pv, json_type_int)) {
      int64_t pn = json_object_get_int64 (pv);
      if (pn < 1 || pn > 65535)
        return bad (err, errlen, "connection_info: data.ports[%zu] %" PRId64
                    " is not a port", i, pn);
      snprintf (pnum, sizeof pnum, "%" PRId64, pn);
      p = pnum;
    }
    else if (pv && json_object_is_type (pv, json_type_string)) {
      p = json_object_get_string (pv);
      size_t len = strlen (p);
      if (len != (size_t) json_object_get_string_len (pv) || len > 5 ||
          p[strspn (p, "0123456789")] || (len && (p[0] == '0' ||
                                                  atoi (p) > 65535)))
        return bad (err, errlen, "connection_info: data.ports[%zu] '%s' is "
                    "not a port", i, rbdx_printable (p, b, sizeof b));
    }
    else if (pv)
      return bad (err, errlen, "connection_info: data.ports[%zu] is %s, not "
                  "a string or number", i,
                  type_names[json_object_get_type (pv)]);
    v6 = strchr (h, ':') && h[0] != '[';
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

/* Cinder's front-end QoS keys (its basic volume QoS: the fixed limits
 * and their _max bursts; the _max_length burst lengths in seconds as
 * libvirt's iotune, which Nova fills from the same qos_specs, has them)
 * and the plugin's qos.* names: the same token buckets as librbd's
 * rbd_qos_NAME_limit, _burst and _burst_seconds. */
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
  { "total_iops_sec_max_length", "qos.iops_burst_seconds" },
  { "read_iops_sec_max_length", "qos.read_iops_burst_seconds" },
  { "write_iops_sec_max_length", "qos.write_iops_burst_seconds" },
  { "total_bytes_sec_max_length", "qos.bps_burst_seconds" },
  { "read_bytes_sec_max_length", "qos.read_bps_burst_seconds" },
  { "write_bytes_sec_max_length", "qos.write_bps_burst_seconds" },
};

/* Note a warning (kept to RBDX_CONNINFO_MAX_WARN, the rest counted). */
static int __attribute__ ((format (printf, 2, 3)))
note_warning (struct rbdx_conninfo *ci, const char *fmt, ...)
{
  va_list ap;
  char *p;
  int r;

  if (ci->nwarn == RBDX_CONNINFO_MAX_WARN) {
    ci->nwarn_more++;
    return 0;
  }
  va_start (ap, fmt);
  r = vasprintf (&p, fmt, ap);
  va_end (ap);
  if (r < 0)
    return -ENOMEM;
  ci->warn[ci->nwarn++] = p;
  return 0;
}

/* A qos_specs value: a whole number, as a JSON number or a string of
 * decimal digits (Cinder keeps specs as strings; its per-GB limits
 * arrive computed, as numbers).  Nothing else: no sign, no blanks, no
 * fraction (strtoull alone would take " -5" for 2^64-5). */
static int
qos_value (json_object *v, const char *key, unsigned long long *n,
           char *err, size_t errlen)
{
  char b[128];

  if (json_object_is_type (v, json_type_int)) {
    int64_t i = json_object_get_int64 (v);
    /* json-c gives INT64_MAX for every larger number (UINT64_MAX for
     * every number above that as uint64): INT64_MAX itself cannot be
     * told from a number that was cut, so it is refused too. */
    if (i == INT64_MAX)
      return bad (err, errlen, "connection_info: data.qos_specs.%s is too "
                  "large for a JSON number here (at most %" PRId64 "; give "
                  "a larger one as a string of digits)",
                  rbdx_printable (key, b, sizeof b), INT64_MAX - 1);
    if (i >= 0) {
      *n = (unsigned long long) i;
      return 0;
    }
  }
  else if (json_object_is_type (v, json_type_string)) {
    const char *s = json_object_get_string (v);
    char *end, vb[128];

    errno = 0;
    *n = strtoull (s, &end, 10);
    if (s[0] >= '0' && s[0] <= '9' && !*end && !errno &&
        end - s == json_object_get_string_len (v))
      return 0;
    return bad (err, errlen, "connection_info: data.qos_specs.%s '%s' is not "
                "a whole number", rbdx_printable (key, b, sizeof b),
                rbdx_printable (s, vb, sizeof vb));
  }
  return bad (err, errlen, "connection_info: data.qos_specs.%s is %s, not a "
              "whole number", rbdx_printable (key, b, sizeof b),
              json_object_is_type (v, json_type_int) ? "negative"
              : type_names[json_object_get_type (v)]);
}

static int
qos_specs (struct rbdx_conninfo *ci, json_object *data, char *err,
           size_t errlen)
{
  json_object *q;
  char num[32], b[128];
  int r;

  if ((r = member (data, "data.", "qos_specs", json_type_object, &q, err,
                   errlen)) <= 0)
    return r;
  json_object_object_foreach (q, key, v) {
    unsigned long long n = 0;
    size_t i;

    for (i = 0; i < sizeof qos_keys / sizeof qos_keys[0]; i++)
      if (strcmp (key, qos_keys[i].cinder) == 0)
        break;
    if (i == sizeof qos_keys / sizeof qos_keys[0]) {
      /* Not a refusal: a newer Cinder's keys must not fail attachments. */
      r = note_warning (ci, "data.qos_specs.%s %s: ignored",
                rbdx_printable (key, b, sizeof b),
                strcmp (key, "size_iops_sec") == 0
                ? "(the I/O size that counts as one I/O) has no equivalent "
                  "in rbdx"
                : "is not a front-end QoS key rbdx knows");
      if (r < 0)
        return r;
      continue;
    }
    if (!v)
      continue;
    if ((r = qos_value (v, key, &n, err, errlen)) < 0)
      return r;
    if (n == 0)
      continue;                  /* Cinder: 0 means no limit */
    snprintf (num, sizeof num, "%llu", n);
    if ((r = add (ci, qos_keys[i].rbdx, num)) < 0)
      return r;
  }
  return 0;
}

/* The text, strictly: one JSON object and nothing after it but
 * whitespace.  json_tokener_parse stops at the end of the first value
 * and ignores the rest ('{...} x' parsed), and takes comments and
 * trailing commas; JSON_TOKENER_STRICT refuses those.  What follows the
 * value is checked here (json_tokener_get_parse_end), so that it is
 * named as such whatever json-c's version: 0.16's strict mode refuses
 * it too unless JSON_TOKENER_ALLOW_TRAILING_CHARS, 0.15 has no check. */
#ifndef JSON_TOKENER_ALLOW_TRAILING_CHARS
#define JSON_TOKENER_ALLOW_TRAILING_CHARS 0
#endif
static json_object *
parse_strict (const char *text, size_t len, char *err, size_t errlen)
{
  struct json_tokener *tok = json_tokener_new ();
  json_object *root = NULL;
  enum json_tokener_error e;
  size_t end;

  if (len > INT32_MAX || !tok) {  /* rbdx_conninfo_read stops at 16 MiB */
    bad (err, errlen, "connection_info: %s", tok ? "too long" : "out of memory");
    if (tok)
      json_tokener_free (tok);
    return NULL;
  }
  /* json-c keeps object keys as C strings: a key "auth_username\u0000"
   * (or one holding a raw NUL byte) would become "auth_username" and
   * replace the real one, which os-brick's Python reads as another key.
   * So no NUL anywhere, escaped or raw (values are checked again by
   * string()). */
  for (size_t i = 0; i < len; i++) {
    if (text[i] == '\0' ||
        (text[i] == '\\' && i + 5 < len && text[i + 1] == 'u' &&
         !memcmp (text + i + 2, "0000", 4))) {
      json_tokener_free (tok);
      bad (err, errlen, "connection_info: a NUL character (at byte %zu): no "
           "key or value may hold one", i);
      return NULL;
    }
    if (text[i] == '\\')
      i++;                      /* the escaped character: never a NUL start */
  }
  json_tokener_set_flags (tok, JSON_TOKENER_STRICT |
                          JSON_TOKENER_ALLOW_TRAILING_CHARS);
  root = json_tokener_parse_ex (tok, text, (int) len);
  e = json_tokener_get_error (tok);
  end = json_tokener_get_parse_end (tok);
  if (root && e == json_tokener_success)
    while (end < len && strchr (" \t\n\r", text[end]) && text[end])
      end++;
  if (!root || e != json_tokener_success || end < len) {
    if (root && e == json_tokener_success)
      bad (err, errlen, "connection_info: data after the JSON object (at "
           "byte %zu)", end);
    else
      bad (err, errlen, "connection_info: not JSON (%s at byte %zu)",
           e == json_tokener_continue ? "it ends early"
           : json_tokener_error_desc (e), end);
    json_object_put (root);
    root = NULL;
  }
  json_tokener_free (tok);
  return root;
}

int
rbdx_conninfo_parse (const char *text, size_t len, struct rbdx_conninfo *ci,
                     char *err, size_t errlen)
{
  json_object *root, *data, *v;
  const char *s, *name, *user;
  char b[256];
  int r = -EINVAL;

  memset (ci, 0, sizeof *ci);
  if (!(root = parse_strict (text, len, err, errlen)))
    return -EINVAL;
  if (!json_object_is_type (root, json_type_object)) {
    json_object_put (root);
    return bad (err, errlen, "connection_info: %s", "not a JSON object");
  }
  data = root;
  /* The whole connection_info ("data" inside) or its data alone. */
  if (json_object_object_get_ex (root, "driver_volume_type", NULL) ||
      json_object_object_get_ex (root, "data", NULL)) {
    if (string (root, "", "driver_volume_type", &s, err, errlen) < 0 ||
        member (root, "", "data", json_type_object, &data, err, errlen) < 0)
      goto out;
    if (s && strcmp (s, "rbd") != 0) {
      bad (err, errlen, "connection_info: driver_volume_type is '%s', not "
           "rbd", rbdx_printable (s, b, sizeof b));
      goto out;
    }
    if (!data) {
      bad (err, errlen, "connection_info: no data object");
      goto out;
    }
  }
  if ((r = string (data, "data.", "name", &name, err, errlen)) < 0)
    goto out;
  if (!name || !strchr (name, '/') || strlen (name) >= sizeof ci->spec) {
    r = bad (err, errlen, "connection_info: %s must be \"POOL/VOLUME\"",
             "data.name");
    goto out;
  }
  snprintf (ci->spec, sizeof ci->spec, "%s", name);
  if ((r = string (data, "data.", "volume_id", &s, err, errlen)) < 0)
    goto out;
  if (s && strlen (s) >= sizeof ci->volume_id) {
    r = bad (err, errlen, "connection_info: data.volume_id is longer than "
             "%zu bytes", sizeof ci->volume_id - 1);
    goto out;
  }
  if (s)
    snprintf (ci->volume_id, sizeof ci->volume_id, "%s", s);
  /* Cinder sends "rw" or "ro" (Nova refuses anything else too): any
   * other word would be a guess, and a wrong guess maps read-write. */
  if ((r = string (data, "data.", "access_mode", &s, err, errlen)) < 0)
    goto out;
  if (s && strcmp (s, "ro") != 0 && strcmp (s, "rw") != 0) {
    r = bad (err, errlen, "connection_info: data.access_mode '%s' is neither "
             "\"rw\" nor \"ro\"", rbdx_printable (s, b, sizeof b));
    goto out;
  }
  ci->read_only = s && strcmp (s, "ro") == 0;
  /* Cinder sets auth_enabled to whether it has an rbd_user and sends
   * that user as auth_username (null without one).  os-brick's RBD
   * connector never reads auth_enabled: it takes auth_username as a
   * required key ("malformed connection properties" without it) and
   * passes it as --id.  So the user is used whenever given, and
   * auth_enabled true without one is refused: without id= librados
   * would connect as client.admin with whatever keyring it finds. */
  if ((r = member (data, "data.", "auth_enabled", json_type_boolean, &v, err,
                   errlen)) < 0 ||
      (r = string (data, "data.", "auth_username", &user, err, errlen)) < 0)
    goto out;
  if (v && json_object_get_boolean (v) && (!user || !*user)) {
    r = bad (err, errlen, "connection_info: data.auth_enabled is true but "
             "data.auth_username is %s", user ? "empty" : "missing");
    goto out;
  }
  if (user && *user && (r = add (ci, "id", user)) < 0)
    goto out;
  if ((r = string (data, "data.", "cluster_name", &s, err, errlen)) < 0)
    goto out;
  if (s && *s && !rbdx_cluster_name_valid (s)) {
    /* librados makes it a path component (/etc/ceph/$cluster.conf). */
    r = bad (err, errlen, "connection_info: data.cluster_name '%s' is no Ceph "
             "cluster name (letters, digits, '_' and '-' only)",
             rbdx_printable (s, b, sizeof b));
    goto out;
  }
  if (s && *s && strcmp (s, "ceph") != 0 &&
      (r = add (ci, "cluster", s)) < 0)
    goto out;
  if ((r = string (data, "data.", "keyring", &s, err, errlen)) < 0)
    goto out;
  if (s && *s && !(ci->keyring = strdup (s))) {
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
rbdx_conninfo_read (const char *path, size_t *lenp)
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
  if (buf) {
    buf[len] = '\0';
    *lenp = len;
  }
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
  for (size_t i = 0; i < ci->nwarn; i++)
    free (ci->warn[i]);
  ci->nwarn = ci->nwarn_more = 0;
  if (ci->keyring) {
    explicit_bzero (ci->keyring, strlen (ci->keyring));
    free (ci->keyring);
    ci->keyring = NULL;
  }
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: the connection_info parser (server/mapper/conninfo.h),
 * case C34 of tests/README.md.
 *
 * Every field of a connection_info is hostile input: a Cinder-like one
 * (null for unset fields, qos values as strings and numbers) gives the
 * parameters it stands for; access_mode other than exactly "rw" or "ro",
 * data after the JSON object (a word, a second object, a NUL byte), a
 * comment or trailing comma, auth_enabled true without auth_username,
 * and every field given a value of the wrong JSON type are refused
 * with a message naming the field (and the value, escaped); qos_specs
 * keys rbdx does not map are warnings naming each key, not refusals.
 * No root, no cluster.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mapper/conninfo.h"

static char err[512];

static int
parse_n (const char *text, size_t len, struct rbdx_conninfo *ci)
{
  err[0] = '\0';
  return rbdx_conninfo_parse (text, len, ci, err, sizeof err);
}

static int
parse (const char *text, struct rbdx_conninfo *ci)
{
  return parse_n (text, strlen (text), ci);
}

static bool
has_param (const struct rbdx_conninfo *ci, const char *kv)
{
  for (size_t i = 0; i < ci->nparams; i++)
    if (strcmp (ci->params[i], kv) == 0)
      return true;
  return false;
}

/* TEXT is refused (-EINVAL) with SHOWN in the message. */
static void
refused (const char *text, const char *shown)
{
  struct rbdx_conninfo ci;
  int r = parse (text, &ci);

  if (r != -EINVAL || !strstr (err, shown))
    fail_msg ("%s: got %d '%s', want -EINVAL naming \"%s\"", text, r, err,
              shown);
  assert_int_equal (ci.nparams, 0);
  assert_null (ci.keyring);
}

/* What Cinder's RBD driver and volume manager send (null where unset). */
static void
test_cinder (void **state)
{
  struct rbdx_conninfo ci;

  (void) state;
  assert_int_equal (parse (
    "{\"driver_volume_type\": \"rbd\", \"data\": {\"name\": \"volumes/vol-1\","
    " \"hosts\": [\"10.0.0.1\", \"::1\"], \"ports\": [\"6789\", 3300],"
    " \"cluster_name\": \"ceph\", \"auth_enabled\": true,"
    " \"auth_username\": \"cinder\", \"secret_type\": \"ceph\","
    " \"secret_uuid\": null, \"volume_id\": \"1234\", \"discard\": true,"
    " \"keyring\": null, \"access_mode\": \"rw\", \"encrypted\": false,"
    " \"qos_specs\": {\"total_iops_sec\": \"500\", \"read_bytes_sec\": 10485760,"
    " \"write_iops_sec_max\": \"800\", \"write_iops_sec_max_length\": 5,"
    " \"total_bytes_sec\": \"0\", \"read_iops_sec\": null}}}\n", &ci), 0);
  assert_string_equal (ci.spec, "volumes/vol-1");
  assert_string_equal (ci.volume_id, "1234");
  assert_false (ci.read_only);
  assert_null (ci.keyring);
  assert_true (has_param (&ci, "id=cinder"));
  assert_true (has_param (&ci, "mon_host=10.0.0.1:6789,[::1]:3300"));
  assert_true (has_param (&ci, "qos.iops_limit=500"));
  assert_true (has_param (&ci, "qos.read_bps_limit=10485760"));
  assert_true (has_param (&ci, "qos.write_iops_burst=800"));
  assert_true (has_param (&ci, "qos.write_iops_burst_seconds=5"));
  assert_int_equal (ci.nparams, 6);   /* 0 and null: no limit */
  assert_int_equal (ci.nwarn, 0);
  rbdx_conninfo_free (&ci);
}

/* access_mode: exactly "rw" or "ro"; absent or null is rw. */
static void
test_access_mode (void **state)
{
  static const struct { const char *text; bool ro; } ok[] = {
    { "{\"name\":\"rbd/v\",\"access_mode\":\"ro\"}", true },
    { "{\"name\":\"rbd/v\",\"access_mode\":\"rw\"}", false },
    { "{\"name\":\"rbd/v\"}", false },
    { "{\"name\":\"rbd/v\",\"access_mode\":null}", false },
  };
  struct rbdx_conninfo ci;

  (void) state;
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    assert_int_equal (parse (ok[i].text, &ci), 0);
    assert_int_equal (ci.read_only, ok[i].ro);
    rbdx_conninfo_free (&ci);
  }
  refused ("{\"name\":\"rbd/v\",\"access_mode\":\"RO\"}",
           "data.access_mode 'RO' is neither \"rw\" nor \"ro\"");
  refused ("{\"name\":\"rbd/v\",\"access_mode\":\"rx\"}",
           "data.access_mode 'rx'");
  refused ("{\"name\":\"rbd/v\",\"access_mode\":\"ro \"}",
           "data.access_mode 'ro '");
  refused ("{\"name\":\"rbd/v\",\"access_mode\":\"\"}", "data.access_mode ''");
  refused ("{\"name\":\"rbd/v\",\"access_mode\":\"r\\no\"}",
           "data.access_mode 'r\\x0ao'");
  refused ("{\"name\":\"rbd/v\",\"access_mode\":\"ro\\u0000x\"}",
           "a NUL character (at byte 33)");
  refused ("{\"name\":\"rbd/v\",\"access_mode\":1}",
           "data.access_mode is a number, not a string");
  refused ("{\"name\":\"rbd/v\",\"access_mode\":true}",
           "data.access_mode is a boolean, not a string");
}

/* One JSON object, nothing after it but whitespace. */
static void
test_trailing (void **state)
{
  static const char nul[] = "{\"data\":{\"name\":\"rbd/vm1\"}}\0x";
  struct rbdx_conninfo ci;

  (void) state;
  assert_int_equal (parse (" {\"data\":{\"name\":\"rbd/vm1\"}} \n\t\r\n", &ci), 0);
  rbdx_conninfo_free (&ci);
  refused ("{\"data\":{\"name\":\"rbd/vm1\"}} x",
           "data after the JSON object (at byte 28)");
  refused ("{\"data\":{\"name\":\"rbd/vm1\"}}{}", "data after the JSON object");
  refused ("{\"data\":{\"name\":\"rbd/vm1\"}}\n{\"data\":{\"name\":\"rbd/vm2\"}}",
           "data after the JSON object");
  refused ("{\"data\":{\"name\":\"rbd/vm1\"}}/* c */",
           "data after the JSON object");
  assert_int_equal (parse_n (nul, sizeof nul - 1, &ci), -EINVAL);
  assert_non_null (strstr (err, "a NUL character (at byte 27)"));
  /* A NUL in a key: json-c would read "auth_username\u0000" as
   * auth_username and let it replace the real one (Python, os-brick's
   * reader, sees two keys), and "data\u0000" as a second data. */
  refused ("{\"data\":{\"name\":\"rbd/a\",\"access_mode\":\"ro\",\"auth_username\":"
           "\"cinder\",\"auth_username\\u0000\":\"admin\",\"access_mode\\u0000\":\"rw\"}}",
           "a NUL character (at byte");
  refused ("{\"driver_volume_type\":\"rbd\",\"data\":{\"name\":\"rbd/a\"},"
           "\"data\\u0000\":{\"name\":\"rbd/b\"}}", "a NUL character (at byte");
  /* An escaped backslash before "u0000" is no NUL. */
  assert_int_equal (parse ("{\"name\":\"rbd/v\",\"volume_id\":\"a\\\\u0000\"}", &ci), 0);
  rbdx_conninfo_free (&ci);
  refused ("{\"data\":{\"name\":\"rbd/vm1\",}}", "not JSON");
  refused ("{\"data\":{\"name\":\"rbd/vm1\"}", "not JSON (it ends early");
  refused ("", "not JSON");
  refused ("[{\"name\":\"rbd/vm1\"}]", "not a JSON object");
}

/* auth_enabled true needs auth_username (os-brick requires it); a
 * given user is used. */
static void
test_auth (void **state)
{
  struct rbdx_conninfo ci;

  (void) state;
  refused ("{\"name\":\"rbd/v\",\"auth_enabled\":true}",
           "data.auth_enabled is true but data.auth_username is missing");
  refused ("{\"name\":\"rbd/v\",\"auth_enabled\":true,\"auth_username\":null}",
           "data.auth_username is missing");
  refused ("{\"name\":\"rbd/v\",\"auth_enabled\":true,\"auth_username\":\"\"}",
           "data.auth_username is empty");
  refused ("{\"name\":\"rbd/v\",\"auth_enabled\":\"true\",\"auth_username\":\"c\"}",
           "data.auth_enabled is a string, not a boolean");
  refused ("{\"name\":\"rbd/v\",\"auth_enabled\":1,\"auth_username\":\"c\"}",
           "data.auth_enabled is a number, not a boolean");
  refused ("{\"name\":\"rbd/v\",\"auth_enabled\":true,\"auth_username\":5}",
           "data.auth_username is a number, not a string");
  refused ("{\"name\":\"rbd/v\",\"auth_username\":[\"c\"]}",
           "data.auth_username is a list, not a string");
  assert_int_equal (parse ("{\"name\":\"rbd/v\",\"auth_enabled\":false}", &ci), 0);
  assert_int_equal (ci.nparams, 0);
  rbdx_conninfo_free (&ci);
  assert_int_equal (parse ("{\"name\":\"rbd/v\",\"auth_enabled\":false,"
                           "\"auth_username\":\"c\"}", &ci), 0);
  assert_true (has_param (&ci, "id=c"));
  rbdx_conninfo_free (&ci);
}

/* Wrong JSON types everywhere else: refused naming the field. */
static void
test_types (void **state)
{
  (void) state;
  refused ("{\"data\":\"x\"}",
           "connection_info: data is a string, not an object");
  refused ("{\"driver_volume_type\":\"rbd\",\"data\":null}", "no data object");
  refused ("{\"driver_volume_type\":7,\"data\":{\"name\":\"rbd/v\"}}",
           "driver_volume_type is a number, not a string");
  refused ("{\"driver_volume_type\":\"rbd\\n\",\"data\":{\"name\":\"rbd/v\"}}",
           "driver_volume_type is 'rbd\\x0a', not rbd");
  refused ("{\"name\":5}", "data.name is a number, not a string");
  refused ("{\"name\":\"rbd/v\\u0000--x\"}", "a NUL character (at byte 14)");
  refused ("{\"name\":\"rbd/v\",\"keyring\":5}", "data.keyring is a number");
  refused ("{\"name\":\"rbd/v\",\"cluster_name\":[]}",
           "data.cluster_name is a list");
  refused ("{\"name\":\"rbd/v\",\"volume_id\":{}}",
           "data.volume_id is an object");
  refused ("{\"name\":\"rbd/v\",\"hosts\":\"10.0.0.1\"}",
           "data.hosts is a string, not a list");
  refused ("{\"name\":\"rbd/v\",\"hosts\":[\"a\"],\"ports\":\"6789\"}",
           "data.ports is a string, not a list");
  refused ("{\"name\":\"rbd/v\",\"hosts\":[5]}",
           "data.hosts[0] is a number, not a string");
  refused ("{\"name\":\"rbd/v\",\"hosts\":[\"a\",\"\"]}",
           "data.hosts[1] is empty");
  refused ("{\"name\":\"rbd/v\",\"hosts\":[\"a,b\"]}",
           "data.hosts[0] 'a,b' is not one host");
  refused ("{\"name\":\"rbd/v\",\"hosts\":[\"a b\"]}", "data.hosts[0] 'a b'");
  refused ("{\"name\":\"rbd/v\",\"hosts\":[\"a\"],\"ports\":[true]}",
           "data.ports[0] is a boolean, not a string or number");
  refused ("{\"name\":\"rbd/v\",\"hosts\":[\"a\"],\"ports\":[\"1,b:2\"]}",
           "data.ports[0] '1,b:2' is not a port");
  refused ("{\"name\":\"rbd/v\",\"hosts\":[\"a\"],\"ports\":[70000]}",
           "data.ports[0] 70000 is not a port");
  refused ("{\"name\":\"rbd/v\",\"hosts\":[\"a\"],\"ports\":[\"1\",\"2\"]}",
           "data.hosts and data.ports differ in length (1 and 2)");
  refused ("{\"name\":\"rbd/v\",\"qos_specs\":[]}",
           "data.qos_specs is a list, not an object");
}

/* qos_specs: values are whole numbers (JSON numbers or digit strings);
 * keys rbdx does not map are named in warnings and ignored. */
static void
test_qos (void **state)
{
  struct rbdx_conninfo ci;
  char text[4096];
  size_t n;

  (void) state;
  refused ("{\"name\":\"rbd/v\",\"qos_specs\":{\"total_iops_sec\":\" -5\"}}",
           "data.qos_specs.total_iops_sec ' -5' is not a whole number");
  refused ("{\"name\":\"rbd/v\",\"qos_specs\":{\"total_iops_sec\":\"5 \"}}",
           "'5 '");
  refused ("{\"name\":\"rbd/v\",\"qos_specs\":{\"total_iops_sec\":\"+5\"}}",
           "'+5'");
  refused ("{\"name\":\"rbd/v\",\"qos_specs\":{\"total_iops_sec\":\"\"}}", "''");
  refused ("{\"name\":\"rbd/v\",\"qos_specs\":{\"total_iops_sec\":"
           "\"18446744073709551616\"}}", "'18446744073709551616'");
  /* json-c 0.16 (Debian 12) cuts larger JSON numbers to 2^63 - 1
   * without a word; 0.18 (Debian 13) refuses those above 2^64 - 1 as it
   * parses, so a number of 2^64 gets either message. */
  refused ("{\"name\":\"rbd/v\",\"qos_specs\":{\"total_iops_sec\":"
           "18446744073709551615}}", "total_iops_sec is too large");
  {
    struct rbdx_conninfo ci2;
    int r = parse ("{\"name\":\"rbd/v\",\"qos_specs\":{\"total_iops_sec\":"
                   "18446744073709551616}}", &ci2);

    if (r != -EINVAL || (!strstr (err, "total_iops_sec is too large") &&
                         !strstr (err, "not JSON")))
      fail_msg ("2^64 as a number: got %d '%s'", r, err);
  }
  refused ("{\"name\":\"rbd/v\",\"qos_specs\":{\"total_iops_sec\":"
           "9223372036854775807}}", "at most 9223372036854775806");
  refused ("{\"name\":\"rbd/v\",\"qos_specs\":{\"total_iops_sec\":-1}}",
           "data.qos_specs.total_iops_sec is negative");
  refused ("{\"name\":\"rbd/v\",\"qos_specs\":{\"read_bytes_sec\":1.5}}",
           "data.qos_specs.read_bytes_sec is a number with a fraction");
  refused ("{\"name\":\"rbd/v\",\"qos_specs\":{\"read_bytes_sec\":true}}",
           "data.qos_specs.read_bytes_sec is a boolean, not a whole number");
  refused ("{\"name\":\"rbd/v\",\"qos_specs\":{\"read_bytes_sec\":\"1\\u00002\"}}",
           "a NUL character (at byte");

  assert_int_equal (parse ("{\"name\":\"rbd/v\",\"qos_specs\":{\"foo\":\"1\","
                           "\"size_iops_sec\":\"4096\",\"total_iops_sec\":\"9\","
                           "\"bar\\nFORGED\":true}}", &ci), 0);
  assert_int_equal (ci.nparams, 1);
  assert_true (has_param (&ci, "qos.iops_limit=9"));
  assert_int_equal (ci.nwarn, 3);
  assert_string_equal (ci.warn[0], "data.qos_specs.foo is not a front-end QoS "
                       "key rbdx knows: ignored");
  assert_non_null (strstr (ci.warn[1], "data.qos_specs.size_iops_sec "));
  assert_non_null (strstr (ci.warn[1], "has no equivalent in rbdx: ignored"));
  assert_non_null (strstr (ci.warn[2], "data.qos_specs.bar\\x0aFORGED is not"));
  rbdx_conninfo_free (&ci);

  assert_int_equal (parse ("{\"name\":\"rbd/v\",\"qos_specs\":{"
                           "\"total_iops_sec\":9223372036854775806}}", &ci), 0);
  assert_true (has_param (&ci, "qos.iops_limit=9223372036854775806"));
  rbdx_conninfo_free (&ci);

  /* Every burst length maps to its burst_seconds. */
  assert_int_equal (parse ("{\"name\":\"rbd/v\",\"qos_specs\":{"
                           "\"total_iops_sec_max_length\":\"2\","
                           "\"read_iops_sec_max_length\":3,"
                           "\"write_iops_sec_max_length\":\"4\","
                           "\"total_bytes_sec_max_length\":\"5\","
                           "\"read_bytes_sec_max_length\":\"6\","
                           "\"write_bytes_sec_max_length\":\"0\"}}", &ci), 0);
  assert_int_equal (ci.nwarn, 0);
  assert_int_equal (ci.nparams, 5);
  assert_true (has_param (&ci, "qos.iops_burst_seconds=2"));
  assert_true (has_param (&ci, "qos.read_iops_burst_seconds=3"));
  assert_true (has_param (&ci, "qos.write_iops_burst_seconds=4"));
  assert_true (has_param (&ci, "qos.bps_burst_seconds=5"));
  assert_true (has_param (&ci, "qos.read_bps_burst_seconds=6"));
  rbdx_conninfo_free (&ci);

  /* Many unknown keys: the first RBDX_CONNINFO_MAX_WARN named, the rest
   * counted. */
  n = (size_t) snprintf (text, sizeof text, "{\"name\":\"rbd/v\",\"qos_specs\":{");
  for (int i = 0; i < 20; i++)
    n += (size_t) snprintf (text + n, sizeof text - n, "%s\"k%d\":1",
                            i ? "," : "", i);
  snprintf (text + n, sizeof text - n, "}}");
  assert_int_equal (parse (text, &ci), 0);
  assert_int_equal (ci.nwarn, RBDX_CONNINFO_MAX_WARN);
  assert_int_equal (ci.nwarn_more, 20 - RBDX_CONNINFO_MAX_WARN);
  rbdx_conninfo_free (&ci);
  assert_int_equal (ci.nwarn, 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_cinder),
    cmocka_unit_test (test_access_mode),
    cmocka_unit_test (test_trailing),
    cmocka_unit_test (test_auth),
    cmocka_unit_test (test_types),
    cmocka_unit_test (test_qos),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

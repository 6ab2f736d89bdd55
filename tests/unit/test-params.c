/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test-params.c: the parameters the mapper hands its server
 * (server/mapper/params.h): every parameter the core lists as naming a
 * file (include/rbdx/options.h, rbdx_options_wants_absolute) is made
 * absolute against the current directory, and nothing else is touched
 * (case C26).  Runs in a scratch directory of its own; no root.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mapper/params.h"

static char dir[PATH_MAX];

static void
expect (const char *in, const char *want)
{
  char *got = rbdx_param_absolute (in);

  assert_non_null (got);
  assert_string_equal (got, want);
  free (got);
}

/* KEY=DIR/VALUE for the scratch directory. */
static void
expect_abs (const char *key, const char *value)
{
  char in[PATH_MAX + 64], want[2 * PATH_MAX];

  snprintf (in, sizeof in, "%s=%s", key, value);
  snprintf (want, sizeof want, "%s=%s/%s", key, dir, value);
  expect (in, want);
}

static void
test_every_path_parameter (void **state)
{
  static const char *const keys[] = {
    "conf", "keyring", "size_file", "encryption_passphrase_file",
    "metrics_file", "ceph.keyring", "ceph.keyfile", "ceph.log_file",
    "ceph.admin_socket",
  };

  (void) state;
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
    expect_abs (keys[i], "vm.pass");
    expect_abs (keys[i], "sub/dir/m.prom");
  }
}

static void
test_left_alone (void **state)
{
  (void) state;
  /* Absolute already, Ceph's $variables, and parameters that are no
   * file names. */
  expect ("encryption_passphrase_file=/etc/vm.pass",
          "encryption_passphrase_file=/etc/vm.pass");
  expect ("ceph.log_file=$run_dir/$name.log", "ceph.log_file=$run_dir/$name.log");
  expect ("id=admin", "id=admin");
  expect ("writers=shared", "writers=shared");
  expect ("encryption_format=luks2", "encryption_format=luks2");
  expect ("image=rbd/vm", "image=rbd/vm");
  expect ("metrics_interval=2", "metrics_interval=2");
  /* An empty value is the server's to refuse. */
  expect ("metrics_file=", "metrics_file=");
}

static void
test_bad_input (void **state)
{
  (void) state;
  errno = 0;
  assert_null (rbdx_param_absolute ("no-equals-sign"));
  assert_int_equal (errno, EINVAL);
  errno = 0;
  assert_null (rbdx_param_absolute ("=value"));
  assert_int_equal (errno, EINVAL);
}

static void
test_find (void **state)
{
  char *p[] = { "id=admin", "metrics_file=/d/a.prom", "metrics_interval=5",
                "metrics_file=/d/b.prom", "metrics=no" };

  (void) state;
  assert_string_equal (rbdx_param_find (p, 5, "metrics_file"), "/d/b.prom");
  assert_string_equal (rbdx_param_find (p, 5, "metrics_interval"), "5");
  assert_string_equal (rbdx_param_find (p, 5, "metrics"), "no");
  assert_null (rbdx_param_find (p, 5, "metrics_"));
  assert_null (rbdx_param_find (p, 5, "size_file"));
  assert_null (rbdx_param_find (p, 0, "id"));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_every_path_parameter),
    cmocka_unit_test (test_left_alone),
    cmocka_unit_test (test_bad_input),
    cmocka_unit_test (test_find),
  };
  char tmpl[] = "/tmp/rbdx-test-params-XXXXXX";
  int r;

  if (!mkdtemp (tmpl) || chdir (tmpl) < 0 || !getcwd (dir, sizeof dir)) {
    perror ("test-params: scratch directory");
    return 1;
  }
  r = cmocka_run_group_tests (tests, NULL, NULL);
  if (chdir ("/") < 0 || rmdir (tmpl) < 0)
    perror ("test-params: removing the scratch directory");
  return r;
}

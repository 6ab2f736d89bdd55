/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: what the mapper passes to the server it starts
 * (server/mapper/target.h rbdx_args_check, server/mapper/server-args.h).
 *
 * The check refuses every spec and parameter that a server could take
 * for an option or a second parameter, or that would split a state file
 * line (cases C21, C25 of tests/README.md), and raw keys on a command
 * line (C24), with a message naming the value (never a key's value);
 * it accepts ordinary specs, URIs and parameters.  The builder gives
 * nbdkit and the engine their options, "--", and the image as
 * image=SPEC.  No root, no kernel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mapper/server-args.h"
#include "mapper/target.h"

static void
test_accepts (void **state)
{
  static const char *targets[] = {
    "rbd/vm1", "vm", "rbd/ns/img@snap", "pool-1/a-b_c.d@s-1",
    "nbd+unix:///x?socket=/run/s", "nbd://h:10809/e",
  };
  char *params[] = {
    "id=admin", "ceph.rbd_cache=false", "qos.iops_limit=500",
    "keyring=/etc/ceph/k", "conf=/etc/ceph/ceph.conf", "writers=shared",
    "mon_host=[::1]:6789,10.0.0.1:3300", "exclusive=true", "cluster=Site_b-2",
  };
  char why[512];

  (void) state;
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
    assert_int_equal (rbdx_args_check (targets[i], NULL, 0, why, sizeof why), 0);
  assert_int_equal (rbdx_args_check ("rbd/vm1", params, 9, why, sizeof why), 0);
}

/* @p target with @p param (or none) is refused, with @p shown in the
 * message and @p hidden not. */
static void
refused (const char *target, const char *param, const char *shown,
         const char *hidden)
{
  char *p[1] = { (char *) param }, why[512];

  assert_int_equal (rbdx_args_check (target, p, param ? 1 : 0, why, sizeof why), -1);
  if (!strstr (why, shown))
    fail_msg ("refusing '%s' '%s' said '%s', without '%s'", target,
              param ? param : "", why, shown);
  if (hidden && strstr (why, hidden))
    fail_msg ("the message '%s' shows '%s'", why, hidden);
  assert_null (strchr (why, '\n'));
}

static void
test_refuses_specs (void **state)
{
  (void) state;
  refused ("--filter=/tmp/x.so", NULL, "'--filter=/tmp/x.so'", NULL);
  refused ("--run=/bin/true", NULL, "'--run=/bin/true'", NULL);
  refused ("--pidfile=/tmp/p", NULL, "'--pidfile=/tmp/p'", NULL);
  refused ("-x", NULL, "'-x'", NULL);
  refused ("rbd/a=b", NULL, "'rbd/a=b' contains '='", NULL);
  refused ("conf=/x/y", NULL, "'conf=/x/y'", NULL);
  refused ("keyring=/x/k", NULL, "'keyring=/x/k'", NULL);
  refused ("rbd/-x", NULL, "'rbd/-x': a component starts with '-'", NULL);
  refused ("rbd/ns/-x", NULL, "'rbd/ns/-x'", NULL);
  refused ("rbd/x@-s", NULL, "'rbd/x@-s'", NULL);
  refused ("rbd/a\nb", NULL, "'rbd/a\\x0ab' holds a control character", NULL);
  refused ("rbd/a\tb\x01", NULL, "'rbd/a\\x09b\\x01'", NULL);
  refused ("nbd+unix:///x?socket=/s\nx", NULL, "NBD URI", NULL);
}

static void
test_refuses_params (void **state)
{
  (void) state;
  refused ("rbd/x", "ceph.key=AQBsecret==", "ceph.key=", "AQBsecret");
  refused ("rbd/x", "ceph.key=AQBsecret==", "keyring=FILE", "AQBsecret");
  refused ("rbd/x", "key=AQBsecret==", "key=", "AQBsecret");
  refused ("rbd/x", "ceph.keyfile=/etc/k", "keyring=FILE", NULL);
  refused ("rbd/x", "image=rbd/y", "image=", NULL);
  refused ("rbd/x", "pool=rbd", "pool=", NULL);
  refused ("rbd/x", "--filter=/tmp/x.so", "'--filter=/tmp/x.so'", NULL);
  refused ("rbd/x", "id=--run=/bin/sh", "'id=--run=/bin/sh': the value starts with '-'", NULL);
  refused ("rbd/x", "id=a\nsupervisor=1", "'id=a\\x0asupervisor=1'", NULL);
  refused ("rbd/x", "noequals", "'noequals' is not KEY=VALUE", NULL);
  refused ("rbd/x", "=v", "'=v' is not KEY=VALUE", NULL);
  refused ("rbd/x", "rbd/a=b", "'rbd/a' is not a parameter name", NULL);
  /* The cluster name is a path component in librados: [A-Za-z0-9_-]+. */
  refused ("rbd/x", "cluster=../../tmp/x", "'cluster=../../tmp/x': a Ceph cluster "
           "name is letters", NULL);
  refused ("rbd/x", "cluster=a/b", "'cluster=a/b'", NULL);
  refused ("rbd/x", "cluster=..", "'cluster=..'", NULL);
  refused ("rbd/x", "ceph.cluster=x.y", "'ceph.cluster=x.y'", NULL);
  /* The bad key is escaped too, not only the whole parameter. */
  refused ("rbd/x", "a\nb=c", "': 'a\\x0ab' is not a parameter name", NULL);
}

static void
assert_argv (char **argv, const char *const *want)
{
  size_t i;

  assert_non_null (argv);
  for (i = 0; want[i]; i++) {
    assert_non_null (argv[i]);
    assert_string_equal (argv[i], want[i]);
  }
  assert_null (argv[i]);
}

static void
test_argv (void **state)
{
  char *params[] = { "id=admin", "writers=shared" };
  struct rbdx_map_opts o = {
    .target = "rbd/ns/img@snap", .read_only = true, .nbdkit = "nbdkit",
    .plugin = "/p/rbdx.so", .params = params, .nparams = 2,
  };
  static const char *const want_nbdkit[] = {
    "nbdkit", "--foreground", "--threads=8", "--unix", "/r/s", "--readonly", "--",
    "/p/rbdx.so", "image=rbd/ns/img@snap", "size_file=/r/size",
    "advertise_size=max", "metrics_file=/r/m", "metrics_interval=2",
    "identity=2/ab@4", "id=admin", "writers=shared", NULL,
  };
  static const char *const want_engine[] = {
    "/e/rbdx-engine", "--control", "/r/s", "--", "image=rbd/ns/img@snap",
    "size_file=/r/size", "advertise_size=max", "metrics_file=/r/m",
    "metrics_interval=2", "id=admin", "writers=shared", NULL,
  };
  char **argv;

  (void) state;
  argv = rbdx_server_argv (&o, "/r/s", "/r/size", "/r/m", "2/ab@4", NULL);
  assert_argv (argv, want_nbdkit);
  rbdx_server_argv_free (argv);
  o.engine = "/e/rbdx-engine";
  o.read_only = false;
  argv = rbdx_server_argv (&o, "/r/s", "/r/size", "/r/m", "", NULL);
  assert_argv (argv, want_engine);
  rbdx_server_argv_free (argv);
}

/* quiesce=true: the server reads its hook's DEVICE from the supervisor's
 * file (quiesce_device_file=), unless the user named one. */
static void
test_device_file (void **state)
{
  char *params[3] = { "id=admin", "quiesce=yes", NULL };
  struct rbdx_map_opts o = {
    .target = "rbd/img", .engine = "/e/rbdx-engine", .params = params,
    .nparams = 2,
  };
  static const char *const want[] = {
    "/e/rbdx-engine", "--control", "/r/s", "--", "image=rbd/img",
    "size_file=/r/size", "advertise_size=max", "metrics_file=/r/m",
    "metrics_interval=2", "quiesce_device_file=/r/qd", "id=admin",
    "quiesce=yes", NULL,
  };
  char **argv;

  (void) state;
  assert_true (rbdx_server_wants_device_file (&o));
  argv = rbdx_server_argv (&o, "/r/s", "/r/size", "/r/m", "", "/r/qd");
  assert_argv (argv, want);
  rbdx_server_argv_free (argv);
  params[2] = "quiesce_device=/dev/nbd9";
  o.nparams = 3;
  assert_false (rbdx_server_wants_device_file (&o));
  params[2] = "quiesce_device_file=/x";
  assert_false (rbdx_server_wants_device_file (&o));
  params[2] = "quiesce=false";         /* the last one counts */
  assert_false (rbdx_server_wants_device_file (&o));
  o.nparams = 1;
  assert_false (rbdx_server_wants_device_file (&o));
}

/* Only "/dev/nbdN" names a device (case C36): names an image could
 * have ("nbd0", "nbd-0", "nbd 0", "nbd+0", "nbd00") are specs, so
 * `rbdx unmap nbd-0` (the image rbd/nbd-0) never takes /dev/nbd0 down. */
static void
test_device_index (void **state)
{
  static const char *const specs[] = {
    "nbd0", "nbd-0", "nbd 0", "nbd+0", "nbd00", "/dev/nbd00", "/dev/nbd-1",
    "/dev/nbd 1", "/dev/nbd+1", "/dev/nbd1x", "/dev/nbd", "/dev/nbd1048577",
    "/dev/nbd99999999999999999999", "dev/nbd1", "/dev//nbd1", "rbd/nbd1", "",
  };

  (void) state;
  assert_int_equal (rbdx_device_index ("/dev/nbd0"), 0);
  assert_int_equal (rbdx_device_index ("/dev/nbd15"), 15);
  assert_int_equal (rbdx_device_index ("/dev/nbd1048576"), 1 << 20);
  for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++)
    if (rbdx_device_index (specs[k]) != -1)
      fail_msg ("'%s' was taken for /dev/nbd%d", specs[k], rbdx_device_index (specs[k]));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_accepts),
    cmocka_unit_test (test_refuses_specs),
    cmocka_unit_test (test_refuses_params),
    cmocka_unit_test (test_argv),
    cmocka_unit_test (test_device_file),
    cmocka_unit_test (test_device_index),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

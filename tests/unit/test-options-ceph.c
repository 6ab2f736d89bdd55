/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: the ceph.NAME=VALUE parameters (server/core/options-ceph.c,
 * include/rbdx/options.h), case C41.
 *
 * Proves that Ceph option names are compared as Ceph reads them ('-' and
 * ' ' as '_'), that a Ceph option given twice (also spelled differently)
 * or together with the first-class parameter that sets it (keyring=,
 * mon_host=, cluster=) is refused naming both, that ceph.key= and
 * ceph.keyfile= are refused without their value in the message, and that
 * the paths of ceph.log_file= and ceph.admin_socket= are checked against
 * real files in a directory of the test's own: a FIFO, a device, a
 * directory, /proc and /sys refused for the log (/dev/null allowed), any
 * existing non-socket for the admin socket (and left there), a missing
 * directory for both, metavariables expanded where rbdx can know them
 * and kept out of the directory part where it cannot.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "rbdx/options.h"
#include "unit-check.h"

#define ERRLEN 512
#include "unit-options.h"

static char dir[64];
static char path[256];

static const char *
in_dir (const char *name)
{
  snprintf (path, sizeof path, "%s/%s", dir, name);
  return path;
}

static int
setup (void **state)
{
  struct rbdx_options *o = calloc (1, sizeof *o);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  char target[sizeof path];
  FILE *f;
  int s;

  snprintf (dir, sizeof dir, "/tmp/rbdx-optceph-XXXXXX");
  if (!o || !mkdtemp (dir))
    return -1;
  if (mkfifo (in_dir ("fifo"), 0600) < 0 || mkdir (in_dir ("sub"), 0700) < 0)
    return -1;
  f = fopen (in_dir ("regular"), "w");
  if (!f || fclose (f) != 0)
    return -1;
  f = fopen (in_dir ("ceph-client.admin.asok"), "w");
  if (!f || fclose (f) != 0)
    return -1;
  in_dir ("sock");
  if (strlen (path) >= sizeof sa.sun_path)
    return -1;
  memcpy (sa.sun_path, path, strlen (path) + 1);
  s = socket (AF_UNIX, SOCK_STREAM, 0);
  if (s < 0 || bind (s, (struct sockaddr *) &sa, sizeof sa) < 0)
    return -1;
  close (s);
  snprintf (target, sizeof target, "%s", in_dir ("sock"));
  if (symlink (target, in_dir ("link")) < 0)
    return -1;
  *state = o;
  return 0;
}

static int
teardown (void **state)
{
  static const char *const names[] = {
    "fifo", "regular", "ceph-client.admin.asok", "sock", "link",
  };

  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    unlink (in_dir (names[i]));
  rmdir (in_dir ("sub"));
  rmdir (dir);
  rbdx_options_free (*state);
  free (*state);
  return 0;
}

/* rbdx_ceph_path_check of NAME=VALUE: 0, or -EINVAL with the message. */
static int
check (const char *name, const char *value, const struct rbdx_ceph_meta *m,
       char err[ERRLEN])
{
  err[0] = '\0';
  return rbdx_ceph_path_check (name, value, m, err, ERRLEN);
}

static void
test_names (void **state)
{
  (void) state;
  assert_true (rbdx_ceph_name_eq ("log-file", "log_file"));
  assert_true (rbdx_ceph_name_eq ("log file", "log_file"));
  assert_true (rbdx_ceph_name_eq ("admin-socket", "admin_socket"));
  assert_false (rbdx_ceph_name_eq ("log_files", "log_file"));
  assert_false (rbdx_ceph_name_eq ("log", "log_file"));
  assert_true (rbdx_options_wants_absolute ("ceph.log-file", "l"));
  assert_true (rbdx_options_wants_absolute ("ceph.admin-socket", "s"));
  assert_false (rbdx_options_wants_absolute ("ceph.log-filex", "l"));
}

static void
test_repeated (void **state)
{
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  assert_int_equal (rbdx_options_set (o, "ceph.rbd_cache", "false", err,
                                      ERRLEN), 0);
  set_bad (o, "ceph.rbd_cache", "true", err);
  assert_contains (err, "ceph.rbd_cache= given twice");
  set_bad (o, "ceph.rbd-cache", "true", err);
  assert_contains (err, "ceph.rbd_cache=");
  assert_contains (err, "ceph.rbd-cache=");
  assert_int_equal (o->nceph, 1);
  assert_string_equal (o->ceph[0].value, "false");
  /* Stored as Ceph reads it, shown as given. */
  assert_int_equal (rbdx_options_set (o, "ceph.log-file", "/dev/null", err,
                                      ERRLEN), 0);
  assert_string_equal (o->ceph[1].name, "log_file");
  assert_string_equal (o->ceph[1].given, "log-file");
  set_bad (o, "ceph.log_file", "/dev/null", err);
  assert_contains (err, "ceph.log-file=");
  assert_contains (err, "ceph.log_file=");
}

/* ceph.host is what $host expands to in ceph.log_file= and
 * ceph.admin_socket=: a host name, never a way out of their directory. */
static void
test_host (void **state)
{
  static const char *const bad[] = {
    "../escaped", "a/b", ".", "..", ".hidden", "-x", "a b", "x\n",
  };
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    set_bad (o, "ceph.host", bad[i], err);
    assert_contains (err, "ceph.host=");
    assert_contains (err, "a host name is");
  }
  assert_int_equal (o->nceph, 0);
  assert_int_equal (rbdx_options_set (o, "ceph.host", "node-1.example_a",
                                      err, ERRLEN), 0);
  assert_int_equal (o->nceph, 1);
}

static void
test_first_class (void **state)
{
  static const struct { const char *key, *ceph; } cases[] = {
    { "keyring", "ceph.keyring" }, { "mon_host", "ceph.mon_host" },
    { "mon_host", "ceph.mon-host" }, { "cluster", "ceph.cluster" },
  };
  char err[ERRLEN];

  (void) state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (int order = 0; order < 2; order++) {
      struct rbdx_options o = { 0 };
      const char *k1 = order ? cases[i].ceph : cases[i].key;
      const char *k2 = order ? cases[i].key : cases[i].ceph;

      assert_int_equal (rbdx_options_set (&o, k1, "x", err, ERRLEN), 0);
      assert_int_equal (rbdx_options_set (&o, k2, "y", err, ERRLEN), 0);
      assert_int_equal (rbdx_options_check_ceph (&o, err, ERRLEN), -EINVAL);
      assert_contains (err, cases[i].key);
      assert_contains (err, cases[i].ceph);
      assert_contains (err, "both");
      rbdx_options_free (&o);
    }
  }
}

static void
test_raw_key (void **state)
{
  static const char *const keys[] = {
    "ceph.key", "ceph.keyfile",
  };
  struct rbdx_options *o = *state;
  char err[ERRLEN];

  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    set_bad (o, keys[i], "AQBsecretsecretsecret==", err);
    assert_contains (err, keys[i]);
    assert_contains (err, "keyring=");
    assert_null (strstr (err, "AQBsecret"));
  }
  assert_int_equal (o->nceph, 0);
  assert_non_null (rbdx_ceph_option_refused ("key"));
  assert_null (rbdx_ceph_option_refused ("keyring"));
}

static void
test_log_file (void **state)
{
  char err[ERRLEN];

  (void) state;
  assert_int_equal (check ("log_file", in_dir ("regular"), NULL, err), 0);
  assert_int_equal (check ("log_file", in_dir ("new.log"), NULL, err), 0);
  assert_int_equal (check ("log_file", "/dev/null", NULL, err), 0);
  assert_int_equal (check ("log_file", in_dir ("fifo"), NULL, err), -EINVAL);
  assert_contains (err, "ceph.log_file=");
  assert_contains (err, "fifo");
  assert_contains (err, "not a regular file");
  assert_int_equal (check ("log-file", in_dir ("fifo"), NULL, err), -EINVAL);
  assert_contains (err, "ceph.log-file=");
  assert_int_equal (check ("log_file", in_dir ("sub"), NULL, err), -EINVAL);
  assert_int_equal (check ("log_file", "/dev/zero", NULL, err), -EINVAL);
  assert_int_equal (check ("log_file", in_dir ("none/x.log"), NULL, err),
                    -EINVAL);
  assert_contains (err, "directory");
  assert_int_equal (check ("log_file", "/proc/sys/kernel/core_pattern", NULL,
                           err), -EINVAL);
  assert_contains (err, "/proc or /sys");
  assert_int_equal (check ("log_file", "/proc/rbdx-none", NULL, err), -EINVAL);
  assert_contains (err, "/proc or /sys");
  assert_int_equal (check ("log_file", "/sys/kernel/rbdx-none", NULL, err),
                    -EINVAL);
  /* Other options are not paths. */
  assert_int_equal (check ("rbd_cache", in_dir ("fifo"), NULL, err), 0);
}

static void
test_admin_socket (void **state)
{
  struct stat st;
  char err[ERRLEN];

  (void) state;
  assert_int_equal (check ("admin_socket", in_dir ("new.asok"), NULL, err), 0);
  assert_int_equal (check ("admin_socket", in_dir ("sock"), NULL, err), 0);
  assert_int_equal (check ("admin_socket", in_dir ("regular"), NULL, err),
                    -EINVAL);
  assert_contains (err, "ceph.admin_socket=");
  assert_contains (err, "regular");
  assert_contains (err, "not a socket");
  assert_int_equal (stat (in_dir ("regular"), &st), 0);
  assert_int_equal (check ("admin-socket", in_dir ("fifo"), NULL, err),
                    -EINVAL);
  assert_contains (err, "ceph.admin-socket=");
  assert_int_equal (check ("admin_socket", in_dir ("sub"), NULL, err), -EINVAL);
  assert_int_equal (check ("admin_socket", in_dir ("link"), NULL, err),
                    -EINVAL);
  assert_int_equal (check ("admin_socket", in_dir ("none/s"), NULL, err),
                    -EINVAL);
  assert_int_equal (check ("admin_socket", "/proc/rbdx.asok", NULL, err),
                    -EINVAL);
  assert_contains (err, "/proc or /sys");
  assert_int_equal (check ("admin_socket", "/etc/passwd", NULL, err), -EINVAL);
}

static void
test_metavariables (void **state)
{
  const struct rbdx_ceph_meta m = { .cluster = "ceph", .id = "admin" };
  char value[300], err[ERRLEN];

  (void) state;
  /* Known: expanded, then the file itself is checked. */
  snprintf (value, sizeof value, "%s/$cluster-$name.asok", dir);
  assert_int_equal (check ("admin_socket", value, &m, err), -EINVAL);
  assert_contains (err, "not a socket");
  snprintf (value, sizeof value, "%s/${cluster}-client.$id.asok", dir);
  assert_int_equal (check ("admin_socket", value, &m, err), -EINVAL);
  snprintf (value, sizeof value, "%s/$type.$id.asok", dir);
  assert_int_equal (check ("admin_socket", value, &m, err), 0);
  /* Not known: only the directory is checked, which must be literal. */
  snprintf (value, sizeof value, "%s/$cluster-$name.asok", dir);
  assert_int_equal (check ("admin_socket", value, NULL, err), 0);
  snprintf (value, sizeof value, "%s/$cluster-$name.$pid.$cctid.asok", dir);
  assert_int_equal (check ("admin_socket", value, &m, err), 0);
  snprintf (value, sizeof value, "%s/$host.log", dir);
  assert_int_equal (check ("log_file", value, &m, err), 0);
  snprintf (value, sizeof value, "%s/$pid/x.asok", dir);
  assert_int_equal (check ("admin_socket", value, &m, err), -EINVAL);
  assert_contains (err, "directory");
  assert_int_equal (check ("admin_socket", "/proc/$pid.asok", &m, err),
                    -EINVAL);
  assert_contains (err, "/proc or /sys");
  assert_int_equal (check ("admin_socket", "$run_dir/x.asok", &m, err),
                    -EINVAL);
  snprintf (value, sizeof value, "%s/$log_dir.log", dir);
  assert_int_equal (check ("log_file", value, &m, err), -EINVAL);
  snprintf (value, sizeof value, "%s/none/$pid.log", dir);
  assert_int_equal (check ("log_file", value, &m, err), -EINVAL);
  /* A '$' without a name is a character. */
  snprintf (value, sizeof value, "%s/a$.log", dir);
  assert_int_equal (check ("log_file", value, &m, err), 0);
}

/* Through the options: the id in effect and cluster= expand. */
static void
test_complete (void **state)
{
  struct rbdx_options *o = *state;
  char value[300], err[ERRLEN];

  snprintf (value, sizeof value, "%s/$cluster-client.$id.asok", dir);
  assert_int_equal (rbdx_options_set (o, "ceph.admin_socket", value, err,
                                      ERRLEN), 0);
  assert_int_equal (rbdx_options_set (o, "id", "nbd", err, ERRLEN), 0);
  assert_int_equal (rbdx_options_check_ceph (o, err, ERRLEN), 0);
  free (o->id);
  o->id = NULL;
  assert_int_equal (rbdx_options_check_ceph (o, err, ERRLEN), -EINVAL);
  assert_contains (err, "ceph.admin_socket=");
  assert_int_equal (rbdx_options_set (o, "ceph.log_file", in_dir ("fifo"),
                                      err, ERRLEN), 0);
  free (o->ceph[0].value);
  o->ceph[0].value = strdup (in_dir ("s.asok"));
  assert_int_equal (rbdx_options_check_ceph (o, err, ERRLEN), -EINVAL);
  assert_contains (err, "ceph.log_file=");
}

int
main (void)
{
#define T(f) cmocka_unit_test_setup_teardown (f, setup, teardown)
  const struct CMUnitTest tests[] = {
    T (test_names), T (test_repeated), T (test_first_class), T (test_host),
    T (test_raw_key),
    T (test_log_file), T (test_admin_socket), T (test_metavariables),
    T (test_complete),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

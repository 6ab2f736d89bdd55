/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: the devlinks /dev/rbdx/POOL/[NS/]IMAGE[@SNAP]
 * (server/mapper/devlinks.h), case C32.
 *
 * A spec with an empty, "." or ".." component (between '/' and '@'), or
 * one that starts with '/', gets no path, so a name from an old state
 * file can never place a link outside the link directory; names that only
 * start with dots are names.  In a directory of the test's own
 * ($RBDX_DEV_DIR): a link is made with its directories, replaced by a
 * second mapping of the name, removed only by the mapping it points at,
 * and the directories it leaves empty go with it (not the base).  No root.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mapper/devlinks.h"

static char base[64];

static int
setup (void **state)
{
  (void) state;
  snprintf (base, sizeof base, "/tmp/rbdx-devlinks-XXXXXX");
  if (!mkdtemp (base))
    return -1;
  return setenv ("RBDX_DEV_DIR", base, 1);
}

static int
teardown (void **state)
{
  (void) state;
  return rmdir (base);       /* fails (and the test with it) unless empty */
}

static void
test_paths (void **state)
{
  char buf[PATH_MAX], want[PATH_MAX];

  (void) state;
  assert_int_equal (rbdx_devlink_path ("rbd/img", buf, sizeof buf), 0);
  snprintf (want, sizeof want, "%s/rbd/img", base);
  assert_string_equal (buf, want);
  assert_int_equal (rbdx_devlink_path ("rbd/ns/img@snap", buf, sizeof buf), 0);
  snprintf (want, sizeof want, "%s/rbd/ns/img@snap", base);
  assert_string_equal (buf, want);
  /* Dots inside a name are a name. */
  assert_int_equal (rbdx_devlink_path ("rbd/..x", buf, sizeof buf), 0);
  assert_int_equal (rbdx_devlink_path (".rbd/.img@...", buf, sizeof buf), 0);
}

static void
test_outside_refused (void **state)
{
  static const char *const bad[] = {
    "", "/etc/passwd", "..", ".", "../img", "rbd/..", "rbd/.", "rbd/../../etc",
    "rbd/./img", "rbd/ns/..", "rbd/img@..", "rbd/img@.", "rbd//img", "rbd/",
    "rbd/img@", "@snap",
  };
  char buf[PATH_MAX];

  (void) state;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset (buf, 'x', sizeof buf);
    if (rbdx_devlink_path (bad[i], buf, sizeof buf) != -EINVAL)
      fail_msg ("'%s' was given a path: %s", bad[i], buf);
  }
}

static void
test_too_long (void **state)
{
  char buf[64];

  (void) state;
  assert_int_equal (rbdx_devlink_path ("rbd/an-image-name-longer-than-the-buffer-"
                                       "that-the-caller-gave-for-it", buf, sizeof buf),
                    -ENAMETOOLONG);
}

static void
test_add_replace_remove (void **state)
{
  char path[PATH_MAX], target[64], dir[PATH_MAX];
  struct stat st;
  ssize_t n;

  (void) state;
  assert_int_equal (rbdx_devlink_add ("rbd/ns/img", 3), 0);
  snprintf (path, sizeof path, "%s/rbd/ns/img", base);
  n = readlink (path, target, sizeof target - 1);
  assert_true (n > 0);
  target[n] = '\0';
  assert_string_equal (target, "/dev/nbd3");

  /* A second mapping of the name takes it over; the first one's removal
   * leaves it alone. */
  assert_int_equal (rbdx_devlink_add ("rbd/ns/img", 5), 0);
  rbdx_devlink_remove ("rbd/ns/img", 3);
  n = readlink (path, target, sizeof target - 1);
  assert_true (n > 0);
  target[n] = '\0';
  assert_string_equal (target, "/dev/nbd5");

  /* A refused spec makes nothing and removes nothing. */
  assert_int_equal (rbdx_devlink_add ("rbd/../img", 5), -EINVAL);
  snprintf (dir, sizeof dir, "%s/img", base);
  assert_int_equal (lstat (dir, &st), -1);
  rbdx_devlink_remove ("rbd/ns/../ns/img", 5);
  assert_int_equal (lstat (path, &st), 0);

  /* Its own mapping removes it, and the directories left empty. */
  rbdx_devlink_remove ("rbd/ns/img", 5);
  assert_int_equal (lstat (path, &st), -1);
  snprintf (dir, sizeof dir, "%s/rbd", base);
  assert_int_equal (lstat (dir, &st), -1);
  assert_int_equal (lstat (base, &st), 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_paths),
    cmocka_unit_test (test_outside_refused),
    cmocka_unit_test (test_too_long),
    cmocka_unit_test (test_add_replace_remove),
  };

  return cmocka_run_group_tests (tests, setup, teardown);
}

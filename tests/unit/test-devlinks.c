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
#include <stdbool.h>
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

/* Which devices the stand-in for the supervisor's state files calls live
 * mappings of the name (rbdx_devlink_add's live). */
static int live_index = -1;

static bool
live (int index, const char *spec)
{
  (void) spec;
  return index == live_index;
}

static void
test_add_replace_remove (void **state)
{
  char path[PATH_MAX], target[64], dir[PATH_MAX];
  struct stat st;
  ssize_t n;

  (void) state;
  assert_int_equal (rbdx_devlink_add ("rbd/ns/img", 3, live), 0);
  snprintf (path, sizeof path, "%s/rbd/ns/img", base);
  n = readlink (path, target, sizeof target - 1);
  assert_true (n > 0);
  target[n] = '\0';
  assert_string_equal (target, "/dev/nbd3");
  assert_true (rbdx_devlink_points_at ("rbd/ns/img", 3));
  assert_false (rbdx_devlink_points_at ("rbd/ns/img", 5));
  assert_false (rbdx_devlink_points_at ("rbd/ns/img", 30));

  /* C52: a second mapping of the name (read-only beside read-write)
   * never takes over the link of a live one; its own again is kept. */
  live_index = 3;
  assert_int_equal (rbdx_devlink_add ("rbd/ns/img", 5, live), -EEXIST);
  assert_true (rbdx_devlink_points_at ("rbd/ns/img", 3));
  assert_false (rbdx_devlink_points_at ("rbd/ns/img", 5));
  assert_int_equal (rbdx_devlink_add ("rbd/ns/img", 3, live), 0);
  assert_true (rbdx_devlink_points_at ("rbd/ns/img", 3));

  /* One left by a mapping that is gone is replaced; the gone one's
   * removal leaves the new one alone. */
  live_index = -1;
  assert_int_equal (rbdx_devlink_add ("rbd/ns/img", 5, live), 0);
  rbdx_devlink_remove ("rbd/ns/img", 3);
  n = readlink (path, target, sizeof target - 1);
  assert_true (n > 0);
  target[n] = '\0';
  assert_string_equal (target, "/dev/nbd5");

  /* A refused spec makes nothing and removes nothing. */
  assert_int_equal (rbdx_devlink_add ("rbd/../img", 5, live), -EINVAL);
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

/* C54: an image named like a namespace of its pool and that namespace's
 * volumes, either order, and a name too long for a file name: the one
 * that cannot have its link gets none (never a directory, never another
 * device's), the other's is kept; nothing is left. */
static void
test_collisions (void **state)
{
  char longname[400];
  struct stat st;

  (void) state;
  live_index = -1;
  assert_int_equal (rbdx_devlink_add ("rbd/ns/vol", 1, live), 0);
  assert_int_equal (rbdx_devlink_add ("rbd/ns", 2, live), -EEXIST);
  assert_false (rbdx_devlink_points_at ("rbd/ns", 2));
  assert_true (rbdx_devlink_points_at ("rbd/ns/vol", 1));
  rbdx_devlink_remove ("rbd/ns", 2);
  assert_true (rbdx_devlink_points_at ("rbd/ns/vol", 1));
  rbdx_devlink_remove ("rbd/ns/vol", 1);

  assert_int_equal (rbdx_devlink_add ("rbd/ns", 2, live), 0);
  assert_int_equal (rbdx_devlink_add ("rbd/ns/vol", 1, live), -ENOTDIR);
  assert_false (rbdx_devlink_points_at ("rbd/ns/vol", 1));
  assert_true (rbdx_devlink_points_at ("rbd/ns", 2));
  rbdx_devlink_remove ("rbd/ns/vol", 1);
  rbdx_devlink_remove ("rbd/ns", 2);

  snprintf (longname, sizeof longname, "rbd/%0300d", 0);
  assert_int_equal (rbdx_devlink_add (longname, 4, live), -ENAMETOOLONG);
  assert_false (rbdx_devlink_points_at (longname, 4));
  {
    char dir[PATH_MAX];
    snprintf (dir, sizeof dir, "%s/rbd", base);
    /* The directory made for it is gone with it. */
    assert_int_equal (lstat (dir, &st), -1);
  }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_paths),
    cmocka_unit_test (test_outside_refused),
    cmocka_unit_test (test_too_long),
    cmocka_unit_test (test_add_replace_remove),
    cmocka_unit_test (test_collisions),
  };

  return cmocka_run_group_tests (tests, setup, teardown);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: the quiesce parameters and the hook's command line
 * (include/rbdx/quiesce-hook.h).
 *
 * Proves that the keys parse and refuse what they should (given twice,
 * not a boolean, a relative hook, a timeout outside 1..3600, a DEVICE
 * that could be read as an option or holds a control character), that
 * the hook check refuses a relative path, a missing file, a directory
 * and a file nobody may execute, that hook parameters need quiesce=true,
 * that a quiesce_device_file= which is there but not a regular file
 * (directory, FIFO, device) is refused at start naming what it is while
 * a missing one is accepted, and that the argument vector is exactly HOOK DEVICE quiesce|unquiesce.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "rbdx/options.h"
#include "rbdx/quiesce-hook.h"

static char err[256];

static int
set (struct rbdx_options *o, const char *k, const char *v)
{
  return rbdx_options_set (o, k, v, err, sizeof err);
}

static void
test_keys (void **state)
{
  struct rbdx_options o = { 0 };

  (void) state;
  assert_true (rbdx_quiesce_is_key ("quiesce"));
  assert_true (rbdx_quiesce_is_key ("quiesce_hook"));
  assert_true (rbdx_quiesce_is_key ("quiesce_timeout"));
  assert_true (rbdx_quiesce_is_key ("quiesce_device"));
  assert_false (rbdx_quiesce_is_key ("quiesced"));
  assert_int_equal (set (&o, "quiesce", "yes"), 0);
  assert_true (o.quiesce.on);
  assert_int_equal (set (&o, "quiesce", "no"), -EINVAL);
  assert_non_null (strstr (err, "quiesce= given twice"));
  assert_int_equal (set (&o, "quiesce_hook", "bin/hook"), -EINVAL);
  assert_non_null (strstr (err, "quiesce_hook='bin/hook': must be an absolute"));
  assert_int_equal (set (&o, "quiesce_hook", "/bin/true"), 0);
  assert_string_equal (rbdx_quiesce_hook_path (&o.quiesce), "/bin/true");
  assert_int_equal (set (&o, "quiesce_hook", "/bin/false"), -EINVAL);
  assert_int_equal (set (&o, "quiesce_timeout", "0"), -EINVAL);
  assert_int_equal (set (&o, "quiesce_timeout", "3601"), -EINVAL);
  assert_int_equal (set (&o, "quiesce_timeout", "-1"), -EINVAL);
  assert_int_equal (set (&o, "quiesce_timeout", "5s"), -EINVAL);
  assert_int_equal (rbdx_quiesce_timeout (&o.quiesce), RBDX_QUIESCE_TIMEOUT_DEFAULT);
  assert_int_equal (set (&o, "quiesce_timeout", "5"), 0);
  assert_int_equal (rbdx_quiesce_timeout (&o.quiesce), 5);
  assert_int_equal (set (&o, "quiesce_device", "-f"), -EINVAL);
  assert_int_equal (set (&o, "quiesce_device", "/dev/nbd0\n"), -EINVAL);
  assert_int_equal (set (&o, "quiesce_device", ""), -EINVAL);
  assert_int_equal (set (&o, "quiesce_device", "/dev/nbd3"), 0);
  assert_true (rbdx_quiesce_is_key ("quiesce_device_file"));
  assert_int_equal (set (&o, "quiesce_device_file", "run/dev"), -EINVAL);
  assert_non_null (strstr (err, "quiesce_device_file='run/dev': must be an "
                           "absolute path"));
  assert_int_equal (set (&o, "quiesce_device_file", "/run/rbdx/d"), 0);
  assert_string_equal (o.quiesce.device_file, "/run/rbdx/d");
  assert_int_equal (set (&o, "quiesce_device_file", "/run/rbdx/e"), -EINVAL);
  assert_non_null (strstr (err, "given twice"));
  assert_int_equal (set (&o, "quiesce", "maybe"), -EINVAL);
  rbdx_options_free (&o);
  assert_int_equal (set (&o, "quiesce", "maybe"), -EINVAL);
  assert_non_null (strstr (err, "expected true or false"));
  rbdx_options_free (&o);
  assert_true (rbdx_options_wants_absolute ("quiesce_hook", "hooks/h"));
  assert_true (rbdx_options_wants_absolute ("quiesce_device_file", "d/f"));
}

static void
test_complete (void **state)
{
  struct rbdx_quiesce_options q = { 0 };

  (void) state;
  assert_int_equal (rbdx_quiesce_options_complete (&q, err, sizeof err), 0);
  q.timeout = 3;
  assert_int_equal (rbdx_quiesce_options_complete (&q, err, sizeof err), -EINVAL);
  assert_non_null (strstr (err, "need quiesce=true"));
  q.on = true;
  q.hook = strdup ("/bin/true");
  assert_int_equal (rbdx_quiesce_options_complete (&q, err, sizeof err), 0);
  /* A missing or non-executable hook is a bad value: -EINVAL, not the
   * errno of stat (fuzz-options found -ENOENT reaching the caller). */
  free (q.hook);
  q.hook = strdup ("/nonexistent/rbdx-hook");
  assert_int_equal (rbdx_quiesce_options_complete (&q, err, sizeof err), -EINVAL);
  assert_non_null (strstr (err, "No such file"));
  rbdx_quiesce_options_free (&q);
  q.device_file = strdup ("/run/d");
  assert_int_equal (rbdx_quiesce_options_complete (&q, err, sizeof err), -EINVAL);
  assert_non_null (strstr (err, "quiesce_device_file= need quiesce=true"));
  rbdx_quiesce_options_free (&q);
}

/* With quiesce=true and no quiesce_device=, an image spec that could
 * never be the hook's DEVICE (over 255 bytes, or starting with '-') is
 * refused when the options are completed, not at each snapshot. */
static void
test_spec_as_device (void **state)
{
  struct rbdx_options o = { 0 };
  char name[300], big[320];

  (void) state;
  memset (name, 'a', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  snprintf (big, sizeof big, "rbd/%s", name);
  assert_int_equal (set (&o, "image", big), 0);
  assert_int_equal (set (&o, "quiesce", "true"), 0);
  assert_int_equal (set (&o, "quiesce_hook", "/bin/true"), 0);
  assert_int_equal (rbdx_options_complete (&o, err, sizeof err), -EINVAL);
  assert_non_null (strstr (err, "cannot be the hook's DEVICE argument"));
  assert_non_null (strstr (err, "quiesce_device="));
  assert_int_equal (set (&o, "quiesce_device", "/dev/nbd3"), 0);
  assert_int_equal (rbdx_options_complete (&o, err, sizeof err), 0);
  rbdx_options_free (&o);
  /* Pure: without quiesce=true nothing is checked; short specs pass. */
  struct rbdx_quiesce_options q = { .on = true };
  assert_int_equal (rbdx_quiesce_spec_device_check (&q, "rbd/vm1", err, sizeof err), 0);
  assert_int_equal (rbdx_quiesce_spec_device_check (&q, big, err, sizeof err), -EINVAL);
  q.on = false;
  assert_int_equal (rbdx_quiesce_spec_device_check (&q, big, err, sizeof err), 0);
}

/* Write @p len bytes of @p text to @p path. */
static void
put (const char *path, const char *text, size_t len)
{
  FILE *f = fopen (path, "w");

  assert_non_null (f);
  assert_int_equal (fwrite (text, 1, len, f), len);
  fclose (f);
}

static void
test_device_read (void **state)
{
  char dir[] = "/tmp/rbdx-test-qdev-XXXXXX", path[64], buf[RBDX_QUIESCE_DEVICE_MAX + 1];
  char big[RBDX_QUIESCE_DEVICE_MAX + 2], link[64];
  int wfd;

  (void) state;
  assert_non_null (mkdtemp (dir));
  snprintf (path, sizeof path, "%s/dev", dir);
  strcpy (buf, "untouched");
  assert_int_equal (rbdx_quiesce_device_read (path, buf), 0);
  assert_string_equal (buf, "untouched");
  put (path, "/dev/nbd3\n", 10);
  assert_int_equal (rbdx_quiesce_device_read (path, buf), 1);
  assert_string_equal (buf, "/dev/nbd3");
  put (path, "/dev/nbd12", 10);           /* no newline */
  assert_int_equal (rbdx_quiesce_device_read (path, buf), 1);
  assert_string_equal (buf, "/dev/nbd12");
  put (path, "", 0);
  assert_int_equal (rbdx_quiesce_device_read (path, buf), -EINVAL);
  put (path, "\n", 1);
  assert_int_equal (rbdx_quiesce_device_read (path, buf), -EINVAL);
  put (path, "-f\n", 3);
  assert_int_equal (rbdx_quiesce_device_read (path, buf), -EINVAL);
  put (path, "/dev/nbd1\n\n", 11);       /* two lines */
  assert_int_equal (rbdx_quiesce_device_read (path, buf), -EINVAL);
  put (path, "/dev/nbd1\0-x", 12);
  assert_int_equal (rbdx_quiesce_device_read (path, buf), -EINVAL);
  memset (big, 'a', sizeof big);
  big[0] = '/';
  put (path, big, RBDX_QUIESCE_DEVICE_MAX);
  assert_int_equal (rbdx_quiesce_device_read (path, buf), 1);
  assert_int_equal (strlen (buf), RBDX_QUIESCE_DEVICE_MAX);
  put (path, big, RBDX_QUIESCE_DEVICE_MAX + 1);
  assert_int_equal (rbdx_quiesce_device_read (path, buf), -EINVAL);
  put (path, big, sizeof big);
  assert_int_equal (rbdx_quiesce_device_read (path, buf), -EINVAL);
  /* A symbolic link to a regular file is followed. */
  put (path, "/dev/nbd5\n", 10);
  snprintf (link, sizeof link, "%s/link", dir);
  assert_int_equal (symlink (path, link), 0);
  assert_int_equal (rbdx_quiesce_device_read (link, buf), 1);
  assert_string_equal (buf, "/dev/nbd5");
  unlink (link);
  unlink (path);
  assert_int_equal (rbdx_quiesce_device_read (dir, buf), -EISDIR);
  /* Not a regular file: refused, whatever it would give.  A FIFO whose
   * writer has written part of a name so far ("/dev/nbd1" of
   * "/dev/nbd12"): the part is no DEVICE. */
  assert_int_equal (mkfifo (path, 0600), 0);
  wfd = open (path, O_RDWR | O_NONBLOCK);    /* a writer, without blocking */
  assert_true (wfd >= 0);
  assert_int_equal (write (wfd, "/dev/nbd1", 9), 9);
  strcpy (buf, "untouched");
  assert_int_equal (rbdx_quiesce_device_read (path, buf), -EINVAL);
  assert_string_equal (buf, "untouched");
  close (wfd);
  unlink (path);
  assert_int_equal (rbdx_quiesce_device_read ("/dev/zero", buf), -EINVAL);
  assert_int_equal (rbdx_quiesce_device_read ("/dev/null", buf), -EINVAL);
  assert_int_equal (symlink ("/dev/null", link), 0);
  assert_int_equal (rbdx_quiesce_device_read (link, buf), -EINVAL);
  unlink (link);
  rmdir (dir);
}

static void
test_hook_check (void **state)
{
  char dir[] = "/tmp/rbdx-test-quiesce-XXXXXX", path[64];
  FILE *f;

  (void) state;
  assert_non_null (mkdtemp (dir));
  assert_int_equal (rbdx_quiesce_hook_check ("true", err, sizeof err), -EINVAL);
  snprintf (path, sizeof path, "%s/missing", dir);
  assert_int_equal (rbdx_quiesce_hook_check (path, err, sizeof err), -ENOENT);
  assert_non_null (strstr (err, path));
  assert_int_equal (rbdx_quiesce_hook_check (dir, err, sizeof err), -EINVAL);
  assert_non_null (strstr (err, "not a regular file"));
  snprintf (path, sizeof path, "%s/hook", dir);
  f = fopen (path, "w");
  assert_non_null (f);
  fclose (f);
  assert_int_equal (chmod (path, 0644), 0);
  assert_int_equal (rbdx_quiesce_hook_check (path, err, sizeof err), -EACCES);
  assert_int_equal (chmod (path, 0755), 0);
  assert_int_equal (rbdx_quiesce_hook_check (path, err, sizeof err), 0);
  unlink (path);
  rmdir (dir);
}

/* quiesce_device_file= at start: missing or a regular file accepted,
 * anything else refused naming what it is. */
static void
test_device_file_check (void **state)
{
  char dir[] = "/tmp/rbdx-test-quiesce-XXXXXX", path[64], sub[80];
  struct rbdx_quiesce_options q = { 0 };

  (void) state;
  assert_non_null (mkdtemp (dir));
  q.on = true;
  q.hook = strdup ("/bin/true");
  snprintf (path, sizeof path, "%s/dev", dir);
  /* Missing: the mapper writes it later. */
  assert_int_equal (rbdx_quiesce_device_file_check (path, err, sizeof err), 0);
  q.device_file = strdup (path);
  assert_int_equal (rbdx_quiesce_options_complete (&q, err, sizeof err), 0);
  /* A regular file, whatever it holds now (read at each quiesce). */
  put (path, "", 0);
  assert_int_equal (rbdx_quiesce_options_complete (&q, err, sizeof err), 0);
  unlink (path);
  /* A directory. */
  assert_int_equal (mkdir (path, 0700), 0);
  assert_int_equal (rbdx_quiesce_options_complete (&q, err, sizeof err),
                    -EINVAL);
  assert_non_null (strstr (err, path));
  assert_non_null (strstr (err, "a directory, not a regular file"));
  rmdir (path);
  /* A FIFO: not opened, and not told "not executable" or "denied". */
  assert_int_equal (mkfifo (path, 0600), 0);
  assert_int_equal (rbdx_quiesce_device_file_check (path, err, sizeof err),
                    -EINVAL);
  assert_non_null (strstr (err, "a FIFO, not a regular file"));
  assert_int_equal (rbdx_quiesce_options_complete (&q, err, sizeof err),
                    -EINVAL);
  assert_non_null (strstr (err, "a FIFO, not a regular file"));
  unlink (path);
  /* A character device, also through a symbolic link. */
  assert_int_equal (rbdx_quiesce_device_file_check ("/dev/null", err,
                                                    sizeof err), -EINVAL);
  assert_non_null (strstr (err, "quiesce_device_file='/dev/null': a "
                           "character device, not a regular file"));
  assert_int_equal (symlink ("/dev/null", path), 0);
  assert_int_equal (rbdx_quiesce_options_complete (&q, err, sizeof err),
                    -EINVAL);
  assert_non_null (strstr (err, "a character device"));
  unlink (path);
  /* A path through a regular file: the errno, not "accepted". */
  put (path, "x", 1);
  snprintf (sub, sizeof sub, "%s/x", path);
  assert_int_equal (rbdx_quiesce_device_file_check (sub, err, sizeof err),
                    -ENOTDIR);
  assert_non_null (strstr (err, sub));
  unlink (path);
  /* Not checked without quiesce=true (refused there for its own
   * reason). */
  q.on = false;
  free (q.hook);
  q.hook = NULL;
  assert_int_equal (mkdir (path, 0700), 0);
  assert_int_equal (rbdx_quiesce_options_complete (&q, err, sizeof err),
                    -EINVAL);
  assert_non_null (strstr (err, "need quiesce=true"));
  rmdir (path);
  rbdx_quiesce_options_free (&q);
  rmdir (dir);
  assert_string_equal (rbdx_quiesce_file_kind (S_IFBLK), "a block device");
  assert_string_equal (rbdx_quiesce_file_kind (S_IFSOCK), "a socket");
  assert_string_equal (rbdx_quiesce_file_kind (S_IFREG | 0644),
                       "a regular file");
}

static void
test_argv (void **state)
{
  const char *argv[4];

  (void) state;
  assert_int_equal (rbdx_quiesce_hook_argv ("/h", "rbd/img", true, argv), 0);
  assert_string_equal (argv[0], "/h");
  assert_string_equal (argv[1], "rbd/img");
  assert_string_equal (argv[2], "quiesce");
  assert_null (argv[3]);
  assert_int_equal (rbdx_quiesce_hook_argv ("/h", "/dev/nbd0", false, argv), 0);
  assert_string_equal (argv[2], "unquiesce");
  assert_int_equal (rbdx_quiesce_hook_argv ("h", "rbd/img", true, argv), -EINVAL);
  assert_int_equal (rbdx_quiesce_hook_argv ("/h", "--help", true, argv), -EINVAL);
  assert_int_equal (rbdx_quiesce_hook_argv ("/h", "a\tb", true, argv), -EINVAL);
  assert_int_equal (rbdx_quiesce_hook_argv ("/h", "a\x7f", true, argv), -EINVAL);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_keys),
    cmocka_unit_test (test_complete),
    cmocka_unit_test (test_spec_as_device),
    cmocka_unit_test (test_device_read),
    cmocka_unit_test (test_hook_check),
    cmocka_unit_test (test_device_file_check),
    cmocka_unit_test (test_argv),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

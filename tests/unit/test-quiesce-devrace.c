/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit test: quiesce_device_file= replaced between its check and
 * its open (include/rbdx/quiesce-hook.h, rbdx_quiesce_device_read).
 *
 * The file's type is checked so that a FIFO or a device is never opened
 * for reading (opening one can act: a FIFO's writer, a tape's rewind, a
 * watchdog).  Whoever may write the file's directory can rename a FIFO
 * over the regular file just after that check.  stat64, fstat64 and
 * open64 are wrapped (-Wl,--wrap): the first status call inside
 * rbdx_quiesce_device_read swaps a FIFO in, and every descriptor opened
 * for reading (not O_PATH) in the call is examined.  Asserts that no
 * FIFO was opened for reading, and that the answer is the content of
 * the file that was checked or a refusal, never the FIFO's.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "rbdx/quiesce-hook.h"

int __real_stat64 (const char *path, struct stat64 *st);
int __real_fstat64 (int fd, struct stat64 *st);
int __real_open64 (const char *path, int flags, ...);
int __wrap_stat64 (const char *path, struct stat64 *st);
int __wrap_fstat64 (int fd, struct stat64 *st);
int __wrap_open64 (const char *path, int flags, ...);

static bool in_call, armed;
static char file[64], fifo[64];
static unsigned opened_nonreg;

/* After the first status call of the read: the FIFO takes the name. */
static void
swap (void)
{
  if (!in_call || !armed)
    return;
  armed = false;
  assert_int_equal (rename (fifo, file), 0);
}

int
__wrap_stat64 (const char *path, struct stat64 *st)
{
  int r = __real_stat64 (path, st);

  swap ();
  return r;
}

int
__wrap_fstat64 (int fd, struct stat64 *st)
{
  int r = __real_fstat64 (fd, st);

  swap ();
  return r;
}

int
__wrap_open64 (const char *path, int flags, ...)
{
  struct stat64 st;
  mode_t mode = 0;
  va_list ap;
  int fd;

  if (flags & O_CREAT) {
    va_start (ap, flags);
    mode = (mode_t) va_arg (ap, int);
    va_end (ap);
  }
  fd = __real_open64 (path, flags, mode);
  if (in_call && fd >= 0 && !(flags & O_PATH) &&
      __real_fstat64 (fd, &st) == 0 && !S_ISREG (st.st_mode))
    opened_nonreg++;
  return fd;
}

static void
test_swapped_for_fifo (void **state)
{
  char dir[] = "/tmp/rbdx-test-qrace-XXXXXX", buf[RBDX_QUIESCE_DEVICE_MAX + 1];
  int fd, r;

  (void) state;
  assert_non_null (mkdtemp (dir));
  snprintf (file, sizeof file, "%s/dev", dir);
  snprintf (fifo, sizeof fifo, "%s/fifo", dir);
  fd = open (file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true (fd >= 0);
  assert_int_equal (write (fd, "/dev/nbd7\n", 10), 10);
  close (fd);
  assert_int_equal (mkfifo (fifo, 0600), 0);
  /* A writer, so a read of the FIFO would give this name. */
  fd = open (fifo, O_RDWR | O_NONBLOCK);
  assert_true (fd >= 0);
  assert_int_equal (write (fd, "/dev/nbd1\n", 10), 10);

  strcpy (buf, "untouched");
  armed = true;
  in_call = true;
  r = rbdx_quiesce_device_read (file, buf);
  in_call = false;
  assert_false (armed);              /* the swap happened */
  assert_int_equal (opened_nonreg, 0);
  if (r == 1)
    assert_string_equal (buf, "/dev/nbd7");
  else
    assert_int_equal (r, -EINVAL);
  close (fd);
  unlink (file);
  rmdir (dir);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_swapped_for_fifo),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: the temporary files of metrics_file= and size_file=
 * (include/rbdx/tmpfile.h, server/core/metrics.c, server/core/sizefile.c;
 * files written beside a path in a shared directory in tests/README.md).
 *
 * In a scratch directory standing for a shared one: a symbolic link to
 * a victim file, and a plain file, put at the temporary names each
 * writer tries first (PATH.tmpPID for metrics, PATH.PID.SEQ for the
 * size file).  Asserts that the victim and the planted file are
 * untouched, that the metrics file and the size file are still written
 * (at another temporary name, renamed over), that no temporary file is
 * left, and that the created file has the mode asked less the umask.
 * And the metrics file's labels: an image name that is not UTF-8 (or
 * holds a C1 control) reaches the file escaped, never raw (case C40).
 * No cluster.
 */
#include <errno.h>
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

#include "rbdx/identity.h"
#include "rbdx/log.h"
#include "rbdx/metrics.h"
#include "rbdx/sizefile.h"
#include "rbdx/tmpfile.h"

/* The host services (rbdx/log.h). */
void rbdx_debug (const char *fmt, ...) { (void) fmt; }
void rbdx_error (const char *fmt, ...) { (void) fmt; }
int rbdx_sleep_ns (uint64_t ns) { (void) ns; return 0; }

static char top[64];

static int
setup (void **state)
{
  (void) state;
  snprintf (top, sizeof top, "/tmp/rbdx-test-tmpfile.XXXXXX");
  return mkdtemp (top) ? 0 : -1;
}

static int
teardown (void **state)
{
  char cmd[200];

  (void) state;
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", top);
  return system (cmd) == 0 ? 0 : -1;
}

static void
put (const char *path, const char *text)
{
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (text, f);
  fclose (f);
}

static void
assert_content (const char *path, const char *text)
{
  char buf[256] = "";
  FILE *f = fopen (path, "r");
  size_t n;

  assert_non_null (f);
  n = fread (buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose (f);
  assert_string_equal (buf, text);
}

/* Files in @p dir: how many. */
static int
count_files (const char *dir)
{
  char cmd[300];
  FILE *p;
  int n = -1;

  snprintf (cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
  p = popen (cmd, "r");
  assert_non_null (p);
  assert_int_equal (fscanf (p, "%d", &n), 1);
  pclose (p);
  return n;
}

static void
test_helper_skips_taken_names (void **state)
{
  char path[200], first[200], victim[200], tmp[300];
  struct stat st;
  mode_t old;
  FILE *f;

  (void) state;
  snprintf (path, sizeof path, "%s/out", top);
  snprintf (first, sizeof first, "%s/out.x", top);
  snprintf (victim, sizeof victim, "%s/victim", top);
  put (victim, "keep\n");
  assert_int_equal (symlink (victim, first), 0);
  old = umask (022);
  f = rbdx_tmpfile_create (path, "x", 0666, tmp, sizeof tmp);
  umask (old);
  assert_non_null (f);
  assert_string_not_equal (tmp, first);
  assert_int_equal (strncmp (tmp, first, strlen (first)), 0);
  fputs ("new\n", f);
  assert_int_equal (fclose (f), 0);
  assert_int_equal (lstat (tmp, &st), 0);
  assert_true (S_ISREG (st.st_mode));
  assert_int_equal (st.st_mode & 07777, 0644);
  assert_content (victim, "keep\n");
  assert_content (tmp, "new\n");
  /* Too small a buffer: refused, nothing made. */
  errno = 0;
  assert_null (rbdx_tmpfile_create (path, "y", 0644, tmp, 10));
  assert_int_equal (errno, ENAMETOOLONG);
}

static void
test_metrics_file_through_planted_link (void **state)
{
  char path[100], planted[200], victim[200];

  (void) state;
  snprintf (path, sizeof path, "%s/rbdx.prom", top);
  snprintf (planted, sizeof planted, "%s.tmp%ld", path, (long) getpid ());
  snprintf (victim, sizeof victim, "%s/victim", top);
  put (victim, "keep\n");
  assert_int_equal (symlink (victim, planted), 0);
  assert_int_equal (rbdx_metrics_check (path), 0);
  assert_content (victim, "keep\n");
  assert_int_equal (access (path, R_OK), 0);
  /* victim, the planted link, rbdx.prom: no temporary file left. */
  assert_int_equal (count_files (top), 3);
  /* A plain file planted there instead: untouched too. */
  assert_int_equal (unlink (planted), 0);
  put (planted, "planted\n");
  assert_int_equal (unlink (path), 0);
  assert_int_equal (rbdx_metrics_check (path), 0);
  assert_content (planted, "planted\n");
  assert_int_equal (access (path, R_OK), 0);
  assert_int_equal (count_files (top), 3);
}

/* Whatever name reaches the metrics writer, its file is UTF-8 (the
 * Prometheus text format): a byte of no well-formed sequence and a C1
 * control are written as the text \xHH, '\\', '"' and a newline as
 * the format escapes them, other UTF-8 as it is (case C40). */
static void
test_metrics_labels_utf8 (void **state)
{
  static struct rbdx_metrics m;
  struct rbdx_ident id = { 0 };
  char path[100], buf[65536];
  FILE *f;
  size_t n;

  (void) state;
  snprintf (path, sizeof path, "%s/rbdx.prom", top);
  rbdx_metrics_attach (&m, &id, "rbd/bad\xffn\xc2\x9b" "31m\xed\xa0\x80"
                       "\xc0\xaf\xe4\xb8\"q\\\n\xc3\xa9\xe4\xb8\xad");
  assert_int_equal (rbdx_metrics_check (path), 0);
  rbdx_metrics_detach (&m);
  f = fopen (path, "r");
  assert_non_null (f);
  n = fread (buf, 1, sizeof buf - 1, f);
  fclose (f);
  buf[n] = '\0';
  if (!strstr (buf, "image=\"rbd/bad\\\\xffn\\\\xc2\\\\x9b31m\\\\xed\\\\xa0"
               "\\\\x80\\\\xc0\\\\xaf\\\\xe4\\\\xb8\\\"q\\\\\\n\xc3\xa9\xe4\xb8\xad\","))
    fail_msg ("no label escaped as expected in:\n%s", buf);
  /* Above 0x7f, only the two characters given as UTF-8 (on each line
   * that names the image). */
  for (size_t i = 0; i < n; i++)
    if ((unsigned char) buf[i] >= 0x80) {
      if (strncmp (buf + i, "\xc3\xa9\xe4\xb8\xad", 5) != 0)
        fail_msg ("a raw byte 0x%02x at %zu", (unsigned char) buf[i], i);
      i += 4;
    }
}

static void
test_size_file_through_planted_link (void **state)
{
  char path[100], victim[200], planted[200];
  struct rbdx_size_entry e = { 0 };
  struct rbdx_ident id = { 0 };
  _Atomic uint64_t size = 12345;

  (void) state;
  snprintf (path, sizeof path, "%s/size", top);
  snprintf (victim, sizeof victim, "%s/victim", top);
  put (victim, "keep\n");
  /* The first publication of this process is PATH.PID.1. */
  snprintf (planted, sizeof planted, "%s.%ld.1", path, (long) getpid ());
  assert_int_equal (symlink (victim, planted), 0);
  rbdx_size_register (&e, path, &id, "img", &size);
  assert_content (victim, "keep\n");
  assert_content (path, "12345\n");
  assert_int_equal (count_files (top), 3);
  rbdx_size_unregister (&e);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_helper_skips_taken_names, setup, teardown),
    cmocka_unit_test_setup_teardown (test_metrics_file_through_planted_link, setup, teardown),
    cmocka_unit_test_setup_teardown (test_size_file_through_planted_link, setup, teardown),
    cmocka_unit_test_setup_teardown (test_metrics_labels_utf8, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

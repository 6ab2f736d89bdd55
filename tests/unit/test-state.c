/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: the mapper's state files (server/mapper/state.h), as
 * secrets are kept (case C24 of tests/README.md).
 *
 * In a scratch RBDX_RUN_DIR: the run directory is made 0755 (as
 * rbdx@.socket's DirectoryMode=), an existing 0700 or 0755 one is kept,
 * one of ours writable by others loses those bits, a symbolic link is
 * refused; a state file is 0600 even
 * with umask 0, and reads back with its keyring_file; a mapping's
 * keyring file is removed only when it is directly in RUN_DIR/keyrings/,
 * never a path elsewhere that a state file might name; only names as
 * rbdx writes them (nbd0, nbd5, nbd12; not "nbd05", "nbd+5", "nbd 5")
 * are listed as mappings.  No root, no
 * kernel.
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

#include "mapper/state.h"

static char top[64], run[128];

static unsigned
mode_of (const char *path)
{
  struct stat st;

  assert_int_equal (stat (path, &st), 0);
  return st.st_mode & 07777;
}

static void
touch (const char *path)
{
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs ("[client.x]\n\tkey = AQ==\n", f);
  fclose (f);
}

static int
setup (void **state)
{
  (void) state;
  snprintf (top, sizeof top, "/tmp/rbdx-test-state.XXXXXX");
  if (!mkdtemp (top))
    return -1;
  snprintf (run, sizeof run, "%s/run", top);
  setenv ("RBDX_RUN_DIR", run, 1);
  return 0;
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
test_run_dir_shared (void **state)
{
  char link[200];

  (void) state;
  /* Made 0755, as rbdx@.socket's DirectoryMode=: neither tightens
   * what the other made. */
  assert_int_equal (rbdx_state_mkdir (), 0);
  assert_int_equal (mode_of (run), 0755);
  /* An existing safe one (ours, not writable by others) is kept as it
   * is, 0700 or 0755. */
  assert_int_equal (chmod (run, 0700), 0);
  assert_int_equal (rbdx_state_mkdir (), 0);
  assert_int_equal (mode_of (run), 0700);
  assert_int_equal (chmod (run, 0755), 0);
  assert_int_equal (rbdx_state_mkdir (), 0);
  assert_int_equal (mode_of (run), 0755);
  /* One of ours that others can write loses those bits only. */
  assert_int_equal (chmod (run, 0777), 0);
  assert_int_equal (rbdx_state_mkdir (), 0);
  assert_int_equal (mode_of (run), 0755);
  assert_int_equal (chmod (run, 0730), 0);
  assert_int_equal (rbdx_state_mkdir (), 0);
  assert_int_equal (mode_of (run), 0710);
  /* A link to a directory is not the run directory. */
  snprintf (link, sizeof link, "%s/link", top);
  assert_int_equal (symlink (run, link), 0);
  setenv ("RBDX_RUN_DIR", link, 1);
  assert_int_equal (rbdx_state_mkdir (), -ENOTDIR);
  setenv ("RBDX_RUN_DIR", run, 1);
}

static void
test_state_file_0600 (void **state)
{
  struct rbdx_state st = { .index = 3, .connections = 4, .supervisor = 42 }, back;
  char path[200];
  mode_t old;

  (void) state;
  assert_int_equal (rbdx_state_mkdir (), 0);
  snprintf (st.target, sizeof st.target, "rbd/ns/img");
  snprintf (st.keyring_file, sizeof st.keyring_file, "%s/keyrings/abc.keyring", run);
  snprintf (st.params, sizeof st.params, "id=cinder%ckeyring=%s%c", RBDX_PARAM_SEP,
            st.keyring_file, RBDX_PARAM_SEP);
  old = umask (0);
  assert_int_equal (rbdx_state_save (&st), 0);
  umask (old);
  snprintf (path, sizeof path, "%s/nbd3", run);
  assert_int_equal (mode_of (path), 0600);
  assert_int_equal (rbdx_state_load (3, &back), 0);
  assert_string_equal (back.target, "rbd/ns/img");
  assert_string_equal (back.keyring_file, st.keyring_file);
  assert_string_equal (back.params, st.params);
  /* Saved again over the old one: still 0600. */
  assert_int_equal (chmod (path, 0644), 0);
  assert_int_equal (rbdx_state_save (&st), 0);
  assert_int_equal (mode_of (path), 0600);
  rbdx_state_remove (3);
  assert_int_equal (access (path, F_OK), -1);
}

/* Only RUN_DIR/nbdN as rbdx_state_save names it is a mapping. */
static void
test_list_only_its_names (void **state)
{
  static const char *const names[] = { "nbd5", "nbd 5", "nbd+5", "nbd05",
                                       "nbd-1", "nbd5x", "nbd", "nbd0",
                                       "nbd12", "nbd99999999999", "xnbd3" };
  char path[256];
  int idx[16], n;

  (void) state;
  assert_int_equal (mkdir (run, 0700), 0);
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    snprintf (path, sizeof path, "%s/%s", run, names[i]);
    touch (path);
  }
  n = rbdx_state_list (idx, 16);
  assert_int_equal (n, 3);
  assert_int_equal (idx[0], 0);
  assert_int_equal (idx[1], 5);
  assert_int_equal (idx[2], 12);
  /* More than the caller can take: an error, never a shorter list (a
   * duplicate check that saw part of the mappings mapped twice). */
  assert_int_equal (rbdx_state_list (idx, 3), 3);
  assert_int_equal (rbdx_state_list (idx, 2), -E2BIG);
}

static void
test_remove_keyring_only_its_own (void **state)
{
  char kr[200], sub[200], outside[200], beside[200], up[200], nbd[200];

  (void) state;
  assert_int_equal (rbdx_state_mkdir (), 0);
  snprintf (kr, sizeof kr, "%s/keyrings", run);
  assert_int_equal (mkdir (kr, 0700), 0);
  snprintf (sub, sizeof sub, "%s/keyrings/sub", run);
  assert_int_equal (mkdir (sub, 0700), 0);
  snprintf (kr, sizeof kr, "%s/keyrings/k1.keyring", run);
  snprintf (sub, sizeof sub, "%s/keyrings/sub/k2.keyring", run);
  snprintf (outside, sizeof outside, "%s/outside.keyring", top);
  snprintf (beside, sizeof beside, "%s/k3.keyring", run);
  snprintf (nbd, sizeof nbd, "%s/nbd9", run);
  snprintf (up, sizeof up, "%s/keyrings/../nbd9", run);
  touch (kr);
  touch (sub);
  touch (outside);
  touch (beside);
  touch (nbd);
  rbdx_state_remove_keyring ("");
  rbdx_state_remove_keyring (sub);
  rbdx_state_remove_keyring (outside);
  rbdx_state_remove_keyring (beside);
  rbdx_state_remove_keyring (up);
  assert_int_equal (access (sub, F_OK), 0);
  assert_int_equal (access (outside, F_OK), 0);
  assert_int_equal (access (beside, F_OK), 0);
  assert_int_equal (access (nbd, F_OK), 0);
  rbdx_state_remove_keyring (kr);
  assert_int_equal (access (kr, F_OK), -1);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_run_dir_shared, setup, teardown),
    cmocka_unit_test_setup_teardown (test_state_file_0600, setup, teardown),
    cmocka_unit_test_setup_teardown (test_remove_keyring_only_its_own, setup, teardown),
    cmocka_unit_test_setup_teardown (test_list_only_its_names, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

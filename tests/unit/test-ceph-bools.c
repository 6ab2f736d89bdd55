/* SPDX-License-Identifier: BSD-3-Clause */
/* test-ceph-bools: the rbd-nbd personality's list of Ceph bool options
 * (server/mapper/ceph-bools.h) against the installed librados, with no
 * cluster: rados_conf_get on a fresh handle prints a bool as "true" or
 * "false".  Asserts each listed name is a bool of this Ceph or unknown
 * to it (a name of a later or earlier Ceph; the server then refuses
 * ceph.NAME=), that most are known (the list is this Ceph's, not
 * another's), and that the parser takes each as a flag: "map --NAME
 * p/i" keeps its spec and gives ceph.NAME=true.  The other way round,
 * with ceph-conf (ceph-common; the test is skipped without it): every
 * bool that `ceph-conf --show-config` of the installed Ceph prints in
 * the families of a client's options is listed, so that "map --NAME
 * p/i" never takes the spec for NAME's value. */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rados/librados.h>

#include "mapper/ceph-bools.h"
#include "mapper/nbd-compat.h"

static void
test_bools_of_librados (void **state)
{
  rados_t c;
  char v[256];
  size_t n = 0, known = 0;

  (void) state;
  assert_int_equal (rados_create (&c, NULL), 0);
  for (; rbdx_ceph_bools[n]; n++) {
    int r = rados_conf_get (c, rbdx_ceph_bools[n], v, sizeof v);

    if (r == -ENOENT) {
      printf ("%s: unknown to this Ceph\n", rbdx_ceph_bools[n]);
      continue;
    }
    assert_int_equal (r, 0);
    if (strcmp (v, "true") != 0 && strcmp (v, "false") != 0)
      fail_msg ("%s is no bool of this Ceph: '%s'", rbdx_ceph_bools[n], v);
    known++;
  }
  rados_shutdown (c);
  printf ("%zu of %zu names are bools of this Ceph\n", known, n);
  assert_true (known * 10 >= n * 9);
}

/* The families of a Ceph client's options (ceph-bools.c). */
static bool
client_family (const char *name)
{
  static const char *const fam[] = {
    "auth_", "cephx_", "clog_", "crypto_", "debug_", "err_to_", "librados_",
    "lockdep", "log_", "ms_", "objecter_", "perf", "rados_", "rbd_",
    "throttler_", NULL
  };

  for (size_t i = 0; fam[i]; i++)
    if (strncmp (name, fam[i], strlen (fam[i])) == 0)
      return true;
  return false;
}

static void
test_no_bool_missing (void **state)
{
  char line[1024], missing[4096] = "";
  size_t bools = 0, len = 0;
  FILE *p;

  (void) state;
  p = popen ("ceph-conf -c /dev/null --show-config 2>/dev/null", "r");
  assert_non_null (p);
  while (fgets (line, sizeof line, p)) {
    char *eq = strstr (line, " = ");

    if (!eq)
      continue;
    *eq = '\0';
    eq += 3;
    eq[strcspn (eq, "\n")] = '\0';
    if (strcmp (eq, "true") != 0 && strcmp (eq, "false") != 0)
      continue;
    bools++;
    if (client_family (line) && !rbdx_ceph_is_bool (line) &&
        len + strlen (line) + 2 < sizeof missing)
      len += (size_t) snprintf (missing + len, sizeof missing - len, " %s",
                                line);
  }
  if (pclose (p) != 0 || bools == 0)
    skip ();                    /* no ceph-conf here */
  printf ("%zu bools printed by ceph-conf\n", bools);
  if (*missing)
    fail_msg ("bools of this Ceph not in rbdx_ceph_bools:%s", missing);
}

static void
test_parsed_as_flags (void **state)
{
  struct rbdx_nbd_args a;
  char opt[160], want[180];

  (void) state;
  for (size_t i = 0; rbdx_ceph_bools[i]; i++) {
    char *argv[] = { "rbd-nbd", "map", opt, "p/i", NULL };

    snprintf (opt, sizeof opt, "--%s", rbdx_ceph_bools[i]);
    if (rbdx_nbd_parse (4, argv, &a) != 0)
      fail_msg ("%s: %s", opt, a.msg);
    assert_string_equal (a.target, "p/i");
    snprintf (want, sizeof want, "ceph.%s=true", rbdx_ceph_bools[i]);
    assert_int_equal (a.nparams, 1);
    assert_string_equal (a.params[0], want);
    rbdx_nbd_args_free (&a);
  }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_bools_of_librados),
    cmocka_unit_test (test_parsed_as_flags),
    cmocka_unit_test (test_no_bool_missing),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* test-ceph-bools: the rbd-nbd personality's list of Ceph bool options
 * (server/mapper/ceph-bools.h) against the installed librados, with no
 * cluster: rados_conf_get on a fresh handle prints a bool as "true" or
 * "false".  Asserts each listed name is a bool of this Ceph or unknown
 * to it (a name of a later or earlier Ceph; the server then refuses
 * ceph.NAME=), that most are known (the list is this Ceph's, not
 * another's), and that the parser takes each as a flag: "map --NAME
 * p/i" keeps its spec and gives ceph.NAME=true. */
#include <errno.h>
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
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test-budget.c: the node's connection budget
 * (server/mapper/budget.h: how many connections a new mapping gets from
 * what the budget has left, and parsing the budget) and the per-server
 * default (include/rbdx/budget.h: connections that fit the fd and task
 * limits).  Pure functions; no root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mapper/budget.h"
#include "rbdx/budget.h"

static char err[512];

static void
choose_default (void **state)
{
  (void) state;
  /* Nothing mapped: the fallback (CPUs, at most 16). */
  assert_int_equal (rbdx_budget_choose (0, 2, 256, 0, err, sizeof err), 2);
  assert_int_equal (rbdx_budget_choose (0, 16, 256, 0, err, sizeof err), 16);
  /* Less left than the fallback: what is left. */
  assert_int_equal (rbdx_budget_choose (0, 16, 64, 60, err, sizeof err), 4);
  assert_int_equal (rbdx_budget_choose (0, 16, 64, 63, err, sizeof err), 1);
  /* 16 devices of 4 in a budget of 64: the 16th still gets 4. */
  assert_int_equal (rbdx_budget_choose (0, 4, 64, 60, err, sizeof err), 4);
}

static void
choose_requested (void **state)
{
  (void) state;
  assert_int_equal (rbdx_budget_choose (8, 2, 64, 56, err, sizeof err), 8);
  assert_int_equal (rbdx_budget_choose (9, 2, 64, 56, err, sizeof err),
                    -ENOSPC);
  assert_non_null (strstr (err, "--connections 9"));
  assert_non_null (strstr (err, "56 of 64"));
  assert_non_null (strstr (err, "8 left"));
}

static void
choose_used_up (void **state)
{
  (void) state;
  assert_int_equal (rbdx_budget_choose (0, 2, 64, 64, err, sizeof err),
                    -ENOSPC);
  assert_non_null (strstr (err, "used up: 64 of 64"));
  assert_non_null (strstr (err, "RBDX_NODE_CONNECTIONS"));
  /* A budget lowered below what is mapped. */
  assert_int_equal (rbdx_budget_choose (1, 2, 32, 40, err, sizeof err),
                    -ENOSPC);
}

static void
parse_env (void **state)
{
  unsigned n = 0;

  (void) state;
  assert_int_equal (rbdx_budget_parse ("64", 0, &n, err, sizeof err), 0);
  assert_int_equal (n, 64);
  assert_int_equal (rbdx_budget_parse (" 7 ", 0, &n, err, sizeof err), 0);
  assert_int_equal (n, 7);
  assert_int_equal (rbdx_budget_parse ("0", 0, &n, err, sizeof err), -EINVAL);
  assert_non_null (strstr (err, "RBDX_NODE_CONNECTIONS='0'"));
  assert_int_equal (rbdx_budget_parse ("-1", 0, &n, err, sizeof err), -EINVAL);
  assert_int_equal (rbdx_budget_parse ("12x", 0, &n, err, sizeof err), -EINVAL);
  assert_int_equal (rbdx_budget_parse ("", 0, &n, err, sizeof err), -EINVAL);
  assert_int_equal (rbdx_budget_parse ("99999999999999999999", 0, &n, err,
                                       sizeof err), -EINVAL);
}

static void
parse_file (void **state)
{
  unsigned n = 0;

  (void) state;
  assert_int_equal (rbdx_budget_parse ("# node budget\n\nconnections=48\n",
                                       1, &n, err, sizeof err), 0);
  assert_int_equal (n, 48);
  assert_int_equal (rbdx_budget_parse ("connections = 10\nconnections=12",
                                       1, &n, err, sizeof err), 0);
  assert_int_equal (n, 12);
  n = 5;
  assert_int_equal (rbdx_budget_parse ("# nothing\n", 1, &n, err, sizeof err),
                    -ENOENT);
  assert_int_equal (n, 5);
  assert_int_equal (rbdx_budget_parse ("connections=10\nthreads=3\n", 1, &n,
                                       err, sizeof err), -EINVAL);
  assert_non_null (strstr (err, "line 2"));
  assert_int_equal (rbdx_budget_parse ("connectionsx=3\n", 1, &n, err,
                                       sizeof err), -EINVAL);
  assert_int_equal (rbdx_budget_parse ("connections=0\n", 1, &n, err,
                                       sizeof err), -EINVAL);
  /* A comment after the value, and one that hides a connections=. */
  assert_int_equal (rbdx_budget_parse ("connections=9 # nine\n", 1, &n, err,
                                       sizeof err), 0);
  assert_int_equal (n, 9);
  assert_int_equal (rbdx_budget_parse ("connections=9\n# connections=3", 1,
                                       &n, err, sizeof err), 0);
  assert_int_equal (n, 9);
  assert_int_equal (rbdx_budget_parse ("connections=#9\n", 1, &n, err,
                                       sizeof err), -EINVAL);
}

static void
server_default (void **state)
{
  (void) state;
  /* systemd's default 1024 files: (1024 - 64) / 16. */
  assert_int_equal (rbdx_budget_connections (1024, UINT64_MAX, 16, 1), 60);
  /* TasksMax=4915 (15 % of 32768) at 33 threads: (4915 - 64) / 33. */
  assert_int_equal (rbdx_budget_connections (1 << 20, 4915, 33, 1), 147);
  /* The smaller of the two. */
  assert_int_equal (rbdx_budget_connections (1024, 4915, 33, 1), 60);
  /* Limits below the reserves still let one connection in. */
  assert_int_equal (rbdx_budget_connections (32, 16, 16, 1), 1);
  assert_int_equal (rbdx_budget_connections (UINT64_MAX, UINT64_MAX, 16, 1),
                    RBDX_MAX_CONNECTIONS_LIMIT);
  /* Pool mode (C86): two Ceph clients a connection, (704 - 64) / 32 and
   * (4288 - 64) / (33 + 16), where one client each allowed 40 and 128. */
  assert_int_equal (rbdx_budget_connections (704, UINT64_MAX, 33, 2), 20);
  assert_int_equal (rbdx_budget_connections (UINT64_MAX, 4288, 33, 2), 86);
  assert_int_equal (rbdx_budget_connections (704, UINT64_MAX, 33, 1), 40);
}

static void
server_take_give (void **state)
{
  struct rbdx_budget b = { .max = 2 };

  (void) state;
  assert_int_equal (rbdx_budget_take (&b, err, sizeof err), 0);
  assert_int_equal (rbdx_budget_take (&b, err, sizeof err), 0);
  assert_int_equal (rbdx_budget_take (&b, err, sizeof err), -EMFILE);
  assert_non_null (strstr (err, "max_connections=2 reached"));
  rbdx_budget_give (&b);
  assert_int_equal (rbdx_budget_take (&b, err, sizeof err), 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (choose_default),
    cmocka_unit_test (choose_requested),
    cmocka_unit_test (choose_used_up),
    cmocka_unit_test (parse_env),
    cmocka_unit_test (parse_file),
    cmocka_unit_test (server_default),
    cmocka_unit_test (server_take_give),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

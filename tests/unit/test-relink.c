/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx unit tests: when the supervisor hands the kernel new sockets
 * (server/mapper/relink.h).
 *
 * On a simulated clock: a burst of NBD_CMD_LINK_DEAD events is counted
 * together before anything is sent; never more sockets than the device
 * has connections; a partial hand-over waits for the rest to settle
 * again; failures back off (longer when the kernel refused the sockets)
 * and `rbdx attach` drops the back-off; a lost event is made up from the
 * copies only after 5 s without events, and never while dead links are
 * counted.  No root, no kernel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "mapper/relink.h"

static void
test_burst_settles (void **state)
{
  struct rbdx_relink l = { 0 };

  (void) state;
  assert_int_equal (rbdx_relink_to_send (&l, 4, 10.0), 0);
  rbdx_relink_dead (&l, 1, 10.0);
  rbdx_relink_dead (&l, 2, 10.1);
  assert_int_equal (l.dead, 3);
  assert_true (l.dead_since == 10.0);
  assert_true (l.last_event == 10.1);
  /* Still within the pause after the first event. */
  assert_int_equal (rbdx_relink_to_send (&l, 4, 10.2), 0);
  assert_int_equal (rbdx_relink_to_send (&l, 4, 10.0 + RBDX_RELINK_SETTLE_S), 3);
}

static void
test_capped_by_connections (void **state)
{
  struct rbdx_relink l = { 0 };

  (void) state;
  rbdx_relink_dead (&l, 6, 1.0);
  assert_int_equal (rbdx_relink_to_send (&l, 4, 2.0), 4);
  rbdx_relink_sent (&l, 4, 2.0);
  /* The rest waits for a new pause. */
  assert_int_equal (l.dead, 2);
  assert_true (l.dead_since == 2.0);
  assert_int_equal (rbdx_relink_to_send (&l, 4, 2.1), 0);
  assert_int_equal (rbdx_relink_to_send (&l, 4, 2.4), 2);
  rbdx_relink_sent (&l, 2, 2.4);
  assert_int_equal (l.dead, 0);
  assert_true (l.dead_since == 0);
  assert_int_equal (rbdx_relink_to_send (&l, 4, 9.0), 0);
}

static void
test_back_off (void **state)
{
  struct rbdx_relink l = { 0 };

  (void) state;
  rbdx_relink_dead (&l, 2, 0.0);
  assert_int_equal (rbdx_relink_to_send (&l, 2, 1.0), 2);
  /* The server could not be reached. */
  rbdx_relink_failed (&l, 1.0, false);
  assert_int_equal (rbdx_relink_to_send (&l, 2, 1.4), 0);
  assert_int_equal (rbdx_relink_to_send (&l, 2, 1.0 + RBDX_RELINK_RETRY_S), 2);
  /* The kernel refused: a longer wait. */
  rbdx_relink_failed (&l, 2.0, true);
  assert_int_equal (rbdx_relink_to_send (&l, 2, 2.0 + RBDX_RELINK_RETRY_S), 0);
  assert_int_equal (rbdx_relink_to_send (&l, 2, 2.0 + RBDX_RELINK_REFUSED_RETRY_S), 2);
  /* `rbdx attach` (SIGUSR1): at once. */
  rbdx_relink_failed (&l, 3.0, true);
  rbdx_relink_retry_now (&l);
  assert_int_equal (rbdx_relink_to_send (&l, 2, 3.0), 2);
  /* A failure counts nothing as sent. */
  assert_int_equal (l.dead, 2);
}

static void
test_lost_event (void **state)
{
  struct rbdx_relink l = { 0 };

  (void) state;
  /* All copies live: nothing. */
  assert_int_equal (rbdx_relink_check_lost (&l, 4, 4, 100.0), 0);
  assert_true (l.short_since == 0);
  /* Two copies gone, no event: counted only after 5 s. */
  assert_int_equal (rbdx_relink_check_lost (&l, 4, 2, 100.0), 0);
  assert_true (l.short_since == 100.0);
  assert_int_equal (rbdx_relink_check_lost (&l, 4, 2, 105.0), 0);
  assert_int_equal (rbdx_relink_check_lost (&l, 4, 2, 105.1), 2);
  assert_int_equal (l.dead, 2);
  /* Sent at once: no second pause. */
  assert_int_equal (rbdx_relink_to_send (&l, 4, 105.1), 2);
  /* While dead links are counted, nothing more is made up. */
  assert_int_equal (rbdx_relink_check_lost (&l, 4, 1, 200.0), 0);
  assert_int_equal (l.dead, 2);
  assert_true (l.short_since == 0);
}

static void
test_lost_event_waits_for_quiet (void **state)
{
  struct rbdx_relink l = { 0 };

  (void) state;
  /* An event was counted and served at 101; a copy is still short
   * (its event may yet come): wait 5 s after the last event too. */
  rbdx_relink_dead (&l, 1, 101.0);
  rbdx_relink_sent (&l, 1, 101.3);
  assert_int_equal (rbdx_relink_check_lost (&l, 4, 3, 100.0), 0);
  assert_int_equal (rbdx_relink_check_lost (&l, 4, 3, 105.5), 0);
  assert_int_equal (rbdx_relink_check_lost (&l, 4, 3, 106.1), 1);
}

static void
test_short_resets (void **state)
{
  struct rbdx_relink l = { 0 };

  (void) state;
  assert_int_equal (rbdx_relink_check_lost (&l, 2, 1, 10.0), 0);
  /* The copy count recovered (a late event was served): start over. */
  assert_int_equal (rbdx_relink_check_lost (&l, 2, 2, 12.0), 0);
  assert_true (l.short_since == 0);
  assert_int_equal (rbdx_relink_check_lost (&l, 2, 1, 14.0), 0);
  assert_int_equal (rbdx_relink_check_lost (&l, 2, 1, 16.0), 0);
  assert_int_equal (rbdx_relink_check_lost (&l, 2, 1, 19.1), 1);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_burst_settles),
    cmocka_unit_test (test_capped_by_connections),
    cmocka_unit_test (test_back_off),
    cmocka_unit_test (test_lost_event),
    cmocka_unit_test (test_lost_event_waits_for_quiet),
    cmocka_unit_test (test_short_resets),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}

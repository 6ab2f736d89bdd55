/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/teardown.c: taking a mapping down: disconnect, then the
 * devlink and the state file (see teardown.h). */
#include <time.h>

#include "devlinks.h"
#include "state.h"
#include "target.h"
#include "teardown.h"

int
rbdx_teardown_disconnect (struct rbdx_nl *nl, int index, double wait_s)
{
  int r = rbdx_nl_disconnect (nl, index);

  for (int i = 0; i < (int) (wait_s * 10) && rbdx_device_connected (index); i++) {
    struct timespec ts = { 0, 100000000 };
    nanosleep (&ts, NULL);
  }
  return r;
}

void
rbdx_teardown_forget (int index, const char *target, pid_t owner)
{
  struct rbdx_state st;

  if (*target && !rbdx_target_is_uri (target))
    rbdx_devlink_remove (target, index);
  if (owner == 0 || (rbdx_state_load (index, &st) == 0 && st.supervisor == owner))
    rbdx_state_remove (index);
}

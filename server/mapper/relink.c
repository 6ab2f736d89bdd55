/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/relink.c: the re-attach decisions, pure: how many new
 * sockets the kernel's dead links get, and when (see relink.h). */
#include "relink.h"

void
rbdx_relink_dead (struct rbdx_relink *l, unsigned n, double now)
{
  l->last_event = now;
  if (!l->dead)
    l->dead_since = now;
  l->dead += n;
}

unsigned
rbdx_relink_to_send (const struct rbdx_relink *l, unsigned conns, double now)
{
  /* Let a burst of LINK_DEAD events arrive before counting them. */
  if (!l->dead || now - l->dead_since < RBDX_RELINK_SETTLE_S || now < l->next_try)
    return 0;
  return l->dead > conns ? conns : l->dead;
}

void
rbdx_relink_sent (struct rbdx_relink *l, unsigned n, double now)
{
  l->dead -= n > l->dead ? l->dead : n;
  l->dead_since = l->dead ? now : 0;
}

void
rbdx_relink_failed (struct rbdx_relink *l, double now, bool kernel_refused)
{
  l->next_try = now + (kernel_refused ? RBDX_RELINK_REFUSED_RETRY_S : RBDX_RELINK_RETRY_S);
}

void
rbdx_relink_retry_now (struct rbdx_relink *l)
{
  l->next_try = 0;
}

unsigned
rbdx_relink_check_lost (struct rbdx_relink *l, unsigned conns, unsigned live, double now)
{
  /* The kernel shut the sockets of the lost events down, so their copies
   * are gone: count from the copies.  dead_since one second back: no
   * need to wait for a burst. */
  if (l->dead || live >= conns) {
    l->short_since = 0;
    return 0;
  }
  if (!l->short_since)
    l->short_since = now;
  else if (now - l->short_since > RBDX_RELINK_LOST_S && now - l->last_event > RBDX_RELINK_LOST_S) {
    l->dead = conns - live;
    l->dead_since = now - 1;
    return l->dead;
  }
  return 0;
}

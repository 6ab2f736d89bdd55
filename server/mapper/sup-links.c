/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/sup-links.c: dead links and re-attach (see sup.h; when to act is
 * decided in relink.c). */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "sup.h"

void
sup_add_copies (struct sup *s, const int *fds, size_t n, uint64_t size)
{
  for (size_t i = 0; i < n; i++) {
    if (s->ncopies == sizeof s->copies / sizeof s->copies[0]) {
      close (fds[i]);
      continue;
    }
    s->copies[s->ncopies++] = (struct rbdx_copy) { .fd = fds[i], .size = size };
  }
}

void
sup_read_link_dead (struct sup *s)
{
  int n = rbdx_nl_read_link_dead (s->mc, s->index);

  if (n < 0)
    logmsg ("reading NBD netlink events failed: %s", strerror (-n));
  if (n > 0) {
    rbdx_relink_dead (&s->relink, (unsigned) n, now ());
    logmsg ("%d connection(s) of /dev/nbd%d died", n, s->index);
  }
}

void
sup_drop_shut_copies (struct sup *s, const struct pollfd *p)
{
  /* From the end, so the indexes of p[] still match. */
  for (size_t i = s->ncopies; i-- > 0;)
    if (p[i].revents & (POLLHUP | POLLERR)) {
      close (s->copies[i].fd);
      s->copies[i] = s->copies[--s->ncopies];
    }
}

void
sup_hand_over (struct sup *s, int r, int *fds, unsigned n,
               const struct rbdx_export *e, const char *why)
{
  if (r == 0 && *s->identity && strcmp (e->identity, s->identity) != 0) {
    for (unsigned i = 0; i < n; i++)
      close (fds[i]);
    why = "the server now serves another image than the one mapped";
    r = -ESTALE;
  }
  if (r) {
    if (now () - s->last_reattach_msg > 5) {
      logmsg ("cannot reconnect %u connection(s) yet: %s", n, why ? why : strerror (-r));
      s->last_reattach_msg = now ();
    }
    rbdx_relink_failed (&s->relink, now (), false);
    return;
  }
  r = rbdx_nl_reconfigure (s->cmd, s->index, s->backend, fds, n, 0);
  if (r) {
    logmsg ("NBD_CMD_RECONFIGURE with %u socket(s) failed: %s", n, errno_text (r));
    for (unsigned i = 0; i < n; i++)
      close (fds[i]);
    rbdx_relink_failed (&s->relink, now (), true);
    return;
  }
  sup_add_copies (s, fds, n, e->size);
  s->reattaches += n;
  sup_save_state (s);
  logmsg ("re-attached %u connection(s) (export size %llu bytes)", n,
          (unsigned long long) e->size);
  rbdx_relink_sent (&s->relink, n, now ());
}

void
sup_kill_orphan (struct sup *s)
{
  const struct rbdx_map_opts *o = s->o;
  int dead = 0, n, tries;

  /* Its connections must be dead before we fill their slots: kill it and
   * count the kernel's LINK_DEAD events (5 s at most). */
  logmsg ("killing the server of the dead supervisor, pid %ld", o->orphan);
  kill ((pid_t) o->orphan, SIGKILL);
  for (tries = 0; tries < 50 && dead < (int) s->conns; tries++) {
    sleep_s (0.1);
    n = rbdx_nl_read_link_dead (s->mc, o->device);
    if (n > 0)
      dead += n;
  }
  logmsg ("%d connection(s) of /dev/nbd%d died", dead, o->device);
}

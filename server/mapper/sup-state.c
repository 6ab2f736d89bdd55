/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/sup-state.c: the supervisor's state file (see sup.h, state.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sup.h"

void
sup_save_state (struct sup *s)
{
  struct rbdx_state st = {
    .index = s->index, .connections = s->conns, .supervisor = getpid (),
    .supervisor_start = rbdx_proc_start (getpid ()),
    .server = s->server, .server_start = rbdx_proc_start (s->server),
    .read_only = s->o->read_only, .resize_poll = s->o->resize_poll,
  };
  int r;

  snprintf (st.target, sizeof st.target, "%s", s->o->target);
  snprintf (st.identity, sizeof st.identity, "%s", s->identity);
  snprintf (st.metrics, sizeof st.metrics, "%s", s->o->is_uri ? "" : s->metrics);
  st.reattaches = s->reattaches;
  st.resizes = s->resizes;
  st.server_restarts = s->restarts;
  snprintf (st.backend, sizeof st.backend, "%s", s->backend);
  snprintf (st.socket, sizeof st.socket, "%s", s->o->is_uri ? "" : s->sock);
  snprintf (st.engine, sizeof st.engine, "%s", s->o->is_uri ? ""
            : s->o->engine ? "builtin" : "nbdkit");
  snprintf (st.keyring_file, sizeof st.keyring_file, "%s", s->o->keyring_file);
  for (size_t i = 0; i < s->o->nparams; i++) {
    size_t used = strlen (st.params);
    snprintf (st.params + used, sizeof st.params - used, "%s%c", s->o->params[i],
              RBDX_PARAM_SEP);
  }
  r = rbdx_state_save (&st);
  if (r)
    logmsg ("cannot write the state of /dev/nbd%d in %s: %s", s->index,
            rbdx_run_dir (), strerror (-r));
}

int
sup_mapped_elsewhere (const char *identity, bool read_only)
{
  int idx[256], n = rbdx_state_list (idx, 256);
  struct rbdx_state st;

  for (int i = 0; i < n; i++)
    if (rbdx_state_load (idx[i], &st) == 0 && !strcmp (st.identity, identity) &&
        st.read_only == read_only && rbdx_device_connected (idx[i]))
      return idx[i];
  return -1;
}


bool
sup_devlink_live (int index, const char *spec)
{
  struct rbdx_state st;

  return rbdx_state_load (index, &st) == 0 && strcmp (st.target, spec) == 0 &&
         rbdx_device_connected (index);
}

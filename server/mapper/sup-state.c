/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/sup-state.c: the supervisor's state file (see sup.h, state.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rbdx/options.h"

#include "mapped.h"
#include "sup.h"

int
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
    /* Never a list cut short (the mapper refuses one that would be). */
    if ((size_t) snprintf (st.params + used, sizeof st.params - used, "%s%c",
                           s->o->params[i], RBDX_PARAM_SEP) >=
        sizeof st.params - used) {
      logmsg ("cannot write the state of /dev/nbd%d: its parameters do not "
              "fit %zu bytes", s->index, sizeof st.params - 1);
      return -E2BIG;
    }
  }
  r = rbdx_state_save (&st);
  if (r)
    logmsg ("cannot write the state of /dev/nbd%d in %s: %s", s->index,
            rbdx_run_dir (), strerror (-r));
  return r;
}

/* The values of KEY= in the parameter list @p list, each followed by
 * RBDX_PARAM_SEP (struct rbdx_state's params), in order, into @p out. */
static void
values_of (const char *list, const char *key, char *out, size_t len)
{
  size_t k = strlen (key), used = 0;

  out[0] = '\0';
  for (const char *p = list; *p;) {
    const char *end = strchr (p, RBDX_PARAM_SEP);
    size_t n = end ? (size_t) (end - p) : strlen (p);

    if (n > k && strncmp (p, key, k) == 0 && p[k] == '=' && used < len) {
      int w = snprintf (out + used, len - used, "%.*s%c", (int) (n - k - 1),
                        p + k + 1, RBDX_PARAM_SEP);
      used += w > 0 ? (size_t) w : 0;
    }
    p += n + (end != NULL);
  }
}

/* The parameters that change what the device shows or who may write the
 * image: a mapping that differs in them is not the one asked for. */
static const char *const content_keys[] = { "encryption_format", "exclusive" };

/* Whether exclusive= of values_of's @p v is true (absent: false). */
static bool
exclusive_on (const char *v)
{
  char one[64];

  snprintf (one, sizeof one, "%.*s", (int) strcspn (v, "\x1f"), v);
  return *one && rbdx_parse_bool (one) == 1;
}

int
sup_mapped_elsewhere (const char *identity, const struct rbdx_map_opts *o,
                      char *why, size_t whylen)
{
  int idx[MAX_MAPPED], n = rbdx_state_list (idx, MAX_MAPPED);
  char mine[sizeof ((struct rbdx_state *) 0)->params] = "";
  struct rbdx_state st;

  if (n < 0) {
    snprintf (why, whylen, "cannot read the mappings recorded in %s: %s",
              rbdx_run_dir (), n == -E2BIG ? "more than rbdx handles"
              : strerror (-n));
    return -2;
  }
  for (size_t i = 0; i < o->nparams; i++) {
    size_t used = strlen (mine);
    snprintf (mine + used, sizeof mine - used, "%s%c", o->params[i],
              RBDX_PARAM_SEP);
  }
  for (int i = 0; i < n; i++) {
    if (rbdx_state_load (idx[i], &st) != 0 || strcmp (st.identity, identity) ||
        st.read_only != o->read_only || !rbdx_device_connected (idx[i]))
      continue;
    for (size_t k = 0; k < sizeof content_keys / sizeof content_keys[0]; k++) {
      char a[1024], b[1024];
      bool same;

      values_of (mine, content_keys[k], a, sizeof a);
      values_of (st.params, content_keys[k], b, sizeof b);
      same = k == 1 ? exclusive_on (a) == exclusive_on (b) : !strcmp (a, b);
      if (!same) {
        snprintf (why, whylen, "image %s is mapped on /dev/nbd%d with other "
                  "%s= parameters (%s there): unmap it first, or map it as "
                  "it is mapped", identity, idx[i], content_keys[k],
                  *b ? "set" : "none");
        return -2;
      }
    }
    return idx[i];
  }
  return -1;
}

bool
sup_devlink_live (int index, const char *spec)
{
  struct rbdx_state st;

  return rbdx_state_load (index, &st) == 0 && strcmp (st.target, spec) == 0 &&
         rbdx_device_connected (index);
}

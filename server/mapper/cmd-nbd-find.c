/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/cmd-nbd-find.c: the rbd-nbd personality's view of a
 * mapping (see cli.h): its snap id, and the mapping unmap and detach of
 * a spec name.
 *
 * rbd-nbd finds a spec's device by pool, namespace, image, snap name,
 * snap id and, when --device is given, the device (Ceph
 * src/tools/rbd_nbd/rbd-nbd.cc, find_mapped_dev_by_spec).  Its canonical
 * target holds the first four; the snap id of a --snap-id mapping is its
 * snap_id= parameter (cmd-nbd.c, to_cli).  The image text alone would
 * take the head for `unmap --snap-id N SPEC`, and unmap is --force: a
 * mounted head would be pulled.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mapped.h"
#include "nbd-compat.h"
#include "state.h"
#include "target.h"

long long
rbdx_nbd_snap_id (const struct rbdx_state *st)
{
  for (const char *p = st->params; *p;) {
    const char *end = strchr (p, RBDX_PARAM_SEP);
    size_t n = end ? (size_t) (end - p) : strlen (p);

    if (n > 8 && strncmp (p, "snap_id=", 8) == 0) {
      char *e;
      long long id = strtoll (p + 8, &e, 10);
      return e == p + n && id >= 0 ? id : -1;
    }
    p += n + (end != NULL);
  }
  return -1;
}

struct rbdx_state *
rbdx_nbd_find (const struct rbdx_nbd_args *a, struct rbdx_state *all, int n)
{
  /* unmap and detach parse --device unchecked (device_index is only
   * the positional device's): one that names no /dev/nbdN matches none. */
  int dev = a->device ? rbdx_device_index (a->device) : -1;

  for (int i = 0; i < n; i++)
    if (rbdx_mapped_find (a->target, &all[i], 1) &&
        rbdx_nbd_snap_id (&all[i]) == a->snap_id &&
        (!a->device || all[i].index == dev))
      return &all[i];
  return NULL;
}

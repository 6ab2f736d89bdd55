/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the qos.NAME_limit=, qos.NAME_burst= and
 * qos.NAME_burst_seconds= parameters (rbdx_options_set_qos, options.h);
 * what they do to an image's own limits is qos.c's. */
#include <stdint.h>
#include <string.h>

#include "rbdx/opterr.h"
#include "rbdx/options.h"

const char *const rbdx_qos_names[RBDX_QOS_N] = {
  "iops", "read_iops", "write_iops", "bps", "read_bps", "write_bps",
};

int
rbdx_options_set_qos (struct rbdx_options *o, const char *key,
                      const char *value, char *err, size_t errlen)
{
  static const char *const parts[] = { "_limit", "_burst", "_burst_seconds" };
  const char *name = key + 4;
  struct rbdx_qos_setting *q;
  uint64_t v;
  size_t n;
  int i, p;

  for (i = 0; i < RBDX_QOS_N; i++) {
    n = strlen (rbdx_qos_names[i]);
    if (strncmp (name, rbdx_qos_names[i], n) != 0)
      continue;
    for (p = 0; p < 3; p++)
      if (strcmp (name + n, parts[p]) == 0)
        goto found;
  }
  return rbdx_opt_err (err, errlen, "%s: unknown QoS setting (expected qos.NAME_limit, "
               "qos.NAME_burst or qos.NAME_burst_seconds with NAME one of "
               "iops, read_iops, write_iops, bps, read_bps, write_bps)", key);
found:
  if (rbdx_parse_ceph_uint (value, &v) < 0 || (p == 2 && v == 0))
    return rbdx_opt_err (err, errlen, "%s='%s': expected a whole number%s", key, value,
                 p == 2 ? " of seconds above 0"
                 : " (0: none of rbdx's own, the image's limit still holds; "
                   "K, M, G: powers of 1000, as Ceph reads rbd_qos_*)");
  q = &o->qos[i];
  if ((p == 0 && q->limit_set) || (p == 1 && q->burst_set) ||
      (p == 2 && q->burst_seconds_set))
    return rbdx_opt_err (err, errlen, "%s= given twice", key);
  if (p == 0)
    q->limit = v, q->limit_set = true;
  else if (p == 1)
    q->burst = v, q->burst_set = true;
  else
    q->burst_seconds = v, q->burst_seconds_set = true;
  return 0;
}

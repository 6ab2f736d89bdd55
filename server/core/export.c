/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: what an export is, for both front ends (see export.h). */
#include <errno.h>

#include "rbdx/cct.h"
#include "rbdx/cluster.h"
#include "rbdx/export.h"
#include "rbdx/imageconf.h"

int
rbdx_export_configure (struct rbdx_options *o, char *err, size_t errlen)
{
  rados_t c;
  int r;

  r = rbdx_options_complete (o, err, errlen);
  if (r < 0)
    return r;
  r = rbdx_encryption_check (o, err, errlen);
  if (r < 0)
    return r;
  r = rbdx_cct_check (o, err, errlen);
  if (r < 0)
    return r;
  /* Creating and configuring a handle starts no thread, so the conf
   * file and every ceph.* option can be checked before a fork. */
  r = rbdx_cluster_configure (o, &c, err, errlen);
  if (r < 0)
    return r;
  rados_shutdown (c);
  return 0;
}

/* Pool mode without a default image: prove the pool (and namespace)
 * reachable. */
static int
probe_pool (const struct rbdx_options *o, char *err, size_t errlen)
{
  rados_ioctx_t io;
  rados_t c;
  int r;

  r = rbdx_cluster_connect (o, &c, err, errlen);
  if (r < 0)
    return r;
  r = rbdx_cluster_open_pool (c, o->pool, o->pool_ns, &io, err, errlen);
  if (r == 0)
    rados_ioctx_destroy (io);
  rados_shutdown (c);
  return r;
}

int
rbdx_export_probe (const struct rbdx_options *o, char *err, size_t errlen)
{
  if (!o->spec.image)
    return probe_pool (o, err, errlen);
  return rbdx_conn_probe (o, &o->spec, rbdx_options_pin (o), err, errlen);
}

void
rbdx_export_caps (const struct rbdx_conn *conn, struct rbdx_export_caps *caps)
{
  bool rw = !conn->ctx->readonly;

  /* notrim=true, as rbd-nbd's --notrim: no TRIM.  Fast zero stays
   * advertised and every FAST_ZERO then gets ENOTSUP (request.h), as
   * NBD allows: nbdkit 1.42.3 aborts (backend_zero's assertion) when a
   * client sends FAST_ZERO that .can_fast_zero refused (checked here with
   * libnbd's strict mode off), and nbdkit serves every write-zeroes
   * the same way, so not advertising it would let any client kill it. */
  *caps = (struct rbdx_export_caps) {
    .write = rw, .flush = true, .fua = rw, .trim = rw && !conn->ctx->notrim,
    .zero = rw, .fast_zero = rw, .extents = true,
    .multi_conn = conn->multi_conn,
  };
}

uint64_t
rbdx_export_size (const struct rbdx_options *o, const struct rbdx_conn *conn)
{
  if (o->advertise_size == RBDX_ADVERTISE_MAX && conn->ctx->follows_size)
    return RBDX_ADVERTISE_MAX_BYTES;
  return conn->ctx->size;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: does the cephx id have the capabilities the image's data
 * needs?  (rbdx_ctx_check_access in ctx.h.)
 *
 * An image created with `rbd create --data-pool D` keeps its header in
 * its own pool and every data object in D.  A cephx id with rights on
 * the first pool only opens the image fine, and then every read and
 * write fails with EPERM.  OSDs check an operation's capabilities before
 * they evaluate it, so a stat (read) and a write operation that first
 * asserts a probe object exists (it never does: nothing is written)
 * tell EPERM from ENOENT at the cost of two round trips.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/ctx.h"

/* Name the data pool for messages. */
static void
pool_name (rados_t c, int64_t id, char *buf, size_t len)
{
  if (rados_pool_reverse_lookup (c, id, buf, len) < 0)
    snprintf (buf, len, "id %" PRId64, id);
}

int
rbdx_ctx_check_access (struct rbdx_ctx *ctx, const struct rbdx_options *o,
                       bool write, char *err, size_t errlen)
{
  char prefix[RBD_MAX_BLOCK_NAME_SIZE + 32], probe[128], pool[256];
  const char *need = "r";
  rados_write_op_t op;
  rados_ioctx_t dio;
  uint64_t psize;
  time_t mtime;
  int64_t dp;
  int r;

  dp = rbd_get_data_pool_id (ctx->image);
  if (dp < 0)
    dp = ctx->ident.pool_id;
  r = rbd_get_block_name_prefix (ctx->image, prefix, RBD_MAX_BLOCK_NAME_SIZE);
  if (r < 0)
    goto fail;
  r = rados_ioctx_create2 (ctx->cluster, dp, &dio);
  if (r < 0)
    goto fail;
  rados_ioctx_set_namespace (dio, *ctx->ident.ns ? ctx->ident.ns : NULL);

  strcat (prefix, ".0000000000000000");
  r = rados_stat (dio, prefix, &psize, &mtime);
  if (r == -ENOENT)
    r = 0;
  if (r == 0 && write) {
    need = "w";
    snprintf (probe, sizeof probe, "rbdx_access_probe.%" PRIu64 ".%lx",
              rados_get_instance_id (ctx->cluster), (unsigned long) random ());
    op = rados_create_write_op ();
    if (!op)
      r = -ENOMEM;
    else {
      rados_write_op_assert_exists (op);
      rados_write_op_write (op, "", 0, 0);
      r = rados_write_op_operate (op, dio, probe, NULL, 0);
      rados_release_write_op (op);
      if (r == -ENOENT)
        r = 0;
    }
  }
  rados_ioctx_destroy (dio);
  if (r == 0)
    return 0;

fail:
  pool_name (ctx->cluster, dp, pool, sizeof pool);
  if (r == -EPERM || r == -EACCES)
    snprintf (err, errlen, "client.%s may not %s the data objects of image "
              "'%s' in pool '%s'%s%s: its OSD caps lack '%s' there (for "
              "example osd 'profile rbd pool=%s')",
              rbdx_options_id (o),
              *need == 'r' ? "read" : "write", ctx->name, pool,
              *ctx->ident.ns ? " namespace " : "", ctx->ident.ns,
              *need == 'r' ? "r" : "w", pool);
  else
    snprintf (err, errlen, "cannot check access to the data objects of image "
              "'%s' in pool '%s': %s", ctx->name, pool, strerror (-r));
  return r;
}


/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: a clone's ancestors and their parent links (see
 * include/rbdx/ancestors.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/ancestors.h"
#include "rbdx/identity.h"

void
rbdx_link_add (rados_read_op_t op, uint64_t snap, struct rbdx_link_read *l)
{
  int i;

  memset (l, 0, sizeof *l);
  for (i = 0; i < 8; i++)
    l->in[i] = (char) (snap >> (8 * i));        /* le64 */
  rados_read_op_exec (op, "rbd", "parent_get", l->in, 0, &l->par, &l->plen,
                      &l->prval);
  rados_read_op_set_flags (op, LIBRADOS_OP_FLAG_FAILOK);
  rados_read_op_exec (op, "rbd", "parent_overlap_get", l->in, sizeof l->in,
                      &l->ovl, &l->vlen, &l->vrval);
  rados_read_op_set_flags (op, LIBRADOS_OP_FLAG_FAILOK);
}

void
rbdx_link_discard (struct rbdx_link_read *l)
{
  if (l->par)
    rados_buffer_free (l->par);
  if (l->ovl)
    rados_buffer_free (l->ovl);
  l->par = l->ovl = NULL;
}

int
rbdx_link_pack (struct rbdx_link_read *l, char **blob, size_t *len)
{
  char *b;

  *len = 2 * (sizeof (int) + sizeof (size_t)) + l->plen + l->vlen;
  b = *blob = malloc (*len);
  if (b) {
    memcpy (b, &l->prval, sizeof l->prval), b += sizeof l->prval;
    memcpy (b, &l->plen, sizeof l->plen), b += sizeof l->plen;
    if (l->plen)
      memcpy (b, l->par, l->plen), b += l->plen;
    memcpy (b, &l->vrval, sizeof l->vrval), b += sizeof l->vrval;
    memcpy (b, &l->vlen, sizeof l->vlen), b += sizeof l->vlen;
    if (l->vlen)
      memcpy (b, l->ovl, l->vlen);
  }
  rbdx_link_discard (l);
  return b ? 0 : -ENOMEM;
}

/* One read of the link of the image @id (its head's parent, the
 * overlap of snapshot @snap) in @io. */
static int
read_link (rados_ioctx_t io, const char *id, uint64_t snap,
           struct rbdx_link_read *l)
{
  char oid[RBDX_IMAGE_ID_MAX + 16];
  rados_read_op_t op = rados_create_read_op ();
  int r;

  if (!op)
    return -ENOMEM;
  snprintf (oid, sizeof oid, "rbd_header.%s", id);
  rbdx_link_add (op, snap, l);
  r = rados_read_op_operate (op, io, oid, 0);
  rados_release_read_op (op);
  if (r < 0)
    rbdx_link_discard (l);
  return r;
}

/* le32 and le64 at @p p. */
static uint64_t
le (const char *p, int n)
{
  uint64_t v = 0;

  while (n-- > 0)
    v = (v << 8) | (uint8_t) p[n];
  return v;
}

/* A string of an encoding (le32 length, bytes) at *@p p, before @p end,
 * of at most @p max bytes: a copy in *@p s, *@p p moved past it.  -EIO
 * if it does not fit. */
static int
take_string (const char **p, const char *end, size_t max, char **s)
{
  uint64_t n;

  if (end - *p < 4)
    return -EIO;
  n = le (*p, 4);
  *p += 4;
  if ((uint64_t) (end - *p) < n || n > max)
    return -EIO;
  *s = strndup (*p, n);
  *p += n;
  return *s ? 0 : -ENOMEM;
}

/* The parent of the image whose link @l read, from parent_get's reply:
 * a cls::rbd::ParentImageSpec (cls/rbd/cls_rbd_types.cc, Ceph 14-18): a
 * 6-byte header (version, compat, le32 length), le64 pool id (-1: no
 * parent), the namespace and the image id as strings, le64 snapshot
 * id.  0 with *@p next filled, 1 when there is no parent, or -EIO. */
static int
parent_of (const struct rbdx_link_read *l, struct rbdx_ancestor *next)
{
  const char *p = l->par, *end = l->par + l->plen;
  int r;

  if (l->prval == -ENOENT)
    return 1;
  if (l->prval < 0 || !p || l->plen < 6 + 8)
    return -EIO;
  p += 6;
  next->pool_id = (int64_t) le (p, 8);
  p += 8;
  if (next->pool_id < 0)
    return 1;
  r = take_string (&p, end, RBDX_NS_MAX, &next->ns);
  if (r == 0)
    r = take_string (&p, end, RBDX_IMAGE_ID_MAX, &next->image_id);
  if (r == 0 && end - p < 8)
    r = -EIO;
  if (r < 0)
    return r;
  next->snap_id = le (p, 8);
  return 0;
}

static int
open_io (rados_ioctx_t from, struct rbdx_ancestor *a)
{
  int r = rados_ioctx_create2 (rados_ioctx_get_cluster (from), a->pool_id,
                               &a->io);

  if (r == 0)
    rados_ioctx_set_namespace (a->io, a->ns);
  else
    a->io = NULL;
  return r;
}

static void
free_one (struct rbdx_ancestor *a)
{
  if (a->io)
    rados_ioctx_destroy (a->io);
  free (a->ns);
  free (a->image_id);
  free (a->link);
  memset (a, 0, sizeof *a);
}

int
rbdx_ancestors_find (struct rbdx_ancestors *an, rados_ioctx_t io,
                     rbd_image_t image)
{
  rbd_linked_image_spec_t parent;
  rbd_snap_spec_t psnap;
  struct rbdx_ancestor cur = { 0 }, next;
  struct rbdx_link_read l;
  int r;

  an->n = 0;
  an->a = NULL;
  r = rbd_get_parent (image, &parent, &psnap);
  if (r == -ENOENT)
    return 0;
  if (r < 0)
    return r;
  cur.pool_id = parent.pool_id;
  cur.ns = strdup (parent.pool_namespace);
  cur.image_id = strdup (parent.image_id);
  cur.snap_id = psnap.id;
  rbd_linked_image_spec_cleanup (&parent);
  rbd_snap_spec_cleanup (&psnap);
  if (!cur.ns || !cur.image_id) {
    free_one (&cur);
    return -ENOMEM;
  }
  an->a = calloc (RBDX_ANCESTORS_MAX, sizeof *an->a);
  if (!an->a) {
    free_one (&cur);
    return -ENOMEM;
  }
  while (an->n < RBDX_ANCESTORS_MAX) {
    r = open_io (io, &cur);
    if (r == 0)
      r = read_link (cur.io, cur.image_id, cur.snap_id, &l);
    if (r < 0)
      break;
    memset (&next, 0, sizeof next);
    r = parent_of (&l, &next);
    if (r == 0)
      r = rbdx_link_pack (&l, &cur.link, &cur.link_len);
    else
      rbdx_link_discard (&l);
    if (r != 0) {
      free_one (&next);
      break;                       /* 1: no parent, the walk ends */
    }
    an->a[an->n++] = cur;
    cur = next;
  }
  free_one (&cur);
  if (r < 0) {
    rbdx_ancestors_free (an);
    return r;
  }
  if (an->n == 0) {
    free (an->a);
    an->a = NULL;
  }
  return 0;
}

int
rbdx_ancestors_check (const struct rbdx_ancestors *an)
{
  struct rbdx_link_read l;
  char *link;
  size_t len;
  unsigned i;
  int r;

  for (i = 0; i < an->n; i++) {
    const struct rbdx_ancestor *a = &an->a[i];

    r = read_link (a->io, a->image_id, a->snap_id, &l);
    if (r == -ENOENT)
      return -ENOLINK;
    if (r < 0)
      return r;
    r = rbdx_link_pack (&l, &link, &len);
    if (r < 0)
      return r;
    r = len == a->link_len && memcmp (link, a->link, len) == 0 ? 0
                                                              : -ENOLINK;
    free (link);
    if (r < 0)
      return r;
  }
  return 0;
}

bool
rbdx_ancestors_equal (const struct rbdx_ancestors *a,
                      const struct rbdx_ancestors *b)
{
  unsigned i;

  if (a->n != b->n)
    return false;
  for (i = 0; i < a->n; i++)
    if (a->a[i].pool_id != b->a[i].pool_id ||
        a->a[i].snap_id != b->a[i].snap_id ||
        strcmp (a->a[i].ns, b->a[i].ns) != 0 ||
        strcmp (a->a[i].image_id, b->a[i].image_id) != 0 ||
        a->a[i].link_len != b->a[i].link_len ||
        memcmp (a->a[i].link, b->a[i].link, a->a[i].link_len) != 0)
      return false;
  return true;
}

void
rbdx_ancestors_free (struct rbdx_ancestors *an)
{
  unsigned i;

  for (i = 0; i < an->n; i++)
    free_one (&an->a[i]);
  free (an->a);
  an->a = NULL;
  an->n = 0;
}

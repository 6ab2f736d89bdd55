/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: per-image QoS (see qos.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rbdx/log.h"

#include "rbdx/clock.h"
#include "rbdx/imageconf.h"
#include "rbdx/qos.h"
#include "rbdx/qosbucket.h"

struct limits {
  uint64_t limit[RBDX_QOS_N], burst[RBDX_QOS_N], burst_s[RBDX_QOS_N];
  uint64_t image_limit[RBDX_QOS_N];
  uint64_t capped;   /* bit k: qos.* of kind k asked above the image's own
                      * (all uint64_t: no padding, memcmp compares) */
};

struct rbdx_qos {
  struct rbdx_qos *next;
  struct rbdx_ident ident;
  const struct rbdx_options *o;
  unsigned refs;                   /* table_lock */
  pthread_mutex_t lock;            /* buckets, cur */
  struct limits cur;
  struct rbdx_qos_bucket b[RBDX_QOS_N];
  atomic_bool limited;             /* any limit: else no lock per request */
  _Atomic uint64_t gen;            /* bumped by each apply */
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rbdx_qos *table;

/* The image's effective rbd_qos_* values, lowered by the qos.*
 * overrides (never raised: rbdx_qos_limit_lower). */
static int
read_limits (const struct rbdx_options *o, rbd_image_t image, struct limits *l)
{
  rbd_config_option_t *opts;
  int max = 0, r, i, k;
  char name[64];

  memset (l, 0, sizeof *l);
  for (k = 0; k < RBDX_QOS_N; k++)
    l->burst_s[k] = 1;
  r = rbdx_image_config (image, &opts, &max);
  if (r < 0)
    return r;
  for (i = 0; i < max; i++) {
    for (k = 0; k < RBDX_QOS_N; k++) {
      uint64_t v;

      /* rbd_qos_* are Ceph's unsigned options: "1M" is 1000000 and
       * "+50" is 50 (rbdx_parse_ceph_uint).  A value Ceph cannot read
       * either limits nothing there. */
      if (strncmp (opts[i].name, "rbd_qos_", 8) != 0 ||
          rbdx_parse_ceph_uint (opts[i].value, &v) < 0)
        break;
      snprintf (name, sizeof name, "rbd_qos_%s_limit", rbdx_qos_names[k]);
      if (strcmp (opts[i].name, name) == 0)
        l->limit[k] = v;
      snprintf (name, sizeof name, "rbd_qos_%s_burst", rbdx_qos_names[k]);
      if (strcmp (opts[i].name, name) == 0)
        l->burst[k] = v;
      snprintf (name, sizeof name, "rbd_qos_%s_burst_seconds",
                rbdx_qos_names[k]);
      if (strcmp (opts[i].name, name) == 0 && v)
        l->burst_s[k] = v;
    }
  }
  rbdx_image_config_free (opts, max);
  for (k = 0; k < RBDX_QOS_N; k++) {
    const struct rbdx_qos_setting *s = &o->qos[k];
    const struct rbdx_qos_limit img = {
      l->limit[k], l->burst[k], l->burst_s[k],
    }, want = { s->limit, s->burst, s->burst_seconds };
    const struct rbdx_qos_given given = {
      s->limit_set, s->burst_set, s->burst_seconds_set,
    };
    struct rbdx_qos_limit eff;

    if (rbdx_qos_limit_lower (&img, &want, given, &eff))
      l->capped |= UINT64_C (1) << k;
    l->image_limit[k] = img.limit;
    l->limit[k] = eff.limit;
    l->burst[k] = eff.burst;
    l->burst_s[k] = eff.burst_s;
  }
  return 0;
}

/* Install @l (call with q->lock held, or before q is shared). */
static void
apply (struct rbdx_qos *q, const struct limits *l)
{
  char id[RBDX_IDENT_TEXT_MAX], text[512] = "";
  bool any = false;
  int64_t now = (int64_t) rbdx_clock_ns ();

  q->cur = *l;
  atomic_fetch_add (&q->gen, 1);
  rbdx_ident_format (&q->ident, id, sizeof id);
  for (int k = 0; k < RBDX_QOS_N; k++) {
    rbdx_qos_bucket_set (&q->b[k], l->limit[k], l->burst[k], l->burst_s[k],
                         now);
    if (l->capped & (UINT64_C (1) << k))
      rbdx_error ("rbdx: image %s: qos.%s_* asks for more than the image's "
                  "own rbd_qos_%s_limit=%" PRIu64 " (and its burst) allows: "
                  "qos.* can lower an image's limit, not raise or remove it; "
                  "%" PRIu64 " per second applies", id, rbdx_qos_names[k],
                  rbdx_qos_names[k], l->image_limit[k], l->limit[k]);
    if (l->limit[k]) {
      any = true;
      snprintf (text + strlen (text), sizeof text - strlen (text), " %s=%"
                PRIu64, rbdx_qos_names[k], l->limit[k]);
    }
  }
  atomic_store (&q->limited, any);
  rbdx_debug ("rbdx: image %s: QoS for all connections:%s", id,
                any ? text : " none");
}

int
rbdx_qos_get (const struct rbdx_options *o, const struct rbdx_ident *ident,
              rbd_image_t image, struct rbdx_qos **out)
{
  struct rbdx_qos *q;
  struct limits l;
  int r = 0;

  pthread_mutex_lock (&table_lock);
  for (q = table; q; q = q->next)
    if (rbdx_ident_equal (&q->ident, ident))
      break;
  if (q) {
    q->refs++;
    goto out;
  }
  r = read_limits (o, image, &l);
  if (r < 0)
    goto out;
  q = calloc (1, sizeof *q);
  if (!q) {
    r = -ENOMEM;
    goto out;
  }
  q->ident = *ident;
  q->o = o;
  q->refs = 1;
  pthread_mutex_init (&q->lock, NULL);
  apply (q, &l);
  q->next = table;
  table = q;
out:
  pthread_mutex_unlock (&table_lock);
  *out = q;
  return r;
}

void
rbdx_qos_put (struct rbdx_qos *q)
{
  struct rbdx_qos **p;

  if (!q)
    return;
  pthread_mutex_lock (&table_lock);
  if (--q->refs == 0) {
    for (p = &table; *p; p = &(*p)->next)
      if (*p == q) {
        *p = q->next;
        break;
      }
    pthread_mutex_destroy (&q->lock);
    free (q);
  }
  pthread_mutex_unlock (&table_lock);
}

void
rbdx_qos_refresh (struct rbdx_qos *q, rbd_image_t image)
{
  struct limits l;

  if (read_limits (q->o, image, &l) < 0)
    return;
  pthread_mutex_lock (&q->lock);
  if (memcmp (&l, &q->cur, sizeof l) != 0)
    apply (q, &l);
  pthread_mutex_unlock (&q->lock);
}

int64_t
rbdx_qos_reserve (struct rbdx_qos *q, bool write, uint64_t bytes,
                  _Atomic uint64_t *waited_ns, uint64_t *gen)
{
  const int kinds[4] = {
    RBDX_QOS_IOPS, write ? RBDX_QOS_WRITE_IOPS : RBDX_QOS_READ_IOPS,
    RBDX_QOS_BPS, write ? RBDX_QOS_WRITE_BPS : RBDX_QOS_READ_BPS,
  };
  int64_t now, delay = 0, d;
  int i;

  if (gen)
    *gen = rbdx_qos_generation (q);
  if (!q || !atomic_load (&q->limited))
    return 0;
  pthread_mutex_lock (&q->lock);
  if (gen)                 /* the buckets charged below are this one's */
    *gen = atomic_load (&q->gen);
  now = (int64_t) rbdx_clock_ns ();
  for (i = 0; i < 4; i++) {
    uint64_t cost = i < 2 ? 1 : bytes;
    if (!cost)
      continue;
    d = rbdx_qos_bucket_delay (&q->b[kinds[i]], cost, now);
    if (d > delay)
      delay = d;
    rbdx_qos_bucket_take (&q->b[kinds[i]], cost, now);
  }
  pthread_mutex_unlock (&q->lock);
  if (delay <= 0)
    return 0;
  if (waited_ns)
    atomic_fetch_add_explicit (waited_ns, (uint64_t) delay,
                               memory_order_relaxed);
  return delay;
}

uint64_t
rbdx_qos_generation (struct rbdx_qos *q)
{
  return q ? atomic_load (&q->gen) : 0;
}

int
rbdx_qos_wait (struct rbdx_qos *q, bool write, uint64_t bytes,
               _Atomic uint64_t *waited_ns)
{
  uint64_t gen;
  int64_t delay = rbdx_qos_reserve (q, write, bytes, waited_ns, &gen);

  while (delay > 0) {
    int64_t slice = delay < (int64_t) RBDX_QOS_RECHECK_NS
                    ? delay : (int64_t) RBDX_QOS_RECHECK_NS;

    if (rbdx_sleep_ns ((uint64_t) slice) < 0)
      return -1;
    delay -= slice;
    if (delay > 0 && rbdx_qos_generation (q) != gen) {
      /* New limits, new buckets: charged again under them. */
      if (waited_ns)
        atomic_fetch_sub_explicit (waited_ns, (uint64_t) delay,
                                   memory_order_relaxed);
      delay = rbdx_qos_reserve (q, write, bytes, waited_ns, &gen);
    }
  }
  return 0;
}

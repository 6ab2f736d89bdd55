/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx plugin: request metrics (see metrics.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rbdx/log.h"

#include "rbdx/conn.h"
#include "rbdx/metrics.h"

_Atomic uint64_t rbdx_writer_opens, rbdx_writer_fences;

static const char *const op_names[RBDX_OP_N] = {
  "read", "write", "trim", "zero", "flush", "block_status",
};
static const int errno_vals[RBDX_ERRNO_N - 1] = {
  EIO, EINVAL, ENOSPC, EPERM, ENOTSUP, ESHUTDOWN,
};
static const char *const errno_names[RBDX_ERRNO_N] = {
  "EIO", "EINVAL", "ENOSPC", "EPERM", "ENOTSUP", "ESHUTDOWN", "other",
};

#define R memory_order_relaxed

static uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

uint64_t
rbdx_metrics_begin (struct rbdx_metrics *m)
{
  atomic_fetch_add_explicit (&m->in_flight, 1, R);
  return now_ns ();
}

void
rbdx_metrics_end (struct rbdx_metrics *m, enum rbdx_op op, uint64_t bytes,
                  uint64_t t0, int nbd_err)
{
  uint64_t ns = now_ns () - t0, us = ns / 1000;
  int b = 0, e;

  atomic_fetch_sub_explicit (&m->in_flight, 1, R);
  atomic_fetch_add_explicit (&m->requests[op], 1, R);
  atomic_fetch_add_explicit (&m->bytes[op], bytes, R);
  atomic_fetch_add_explicit (&m->lat_sum_ns[op], ns, R);
  while (b < RBDX_LAT_N && us > (UINT64_C (16) << b))
    b++;
  atomic_fetch_add_explicit (&m->lat[op][b], 1, R);
  if (!nbd_err)
    return;
  atomic_fetch_add_explicit (&m->errors[op], 1, R);
  for (e = 0; e < RBDX_ERRNO_N - 1 && errno_vals[e] != nbd_err; e++)
    ;
  atomic_fetch_add_explicit (&m->errnos[e], 1, R);
}

/* The sums of one image. */
struct image {
  struct rbdx_ident ident;
  char name[RBDX_SPEC_MAX + 8];
  unsigned conns;
  uint64_t qos_wait_ns;
  uint64_t requests[RBDX_OP_N], bytes[RBDX_OP_N], errors[RBDX_OP_N];
  uint64_t errnos[RBDX_ERRNO_N], lat[RBDX_OP_N][RBDX_LAT_N + 1];
  uint64_t lat_sum_ns[RBDX_OP_N];
  int64_t in_flight;
};

struct snapshot {
  FILE *f;
  struct image *images;
  size_t n, max;
};

/* Label text of an image: image="...",identity="..." (names are
 * escaped as Prometheus' text format wants: \ " and newline). */
static void
labels (FILE *f, const char *name, const struct rbdx_ident *id)
{
  char ident[256];

  fputs ("image=\"", f);
  for (const char *p = name; *p; p++) {
    if (*p == '\\' || *p == '"')
      fputc ('\\', f);
    if (*p == '\n')
      fputs ("\\n", f);
    else
      fputc (*p, f);
  }
  rbdx_ident_format (id, ident, sizeof ident);
  fprintf (f, "\",identity=\"%s\"", ident);
}

/* The entry of @c's image in @images (n of max), added if new; NULL
 * when full. */
static struct image *
image_of (const struct rbdx_conn *c, struct image *images, size_t *n,
          size_t max)
{
  for (size_t i = 0; i < *n; i++)
    if (rbdx_ident_equal (&images[i].ident, &c->ctx->ident))
      return &images[i];
  if (*n == max)
    return NULL;
  images[*n].ident = c->ctx->ident;
  snprintf (images[*n].name, sizeof images[*n].name, "%s", c->ctx->name);
  return &images[(*n)++];
}

/* Add @m's counters to @im (the connection count and in-flight gauge
 * are the caller's). */
static void
add_counters (struct image *im, const struct rbdx_metrics *m)
{
  for (int op = 0; op < RBDX_OP_N; op++) {
    im->requests[op] += atomic_load_explicit (&m->requests[op], R);
    im->bytes[op] += atomic_load_explicit (&m->bytes[op], R);
    im->errors[op] += atomic_load_explicit (&m->errors[op], R);
    im->lat_sum_ns[op] += atomic_load_explicit (&m->lat_sum_ns[op], R);
    for (int b = 0; b <= RBDX_LAT_N; b++)
      im->lat[op][b] += atomic_load_explicit (&m->lat[op][b], R);
  }
  for (int b = 0; b < RBDX_ERRNO_N; b++)
    im->errnos[b] += atomic_load_explicit (&m->errnos[b], R);
  im->qos_wait_ns += atomic_load_explicit (&m->qos_wait_ns, R);
}

static char *path;              /* metrics_file=, NULL when off */
static unsigned interval;

/* Counters of closed connections, per image (retire_lock). */
#define RETIRED_MAX 1024
static pthread_mutex_t retire_lock = PTHREAD_MUTEX_INITIALIZER;
static struct image *retired;
static size_t nretired;

void
rbdx_metrics_free (void)
{
  pthread_mutex_lock (&retire_lock);
  free (retired);
  retired = NULL;
  nretired = 0;
  pthread_mutex_unlock (&retire_lock);
}

void
rbdx_metrics_retire (const struct rbdx_conn *conn)
{
  struct image *im;

  if (!path)
    return;                      /* no metrics_file: nobody reads them */
  pthread_mutex_lock (&retire_lock);
  if (!retired)
    retired = calloc (RETIRED_MAX, sizeof *retired);
  if (retired && (im = image_of (conn, retired, &nretired, RETIRED_MAX)))
    add_counters (im, &conn->metrics);
  pthread_mutex_unlock (&retire_lock);
}

static void
copy_retired (void *arg)
{
  struct snapshot *s = arg;

  pthread_mutex_lock (&retire_lock);
  if (retired) {
    memcpy (s->images, retired, nretired * sizeof *retired);
    s->n = nretired;
  }
  pthread_mutex_unlock (&retire_lock);
}

static void
one_conn (const struct rbdx_conn *c, void *arg)
{
  struct snapshot *s = arg;
  const struct rbdx_metrics *m = &c->metrics;
  struct image *im = image_of (c, s->images, &s->n, s->max);
  int op;

  for (op = 0; op < RBDX_OP_N; op++) {
    uint64_t n = atomic_load_explicit (&m->requests[op], R);
    uint64_t by = atomic_load_explicit (&m->bytes[op], R);

    fprintf (s->f, "rbdx_conn_requests_total{");
    labels (s->f, c->ctx->name, &c->ctx->ident);
    fprintf (s->f, ",conn=\"%" PRIu64 "\",op=\"%s\"} %" PRIu64 "\n",
             c->serial, op_names[op], n);
    fprintf (s->f, "rbdx_conn_request_bytes_total{");
    labels (s->f, c->ctx->name, &c->ctx->ident);
    fprintf (s->f, ",conn=\"%" PRIu64 "\",op=\"%s\"} %" PRIu64 "\n",
             c->serial, op_names[op], by);
  }
  if (!im)
    return;
  add_counters (im, m);
  im->conns++;
  im->in_flight += atomic_load_explicit (&m->in_flight, R);
}

#define LINE(metric, lbl, val) do {                                     \
    fprintf (f, "%s{", metric);                                         \
    labels (f, im->name, &im->ident);                                 \
    fprintf (f, "%s} %" PRIu64 "\n", lbl, (uint64_t) (val));          \
  } while (0)

static void
one_image (FILE *f, const struct image *im)
{
  char lbl[96];
  uint64_t cum;
  int op, b;

  LINE ("rbdx_connections", "", im->conns);
  LINE ("rbdx_requests_in_flight", "", im->in_flight < 0 ? 0 : im->in_flight);
  for (op = 0; op < RBDX_OP_N; op++) {
    snprintf (lbl, sizeof lbl, ",op=\"%s\"", op_names[op]);
    LINE ("rbdx_requests_total", lbl, im->requests[op]);
    LINE ("rbdx_request_bytes_total", lbl, im->bytes[op]);
    LINE ("rbdx_request_errors_total", lbl, im->errors[op]);
    cum = 0;
    for (b = 0; b <= RBDX_LAT_N; b++) {
      cum += im->lat[op][b];
      if (b < RBDX_LAT_N)
        snprintf (lbl, sizeof lbl, ",op=\"%s\",le=\"%g\"", op_names[op],
                  (double) (UINT64_C (16) << b) / 1e6);
      else
        snprintf (lbl, sizeof lbl, ",op=\"%s\",le=\"+Inf\"", op_names[op]);
      LINE ("rbdx_request_duration_seconds_bucket", lbl, cum);
    }
    snprintf (lbl, sizeof lbl, ",op=\"%s\"", op_names[op]);
    fprintf (f, "rbdx_request_duration_seconds_sum{");
    labels (f, im->name, &im->ident);
    fprintf (f, "%s} %.6f\n", lbl, (double) im->lat_sum_ns[op] / 1e9);
    LINE ("rbdx_request_duration_seconds_count", lbl, cum);
  }
  for (b = 0; b < RBDX_ERRNO_N; b++) {
    snprintf (lbl, sizeof lbl, ",errno=\"%s\"", errno_names[b]);
    LINE ("rbdx_request_errors_by_errno_total", lbl, im->errnos[b]);
  }
  fprintf (f, "rbdx_qos_wait_seconds_total{");
  labels (f, im->name, &im->ident);
  fprintf (f, "} %.6f\n", (double) im->qos_wait_ns / 1e9);
}


static pthread_t thread;
static bool running;
static pthread_mutex_t stop_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_cond = PTHREAD_COND_INITIALIZER;
static bool stopping;

/* Write the metrics file once.  @return 0 or a negative errno. */
static int
write_file (void)
{
  struct snapshot s = { 0 };
  char tmp[4200], *text = NULL;
  size_t len = 0;
  FILE *out;
  int r = 0;

  s.max = RETIRED_MAX + 256;
  s.images = calloc (s.max, sizeof *s.images);
  s.f = open_memstream (&text, &len);
  if (!s.images || !s.f) {
    free (s.images);
    if (s.f)
      fclose (s.f);
    free (text);
    return -ENOMEM;
  }
  fprintf (s.f, "# rbdx %s metrics (nbdkit-rbdx-plugin(1), METRICS)\n",
           RBDX_VERSION);
  fprintf (s.f, "# TYPE rbdx_requests_total counter\n"
           "# TYPE rbdx_request_bytes_total counter\n"
           "# TYPE rbdx_request_errors_total counter\n"
           "# TYPE rbdx_request_errors_by_errno_total counter\n"
           "# TYPE rbdx_request_duration_seconds histogram\n"
           "# TYPE rbdx_requests_in_flight gauge\n"
           "# TYPE rbdx_connections gauge\n"
           "# TYPE rbdx_qos_wait_seconds_total counter\n"
           "# TYPE rbdx_conn_requests_total counter\n"
           "# TYPE rbdx_conn_request_bytes_total counter\n"
           "# TYPE rbdx_writer_opens_total counter\n"
           "# TYPE rbdx_writer_fences_total counter\n");
  /* Closed connections' totals first, then the open ones'. */
  rbdx_conn_foreach (copy_retired, one_conn, &s);
  for (size_t i = 0; i < s.n; i++)
    one_image (s.f, &s.images[i]);
  fprintf (s.f, "rbdx_writer_opens_total %" PRIu64 "\n"
           "rbdx_writer_fences_total %" PRIu64 "\n",
           atomic_load (&rbdx_writer_opens), atomic_load (&rbdx_writer_fences));
  fclose (s.f);
  free (s.images);

  snprintf (tmp, sizeof tmp, "%s.tmp%ld", path, (long) getpid ());
  out = fopen (tmp, "we");
  if (!out)
    r = -errno;
  else {
    bool ok = fwrite (text, 1, len, out) == len;
    if (fclose (out) == EOF || !ok)
      r = -(errno ? errno : EIO);
    else if (rename (tmp, path) == -1)
      r = -errno;
  }
  if (r < 0) {
    rbdx_debug ("rbdx: cannot write metrics_file=%s: %s", path,
                strerror (-r));
    unlink (tmp);
  }
  free (text);
  return r;
}

static void *
writer_thread (void *arg)
{
  struct timespec until;

  pthread_mutex_lock (&stop_lock);
  while (!stopping) {
    pthread_mutex_unlock (&stop_lock);
    write_file ();
    pthread_mutex_lock (&stop_lock);
    clock_gettime (CLOCK_REALTIME, &until);
    until.tv_sec += interval;
    while (!stopping &&
           pthread_cond_timedwait (&stop_cond, &stop_lock, &until) == 0)
      ;
  }
  pthread_mutex_unlock (&stop_lock);
  return NULL;
}

int
rbdx_metrics_check (const char *p)
{
  int r;

  path = strdup (p);
  if (!path)
    return -ENOMEM;
  r = write_file ();
  free (path);
  path = NULL;
  return r;
}

int
rbdx_metrics_start (const char *p, unsigned interval_s)
{
  int r;

  path = strdup (p);
  if (!path)
    return -ENOMEM;
  interval = interval_s ? interval_s : 5;
  /* A path that cannot be written (a directory, no such directory, no
   * permission) is a bad parameter: say so before serving. */
  r = write_file ();
  if (r < 0) {
    free (path);
    path = NULL;
    return r;
  }
  r = pthread_create (&thread, NULL, writer_thread, NULL);
  if (r) {
    free (path);
    path = NULL;
    return -r;
  }
  running = true;
  return 0;
}

void
rbdx_metrics_stop (void)
{
  if (!running)
    return;
  pthread_mutex_lock (&stop_lock);
  stopping = true;
  pthread_cond_signal (&stop_cond);
  pthread_mutex_unlock (&stop_lock);
  pthread_join (thread, NULL);
  running = false;
  write_file ();
  free (path);
  path = NULL;
}

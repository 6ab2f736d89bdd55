/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: request metrics and the metrics file (see metrics.h). */
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

#include "rbdx/clock.h"
#include "rbdx/metrics.h"
#include "rbdx/printable.h"
#include "rbdx/spec.h"
#include "rbdx/tmpfile.h"
#include "rbdx/utf8.h"

_Atomic uint64_t rbdx_writer_opens, rbdx_writer_fences;

static const int errno_vals[RBDX_ERRNO_N - 1] = {
  EIO, EINVAL, ENOSPC, EPERM, ENOTSUP, ESHUTDOWN,
};
static const char *const errno_names[RBDX_ERRNO_N] = {
  "EIO", "EINVAL", "ENOSPC", "EPERM", "ENOTSUP", "ESHUTDOWN", "other",
};

#define R memory_order_relaxed

uint64_t
rbdx_metrics_begin (struct rbdx_metrics *m)
{
  atomic_fetch_add_explicit (&m->in_flight, 1, R);
  return rbdx_clock_ns ();
}

void
rbdx_metrics_forget (struct rbdx_metrics *m)
{
  atomic_fetch_sub_explicit (&m->in_flight, 1, R);
}

void
rbdx_metrics_end (struct rbdx_metrics *m, enum rbdx_op op, uint64_t bytes,
                  uint64_t t0, int nbd_err)
{
  uint64_t ns = rbdx_clock_ns () - t0, us = ns / 1000;
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

/* One open connection's own series. */
struct conn_sample {
  uint64_t serial;
  struct rbdx_ident ident;
  char name[RBDX_SPEC_MAX + 8];
  uint64_t requests[RBDX_OP_N], bytes[RBDX_OP_N];
};

/* What one write of the file shows, taken under reg_lock. */
struct snapshot {
  struct image *images;
  size_t n, max;
  struct conn_sample *conns;
  size_t nconns;
};

/* Label text of an image: image="...",identity="..." (names are
 * escaped as Prometheus' text format wants: \ " and newline).  The
 * format is UTF-8, and one byte that is not would make a strict reader
 * refuse the whole file (every image's series): whatever reaches here,
 * a byte of no well-formed UTF-8 sequence, and a C1 control, is
 * written as the text \xHH (the file holds "\\xHH"), as rbdx's logs
 * write it (rbdx/printable.h); rbdx_utf8_char decides.  The spec
 * grammar refuses such names already (rbdx_spec_has_unsafe_char). */
static void
labels (FILE *f, const char *name, const struct rbdx_ident *id)
{
  char ident[RBDX_IDENT_TEXT_MAX];
  size_t n;

  fputs ("image=\"", f);
  for (const unsigned char *p = (const unsigned char *) name; *p; p += n) {
    n = rbdx_utf8_char ((const char *) p);
    if (n > 1) {
      fwrite (p, 1, n, f);
      continue;
    }
    if (*p == '\\' || *p == '"')
      fprintf (f, "\\%c", *p);
    else if (*p == '\n')
      fputs ("\\n", f);
    else if (n == 0 && *p >= 0x80)
      fprintf (f, "\\\\x%02x", *p);
    else
      fputc (*p, f);   /* ASCII; the other C0 controls and DEL are UTF-8 */
    n = 1;
  }
  rbdx_ident_format (id, ident, sizeof ident);
  fprintf (f, "\",identity=\"%s\"", ident);
}

/* The entry of image @p id (named @p name) in @p images (n of max),
 * added if new; NULL when full. */
static struct image *
image_of (const struct rbdx_ident *id, const char *name,
          struct image *images, size_t *n, size_t max)
{
  for (size_t i = 0; i < *n; i++)
    if (rbdx_ident_equal (&images[i].ident, id))
      return &images[i];
  if (*n == max)
    return NULL;
  images[*n].ident = *id;
  snprintf (images[*n].name, sizeof images[*n].name, "%s", name);
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

/* The attached counters (newest first), the serial of the last one,
 * and the totals of detached ones per image: all under reg_lock. */
#define RETIRED_MAX 1024
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rbdx_metrics *attached;
static uint64_t last_serial;
static struct image *retired;
static size_t nretired;

void
rbdx_metrics_free (void)
{
  pthread_mutex_lock (&reg_lock);
  free (retired);
  retired = NULL;
  nretired = 0;
  pthread_mutex_unlock (&reg_lock);
}

void
rbdx_metrics_attach (struct rbdx_metrics *m, const struct rbdx_ident *ident,
                     const char *name)
{
  m->ident = *ident;
  m->name = name;
  pthread_mutex_lock (&reg_lock);
  m->serial = ++last_serial;
  m->prev = NULL;
  m->next = attached;
  if (attached)
    attached->prev = m;
  attached = m;
  pthread_mutex_unlock (&reg_lock);
}

void
rbdx_metrics_detach (struct rbdx_metrics *m)
{
  struct image *im;

  pthread_mutex_lock (&reg_lock);
  if (m->prev)
    m->prev->next = m->next;
  else if (attached == m)
    attached = m->next;
  if (m->next)
    m->next->prev = m->prev;
  m->next = m->prev = NULL;
  /* Without metrics_file= nobody reads the totals. */
  if (path && !retired)
    retired = calloc (RETIRED_MAX, sizeof *retired);
  if (path && retired &&
      (im = image_of (&m->ident, m->name, retired, &nretired, RETIRED_MAX)))
    add_counters (im, m);
  pthread_mutex_unlock (&reg_lock);
}

/* Fill @p s (its images array allocated, of s->max): the closed
 * connections' totals, then the open ones' counters added in.
 * @return 0 or -ENOMEM. */
static int
take_snapshot (struct snapshot *s)
{
  const struct rbdx_metrics *m;
  size_t n = 0;

  pthread_mutex_lock (&reg_lock);
  for (m = attached; m; m = m->next)
    n++;
  s->conns = calloc (n ? n : 1, sizeof *s->conns);
  if (!s->conns) {
    pthread_mutex_unlock (&reg_lock);
    return -ENOMEM;
  }
  if (retired) {
    memcpy (s->images, retired, nretired * sizeof *retired);
    s->n = nretired;
  }
  for (m = attached; m; m = m->next) {
    struct conn_sample *c = &s->conns[s->nconns++];
    struct image *im = image_of (&m->ident, m->name, s->images, &s->n,
                                 s->max);

    c->serial = m->serial;
    c->ident = m->ident;
    snprintf (c->name, sizeof c->name, "%s", m->name);
    for (int op = 0; op < RBDX_OP_N; op++) {
      c->requests[op] = atomic_load_explicit (&m->requests[op], R);
      c->bytes[op] = atomic_load_explicit (&m->bytes[op], R);
    }
    if (!im)
      continue;
    add_counters (im, m);
    im->conns++;
    im->in_flight += atomic_load_explicit (&m->in_flight, R);
  }
  pthread_mutex_unlock (&reg_lock);
  return 0;
}

/* The head of a family: its HELP and TYPE lines. */
static void
family (FILE *f, const char *metric, const char *type, const char *help)
{
  fprintf (f, "# HELP %s %s\n# TYPE %s %s\n", metric, help, metric, type);
}

/* One sample of an image: METRIC{image=..,identity=..EXTRA} VALUE. */
static void
sample (FILE *f, const char *metric, const struct image *im,
        const char *extra, uint64_t val)
{
  fprintf (f, "%s{", metric);
  labels (f, im->name, &im->ident);
  fprintf (f, "%s} %" PRIu64 "\n", extra, val);
}

/* A counter family by image and op; @p which picks the counter. */
static void
by_op (FILE *f, const struct snapshot *s, const char *metric,
       const char *help, int which)
{
  char lbl[64];

  family (f, metric, "counter", help);
  for (size_t i = 0; i < s->n; i++) {
    const struct image *im = &s->images[i];

    for (int op = 0; op < RBDX_OP_N; op++) {
      snprintf (lbl, sizeof lbl, ",op=\"%s\"", rbdx_op_name (op, 1));
      sample (f, metric, im, lbl, which == 0 ? im->requests[op]
              : which == 1 ? im->bytes[op] : im->errors[op]);
    }
  }
}

/* The histogram: per image and op its buckets, _sum and _count. */
static void
durations (FILE *f, const struct snapshot *s)
{
  const char *metric = "rbdx_request_duration_seconds";
  char lbl[96];

  family (f, metric, "histogram",
          "Time from a request's arrival to its reply, by op.");
  for (size_t i = 0; i < s->n; i++) {
    const struct image *im = &s->images[i];

    for (int op = 0; op < RBDX_OP_N; op++) {
      uint64_t cum = 0;

      for (int b = 0; b <= RBDX_LAT_N; b++) {
        cum += im->lat[op][b];
        if (b < RBDX_LAT_N)
          snprintf (lbl, sizeof lbl, ",op=\"%s\",le=\"%g\"", rbdx_op_name (op, 1),
                    (double) (UINT64_C (16) << b) / 1e6);
        else
          snprintf (lbl, sizeof lbl, ",op=\"%s\",le=\"+Inf\"", rbdx_op_name (op, 1));
        sample (f, "rbdx_request_duration_seconds_bucket", im, lbl, cum);
      }
      snprintf (lbl, sizeof lbl, ",op=\"%s\"", rbdx_op_name (op, 1));
      fprintf (f, "%s_sum{", metric);
      labels (f, im->name, &im->ident);
      fprintf (f, "%s} %.6f\n", lbl, (double) im->lat_sum_ns[op] / 1e9);
      sample (f, "rbdx_request_duration_seconds_count", im, lbl, cum);
    }
  }
}

/* A per-connection counter family by op (@p bytes: the bytes, else the
 * requests). */
static void
conn_by_op (FILE *f, const struct snapshot *s, const char *metric,
            const char *help, bool bytes)
{
  family (f, metric, "counter", help);
  for (size_t i = 0; i < s->nconns; i++) {
    const struct conn_sample *c = &s->conns[i];

    for (int op = 0; op < RBDX_OP_N; op++) {
      fprintf (f, "%s{", metric);
      labels (f, c->name, &c->ident);
      fprintf (f, ",conn=\"%" PRIu64 "\",op=\"%s\"} %" PRIu64 "\n",
               c->serial, rbdx_op_name (op, 1),
               bytes ? c->bytes[op] : c->requests[op]);
    }
  }
}

/* The whole file, family by family. */
static void
format (FILE *f, const struct snapshot *s)
{
  char lbl[64];
  size_t i;

  fprintf (f, "# rbdx %s metrics (nbdkit-rbdx-plugin(1), METRICS)\n",
           RBDX_VERSION);
  family (f, "rbdx_connections", "gauge", "Connections open now.");
  for (i = 0; i < s->n; i++)
    sample (f, "rbdx_connections", &s->images[i], "", s->images[i].conns);
  family (f, "rbdx_requests_in_flight", "gauge",
          "Requests received and not yet answered.");
  for (i = 0; i < s->n; i++)
    sample (f, "rbdx_requests_in_flight", &s->images[i], "",
            s->images[i].in_flight < 0 ? 0 : (uint64_t) s->images[i].in_flight);
  by_op (f, s, "rbdx_requests_total", "Requests answered, by op.", 0);
  by_op (f, s, "rbdx_request_bytes_total",
         "Bytes of the requests answered, by op.", 1);
  by_op (f, s, "rbdx_request_errors_total",
         "Requests answered with an NBD error, by op.", 2);
  durations (f, s);
  family (f, "rbdx_request_errors_by_errno_total", "counter",
          "Requests answered with an NBD error, by the error sent.");
  for (i = 0; i < s->n; i++)
    for (int b = 0; b < RBDX_ERRNO_N; b++) {
      snprintf (lbl, sizeof lbl, ",errno=\"%s\"", errno_names[b]);
      sample (f, "rbdx_request_errors_by_errno_total", &s->images[i], lbl,
              s->images[i].errnos[b]);
    }
  family (f, "rbdx_qos_wait_seconds_total", "counter",
          "Time requests waited for the image's QoS limits.");
  for (i = 0; i < s->n; i++) {
    fprintf (f, "rbdx_qos_wait_seconds_total{");
    labels (f, s->images[i].name, &s->images[i].ident);
    fprintf (f, "} %.6f\n", (double) s->images[i].qos_wait_ns / 1e9);
  }
  conn_by_op (f, s, "rbdx_conn_requests_total",
              "Requests answered on one open connection, by op.", false);
  conn_by_op (f, s, "rbdx_conn_request_bytes_total",
              "Bytes of the requests answered on one open connection, by op.",
              true);
  family (f, "rbdx_writer_opens_total", "counter",
          "Shared writers opened by this process.");
  fprintf (f, "rbdx_writer_opens_total %" PRIu64 "\n",
           atomic_load (&rbdx_writer_opens));
  family (f, "rbdx_writer_fences_total", "counter",
          "Shared writers found fenced (blocklisted) by this process.");
  fprintf (f, "rbdx_writer_fences_total %" PRIu64 "\n",
           atomic_load (&rbdx_writer_fences));
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
  char tmp[4200], suffix[32], *text = NULL;
  size_t len = 0;
  FILE *mem = NULL, *out;
  int r = 0;

  s.max = RETIRED_MAX + 256;
  s.images = calloc (s.max, sizeof *s.images);
  if (!s.images || take_snapshot (&s) < 0 ||
      !(mem = open_memstream (&text, &len))) {
    free (s.images);
    free (s.conns);
    return -ENOMEM;
  }
  format (mem, &s);
  fclose (mem);
  free (s.images);
  free (s.conns);

  /* Created exclusively, never through a link someone left at the
   * name (tmpfile.h): the directory may be a shared one. */
  snprintf (suffix, sizeof suffix, "tmp%ld", (long) getpid ());
  out = rbdx_tmpfile_create (path, suffix, 0644, tmp, sizeof tmp);
  if (!out)
    r = -errno;
  else {
    bool ok = fwrite (text, 1, len, out) == len;
    if (fclose (out) == EOF || !ok)
      r = -(errno ? errno : EIO);
    else if (rbdx_tmpfile_replace (tmp, path) == -1)
      r = -errno;
    if (r < 0)
      unlink (tmp);         /* ours: created above */
  }
  if (r < 0) {
    char shown[2048];

    rbdx_debug ("rbdx: cannot write metrics_file=%s: %s",
                rbdx_printable (path, shown, sizeof shown), strerror (-r));
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

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/status.c: `rbdx status`: a mapping's state counts and its
 * server's metrics file, plain or JSON (see status.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

static const char *const ops[] = {
  "read", "write", "trim", "zero", "flush", "block_status",
};
#define NOPS (sizeof ops / sizeof ops[0])

struct totals {
  bool found;
  uint64_t requests[NOPS], bytes[NOPS], errors[NOPS];
  uint64_t in_flight;
  double qos_wait_s;
};

/* The op="..." label of a series, as an index into ops, or -1. */
static int
op_of (const char *labels)
{
  const char *p = strstr (labels, "op=\"");

  if (!p)
    return -1;
  p += 4;
  for (size_t i = 0; i < NOPS; i++)
    if (strncmp (p, ops[i], strlen (ops[i])) == 0 && p[strlen (ops[i])] == '"')
      return (int) i;
  return -1;
}

/* Sum the per-image series of the metrics file. */
static void
read_metrics (const char *path, struct totals *t)
{
  char line[4096];
  FILE *f;

  memset (t, 0, sizeof *t);
  if (!*path || !(f = fopen (path, "re")))
    return;
  t->found = true;
  while (fgets (line, sizeof line, f)) {
    char *brace = strchr (line, '{'), *end = strrchr (line, ' ');
    int op;

    if (line[0] == '#' || !brace || !end || end < brace)
      continue;
    *brace = '\0';
    op = op_of (brace + 1);
    if (!strcmp (line, "rbdx_requests_in_flight"))
      t->in_flight += strtoull (end + 1, NULL, 10);
    else if (!strcmp (line, "rbdx_qos_wait_seconds_total"))
      t->qos_wait_s += strtod (end + 1, NULL);
    else if (op < 0)
      continue;
    else if (!strcmp (line, "rbdx_requests_total"))
      t->requests[op] += strtoull (end + 1, NULL, 10);
    else if (!strcmp (line, "rbdx_request_bytes_total"))
      t->bytes[op] += strtoull (end + 1, NULL, 10);
    else if (!strcmp (line, "rbdx_request_errors_total"))
      t->errors[op] += strtoull (end + 1, NULL, 10);
  }
  fclose (f);
}

static json_object *
json_by_op (const uint64_t *v)
{
  json_object *o = rbdx_json_object ();

  for (size_t i = 0; i < NOPS; i++)
    rbdx_json_add_uint (o, ops[i], v[i]);
  return o;
}

json_object *
rbdx_status_json (const struct rbdx_state *st)
{
  json_object *o = rbdx_json_object ();
  char dev[32];
  struct totals t;

  read_metrics (st->metrics, &t);
  snprintf (dev, sizeof dev, "/dev/nbd%d", st->index);
  rbdx_json_add_string (o, "device", dev);
  rbdx_json_add_string (o, "target", st->target);
  rbdx_json_add_string (o, "identity", *st->identity ? st->identity : NULL);
  rbdx_json_add_uint (o, "connections", st->connections);
  rbdx_json_add_bool (o, "read_only", st->read_only);
  rbdx_json_add_uint (o, "reattaches", st->reattaches);
  rbdx_json_add_uint (o, "resizes", st->resizes);
  rbdx_json_add_uint (o, "server_restarts", st->server_restarts);
  rbdx_json_add_bool (o, "supervised",
                      rbdx_proc_is (st->supervisor, st->supervisor_start));
  rbdx_json_add_string (o, "metrics_file", t.found ? st->metrics : NULL);
  if (t.found) {
    rbdx_json_add_uint (o, "in_flight", t.in_flight);
    rbdx_json_add_fixed (o, "qos_wait_seconds", t.qos_wait_s, 3);
    rbdx_json_add (o, "requests", json_by_op (t.requests));
    rbdx_json_add (o, "bytes", json_by_op (t.bytes));
    rbdx_json_add (o, "errors", json_by_op (t.errors));
  }
  return o;
}

void
rbdx_status_print (const struct rbdx_state *st)
{
  struct totals t;

  read_metrics (st->metrics, &t);
  printf ("/dev/nbd%d: %s%s%s\n", st->index, st->target,
          *st->identity ? " identity " : "", st->identity);
  printf ("  connections %u%s, re-attached %lu, resized %lu, server "
          "restarted %lu\n", st->connections, st->read_only ? " (read-only)" : "",
          st->reattaches, st->resizes, st->server_restarts);
  if (!rbdx_proc_is (st->supervisor, st->supervisor_start))
    printf ("  its supervisor is gone, so nothing keeps it served: rbdx "
            "attach /dev/nbd%d\n", st->index);
  if (!t.found) {
    printf ("  no request metrics (the server writes none)\n");
    return;
  }
  printf ("  in flight %" PRIu64 ", waited for QoS %.3f s\n", t.in_flight,
          t.qos_wait_s);
  for (size_t i = 0; i < NOPS; i++)
    if (t.requests[i])
      printf ("  %-12s %" PRIu64 " requests, %" PRIu64 " bytes, %" PRIu64
              " errors\n", ops[i], t.requests[i], t.bytes[i], t.errors[i]);
}

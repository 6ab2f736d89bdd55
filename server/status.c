/* SPDX-License-Identifier: BSD-3-Clause */
/* server/status.c: see status.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

void
rbdx_json_string (FILE *f, const char *s)
{
  fputc ('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char) *s;
    if (c == '"' || c == '\\')
      fprintf (f, "\\%c", c);
    else if (c < 0x20)
      fprintf (f, "\\u%04x", c);
    else
      fputc (c, f);
  }
  fputc ('"', f);
}

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

static void
json_by_op (const char *name, const uint64_t *v)
{
  printf (",\"%s\":{", name);
  for (size_t i = 0; i < NOPS; i++)
    printf ("%s\"%s\":%" PRIu64, i ? "," : "", ops[i], v[i]);
  printf ("}");
}

void
rbdx_status_print (const struct rbdx_state *st, bool json)
{
  struct totals t;

  read_metrics (st->metrics, &t);
  if (json) {
    printf ("{\"device\":\"/dev/nbd%d\",\"target\":", st->index);
    rbdx_json_string (stdout, st->target);
    printf (",\"identity\":");
    if (*st->identity)
      rbdx_json_string (stdout, st->identity);
    else
      printf ("null");
    printf (",\"connections\":%u,\"read_only\":%s,\"reattaches\":%lu,"
            "\"resizes\":%lu,\"server_restarts\":%lu,\"metrics_file\":",
            st->connections, st->read_only ? "true" : "false",
            st->reattaches, st->resizes, st->server_restarts);
    if (t.found) {
      rbdx_json_string (stdout, st->metrics);
      printf (",\"in_flight\":%" PRIu64 ",\"qos_wait_seconds\":%.3f",
              t.in_flight, t.qos_wait_s);
      json_by_op ("requests", t.requests);
      json_by_op ("bytes", t.bytes);
      json_by_op ("errors", t.errors);
    }
    else
      printf ("null");
    printf ("}");
    return;
  }
  printf ("/dev/nbd%d: %s%s%s\n", st->index, st->target,
          *st->identity ? " identity " : "", st->identity);
  printf ("  connections %u%s, re-attached %lu, resized %lu, server "
          "restarted %lu\n", st->connections, st->read_only ? " (read-only)" : "",
          st->reattaches, st->resizes, st->server_restarts);
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

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/cmd-list.c: `rbdx list-mapped` and `rbdx status` (see cli.h,
 * rbdx.pod, status.h). */
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "json.h"
#include "mapped.h"
#include "rbdx/printable.h"
#include "status.h"
#include "target.h"

int
cmd_status (struct cli *c)
{
  static struct rbdx_state all[MAX_MAPPED];   /* 8 MiB: not on the stack */
  struct rbdx_state *st;
  json_object *list = c->json ? rbdx_json_array () : NULL;
  int n;

  if (c->nargs > 2)
    die (2, "status wants at most one device, image spec or URI");
  n = rbdx_mapped_load (all, MAX_MAPPED);
  st = c->nargs == 2 ? rbdx_mapped_find (c->args[1], all, n) : NULL;
  if (c->nargs == 2 && !st)
    die (RBDX_EXIT_NOT_MAPPED, "%s is not mapped", c->args[1]);
  for (int i = 0; i < n; i++) {
    if (st && &all[i] != st)
      continue;
    if (list)
      rbdx_json_append (list, rbdx_status_json (&all[i]));
    else
      rbdx_status_print (&all[i]);
  }
  if (list)
    rbdx_json_print (stdout, list);
  return 0;
}

/* A mapping whose supervisor is gone (killed, OOM): nothing re-attaches
 * or restarts its server, and the pids it recorded may be another
 * process's by now.  Said on stderr, so that the table keeps its shape. */
static bool
supervised (const struct rbdx_state *st)
{
  bool alive = rbdx_proc_is (st->supervisor, st->supervisor_start);

  if (!alive)
    fprintf (stderr, "rbdx: warning: /dev/nbd%d: its supervisor is gone, so "
             "nothing keeps it served: rbdx attach /dev/nbd%d\n", st->index,
             st->index);
  return alive;
}

static json_object *
mapping_json (const struct rbdx_state *st, const char *dev)
{
  json_object *o = rbdx_json_object ();
  bool alive = supervised (st);

  rbdx_json_add_string (o, "device", dev);
  rbdx_json_add_string (o, rbdx_target_is_uri (st->target) ? "uri" : "image", st->target);
  rbdx_json_add_uint (o, "connections", st->connections);
  rbdx_json_add_bool (o, "read_only", st->read_only);
  rbdx_json_add_pid (o, "server_pid",
                     rbdx_mapped_server_running (st) ? (long) st->server : 0);
  rbdx_json_add_pid (o, "supervisor_pid", alive ? (long) st->supervisor : 0);
  rbdx_json_add_bool (o, "supervised", alive);
  rbdx_json_add_uint (o, "size", rbdx_device_bytes (st->index));
  rbdx_json_add_bool (o, "connected", rbdx_device_connected (st->index));
  rbdx_json_add_string (o, "identity", *st->identity ? st->identity : NULL);
  return o;
}

int
cmd_list (struct cli *c)
{
  static struct rbdx_state all[MAX_MAPPED];   /* 8 MiB: not on the stack */
  int n = rbdx_mapped_load (all, MAX_MAPPED);
  json_object *list = c->json ? rbdx_json_array () : NULL;

  if (c->nargs != 1)
    die (2, "list-mapped takes no arguments");
  if (!list && n)
    printf ("%-12s %-40s %-11s %-8s %-10s %s\n", "device", "image", "connections",
            "server", "supervisor", "size");
  for (int i = 0; i < n; i++) {
    char dev[32];
    snprintf (dev, sizeof dev, "/dev/nbd%d", all[i].index);
    if (list)
      rbdx_json_append (list, mapping_json (&all[i], dev));
    else {
      /* A space, '\\' or control character in the image spec is
       * escaped (\xHH): scripts split these columns on blanks (the
       * quiesce hook finds its device by the server column). */
      char server[24], sup[24], target[4 * RBDX_TARGET_MAX + 1];
      bool alive = supervised (&all[i]);

      snprintf (server, sizeof server, "%ld", (long) all[i].server);
      snprintf (sup, sizeof sup, "%ld", (long) all[i].supervisor);
      rbdx_printable_field (all[i].target, target, sizeof target);
      printf ("%-12s %-40s %-11u %-8s %-10s %llu\n", dev, target,
              all[i].connections,
              rbdx_mapped_server_running (&all[i]) ? server : "-",
              alive ? sup : "-", rbdx_device_bytes (all[i].index));
    }
  }
  if (list)
    rbdx_json_print (stdout, list);
  return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/cmd-nbd-list.c: the rbd-nbd personality's `list-mapped`
 * (see nbd-compat.h): the mappings rbdx serves, in rbd-nbd's shape.
 *
 * rbd-nbd lists the devices its running processes serve, one record per
 * device: id (the process id), pool, namespace, image, snap, device,
 * cookie (Ceph src/tools/rbd_nbd/rbd-nbd.cc, do_list_mapped_devices; JSON
 * and XML through Ceph's Formatter, "snap" empty for the image head,
 * plain text as a table with "-" for it).  Here a record is a device
 * whose rbdx supervisor runs (id: its pid), taken from the state files
 * (mapped.h); NBD URI mappings are not rbd images and are left out, and
 * so is a device whose supervisor is gone (it waits for `attach`, as a
 * device whose rbd-nbd was detached). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "mapped.h"
#include "nbd-compat.h"
#include "rbdx/printable.h"
#include "rbdx/spec.h"
#include "target.h"

/* Each name a part of st->target (RBDX_TARGET_MAX with its NUL), so it
 * has room for the longest: never cut (ceph-csi finds a volume's device
 * by pool and image here; a cut name could be another volume's). */
struct rec {
  long id;
  char pool[RBDX_TARGET_MAX], ns[RBDX_TARGET_MAX], image[RBDX_TARGET_MAX];
  char snap[RBDX_TARGET_MAX], device[32];
  char cookie[RBDX_BACKEND_MAX];   /* a part of st->backend, never cut */
};

static const char *const cols[] = { "id", "pool", "namespace", "image", "snap",
                                    "device", "cookie" };

static bool
rec_of (const struct rbdx_state *st, struct rec *r)
{
  struct rbdx_spec spec;

  if (rbdx_target_is_uri (st->target) ||
      !rbdx_proc_is (st->supervisor, st->supervisor_start) ||
      rbdx_spec_parse (st->target, NULL, &spec, NULL) < 0)
    return false;
  r->id = (long) st->supervisor;
  snprintf (r->pool, sizeof r->pool, "%s", spec.pool);
  snprintf (r->ns, sizeof r->ns, "%s", spec.ns ? spec.ns : "");
  snprintf (r->image, sizeof r->image, "%s", spec.image);
  /* A --snap-id mapping: "@ID", as rbd-nbd lists it (do_list_mapped_devices). */
  if (!spec.snap && rbdx_nbd_snap_id (st) >= 0)
    snprintf (r->snap, sizeof r->snap, "@%lld", rbdx_nbd_snap_id (st));
  else
    snprintf (r->snap, sizeof r->snap, "%s", spec.snap ? spec.snap : "");
  snprintf (r->device, sizeof r->device, "/dev/nbd%d", st->index);
  rbdx_nbd_cookie_of (st->backend, r->cookie, sizeof r->cookie);
  rbdx_spec_free (&spec);
  return true;
}

/* Room for a field of the plain table: every byte of the longest
 * (the cookie; a name is no longer) escaped as \xHH. */
#define PLAIN_MAX (4 * sizeof ((struct rec *) 0)->cookie + 1)

/* Column @p c of @p r into @p buf.  In the @p plain table a control
 * character, a byte that is not UTF-8 and '\\' are escaped as \xHH
 * (rbdx_printable, as `rbdx list-mapped` writes its image column): the
 * table goes to a terminal, where U+009B is CSI, and its lines must not
 * split.  JSON and XML escape for themselves. */
static void
field (const struct rec *r, int c, char *buf, size_t len, bool plain)
{
  const char *v[] = { NULL, r->pool, r->ns, r->image, r->snap, r->device, r->cookie };

  if (c == 0)
    snprintf (buf, len, "%ld", r->id);
  else if (plain)
    rbdx_printable (c == 4 && !*v[c] ? "-" : v[c], buf, len);
  else
    snprintf (buf, len, "%s", v[c]);
}

static void
xml_text (const char *s)
{
  for (; *s; s++)
    switch (*s) {
    case '&': fputs ("&amp;", stdout); break;
    case '<': fputs ("&lt;", stdout); break;
    case '>': fputs ("&gt;", stdout); break;
    case '"': fputs ("&quot;", stdout); break;
    case '\'': fputs ("&apos;", stdout); break;
    default: putchar (*s);
    }
}

static void
print_json (const struct rec *r, int n, bool pretty)
{
  json_object *list = rbdx_json_array ();
  const char *text;

  for (int i = 0; i < n; i++) {
    json_object *o = rbdx_json_object ();
    rbdx_json_add_int (o, "id", r[i].id);
    rbdx_json_add_string (o, "pool", r[i].pool);
    rbdx_json_add_string (o, "namespace", r[i].ns);
    rbdx_json_add_string (o, "image", r[i].image);
    rbdx_json_add_string (o, "snap", r[i].snap);
    rbdx_json_add_string (o, "device", r[i].device);
    rbdx_json_add_string (o, "cookie", r[i].cookie);
    rbdx_json_append (list, o);
  }
  if (!pretty) {
    rbdx_json_print (stdout, list);
    return;
  }
  text = json_object_to_json_string_ext (list, JSON_C_TO_STRING_PRETTY |
                                               JSON_C_TO_STRING_NOSLASHESCAPE);
  if (!text)
    die (1, "out of memory");
  printf ("%s\n", text);
  json_object_put (list);
}

static void
print_xml (const struct rec *r, int n, bool pretty)
{
  char v[sizeof ((struct rec *) 0)->cookie];   /* the longest field */

  fputs ("<devices>", stdout);
  for (int i = 0; i < n; i++) {
    fputs (pretty ? "\n    <device>" : "<device>", stdout);
    for (int c = 0; c < 7; c++) {
      field (&r[i], c, v, sizeof v, false);
      printf ("%s<%s>", pretty ? "\n        " : "", cols[c]);
      xml_text (v);
      printf ("</%s>", cols[c]);
    }
    fputs (pretty ? "\n    </device>" : "</device>", stdout);
  }
  fputs (pretty && n ? "\n</devices>\n" : "</devices>\n", stdout);
}

/* A table as Ceph's TextTable: left-aligned columns, two spaces apart;
 * nothing at all when there is no device. */
static void
print_plain (const struct rec *r, int n)
{
  size_t w[7];
  char v[PLAIN_MAX];

  if (n == 0)
    return;
  for (int c = 0; c < 7; c++) {
    w[c] = strlen (cols[c]);
    for (int i = 0; i < n; i++) {
      field (&r[i], c, v, sizeof v, true);
      if (strlen (v) > w[c])
        w[c] = strlen (v);
    }
  }
  for (int i = -1; i < n; i++) {
    for (int c = 0; c < 7; c++) {
      if (i < 0)
        snprintf (v, sizeof v, "%s", cols[c]);
      else
        field (&r[i], c, v, sizeof v, true);
      printf ("%-*s%s", c == 6 ? 0 : (int) w[c], v, c == 6 ? "\n" : "  ");
    }
  }
}

int
rbdx_nbd_list (const struct rbdx_nbd_args *a)
{
  static struct rbdx_state all[MAX_MAPPED];
  static struct rec recs[MAX_MAPPED];
  int n = rbdx_mapped_load (all, MAX_MAPPED), k = 0;

  for (int i = 0; i < n; i++)
    if (rec_of (&all[i], &recs[k]))
      k++;
  if (a->format == RBDX_NBD_JSON)
    print_json (recs, k, a->pretty);
  else if (a->format == RBDX_NBD_XML)
    print_xml (recs, k, a->pretty);
  else
    print_plain (recs, k);
  return 0;
}

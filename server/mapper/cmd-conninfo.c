/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/cmd-conninfo.c: `rbdx map|unmap --connection-info` (os-brick's
 * connect and disconnect; conninfo.h parses the JSON).  See cli.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/printable.h"

#include "cli.h"
#include "conninfo.h"
#include "json.h"
#include "devlinks.h"
#include "state.h"

void
cli_load_conninfo (const char *path, struct rbdx_conninfo *ci)
{
  char err[512], shown[4096], *text;
  size_t len = 0;
  int r;

  if (!(text = rbdx_conninfo_read (path, &len)))
    die (1, "--connection-info %s: %s", path, strerror (errno));
  r = rbdx_conninfo_parse (text, len, ci, err, sizeof err);
  free (text);
  if (r < 0)
    die (2, "--connection-info %s: %s", path, r == -ENOMEM ? "out of memory" : err);
  /* What the mapping will not do, said before it is made; the warnings'
   * values are escaped already, the path is not. */
  for (size_t i = 0; i < ci->nwarn; i++)
    fprintf (stderr, "rbdx: warning: --connection-info %s: %s\n",
             rbdx_printable_line (path, shown, sizeof shown), ci->warn[i]);
  if (ci->nwarn_more)
    fprintf (stderr, "rbdx: warning: --connection-info %s: %zu more "
             "qos_specs keys ignored\n",
             rbdx_printable_line (path, shown, sizeof shown), ci->nwarn_more);
}

void
cli_print_device_info (int index, const char *spec)
{
  json_object *o = rbdx_json_object ();
  char devlink[4200], dev[32];

  snprintf (dev, sizeof dev, "/dev/nbd%d", index);
  /* The devlink only when it leads to this device: it may be another
   * mapping's of the name (read-only beside read-write), or missing (a
   * name too long, an image named like a namespace): os-brick keeps
   * "path" for the volume's life. */
  if (!rbdx_devlink_points_at (spec, index) ||
      rbdx_devlink_path (spec, devlink, sizeof devlink) < 0)
    snprintf (devlink, sizeof devlink, "%s", dev);
  rbdx_json_add_string (o, "type", "block");
  rbdx_json_add_string (o, "path", devlink);
  rbdx_json_add_string (o, "device", dev);
  rbdx_json_print (stdout, o);
}

void
cli_conninfo_target (struct cli *c, struct rbdx_conninfo *ci)
{
  char *args[1] = { ci->spec };

  /* The spec parser refuses a device path ("/dev/nbd0": its pool name
   * is empty), so unmap can never take the name for a device. */
  cli_set_target (c, args, 1);
  /* Cinder's connection_info names an RBD volume, POOL/IMAGE: a "name"
   * that is an NBD URI would map some other server's export with the
   * fields (keyring, monitors) silently dropped. */
  if (c->o.is_uri)
    die (2, "--connection-info: the name '%s' is an NBD URI, not an RBD "
         "image spec", c->o.target);
}

void
cli_conninfo_to_map (struct cli *c, struct rbdx_conninfo *ci)
{
  if (c->nargs > 1)
    die (2, "--connection-info names the volume: no image spec or URI too");
  cli_conninfo_target (c, ci);
  for (size_t i = 0; i < ci->nparams; i++)
    cli_add_param (&c->o, "", ci->params[i]);
  if (ci->read_only)
    c->o.read_only = true;
  cli_check_args (c->o.target, c->o.params, c->o.nparams);
}

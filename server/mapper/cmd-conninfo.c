/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/cmd-conninfo.c: `rbdx map|unmap --connection-info` (os-brick's
 * connect and disconnect; conninfo.h parses the JSON).  See cli.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "conninfo.h"
#include "json.h"
#include "links.h"
#include "state.h"

void
cli_load_conninfo (const char *path, struct rbdx_conninfo *ci)
{
  char err[512], *text = rbdx_conninfo_read (path);
  int r;

  if (!text)
    die (1, "--connection-info %s: %s", path, strerror (errno));
  r = rbdx_conninfo_parse (text, ci, err, sizeof err);
  free (text);
  if (r < 0)
    die (2, "--connection-info %s: %s", path, r == -ENOMEM ? "out of memory" : err);
}

void
cli_keyring_path (const char *spec, char *buf, size_t len)
{
  char name[1100];
  size_t i;

  snprintf (name, sizeof name, "%s", spec);
  for (i = 0; name[i]; i++)
    if (name[i] == '/')
      name[i] = '%';
  snprintf (buf, len, "%s/keyrings/%s.keyring", rbdx_run_dir (), name);
}

void
cli_print_device_info (int index, const char *spec)
{
  json_object *o = rbdx_json_object ();
  char link[4200], dev[32];

  snprintf (dev, sizeof dev, "/dev/nbd%d", index);
  if (rbdx_link_path (spec, link, sizeof link) < 0)
    snprintf (link, sizeof link, "%s", dev);
  rbdx_json_add_string (o, "type", "block");
  rbdx_json_add_string (o, "path", link);
  rbdx_json_add_string (o, "device", dev);
  rbdx_json_print (stdout, o);
}

void
cli_conninfo_to_map (struct cli *c, struct rbdx_conninfo *ci, char *kr, size_t krlen)
{
  char *args[1] = { ci->spec };
  FILE *f;
  int fd;

  if (c->nargs > 1)
    die (2, "--connection-info names the volume: no image spec or URI too");
  cli_set_target (c, args, 1);
  for (size_t i = 0; i < ci->nparams; i++)
    cli_add_param (&c->o, "", ci->params[i]);
  if (ci->read_only)
    c->o.read_only = true;
  cli_check_args (c->o.target, c->o.params, c->o.nparams);
  *kr = '\0';
  if (!ci->keyring)
    return;
  cli_keyring_path (c->o.target, kr, krlen);
  if (rbdx_state_mkdir () < 0)
    die (1, "cannot create %s: %s", rbdx_run_dir (), strerror (errno));
  {
    char dir[4200];
    snprintf (dir, sizeof dir, "%s/keyrings", rbdx_run_dir ());
    if (mkdir (dir, 0700) == -1 && errno != EEXIST)
      die (1, "cannot create %s: %s", dir, strerror (errno));
  }
  fd = open (kr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  f = fd >= 0 ? fdopen (fd, "w") : NULL;
  if (!f || fputs (ci->keyring, f) == EOF || fclose (f) == EOF)
    die (1, "cannot write the volume's keyring %s: %s", kr, strerror (errno));
  cli_add_param (&c->o, "keyring=", kr);
}

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
#include "devlinks.h"
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
cli_print_device_info (int index, const char *spec)
{
  json_object *o = rbdx_json_object ();
  char devlink[4200], dev[32];

  snprintf (dev, sizeof dev, "/dev/nbd%d", index);
  if (rbdx_devlink_path (spec, devlink, sizeof devlink) < 0)
    snprintf (devlink, sizeof devlink, "%s", dev);
  rbdx_json_add_string (o, "type", "block");
  rbdx_json_add_string (o, "path", devlink);
  rbdx_json_add_string (o, "device", dev);
  rbdx_json_print (stdout, o);
}

void
cli_conninfo_to_map (struct cli *c, struct rbdx_conninfo *ci)
{
  char *args[1] = { ci->spec };

  if (c->nargs > 1)
    die (2, "--connection-info names the volume: no image spec or URI too");
  cli_set_target (c, args, 1);
  for (size_t i = 0; i < ci->nparams; i++)
    cli_add_param (&c->o, "", ci->params[i]);
  if (ci->read_only)
    c->o.read_only = true;
  cli_check_args (c->o.target, c->o.params, c->o.nparams);
}

void
cli_write_keyring (struct cli *c, const char *keyring)
{
  char dir[300], path[sizeof c->o.keyring_file];
  size_t len = strlen (keyring);
  int fd;

  if (snprintf (dir, sizeof dir, "%s/keyrings", rbdx_run_dir ()) >= (int) sizeof dir ||
      snprintf (path, sizeof path, "%s/XXXXXX.keyring", dir) >= (int) sizeof path)
    die (1, "the run directory %s is too long", rbdx_run_dir ());
  if (rbdx_state_mkdir () < 0)
    die (1, "cannot create %s: %s", rbdx_run_dir (), strerror (errno));
  if (mkdir (dir, 0700) == -1 && errno != EEXIST)
    die (1, "cannot create %s: %s", dir, strerror (errno));
  /* A name of its own (O_EXCL, random), owned by this mapping alone: no
   * other volume's name can lead to it, and only the mapping's end
   * removes it (supervise.h, keyring_file). */
  fd = mkostemps (path, 8, O_CLOEXEC);
  if (fd < 0)
    die (1, "cannot create the volume's keyring in %s: %s", dir, strerror (errno));
  if (fchmod (fd, 0600) == -1 || write (fd, keyring, len) != (ssize_t) len ||
      close (fd) == -1) {
    int e = errno;
    unlink (path);
    die (1, "cannot write the volume's keyring %s: %s", path, strerror (e));
  }
  snprintf (c->o.keyring_file, sizeof c->o.keyring_file, "%s", path);
  cli_add_param (&c->o, "keyring=", path);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/server-args.c: the server's command line (see
 * server-args.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/limits.h"
#include "rbdx/options.h"
#include "params.h"
#include "server-args.h"

void
rbdx_server_argv_free (char **argv)
{
  if (!argv)
    return;
  for (char **a = argv; *a; a++)
    free (*a);
  free (argv);
}

/* Append a copy of "@p key@p value" to @p argv (room was made). */
static int
add (char **argv, size_t *n, const char *key, const char *value)
{
  if (asprintf (&argv[*n], "%s%s", key, value) < 0) {
    argv[*n] = NULL;
    return -1;
  }
  (*n)++;
  argv[*n] = NULL;
  return 0;
}

bool
rbdx_server_wants_device_file (const struct rbdx_map_opts *o)
{
  const char *q = rbdx_param_find (o->params, o->nparams, "quiesce");

  return q && rbdx_parse_bool (q) == 1 &&
         !rbdx_param_find (o->params, o->nparams, "quiesce_device") &&
         !rbdx_param_find (o->params, o->nparams, "quiesce_device_file");
}

char **
rbdx_server_argv (const struct rbdx_map_opts *o, const char *sock,
                  const char *size_file, const char *metrics_file,
                  const char *identity, const char *device_file)
{
  char **argv = calloc (o->nparams + 20, sizeof *argv);
  size_t n = 0;
  int r = 0;

  if (!argv)
    return NULL;
  if (o->engine) {
    /* The built-in engine (server/engine/engine.h): the same parameters,
     * its control socket where nbdkit would listen. */
    r |= add (argv, &n, o->engine, "");
    r |= add (argv, &n, "--control", "");
    r |= add (argv, &n, sock, "");
    if (o->read_only)
      r |= add (argv, &n, "--readonly", "");
    r |= add (argv, &n, "--", "");
  }
  else {
    r |= add (argv, &n, o->nbdkit, "");
    r |= add (argv, &n, "--foreground", "");
    r |= add (argv, &n, "--threads=" RBDX_NBDKIT_THREADS, "");
    r |= add (argv, &n, "--unix", "");
    r |= add (argv, &n, sock, "");
    if (o->read_only)
      r |= add (argv, &n, "--readonly", "");
    r |= add (argv, &n, "--", "");
    r |= add (argv, &n, o->plugin, "");
  }
  r |= add (argv, &n, "image=", o->target);
  /* Our own server tells every connection the largest size and publishes
   * the image's real size in a file: growth then needs no new connections
   * (see server/mapper/README.md). */
  r |= add (argv, &n, "size_file=", size_file);
  r |= add (argv, &n, "advertise_size=max", "");
  /* Request counters for `rbdx status` (nbdkit-rbdx-plugin(1), METRICS),
   * in our private directory unless metrics_file= or metrics_interval=
   * was given (those are among o->params). */
  if (!rbdx_param_find (o->params, o->nparams, "metrics_file"))
    r |= add (argv, &n, "metrics_file=", metrics_file);
  if (!rbdx_param_find (o->params, o->nparams, "metrics_interval"))
    r |= add (argv, &n, "metrics_interval=2", "");
  /* Once the image is known, a restarted server serves exactly it, even
   * if its name now means another image (rename, re-create). */
  if (*identity)
    r |= add (argv, &n, "identity=", identity);
  /* quiesce=true: the hook's DEVICE is /dev/nbdN, which the supervisor
   * writes to this file once the kernel gave it (the server starts
   * first); the user's quiesce_device= or quiesce_device_file= wins. */
  if (device_file && rbdx_server_wants_device_file (o))
    r |= add (argv, &n, "quiesce_device_file=", device_file);
  for (size_t i = 0; i < o->nparams; i++)
    r |= add (argv, &n, o->params[i], "");
  if (r) {
    rbdx_server_argv_free (argv);
    return NULL;
  }
  return argv;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* server/mapper/cli.c: what every command of the mapper uses from the
 * command line's state (cli.h): die() and the personality its messages
 * speak for, the defaults of struct cli, parameters made absolute, the
 * one argument check, the target, the default connection count.  The
 * command line itself is parsed in rbdx.c, which calls the commands;
 * the commands call this, never rbdx.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rbdx/options.h"
#include "rbdx/printable.h"

#include "cli.h"
#include "common/limits.h"
#include "params.h"
#include "state.h"
#include "nbd-compat.h"
#include "target.h"

static const char *prog = "rbdx";
static bool one_failure_status;

void
cli_set_personality (const char *name, bool one_status)
{
  prog = name;
  one_failure_status = one_status;
}

/* The message holds values from outside (arguments, file names, what
 * the engine answered): printed whole through rbdx_printable_line, so
 * none can split or forge a line; our wording has no byte it escapes. */
void
die (int status, const char *fmt, ...)
{
  char msg[4096], shown[4 * sizeof msg];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  fprintf (stderr, "%s: %s\n", prog,
           rbdx_printable_line (msg, shown, sizeof shown));
  exit (one_failure_status && status ? RBDX_NBD_EXIT_FAILURE : status);
}

unsigned
cli_default_connections (void)
{
  long n = sysconf (_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > RBDX_MAX_CONNECTIONS ? RBDX_MAX_CONNECTIONS : (unsigned) n;
}

void
cli_add_param (struct rbdx_map_opts *o, const char *key, const char *value)
{
  char *kv, *p;

  /* The supervisor runs in /: make file names absolute now, against the
   * directory we were run from (params.h). */
  if (asprintf (&kv, "%s%s", key, value) < 0)
    die (1, "out of memory");
  p = rbdx_param_absolute (kv);
  if (!p)
    die (1, "%s: cannot make the path absolute: %s", kv, strerror (errno));
  free (kv);
  o->params = realloc (o->params, (o->nparams + 1) * sizeof *o->params);
  if (!o->params)
    die (1, "out of memory");
  o->params[o->nparams++] = p;
}

void
cli_init (struct cli *c)
{
  memset (c, 0, sizeof *c);
  c->o.device = -1;
  c->o.io_timeout = 60;
  c->o.reattach_timeout = 30;
  c->o.resize_poll = 5;
  c->o.nbdkit = getenv ("RBDX_NBDKIT") && *getenv ("RBDX_NBDKIT") ? getenv ("RBDX_NBDKIT") : "nbdkit";
  c->o.plugin = getenv ("RBDX_PLUGIN") && *getenv ("RBDX_PLUGIN") ? getenv ("RBDX_PLUGIN") : "rbdx";
}

/* The files of ceph.log_file= and ceph.admin_socket= (the core's check,
 * which the server makes again), with the cluster name and id the
 * server will have; rbdx_args_check itself stays pure. */
static void
check_ceph_paths (char *const *params, size_t nparams)
{
  const char *cluster = rbdx_param_find (params, nparams, "cluster");
  const char *id = rbdx_param_find (params, nparams, "id");
  struct rbdx_ceph_meta meta = {
    .cluster = cluster ? cluster : "ceph", .id = id ? id : "admin",
  };
  char name[64], why[1024];
  const char *eq;

  for (size_t i = 0; i < nparams; i++) {
    eq = strchr (params[i], '=');
    if (strncmp (params[i], "ceph.", 5) != 0 || !eq ||
        (size_t) (eq - params[i]) - 5 >= sizeof name)
      continue;
    snprintf (name, sizeof name, "%.*s", (int) (eq - params[i] - 5),
              params[i] + 5);
    if (rbdx_ceph_path_check (name, eq + 1, &meta, why, sizeof why) < 0)
      die (2, "%s", why);
  }
}

bool
cli_params_fit (char *const *params, size_t nparams, size_t *total)
{
  *total = 0;
  for (size_t i = 0; i < nparams; i++)
    *total += strlen (params[i]) + 1;
  return *total < sizeof ((struct rbdx_state *) NULL)->params;
}

void
cli_check_args (const char *target, char *const *params, size_t nparams)
{
  char why[1024];
  size_t total;

  if (rbdx_args_check (target, params, nparams, why, sizeof why) < 0)
    die (2, "%s", why);
  check_ceph_paths (params, nparams);
  /* The state file keeps every parameter for the servers the supervisor
   * starts later; one that did not fit would be silently missing from
   * them (a keyring, an id), so too many bytes are refused now. */
  if (!cli_params_fit (params, nparams, &total))
    die (2, "the plugin parameters of %s take %zu bytes; a mapping keeps at "
         "most %zu", target, total,
         sizeof ((struct rbdx_state *) NULL)->params - 1);
}

/* TARGET [KEY=VALUE...] into the map options. */
void
cli_set_target (struct cli *c, char **args, int nargs)
{
  const char *why = NULL;

  if (nargs < 1)
    die (2, "no image spec or NBD URI given");
  /* Refused as given, before anything reads it as a spec. */
  cli_check_args (args[0], NULL, 0);
  if (rbdx_target_canonical (args[0], c->o.target, sizeof c->o.target, &why) < 0)
    die (2, "bad %s '%s': %s", rbdx_target_is_uri (args[0]) ? "NBD URI" : "image spec", args[0], why);
  c->o.is_uri = rbdx_target_is_uri (args[0]);
  for (int i = 1; i < nargs; i++) {
    if (!strchr (args[i], '=') || args[i][0] == '=')
      die (2, "unexpected argument '%s' (plugin parameters are KEY=VALUE)", args[i]);
    cli_add_param (&c->o, "", args[i]);
  }
  if (c->o.is_uri && c->o.nparams)
    die (2, "%s is an NBD URI: the server is not rbdx's own, so plugin parameters "
         "(%s) cannot apply", args[0], c->o.params[0]);
  if (!c->o.is_uri && strchr (c->o.target, '@'))
    c->o.read_only = true;    /* a snapshot maps read-only */
}

void
cli_end_signals (int how)
{
  sigset_t ends;

  sigemptyset (&ends);
  sigaddset (&ends, SIGINT);
  sigaddset (&ends, SIGTERM);
  sigaddset (&ends, SIGHUP);
  sigaddset (&ends, SIGQUIT);
  sigprocmask (how, &ends, NULL);
}

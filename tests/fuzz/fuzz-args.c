/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness: what the mapper passes to the server it starts
 * (rbdx_args_check, server/mapper/target.h, and the argument builder
 * rbdx_server_argv, server/mapper/server-args.h).
 *
 * Input: one flag byte (bit 0: the built-in engine, else nbdkit; bit 1:
 * read-only; bit 2: an identity is known), then the spec and up to 24
 * KEY=VALUE parameters, separated by NUL bytes.  The spec goes through
 * the mapper's own steps (rbdx_args_check as given, rbdx_target_canonical,
 * rbdx_args_check of the canonical spec with the parameters); whatever is
 * accepted becomes the server's argv through the real builder.  Oracle:
 *   - nbdkit: GNU getopt_long (nbdkit parses its command line with it,
 *     and it permutes), run over the argv with only the options the
 *     mapper means to give, finds exactly those options and no other
 *     (an unknown one, e.g. --filter=, fails); of the operands left the
 *     first is the plugin and every other one is KEY=VALUE with a plain
 *     KEY, and exactly one has KEY image, its value the canonical spec,
 *     which parses back to the same spec;
 *   - the engine: its parser (server/engine/engine.c: options, then
 *     "--", then parameters, a bare one being the image) finds exactly
 *     one image, the canonical spec, and only the mapper's options;
 *   - no argument holds a control character, no parameter is pool=, and
 *     a refusal comes with a message; nothing leaks (LeakSanitizer).
 * Built and run by tests/fuzz/run (suite fuzz).
 */
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/limits.h"
#include "rbdx/spec.h"
#include "server-args.h"
#include "target.h"
#include "fuzz-check.h"

#define MAX_PARAMS 24

static bool
plain_key (const char *a, size_t klen)
{
  if (klen == 0)
    return false;
  for (size_t i = 0; i < klen; i++) {
    char c = a[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alpha && (i == 0 || !((c >= '0' && c <= '9') || c == '_' || c == '.')))
      return false;
  }
  return true;
}

/* One operand or parameter KEY=VALUE: counts images, checks the rest. */
static void
check_param (const char *a, const char *canon, int *images)
{
  const char *eq = strchr (a, '=');
  struct rbdx_spec spec;
  const char *why;
  char buf[RBDX_SPEC_MAX + 2];

  CHECK (!has_control (a));
  if (!eq) {
    /* A bare argument is the image for the engine and for the plugin
     * (its magic key): the builder never gives one. */
    CHECK (!"a bare argument");
    return;
  }
  CHECK (plain_key (a, (size_t) (eq - a)));
  CHECK (strncmp (a, "pool=", 5) != 0);
  if (strncmp (a, "image=", 6) == 0) {
    (*images)++;
    CHECK (strcmp (eq + 1, canon) == 0);
    CHECK (rbdx_spec_parse (eq + 1, NULL, &spec, &why) == 0);
    CHECK (rbdx_spec_format (&spec, buf, sizeof buf) < sizeof buf);
    CHECK (strcmp (buf, canon) == 0);
    rbdx_spec_free (&spec);
  }
}

static size_t
count (char **argv)
{
  size_t n = 0;
  while (argv[n])
    n++;
  return n;
}

static void
check_nbdkit (char **argv, const struct rbdx_map_opts *o, const char *sock)
{
  static const struct option ours[] = {
    { "foreground", no_argument, NULL, 'f' },
    { "threads", required_argument, NULL, 't' },
    { "unix", required_argument, NULL, 'U' },
    { "readonly", no_argument, NULL, 'r' },
    { NULL, 0, NULL, 0 },
  };
  size_t n = count (argv);
  char **copy = calloc (n + 1, sizeof *copy);
  int ch, seen = 0, images = 0;

  CHECK (copy);
  memcpy (copy, argv, n * sizeof *copy);
  optind = 0;               /* GNU: start afresh */
  opterr = 0;
  while ((ch = getopt_long ((int) n, copy, "", ours, NULL)) != -1) {
    CHECK (ch == 'f' || ch == 't' || ch == 'U' || ch == 'r');   /* no other option */
    if (ch == 'U')
      CHECK (strcmp (optarg, sock) == 0);
    if (ch == 't')
      CHECK (strcmp (optarg, RBDX_NBDKIT_THREADS) == 0);
    seen++;
  }
  CHECK (seen == (o->read_only ? 4 : 3));
  CHECK (optind < (int) n && strcmp (copy[optind], o->plugin) == 0);
  for (size_t i = (size_t) optind + 1; i < n; i++)
    check_param (copy[i], o->target, &images);
  CHECK (images == 1);
  free (copy);
}

static void
check_engine (char **argv, const struct rbdx_map_opts *o, const char *sock)
{
  size_t n = count (argv), i;
  int images = 0;
  bool control = false;

  CHECK (strcmp (argv[0], o->engine) == 0);
  for (i = 1; i < n && strcmp (argv[i], "--"); i++) {
    if (!strcmp (argv[i], "--control") && i + 1 < n) {
      CHECK (strcmp (argv[++i], sock) == 0);
      control = true;
    }
    else
      CHECK (!strcmp (argv[i], "--readonly") && o->read_only);
  }
  CHECK (control && i < n);
  for (i++; i < n; i++)
    check_param (argv[i], o->target, &images);
  CHECK (images == 1);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const char sock[] = "/run/rbdx/sup-1/nbd.sock";
  struct rbdx_map_opts o = { .nbdkit = "nbdkit", .plugin = "rbdx" };
  char *input, *params[MAX_PARAMS], why[1024];
  const char *given, *cwhy = NULL;
  size_t nparams = 0, off;
  unsigned flags;
  char **argv;

  if (size < 1)
    return 0;
  flags = data[0];
  input = malloc (size);
  if (!input)
    return 0;
  memcpy (input, data + 1, size - 1);
  input[size - 1] = '\0';
  given = input;
  for (off = strlen (input) + 1; off < size - 1 && nparams < MAX_PARAMS;
       off += strlen (input + off) + 1)
    params[nparams++] = input + off;

  why[0] = '\0';
  /* cli_set_target: the spec as given, then its canonical form. */
  if (rbdx_args_check (given, NULL, 0, why, sizeof why) < 0) {
    CHECK (why[0] != '\0');
    goto out;
  }
  CHECK (!has_control (given));
  if (rbdx_target_canonical (given, o.target, sizeof o.target, &cwhy) < 0)
    goto out;
  if (rbdx_target_is_uri (o.target))
    goto out;                 /* no server of ours: nothing is started */
  CHECK (o.target[0] != '-' && !strchr (o.target, '='));
  /* cmd_map: the canonical spec with every parameter. */
  if (rbdx_args_check (o.target, params, nparams, why, sizeof why) < 0) {
    CHECK (why[0] != '\0');
    goto out;
  }
  o.params = params;
  o.nparams = nparams;
  o.read_only = flags & 2;
  o.engine = (flags & 1) ? "/usr/libexec/rbdx-engine" : NULL;
  argv = rbdx_server_argv (&o, sock, "/run/rbdx/sup-1/size",
                           "/run/rbdx/sup-1/metrics.prom",
                           (flags & 4) ? "2/10a4b5c6d7e8" : "",
                           "/run/rbdx/sup-1/quiesce-device");
  CHECK (argv);
  if (o.engine)
    check_engine (argv, &o, sock);
  else
    check_nbdkit (argv, &o, sock);
  rbdx_server_argv_free (argv);
out:
  free (input);
  return 0;
}

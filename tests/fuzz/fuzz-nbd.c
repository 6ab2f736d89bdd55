/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness: the rbd-nbd personality's command line parser
 * (rbdx_nbd_parse, server/mapper/nbd-compat.h) and its kernel backend
 * identifiers (rbdx_nbd_backend_make, rbdx_nbd_cookie_of,
 * rbdx_nbd_backend_connections, rbdx_nbd_cookie_ok).
 *
 * Input: up to 48 arguments separated by NUL bytes (argv[0] is
 * "rbd-nbd").  Oracle:
 *   - a refusal is -EINVAL with a one-line message (no control
 *     character: hostile text is quoted with '?') that names rbd-nbd or
 *     the option, and nothing is left allocated;
 *   - an accepted map or attach has a spec without '=' or a control
 *     character that does not start with '-', and a canonical target
 *     that the spec parser takes back; a device is /dev/nbdN with N its
 *     index (list-mapped, and unmap and detach of a spec, ignore
 *     --device, as rbd-nbd does); a cookie is
 *     1..RBDX_NBD_COOKIE_MAX cookie characters; -h and -v stop there;
 *   - every plugin parameter is KEY=VALUE with one of the keys the
 *     personality makes (id, conf, keyring, mon_host, cluster, ceph.NAME
 *     with NAME of [a-z0-9_]), each key once, a value without a control
 *     character;
 *   - the backend identifier made from an accepted cookie gives back the
 *     cookie and the connection count, and an attach with the same
 *     cookie is let through while none or another is not;
 *   - nothing leaks (LeakSanitizer).
 * Built and run by tests/fuzz/run (suite fuzz).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/spec.h"
#include "nbd-compat.h"
#include "target.h"
#include "fuzz-check.h"

#define MAX_ARGS 48

static bool
known_key (const char *p, size_t klen)
{
  static const char *const keys[] = { "id", "conf", "keyring", "mon_host",
                                      "cluster", NULL };

  for (int i = 0; keys[i]; i++)
    if (strlen (keys[i]) == klen && strncmp (p, keys[i], klen) == 0)
      return true;
  if (klen <= 5 || strncmp (p, "ceph.", 5) != 0)
    return false;
  for (size_t i = 5; i < klen; i++)
    if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') || p[i] == '_'))
      return false;
  return true;
}

static void
check_params (const struct rbdx_nbd_args *a)
{
  for (size_t i = 0; i < a->nparams; i++) {
    const char *p = a->params[i], *eq = strchr (p, '=');
    CHECK (eq && eq[1]);
    CHECK (known_key (p, (size_t) (eq - p)));
    CHECK (!has_control (eq + 1));
    for (size_t j = 0; j < i; j++) {
      const char *q = a->params[j], *qe = strchr (q, '=');
      CHECK (qe - q != eq - p || strncmp (p, q, (size_t) (eq - p)) != 0);
    }
  }
}

static void
check_cookie (const char *cookie)
{
  char backend[RBDX_NBD_COOKIE_MAX + 64], back[RBDX_NBD_COOKIE_MAX + 64];
  const char *msg;

  CHECK (*cookie && strlen (cookie) <= RBDX_NBD_COOKIE_MAX);
  CHECK (strncmp (cookie, "rbdx:", 5) != 0);
  for (const char *c = cookie; *c; c++)
    CHECK ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
           (*c >= '0' && *c <= '9') || strchr ("._:+-", *c));
  CHECK (rbdx_nbd_backend_make (cookie, 16, backend, sizeof backend) == 0);
  CHECK (strcmp (rbdx_nbd_cookie_of (backend, back, sizeof back), cookie) == 0);
  CHECK (rbdx_nbd_backend_connections (backend) == 16);
  CHECK (rbdx_nbd_cookie_ok (backend, cookie, &msg) && !msg);
  CHECK (!rbdx_nbd_cookie_ok (backend, NULL, &msg) && msg);
  CHECK (!rbdx_nbd_cookie_ok (backend, "other-cookie", &msg) ||
         strcmp (cookie, "other-cookie") == 0);
}

static void
check_accepted (const struct rbdx_nbd_args *a)
{
  check_params (a);
  if (a->cookie)
    check_cookie (a->cookie);
  /* Only map, attach and an unmap or detach of a device use --device;
   * list-mapped, and unmap or detach of a spec, ignore it, as rbd-nbd
   * does (it parses --device for every command). */
  if (a->device && (a->cmd == RBDX_NBD_MAP || a->cmd == RBDX_NBD_ATTACH ||
                    ((a->cmd == RBDX_NBD_UNMAP || a->cmd == RBDX_NBD_DETACH) &&
                     !a->spec))) {
    CHECK (strncmp (a->device, "/dev/nbd", 8) == 0 && a->device_index >= 0);
    CHECK (rbdx_device_index (a->device) == a->device_index);
  }
  if (a->spec) {
    struct rbdx_spec spec;
    const char *why;
    char canon[1024];

    CHECK (*a->spec && a->spec[0] != '-' && !strchr (a->spec, '='));
    CHECK (!has_control (a->spec) && !rbdx_target_is_uri (a->spec));
    CHECK (*a->target && !has_control (a->target));
    CHECK (a->target[0] != '-' && !strchr (a->target, '='));
    /* --rbd_default_pool brings a pool, never a namespace: a bare image
     * name stays one pool and one image. */
    CHECK (strchr (a->spec, '/') || strchr (a->target, '/') == strrchr (a->target, '/'));
    CHECK (rbdx_spec_parse (a->target, NULL, &spec, NULL) == 0);
    rbdx_spec_free (&spec);
    CHECK (rbdx_target_canonical (a->target, canon, sizeof canon, &why) == 0);
    CHECK (strcmp (canon, a->target) == 0);
  }
  if (a->cmd == RBDX_NBD_MAP || a->cmd == RBDX_NBD_ATTACH)
    CHECK (a->spec);
  /* --quiesce-hook reaches the server as quiesce_hook=: absolute, and no
   * control character. */
  if (a->quiesce_hook)
    CHECK (a->quiesce_hook[0] == '/' && !has_control (a->quiesce_hook));
  if (a->cmd == RBDX_NBD_ATTACH)
    CHECK (a->device);
  if (a->snap_id >= 0 && a->spec)
    CHECK (!strchr (a->target, '@'));
  CHECK (a->io_timeout >= -1 && a->io_timeout <= 86400);
  CHECK (a->reattach_timeout >= 0 && a->reattach_timeout <= 86400);
  CHECK (a->connections <= 16);
  CHECK (!has_control (a->warning));
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static char buf[8192];
  char *argv[MAX_ARGS + 2];
  struct rbdx_nbd_args a;
  int argc = 0, r;
  size_t n = size < sizeof buf - 1 ? size : sizeof buf - 1;

  memcpy (buf, data, n);
  buf[n] = '\0';
  argv[argc++] = (char *) "rbd-nbd";
  for (size_t i = 0; i <= n && argc <= MAX_ARGS;) {
    argv[argc++] = buf + i;
    i += strlen (buf + i) + 1;
  }
  argv[argc] = NULL;

  r = rbdx_nbd_parse (argc, argv, &a);
  CHECK (r == 0 || r == -EINVAL || r == -ENOMEM);
  if (r == -EINVAL) {
    CHECK (*a.msg && !has_control (a.msg));
    CHECK (strncmp (a.msg, "rbd-nbd: ", 9) == 0 || strncmp (a.msg, "Option ", 7) == 0);
  }
  /* -h and -v end the parse where they stand: only the usage follows. */
  else if (r == 0 && a.cmd != RBDX_NBD_HELP && a.cmd != RBDX_NBD_VERSION)
    check_accepted (&a);
  rbdx_nbd_args_free (&a);
  CHECK (a.nparams == 0);
  return 0;
}

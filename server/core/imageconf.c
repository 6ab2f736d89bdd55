/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: what librbd applies to an open image beyond its data: its
 * effective configuration and its encryption (see imageconf.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/log.h"

#include "rbdx/imageconf.h"

int
rbdx_image_config (rbd_image_t image, rbd_config_option_t **opts, int *n)
{
  int max = 0, r;

  r = rbd_config_image_list (image, NULL, &max);
  if (r < 0 && r != -ERANGE)
    return r;
  *opts = calloc (max ? max : 1, sizeof **opts);
  if (!*opts)
    return -ENOMEM;
  r = rbd_config_image_list (image, *opts, &max);
  if (r < 0) {
    free (*opts);
    return r;
  }
  *n = max;
  return 0;
}

void
rbdx_image_config_free (rbd_config_option_t *opts, int n)
{
  rbd_config_image_list_cleanup (opts, n);
  free (opts);
}

/* Read the effective rbd_cache of the open image: an image-level
 * setting (rbd config image set ...) overrides what rbdx set on the
 * rados_t, so ask librbd what it uses.  librbd's persistent write-back
 * cache (rbd_persistent_cache_mode rwl or ssd) lives per handle too. */
int
rbdx_effective_cache (rbd_image_t image, const char *name, bool *on)
{
  rbd_config_option_t *opts;
  int max = 0, r, i;

  r = rbdx_image_config (image, &opts, &max);
  if (r == 0) {
    *on = false;
    for (i = 0; i < max; i++) {
      /* Ceph parses booleans as true/false, yes/no, on/off, 1/0 in any
       * case, and rbd_config_image_list returns the text as stored. */
      if (strcmp (opts[i].name, "rbd_cache") == 0 &&
          rbdx_parse_bool (opts[i].value) != 0) {
        *on = true;
        rbdx_debug ("rbdx: %s: rbd_cache is on: no multi-conn", name);
      }
      if (strcmp (opts[i].name, "rbd_persistent_cache_mode") == 0 &&
          strcmp (opts[i].value, "disabled") != 0) {
        *on = true;
        rbdx_debug ("rbdx: %s: rbd_persistent_cache_mode=%s (a per-handle "
                      "write-back cache): no multi-conn", name,
                      opts[i].value);
      }
    }
    rbdx_image_config_free (opts, max);
  }
  return r;
}

/* Load the LUKS key of @o's format with the first @len bytes of the
 * passphrase. */
static int
load_key (rbd_image_t image, const struct rbdx_options *o, size_t len)
{
  rbd_encryption_luks2_format_options_t luks2 = {
    RBD_ENCRYPTION_ALGORITHM_AES256, o->passphrase, len,
  };
  rbd_encryption_luks1_format_options_t luks1 = {
    RBD_ENCRYPTION_ALGORITHM_AES256, o->passphrase, len,
  };

  if (o->encryption == RBDX_ENCRYPTION_LUKS2)
    return rbd_encryption_load (image, RBD_ENCRYPTION_FORMAT_LUKS2, &luks2,
                                sizeof luks2);
  return rbd_encryption_load (image, RBD_ENCRYPTION_FORMAT_LUKS1, &luks1,
                              sizeof luks1);
}

/* Whether the passphrase with its final newline opened an image last
 * (see passphrase_nl in rbdx/options.h): that form is tried first, so
 * each later context derives the key once.  Before any success: the form
 * this host's `rbd encryption format` stores.  Ceph 18.0 (librbd 1.18,
 * "Reef" release notes: "Trailing newline in passphrase files ... is no
 * longer stripped") keeps the newline; earlier releases drop it. */
#ifndef LIBRBD_VERSION_CODE
#error "rbd/librbd.h defines no LIBRBD_VERSION_CODE"
#endif
#if LIBRBD_VERSION_CODE >= LIBRBD_VERSION (1, 18, 0)
static atomic_bool nl_first = true;
#else
static atomic_bool nl_first = false;
#endif

/* encryption_format=: every context, the shared writer's too, loads the
 * same LUKS key, so each sees the decrypted image (its size without the
 * LUKS header).  librbd 16.2 and 18.2: -EPERM for a wrong passphrase,
 * -EINVAL for an image without that format.  A passphrase file that ends
 * with a newline is tried without it (what Ceph 16.2's `rbd encryption
 * format` stored) and with it (Ceph 18.2's). */
int
rbdx_load_encryption (rbd_image_t image, const char *name,
                      const struct rbdx_options *o, char *err, size_t errlen)
{
  size_t len = o->passphrase_len;
  bool nl;
  int r;

  if (o->encryption == RBDX_ENCRYPTION_NONE)
    return 0;
  nl = o->passphrase_nl && atomic_load (&nl_first);
  r = load_key (image, o, len + nl);
  if (r == -EPERM && o->passphrase_nl) {
    nl = !nl;
    r = load_key (image, o, len + nl);
    if (r == 0)
      atomic_store (&nl_first, nl);
  }
  if (r == 0)
    return 0;
  if (r == -EPERM)
    snprintf (err, errlen, "image '%s': the passphrase in "
              "encryption_passphrase_file='%s' does not open its %s "
              "header", name, o->passphrase_file,
              o->encryption == RBDX_ENCRYPTION_LUKS2 ? "LUKS2" : "LUKS1");
  else if (r == -EINVAL)
    snprintf (err, errlen, "image '%s' is not %s-formatted (rbd encryption "
              "format) or cannot be decrypted here: %s", name,
              o->encryption == RBDX_ENCRYPTION_LUKS2 ? "LUKS2" : "LUKS1",
              strerror (-r));
  else
    snprintf (err, errlen, "image '%s': cannot load its encryption: %s",
              name, strerror (-r));
  return r;
}


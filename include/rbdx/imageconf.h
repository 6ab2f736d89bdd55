/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: what librbd applies to an open image beyond its data: its
 * effective configuration (the image's, the pool's and the client's
 * settings, by precedence), its cache and its encryption (imageconf.c).
 * Works on an rbd_image_t, knowing nothing of rbdx's contexts; ctx.c
 * and qos.c use it.
 */
#ifndef RBDX_IMAGECONF_H
#define RBDX_IMAGECONF_H

#include <stdbool.h>
#include <stddef.h>

#include <rbd/librbd.h>

#include "rbdx/options.h"

/** The configuration librbd applies to @p image, with its precedence
 * (image metadata over pool metadata over the client's): a heap array
 * of @p *n options, released with rbdx_image_config_free.
 * @return 0, -ENOMEM, or the negative errno of rbd_config_image_list.
 * Thread-safe. */
int rbdx_image_config (rbd_image_t image, rbd_config_option_t **opts,
                       int *n);

/** Release what rbdx_image_config returned. */
void rbdx_image_config_free (rbd_config_option_t *opts, int n);

/** Whether @p image has a per-handle cache in effect: rbd_cache (parsed
 * as Ceph parses booleans; unreadable counts as on) or a persistent
 * write-back cache (rbd_persistent_cache_mode other than disabled); the
 * debug log names the setting, @p name the image.
 * @return 0 with *on set, or the negative errno of rbdx_image_config. */
int rbdx_effective_cache (rbd_image_t image, const char *name, bool *on);

/** Load encryption_format= on @p image (named @p name in messages) with
 * the passphrase of @p o (rbd_encryption_load); no-op without
 * encryption_format=.
 * @return 0; -EPERM (wrong passphrase), -EINVAL (no such LUKS header) or
 *         another negative errno, with a message naming the image. */
int rbdx_load_encryption (rbd_image_t image, const char *name,
                          const struct rbdx_options *o, char *err,
                          size_t errlen);

#endif /* RBDX_IMAGECONF_H */

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
#include <stdint.h>

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

/** Whether this build can load @p o's encryption: several specs
 * (encryption_format= given more than once) need rbd_encryption_load2
 * (librbd 1.17, Ceph 17; meson's HAVE_RBD_ENCRYPTION_LOAD2).
 * @return 0, or -ENOTSUP with a message naming what is missing.  Pure. */
int rbdx_encryption_check (const struct rbdx_options *o, char *err,
                           size_t errlen);

/** The LUKS version (1 or 2) whose header @p image starts with (the
 * magic and version librbd and cryptsetup write, or librbd's "RBDL" of a
 * clone with a format of its own), read as raw bytes: for an image whose
 * encryption is not loaded.  Thread-safe; one read of 8 bytes.
 * @return 1 or 2; 0 when there is no LUKS header (or the image is
 *         shorter than one); a negative errno of rbd_read. */
int rbdx_luks_header_version (rbd_image_t image);

/** Load encryption_format= on @p image (opened through @p io, named @p
 * name in messages) with
 * the passphrases of @p o: one spec with rbd_encryption_load, several
 * (the image's own first, then its parents') with rbd_encryption_load2;
 * encryption_format=luks on the image's own spec reads the LUKS version
 * from the image's first 8 bytes first.  No-op without
 * encryption_format=.  Thread-safe; blocks on the cluster (and derives
 * each key: about a second of CPU for LUKS2).
 * @param sector  receives the crypto sector in bytes (512 for LUKS1, 4096
 *                for LUKS2: the image's own format), 0 without encryption.
 * @return 0; -EPERM (a wrong passphrase), -EINVAL (no such LUKS header),
 *         -ENOTSUP (several specs without rbd_encryption_load2) or
 *         another negative errno, with a message naming the image and the
 *         passphrase file that failed (never its contents): with several
 *         specs, the ancestors are opened read-only through @p io's
 *         cluster to tell which one. */
int rbdx_load_encryption (rados_ioctx_t io, rbd_image_t image,
                          const char *name, const struct rbdx_options *o,
                          uint32_t *sector, char *err, size_t errlen);

#endif /* RBDX_IMAGECONF_H */

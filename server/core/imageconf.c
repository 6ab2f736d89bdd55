/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: what librbd applies to an open image beyond its data: its
 * effective configuration and its encryption (see imageconf.h). */
#include <errno.h>
#include <inttypes.h>
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

/* The LUKS version in an image's first bytes: the magic "LUKS\xba\xbe",
 * or "RBDL\xba\xbe", which librbd writes in its place on a clone that
 * has a LUKS format of its own, then the version as a big-endian 16-bit
 * number, 1 or 2 (source: Ceph src/librbd/crypto/luks/Magic.cc and
 * cryptsetup's LUKS1 and LUKS2 on-disk format documents).  Read before
 * any encryption is loaded, so the bytes are the raw image's (on a clone
 * without a format of its own: its parent's, whose format it then
 * uses).  @return 0 with *f set, -ENOENT (no LUKS header), or the
 * negative errno of rbd_read. */
static int
detect_luks (rbd_image_t image, enum rbdx_encryption *f)
{
  unsigned char h[8];
  ssize_t n;

  n = rbd_read (image, 0, sizeof h, (char *) h);
  if (n == -EINVAL || (n >= 0 && n < (ssize_t) sizeof h))
    return -ENOENT;     /* shorter than a LUKS header */
  if (n < 0)
    return (int) n;
  if (memcmp (h, "LUKS\xba\xbe", 6) != 0 && memcmp (h, "RBDL\xba\xbe", 6) != 0)
    return -ENOENT;
  if (h[6] == 0 && h[7] == 1)
    *f = RBDX_ENCRYPTION_LUKS1;
  else if (h[6] == 0 && h[7] == 2)
    *f = RBDX_ENCRYPTION_LUKS2;
  else
    return -ENOENT;
  return 0;
}

int
rbdx_luks_header_version (rbd_image_t image)
{
  enum rbdx_encryption f;
  int r = detect_luks (image, &f);

  return r == -ENOENT ? 0 : r < 0 ? r : f == RBDX_ENCRYPTION_LUKS1 ? 1 : 2;
}

static const char *
format_name (enum rbdx_encryption f)
{
  switch (f) {
  case RBDX_ENCRYPTION_LUKS1: return "LUKS1";
  case RBDX_ENCRYPTION_LUKS2: return "LUKS2";
  default: return "LUKS";
  }
}

/* librbd's options of one spec; the passphrase is not copied. */
union spec_opts {
  rbd_encryption_luks1_format_options_t luks1;
  rbd_encryption_luks2_format_options_t luks2;
#ifdef HAVE_RBD_ENCRYPTION_LOAD2
  rbd_encryption_luks_format_options_t luks;
#endif
};

/* Fill @u for spec @e in format @f with the first @len bytes of its
 * passphrase.  @return librbd's format, *size the options' size. */
static int
spec_opts (const struct rbdx_encryption_spec *e, enum rbdx_encryption f,
           size_t len, union spec_opts *u, size_t *size)
{
  memset (u, 0, sizeof *u);
  switch (f) {
  case RBDX_ENCRYPTION_LUKS1:
    u->luks1 = (rbd_encryption_luks1_format_options_t) {
      RBD_ENCRYPTION_ALGORITHM_AES256, e->passphrase, len };
    *size = sizeof u->luks1;
    return RBD_ENCRYPTION_FORMAT_LUKS1;
  case RBDX_ENCRYPTION_LUKS2:
    u->luks2 = (rbd_encryption_luks2_format_options_t) {
      RBD_ENCRYPTION_ALGORITHM_AES256, e->passphrase, len };
    *size = sizeof u->luks2;
    return RBD_ENCRYPTION_FORMAT_LUKS2;
  default:
#ifdef HAVE_RBD_ENCRYPTION_LOAD2
    /* A parent's "luks": librbd reads its header (librbd 1.17's
     * RBD_ENCRYPTION_FORMAT_LUKS, which came with rbd_encryption_load2). */
    u->luks = (rbd_encryption_luks_format_options_t) { e->passphrase, len };
    *size = sizeof u->luks;
    return RBD_ENCRYPTION_FORMAT_LUKS;
#else
    return -ENOTSUP;
#endif
  }
}

/* Load the @n specs @e on @image, the image's own (e[0]) in format
 * @top, each passphrase with its final newline when bit i of @nl is
 * set. */
static int
load_keys (rbd_image_t image, const struct rbdx_encryption_spec *e, size_t n,
           enum rbdx_encryption top, unsigned nl)
{
  union spec_opts u[RBDX_ENCRYPTION_MAX];
  size_t size[RBDX_ENCRYPTION_MAX], i;
  int fmt[RBDX_ENCRYPTION_MAX], r;

  for (i = 0; i < n; i++) {
    fmt[i] = spec_opts (&e[i], i ? e[i].format : top,
                        e[i].passphrase_len + ((nl >> i) & 1), &u[i], &size[i]);
    if (fmt[i] < 0)
      return fmt[i];
  }
  if (n == 1)
    r = rbd_encryption_load (image, fmt[0], &u[0], size[0]);
  else {
#ifdef HAVE_RBD_ENCRYPTION_LOAD2
    rbd_encryption_spec_t specs[RBDX_ENCRYPTION_MAX];

    for (i = 0; i < n; i++)
      specs[i] = (rbd_encryption_spec_t) { fmt[i], &u[i], size[i] };
    r = rbd_encryption_load2 (image, specs, n);
#else
    r = -ENOTSUP;
#endif
  }
  explicit_bzero (u, sizeof u);
  return r;
}

/* The format of @image's own spec @f: "luks" is read from its header.
 * @return 0, -ENOENT (no LUKS header) or rbd_read's error. */
static int
own_format (rbd_image_t image, enum rbdx_encryption f,
            enum rbdx_encryption *top)
{
  *top = f;
  return f == RBDX_ENCRYPTION_LUKS ? detect_luks (image, top) : 0;
}

/* Which passphrases opened an image last with their final newline (bit
 * i: spec i; see passphrase_nl in rbdx/options.h): that combination is
 * tried first, so each later context derives every key once.  Before
 * any success: the form this host's `rbd encryption format` stores.
 * Ceph 18.0 (librbd 1.18, "Reef" release notes: "Trailing newline in
 * passphrase files ... is no longer stripped") keeps the newline;
 * earlier releases drop it. */
#ifndef LIBRBD_VERSION_CODE
#error "rbd/librbd.h defines no LIBRBD_VERSION_CODE"
#endif
#if LIBRBD_VERSION_CODE >= LIBRBD_VERSION (1, 18, 0)
static atomic_uint nl_last = ~0u;
#else
static atomic_uint nl_last = 0;
#endif

int
rbdx_encryption_check (const struct rbdx_options *o, char *err,
                       size_t errlen)
{
#ifndef HAVE_RBD_ENCRYPTION_LOAD2
  if (o->nenc > 1) {
    snprintf (err, errlen, "encryption_format= given %zu times (an image "
              "with a LUKS format of its own over an encrypted parent) needs "
              "rbd_encryption_load2, which this librbd (%d.%d) lacks: it came "
              "with librbd 1.17 (Ceph 17 \"Quincy\")", o->nenc,
              LIBRBD_VER_MAJOR, LIBRBD_VER_MINOR);
    return -ENOTSUP;
  }
#endif
  return 0;
}

/* Load @n specs @e on @image in format @top with every combination of
 * final newlines (only the passphrases whose file had one), @first
 * first.  @return 0 with *used the combination that worked, or the
 * error of the last try. */
static int
load_any_nl (rbd_image_t image, const struct rbdx_encryption_spec *e,
             size_t n, enum rbdx_encryption top, unsigned first,
             unsigned *used)
{
  unsigned bits = 0, nl;
  size_t i;
  int r;

  for (i = 0; i < n; i++)
    if (e[i].passphrase_nl)
      bits |= 1u << i;
  *used = first & bits;
  r = load_keys (image, e, n, top, *used);
  for (nl = 0; r == -EPERM && bits && nl <= bits; nl++) {
    if ((nl & ~bits) || nl == (first & bits))
      continue;
    r = load_keys (image, e, n, top, nl);
    if (r == 0)
      *used = nl;
  }
  return r;
}

/* After -EPERM from several specs on @image (opened through @io): which
 * one does not open its layer.  librbd does not say, so each ancestor
 * is opened in turn (read-only, at the snapshot its child hangs from,
 * rbd_get_parent) and given the specs from its own on: the first
 * ancestor they open shows that the spec above it is wrong; if none
 * does, the last spec is (it also covers every further ancestor).
 * @return the spec's index, or -1 when that cannot be told (an ancestor
 * that cannot be opened, another error). */
static int
wrong_spec (rados_ioctx_t io, rbd_image_t image, const struct rbdx_options *o)
{
  rados_ioctx_t cur_io = NULL, next_io;
  rbd_image_t cur = image, next;
  enum rbdx_encryption top;
  int found = (int) o->nenc - 1, r;
  unsigned used;
  size_t k;

  for (k = 1; k < o->nenc; k++) {
    rbd_linked_image_spec_t p;
    rbd_snap_spec_t snap;

    if (rbd_get_parent (cur, &p, &snap) < 0) {
      found = -1;
      break;
    }
    r = rados_ioctx_create (rados_ioctx_get_cluster (io), p.pool_name,
                            &next_io);
    if (r == 0) {
      rados_ioctx_set_namespace (next_io, p.pool_namespace);
      r = rbd_open_by_id_read_only (next_io, p.image_id, &next, NULL);
      if (r == 0 && (r = rbd_snap_set_by_id (next, snap.id)) < 0)
        rbd_close (next);
      if (r < 0)
        rados_ioctx_destroy (next_io);
    }
    rbd_linked_image_spec_cleanup (&p);
    rbd_snap_spec_cleanup (&snap);
    if (cur != image) {
      rbd_close (cur);
      rados_ioctx_destroy (cur_io);
    }
    cur = image;
    if (r < 0) {
      found = -1;
      break;
    }
    cur = next;
    cur_io = next_io;
    r = own_format (cur, o->enc[k].format, &top);
    if (r == 0)
      r = load_any_nl (cur, &o->enc[k], o->nenc - k, top,
                       atomic_load (&nl_last) >> k, &used);
    if (r == 0) {
      found = (int) k - 1;
      break;
    }
    if (r != -EPERM) {
      found = -1;
      break;
    }
  }
  if (cur != image) {
    rbd_close (cur);
    rados_ioctx_destroy (cur_io);
  }
  return found;
}

/* The passphrase files of @o, quoted and comma-separated, for messages. */
static void
file_list (const struct rbdx_options *o, char *buf, size_t len)
{
  size_t i, used = 0;

  buf[0] = '\0';
  for (i = 0; i < o->nenc && used < len; i++)
    used += snprintf (buf + used, len - used, "%s'%s'", i ? ", " : "",
                      o->enc[i].passphrase_file);
}

/* encryption_format=: every context, the shared writer's too, loads the
 * same LUKS keys, so each sees the decrypted image (its size without the
 * LUKS header).  librbd 16.2 and 18.2: -EPERM for a wrong passphrase,
 * -EINVAL for an image without that format.  A passphrase file that ends
 * with a newline is tried without it (what Ceph 16.2's `rbd encryption
 * format` stored) and with it (Ceph 18.2's): with several specs, every
 * combination, the last one that worked first. */
int
rbdx_load_encryption (rados_ioctx_t io, rbd_image_t image, const char *name,
                      const struct rbdx_options *o, uint32_t *sector,
                      char *err, size_t errlen)
{
  enum rbdx_encryption top;
  char files[1024];
  unsigned used;
  int r, k;

  *sector = 0;
  if (o->nenc == 0)
    return 0;
  r = rbdx_encryption_check (o, err, errlen);
  if (r < 0)
    return r;
  r = own_format (image, o->enc[0].format, &top);
  if (r == -ENOENT) {
    snprintf (err, errlen, "image '%s' has no LUKS header (LUKS1 or LUKS2, "
              "as `rbd encryption format` writes), as encryption_format=luks "
              "needs", name);
    return -EINVAL;
  }
  if (r < 0) {
    snprintf (err, errlen, "image '%s': cannot read its LUKS header: %s",
              name, strerror (-r));
    return r;
  }
  r = load_any_nl (image, o->enc, o->nenc, top, atomic_load (&nl_last),
                   &used);
  if (r == 0) {
    atomic_store (&nl_last, used);
    /* librbd's crypto sector is the header's (crypt_get_sector_size in
     * src/librbd/crypto/luks/LoadRequest.cc): 512 for LUKS1; for LUKS2
     * 4096 as `rbd encryption format` writes it, and never more in
     * LUKS2, so 4096-aligned requests need no read-modify-write.  Only
     * the image's own format counts: writes go to the image only (a
     * copy-up copies whole objects), and reads of a parent's data need
     * no alignment of their own. */
    *sector = top == RBDX_ENCRYPTION_LUKS1 ? 512 : 4096;
    rbdx_debug ("rbdx: %s: %s loaded (%zu encryption spec%s), %" PRIu32
                "-byte crypto sectors", name, format_name (top), o->nenc,
                o->nenc > 1 ? "s" : "", *sector);
    return 0;
  }
  k = r == -EPERM ? (o->nenc == 1 ? 0 : wrong_spec (io, image, o)) : -1;
  if (k >= 0)
    snprintf (err, errlen, "image '%s': the passphrase in "
              "encryption_passphrase_file='%s' does not open %s%s header",
              name, o->enc[k].passphrase_file,
              k == 0 ? "its " : k == 1 ? "its parent's " : "an ancestor's ",
              k == 0 ? format_name (top) : "LUKS");
  else if (r == -EPERM) {
    file_list (o, files, sizeof files);
    snprintf (err, errlen, "image '%s': the passphrases in "
              "encryption_passphrase_file= (%s: the image's own first, then "
              "its parents') do not open the LUKS headers of the image and "
              "its parents: one of them is wrong", name, files);
  }
  else if (r == -EINVAL && o->nenc == 1)
    snprintf (err, errlen, "image '%s' is not %s-formatted (rbd encryption "
              "format) or cannot be decrypted here: %s", name,
              format_name (top), strerror (-r));
  else if (r == -EINVAL)
    snprintf (err, errlen, "image '%s' (%s) or one of its parents is not "
              "formatted as encryption_format= says, or cannot be decrypted "
              "here: %s", name, format_name (top), strerror (-r));
  else
    snprintf (err, errlen, "image '%s': cannot load its encryption: %s",
              name, strerror (-r));
  return r;
}

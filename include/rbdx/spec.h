/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: image specs of the form [pool/[namespace/]]image[@snapshot].
 *
 * The grammar is the one the `rbd` CLI accepts for its image-spec and
 * snap-spec arguments (see rbd(8), "IMAGE, SNAP, GROUP AND JOURNAL
 * SPECS"): at most two '/' separators, at most one '@', and no empty
 * component.  Shared by the nbdkit plugin (plugin/) and the mapper
 * (server/).  Pure string handling: no librados, no allocation beyond
 * the strings owned by struct rbdx_spec.
 */
#ifndef RBDX_SPEC_H
#define RBDX_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Pool used when a spec names no pool (the default of `rbd_default_pool`). */
#define RBDX_DEFAULT_POOL "rbd"

/** A parsed image spec.  Every member is a NUL-terminated heap string
 * owned by the struct (free with rbdx_spec_free); ns and snap are NULL
 * when absent, pool and image are never NULL after a successful parse. */
struct rbdx_spec {
  char *pool;   /**< RADOS pool name. */
  char *ns;     /**< RADOS namespace, or NULL for the default namespace. */
  char *image;  /**< RBD image name. */
  char *snap;   /**< Snapshot name, or NULL for the image head. */
};

/** Does @p s hold a character no name or value may hold: a control
 * character (a C0 byte, DEL, or a C1 control U+0080 to U+009F in
 * UTF-8) or a byte that is not part of well-formed UTF-8 (RFC 3629: an
 * overlong form, a surrogate, a sequence cut short, 0xc0, 0xc1, 0xf5 to
 * 0xff; rbdx/utf8.h decides)?  The spec grammar refuses them
 * (rbdx_spec_parse): a newline or a carriage return would split the
 * lines of logs, state files and export lists, an escape sequence (ESC
 * [ or its one-character form U+009B, CSI) would reach a terminal, and
 * the NBD protocol (doc/proto.md: export names are UTF-8) and
 * Prometheus' text format want UTF-8.  Every check of a name or value
 * for such characters uses this one.  Pure, thread-safe. */
bool rbdx_spec_has_unsafe_char (const char *s);

/** Is @p name "." or ".."?  The spec grammar refuses either as a pool,
 * namespace, image or snapshot name (rbdx_spec_parse): the mapper makes
 * the canonical spec a path under its link directory (/dev/rbdx/SPEC), where
 * "." and ".." would name the directory itself or its parent.  Pure,
 * thread-safe. */
bool rbdx_spec_name_is_dots (const char *name);

/** Parse @p text into @p out.
 *
 * @param text          the spec, e.g. "img", "pool/img", "pool/ns/img@snap".
 * @param default_pool  pool used when @p text has no pool component
 *                      (NULL means RBDX_DEFAULT_POOL).
 * @param out           filled on success; untouched on failure.
 * @param why           on failure, set to a static English sentence
 *                      fragment naming the problem (may be NULL).
 * @return 0 on success; -EINVAL for a malformed spec (empty string or
 *         component, more than two '/', more than one '@', '@' in the
 *         pool or namespace part, a pool, namespace, image or snapshot
 *         name (@p default_pool included) that is "." or ".." or
 *         holds a character rbdx_spec_has_unsafe_char refuses, longer than
 *         RBDX_SPEC_MAX bytes in canonical form, i.e. with
 *         @p default_pool and '/' added when @p text names no pool, so
 *         that rbdx_spec_format's text always parses again);
 *         -ENOMEM when allocation fails.
 * Thread-safe (no shared state).
 */
int rbdx_spec_parse (const char *text, const char *default_pool,
                     struct rbdx_spec *out, const char **why);

/** Longest accepted spec, in bytes of its canonical form (excluding
 * the NUL): rbdx_spec_format never needs more than RBDX_SPEC_MAX + 1. */
#define RBDX_SPEC_MAX 1024

/** Print @p spec in canonical form "pool/[ns/]image[@snap]" into
 * @p buf of @p len bytes.
 * @return the length the full text needs (excluding the NUL), like
 *         snprintf; the output is truncated when that is >= @p len.
 * Thread-safe. */
size_t rbdx_spec_format (const struct rbdx_spec *spec, char *buf, size_t len);

/** Duplicate @p src into @p dst.  @return 0 or -ENOMEM (dst untouched). */
int rbdx_spec_copy (struct rbdx_spec *dst, const struct rbdx_spec *src);

/** Release the strings of @p spec and zero it.  Safe on a zeroed struct. */
void rbdx_spec_free (struct rbdx_spec *spec);

#ifdef __cplusplus
}
#endif

#endif /* RBDX_SPEC_H */

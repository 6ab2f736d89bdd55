/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the identity of an RBD image (or snapshot) as opposed to its name.
 *
 * A name is not an identity: `rbd rename`, `rbd trash mv` and a new
 * `rbd create` of an old name are ordinary operator actions, and an open
 * librbd handle keeps following its image by id through all of them.
 * What stays the same for the life of an image is the tuple
 * (pool id, RADOS namespace, image id, snapshot id): pool ids come from
 * rados_ioctx_get_id(3), image ids from rbd_get_id(3), snapshot ids from
 * rbd_snap_get_id(3); rbd_open_by_id(3) opens exactly that image (librbd
 * 16.2, checked on a sandbox cluster: see server/core/DESIGN.md).
 *
 * Everything rbdx shares between connections (the shared writer, the
 * size file, ...) is keyed by this tuple, never by a name.  Pure data and
 * string handling: no librados calls, no allocation.
 */
#ifndef RBDX_IDENTITY_H
#define RBDX_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** rbdx's snapshot id for an image's head.  Not a librbd value: Ceph's
 * own CEPH_NOSNAP is UINT64_MAX - 1 and CEPH_SNAPDIR UINT64_MAX, and no
 * real snapshot has either id, so rbdx_ident_parse refuses both. */
#define RBDX_NOSNAP UINT64_MAX

/** Longest RADOS namespace name rbdx handles, in bytes (without NUL). */
#define RBDX_NS_MAX 255
/** Longest image id, in bytes (without NUL); librbd's ids are ~12-16
 * hex digits, old format-1 images have none. */
#define RBDX_IMAGE_ID_MAX 63

/** Which image, or which snapshot of it. */
struct rbdx_ident {
  int64_t pool_id;                       /**< rados_ioctx_get_id. */
  char ns[RBDX_NS_MAX + 1];              /**< "" for the default namespace. */
  char image_id[RBDX_IMAGE_ID_MAX + 1];  /**< rbd_get_id. */
  uint64_t snap_id;                      /**< RBDX_NOSNAP for the head. */
};

/** Longest text rbdx_ident_format prints, in bytes with the NUL: a pool
 * id of up to 19 digits, a namespace and an image id each escaped to at
 * most three bytes a byte, a snapshot id of up to 20 digits.  Every
 * buffer that holds an identity's text (logs, the engine's control
 * answer, the mapper's state and backend string) has this size. */
#define RBDX_IDENT_TEXT_MAX 1024

/** True when @p a and @p b name the same image (or the same snapshot).
 * Thread-safe. */
bool rbdx_ident_equal (const struct rbdx_ident *a, const struct rbdx_ident *b);

/** Print @p id as "POOLID/[NS/]IMAGEID[@SNAPID]" (decimal ids, the
 * form used in logs, in the export description, in the engine's control
 * answer and by the mapper's state) into @p buf of @p len bytes
 * (RBDX_IDENT_TEXT_MAX always suffices).
 *
 * A RADOS namespace can hold any byte (a space, a newline, '@', '%'),
 * and a format-1 image's id is its name; so every byte of the namespace
 * and the image id outside [A-Za-z0-9._:+-] (and '/' in the namespace)
 * is printed as %XX, upper-case hex.  The text thus never holds a space
 * or a control character, and a reader that splits at whitespace gets
 * all of it or nothing that parses: it can never be cut into another
 * image's identity.  @return the length the full text needs, like
 * snprintf.  Thread-safe. */
size_t rbdx_ident_format (const struct rbdx_ident *id, char *buf, size_t len);

/** Parse the form rbdx_ident_format prints into @p out.  The pool id and
 * snapshot id are decimal (a snapshot id below UINT64_MAX - 1, Ceph's
 * reserved ids), the image id has no '/' or '@', the
 * namespace (optional) is everything between the first and the last '/'.
 * Only the text rbdx_ident_format would print for the result is
 * accepted (its escapes, upper-case hex, nothing escaped needlessly), so
 * one identity has one text and the mapper may compare texts.
 * @return 0; -EINVAL for malformed or non-canonical text, an escaped NUL,
 *         or a part too long (@p out is then untouched).  Thread-safe. */
int rbdx_ident_parse (const char *text, struct rbdx_ident *out);

#ifdef __cplusplus
}
#endif

#endif /* RBDX_IDENTITY_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: a string from outside the program (an option value, a file
 * name, a name the cluster or a client sent) made safe for a log line.
 * Pure (no librados); part of librbdx-common, so the plugin, the engine
 * and the mapper share this one escaping. */
#ifndef RBDX_PRINTABLE_H
#define RBDX_PRINTABLE_H

#include <stddef.h>

/** @p in for a log line, written into @p out (@p len bytes, at least
 * 1; truncated to fit, at a whole escape or character): control
 * characters (0x00 to 0x1f, 0x7f, and the C1 controls U+0080 to U+009F
 * in UTF-8), every byte that is not part of well-formed UTF-8 (a raw
 * 0x9b is CSI to an 8-bit terminal; rbdx/utf8.h decides) and '\\' as \xHH, so that a hostile
 * name can neither split nor forge a line nor send terminal escapes;
 * other UTF-8 is kept.  A message worded
 * by our own code around such values (the err text of a parser) may be
 * passed whole: its wording holds none of these bytes, so only the
 * values change.  @p len of 4 times the input's length plus 1 keeps
 * it whole.
 * @return @p out.  Thread-safe. */
const char *rbdx_printable (const char *in, char *out, size_t len);

/** As rbdx_printable, but '\\' is left as it is: for a whole message
 * at the point where it is printed (the mapper's die() and its log),
 * whose values may be escaped already (by rbdx_printable or the
 * mapper's quoting of image specs): raw control characters still
 * become \xHH, and a second pass changes nothing.
 * @return @p out.  Thread-safe. */
const char *rbdx_printable_line (const char *in, char *out, size_t len);

/** As rbdx_printable, and ' ' as \x20 too: for one column of a table
 * that scripts split on blanks (`rbdx list-mapped`), where an image
 * name holding a space would shift every later column.
 * @return @p out.  Thread-safe. */
const char *rbdx_printable_field (const char *in, char *out, size_t len);

#endif /* RBDX_PRINTABLE_H */

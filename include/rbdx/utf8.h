/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the one reader of UTF-8 for names and values from outside
 * the program.  Pure (no librados, no allocation); part of
 * librbdx-common, so the name checks (rbdx/spec.h), the escaping of log
 * lines (rbdx/printable.h) and the metrics labels share it. */
#ifndef RBDX_UTF8_H
#define RBDX_UTF8_H

#include <stddef.h>

/** The length in bytes (1 to 4) of the printable character at @p p, or
 * 0 when there is none there: 1 for ASCII 0x20 to 0x7e; 2 to 4 for a
 * well-formed UTF-8 sequence (RFC 3629 section 4: no overlong form, no
 * surrogate U+D800 to U+DFFF, nothing above U+10FFFF) that is not a C1
 * control (U+0080 to U+009F: a terminal may take U+009B for CSI, as it
 * takes ESC [) nor a bidirectional formatting character (U+061C,
 * U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069: they reorder the
 * text after them when shown); 0 for the NUL that ends the string, a
 * C0 control (0x01 to 0x1f), DEL, a C1 control, a bidirectional
 * formatting character, and a byte that starts no
 * well-formed sequence (a lone continuation byte, 0xc0, 0xc1, 0xf5 to
 * 0xff, or a sequence cut short, by the NUL too).
 * Reads no byte past the NUL of @p p.  Pure, thread-safe. */
size_t rbdx_utf8_char (const char *p);

#endif /* RBDX_UTF8_H */

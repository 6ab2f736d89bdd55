/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: strings from outside made safe for a log line (see
 * printable.h). */
#include <stdbool.h>
#include <stdio.h>

#include "rbdx/printable.h"
#include "rbdx/utf8.h"

static const char *
escape (const char *in, char *out, size_t len, bool backslash, bool space)
{
  const unsigned char *p = (const unsigned char *) in;
  size_t o = 0;

  /* Each character goes in whole or not at all: 1 byte, a UTF-8
   * sequence of 2 to 4, or 4 for \xHH, and one more for the '\0'
   * always.  A control character or a byte of no well-formed sequence
   * (rbdx_utf8_char) is escaped byte by byte. */
  while (*p) {
    unsigned char c = *p;
    size_t n = rbdx_utf8_char ((const char *) p);

    if (n == 0 || (backslash && c == '\\') ||
        (space && c == ' ')) {
      if (o + 4 >= len)
        break;
      o += snprintf (out + o, len - o, "\\x%02x", c);
      p++;
    }
    else {
      if (o + n >= len)
        break;
      for (size_t i = 0; i < n; i++)
        out[o++] = (char) *p++;
    }
  }
  out[o] = '\0';
  return out;
}

const char *
rbdx_printable (const char *in, char *out, size_t len)
{
  return escape (in, out, len, true, false);
}

const char *
rbdx_printable_line (const char *in, char *out, size_t len)
{
  return escape (in, out, len, false, false);
}

const char *
rbdx_printable_field (const char *in, char *out, size_t len)
{
  return escape (in, out, len, true, true);
}

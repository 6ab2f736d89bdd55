/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: strings from outside made safe for a log line (see
 * printable.h). */
#include <stdbool.h>
#include <stdio.h>

#include "rbdx/printable.h"

/* The length (2 to 4) of the well-formed UTF-8 sequence at @p p (RFC
 * 3629: no overlong form, no surrogate, nothing above U+10FFFF), or 0
 * when it is not one or encodes a C1 control (U+0080 to U+009F: a
 * terminal may take U+009B for CSI, as it takes ESC [). */
static size_t
utf8_len (const unsigned char *p)
{
  unsigned char lo = 0x80, hi = 0xbf;
  size_t n;

  if (p[0] >= 0xc2 && p[0] <= 0xdf)
    n = 2, lo = p[0] == 0xc2 ? 0xa0 : 0x80;
  else if (p[0] >= 0xe0 && p[0] <= 0xef)
    n = 3, lo = p[0] == 0xe0 ? 0xa0 : 0x80, hi = p[0] == 0xed ? 0x9f : 0xbf;
  else if (p[0] >= 0xf0 && p[0] <= 0xf4)
    n = 4, lo = p[0] == 0xf0 ? 0x90 : 0x80, hi = p[0] == 0xf4 ? 0x8f : 0xbf;
  else
    return 0;
  if (p[1] < lo || p[1] > hi)
    return 0;
  for (size_t i = 2; i < n; i++)
    if (p[i] < 0x80 || p[i] > 0xbf)
      return 0;
  return n;
}

static const char *
escape (const char *in, char *out, size_t len, bool backslash, bool space)
{
  const unsigned char *p = (const unsigned char *) in;
  size_t o = 0;

  /* Each character goes in whole or not at all: 1 byte, a UTF-8
   * sequence of 2 to 4, or 4 for \xHH, and one more for the '\0'
   * always.  A byte of no well-formed sequence is escaped alone. */
  while (*p) {
    unsigned char c = *p;
    size_t n = c >= 0x80 ? utf8_len (p) : 1;

    if (n == 0 || c < 0x20 || c == 0x7f || (backslash && c == '\\') ||
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

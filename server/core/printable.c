/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: strings from outside made safe for a log line (see
 * printable.h). */
#include <stdbool.h>
#include <stdio.h>

#include "rbdx/printable.h"

static const char *
escape (const char *in, char *out, size_t len, bool backslash, bool space)
{
  size_t o = 0;

  /* Each byte goes in whole or not at all: 1 byte, or 4 for \xHH, and
   * one more for the '\0' always. */
  for (; *in; in++) {
    unsigned char c = *in;

    if (c < 0x20 || c == 0x7f || (backslash && c == '\\') ||
        (space && c == ' ')) {
      if (o + 4 >= len)
        break;
      o += snprintf (out + o, len - o, "\\x%02x", c);
    }
    else {
      if (o + 1 >= len)
        break;
      out[o++] = c;
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

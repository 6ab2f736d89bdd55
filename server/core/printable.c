/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: strings from outside made safe for a log line (see
 * printable.h). */
#include <stdbool.h>
#include <stdio.h>

#include "rbdx/printable.h"

static const char *
escape (const char *in, char *out, size_t len, bool backslash)
{
  size_t o = 0;

  for (; *in && o + 5 < len; in++) {
    unsigned char c = *in;

    if (c < 0x20 || c == 0x7f || (backslash && c == '\\'))
      o += snprintf (out + o, len - o, "\\x%02x", c);
    else
      out[o++] = c;
  }
  out[o] = '\0';
  return out;
}

const char *
rbdx_printable (const char *in, char *out, size_t len)
{
  return escape (in, out, len, true);
}

const char *
rbdx_printable_line (const char *in, char *out, size_t len)
{
  return escape (in, out, len, false);
}

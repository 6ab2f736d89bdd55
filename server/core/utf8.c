/* SPDX-License-Identifier: BSD-3-Clause */
/* rbdx core: the printable characters of UTF-8 text (see
 * include/rbdx/utf8.h). */
#include "rbdx/utf8.h"

size_t
rbdx_utf8_char (const char *s)
{
  const unsigned char *p = (const unsigned char *) s;
  unsigned char lo = 0x80, hi = 0xbf;
  size_t n;

  if (p[0] < 0x80)
    return p[0] >= 0x20 && p[0] != 0x7f ? 1 : 0;
  /* The second byte's range excludes what the lead byte cannot start
   * (RFC 3629 section 4): the C1 controls after 0xc2, overlong forms
   * after 0xe0 and 0xf0, surrogates after 0xed, beyond U+10FFFF after
   * 0xf4.  A NUL fails every range, so a cut sequence stops there. */
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

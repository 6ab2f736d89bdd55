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
  /* The bidirectional formatting characters (Unicode UAX #9: ALM
   * U+061C, LRM and RLM U+200E-U+200F, the embeddings and overrides
   * U+202A-U+202E, the isolates U+2066-U+2069) reorder what follows
   * them on a terminal or in a log viewer: a name holding U+202E can
   * make a log line read as another. */
  if ((p[0] == 0xd8 && p[1] == 0x9c) ||
      (p[0] == 0xe2 && p[1] == 0x80 &&
       (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae))) ||
      (p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9))
    return 0;
  return n;
}

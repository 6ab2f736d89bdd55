/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/fuzz/fuzz-check.h: what the libFuzzer harnesses of tests/fuzz
 * share: CHECK, an oracle's assertion that aborts (so libFuzzer keeps
 * the input), and has_control.  Header-only; built by tests/fuzz/run. */
#ifndef RBDX_TESTS_FUZZ_CHECK_H
#define RBDX_TESTS_FUZZ_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/** Abort naming the harness's file, line and @p cond when it is false. */
#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf (stderr, "%s:%d: check failed: %s\n",                     \
               __FILE__, __LINE__, #cond);                              \
      abort ();                                                         \
    }                                                                   \
  } while (0)

/** Whether @p s holds a control character (below 0x20, or DEL). */
static inline bool
has_control (const char *s)
{
  for (; *s; s++)
    if ((unsigned char) *s < 0x20 || *s == 0x7f)
      return true;
  return false;
}

#endif

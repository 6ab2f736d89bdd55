/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness: the plugin's parameters (include/rbdx/options.h,
 * server/core/options.c).
 *
 * Input: the first byte picks the size of the error buffer (512 as the
 * plugin uses, 24, or 1); the rest is lines, each a parameter as nbdkit
 * hands it to .config: "key=value", or a bare word, which nbdkit gives
 * as image=word (the plugin's magic_config_key).  At most 64 lines.
 * Every line goes through rbdx_options_set, then rbdx_options_complete
 * runs, then rbdx_options_free.  Checked:
 *   - every call returns 0, -EINVAL or -ENOMEM; an error always leaves
 *     a message (when the buffer has room for one), NUL-terminated
 *     inside the buffer, and nothing is written past the buffer;
 *   - after a successful rbdx_options_complete an image or a pool is
 *     set and the image spec fits RBDX_SPEC_MAX in canonical form;
 *   - rbdx_options_free zeroes everything; nothing leaks
 *     (LeakSanitizer), nothing is read or written out of bounds.
 * Paths in conf=, keyring= and size_file= are only stat(2)ed and
 * access(2)ed by rbdx_options_complete.  Built and run by tests/fuzz/run.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/options.h"
#include "fuzz-check.h"

#define MAX_PARAMS 64
#define CANARY 0x5a
#define SLACK 16

/* The buffer holds errlen bytes and SLACK canary bytes after them. */
static void
check_result (int r, const char *err, size_t errlen)
{
  size_t i;

  CHECK (r == 0 || r == -EINVAL || r == -ENOMEM);
  for (i = errlen; i < errlen + SLACK; i++)
    CHECK ((unsigned char) err[i] == CANARY);
  CHECK (memchr (err, '\0', errlen) != NULL);
  if (r < 0 && errlen > 1)
    CHECK (err[0] != '\0');
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const size_t errlens[] = { 512, 24, 1 };
  struct rbdx_options o = { 0 }, zero;
  char *input, *line, *next, *eq, err[512 + SLACK];
  size_t errlen, nparams = 0;
  int r;

  if (size == 0)
    return 0;
  memset (&zero, 0, sizeof zero);
  errlen = errlens[data[0] % 3];
  input = malloc (size);
  if (!input)
    return 0;
  memcpy (input, data + 1, size - 1);
  input[size - 1] = '\0';   /* an embedded NUL ends the input early */

  for (line = input; line && nparams < MAX_PARAMS; line = next, nparams++) {
    const char *key, *value;

    next = strchr (line, '\n');
    if (next)
      *next++ = '\0';
    eq = strchr (line, '=');
    if (eq) {
      *eq = '\0';
      key = line;
      value = eq + 1;
    }
    else {
      key = "image";
      value = line;
    }
    memset (err, CANARY, sizeof err);
    r = rbdx_options_set (&o, key, value, err, errlen);
    check_result (r, err, errlen);
  }

  memset (err, CANARY, sizeof err);
  r = rbdx_options_complete (&o, err, errlen);
  check_result (r, err, errlen);
  if (r == 0) {
    CHECK (o.spec.image || o.pool);
    if (o.spec.image) {
      CHECK (o.spec.pool != NULL);
      CHECK (rbdx_spec_format (&o.spec, NULL, 0) <= RBDX_SPEC_MAX);
    }
    CHECK (rbdx_options_id (&o) != NULL);
  }

  rbdx_options_free (&o);
  CHECK (memcmp (&o, &zero, sizeof o) == 0);
  free (input);
  return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness: the cephx id of $CEPH_ARGS and the id check
 * (include/rbdx/cephargs.h, server/core/cephargs.c).
 *
 * Input: the first byte picks the size of the id buffer (249 as
 * rbdx_options_complete uses, 4, 1 or 0) and of the message buffer
 * (256, 24, 1 or 0); the rest, up to an embedded NUL, is $CEPH_ARGS.
 * Checked:
 *   - rbdx_ceph_args_id returns 1, 0, -EINVAL or -ENAMETOOLONG; with 1
 *     the id is NUL-terminated inside its buffer and is a part of the
 *     input holding no space; otherwise it is "" (when there is room);
 *     an error leaves a message (when the buffer has room for one),
 *     none is left on success; nothing is written past either buffer;
 *   - rbdx_cephx_id_check of an id found returns 0, -EINVAL or
 *     -ENAMETOOLONG, and 0 only for a non-empty id without control
 *     characters or '/'.
 * Built and run by tests/fuzz/run.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rbdx/cephargs.h"
#include "fuzz-check.h"

#define CANARY 0x5a
#define SLACK 16

static void
check_canaries (const char *buf, size_t len)
{
  size_t i;

  for (i = len; i < len + SLACK; i++)
    CHECK ((unsigned char) buf[i] == CANARY);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const size_t idlens[] = { RBDX_CEPHX_ID_MAX + 1, 4, 1, 0 };
  static const size_t whylens[] = { 256, 24, 1, 0 };
  char id[RBDX_CEPHX_ID_MAX + 1 + SLACK], why[256 + SLACK], *args;
  size_t idlen, whylen;
  int r, c;

  if (size == 0)
    return 0;
  idlen = idlens[data[0] & 3];
  whylen = whylens[(data[0] >> 2) & 3];
  args = malloc (size);
  if (!args)
    return 0;
  memcpy (args, data + 1, size - 1);
  args[size - 1] = '\0';

  memset (id, CANARY, sizeof id);
  memset (why, CANARY, sizeof why);
  r = rbdx_ceph_args_id (args, idlen ? id : NULL, idlen,
                         whylen ? why : NULL, whylen);
  CHECK (r == 1 || r == 0 || r == -EINVAL || r == -ENAMETOOLONG);
  check_canaries (id, idlen);
  check_canaries (why, whylen);
  if (whylen) {
    CHECK (memchr (why, '\0', whylen) != NULL);
    CHECK ((r < 0) == (why[0] != '\0') || whylen == 1);
  }
  if (idlen) {
    CHECK (memchr (id, '\0', idlen) != NULL);
    if (r != 1)
      CHECK (id[0] == '\0');
  }
  if (r == 1 && idlen) {
    CHECK (strchr (id, ' ') == NULL);
    CHECK (strstr (args, id) != NULL);
    memset (why, CANARY, sizeof why);
    c = rbdx_cephx_id_check (id, why, 256);
    CHECK (c == 0 || c == -EINVAL || c == -ENAMETOOLONG);
    check_canaries (why, 256);
    if (c == 0)
      CHECK (*id && !has_control (id) && !strchr (id, '/'));
  }
  free (args);
  return 0;
}

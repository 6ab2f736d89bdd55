#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C13 (tests/README.md): exports image@snap and
# nbdkit -r; WRITE 64 KiB at 0, TRIM, WRITE_ZEROES with strict mode
# off: the handshake shows read-only, each write-type request gets
# NBD_EPERM after its payload is consumed and a following read works
# (C program readonly-writes).  `rbd export` shows the image and the
# snapshot unchanged.
. "$RBDX_TESTS/lib.sh"
requires_cluster
d=$(tmpdir)
img=$(new_image 8M)
truncate -s 8M "$d/seed"
put_pattern "$d/seed" 0 $((128 << 10)) 5a
import_into "$img" "$d/seed"
rbd snap create --no-progress "$img@snap" >/dev/null

prog=$(test_prog cases/readonly-writes)
say "export $img@snap"
with_export "$img@snap" "$prog \$uri" ||
  fail "readonly-writes failed on $img@snap"
say "export $img with nbdkit -r"
with_export -r "$img" "$prog \$uri" ||
  fail "readonly-writes failed on nbdkit -r"

for s in "$img" "$img@snap"; do
  rbd export --no-progress "$s" "$d/exported" >/dev/null
  cmp "$d/exported" "$d/seed" || fail "$s changed"
  rm -f "$d/exported"
done

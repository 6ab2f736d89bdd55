#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C08 (tests/README.md): an 8 MiB image filled with 0x78
# (by `rbd import`); WRITE_ZEROES of 65024 bytes at 0 without NO_HOLE
# zeroes exactly [0, 65024); WRITE_ZEROES with FAST_ZERO succeeds fast
# or fails with NBD_ENOTSUP, never slow.  The C program zero-unaligned
# does the NBD side; `rbd export` must then match what it expects.
. "$RBDX_TESTS/lib.sh"
requires_cluster
d=$(tmpdir)
img=$(new_image 8M)
pattern_file "$d/seed" $((8 << 20)) 78
import_into "$img" "$d/seed"

prog=$(test_prog cases/zero-unaligned)
with_export "$img" "$prog \$uri $d/expected" || fail "zero-unaligned failed"
rbd export --no-progress "$img" "$d/exported" >/dev/null
cmp "$d/exported" "$d/expected" ||
  fail "rbd export differs from the expected image"

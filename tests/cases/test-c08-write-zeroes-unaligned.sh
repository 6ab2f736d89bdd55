#!/usr/bin/env bash
# Case C08 (../shared/cases/README.md): an 8 MiB image filled with 0x78
# (by `rbd import`); WRITE_ZEROES of 65024 bytes at 0 without NO_HOLE
# zeroes exactly [0, 65024); WRITE_ZEROES with FAST_ZERO succeeds fast
# or fails with NBD_ENOTSUP, never slow.  The C program zero-unaligned
# does the NBD side; `rbd export` must then match what it expects.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/cases/cases-lib.sh"
requires_cluster
keep d tmpdir
keep img new_image 8M
pattern_file "$d/seed" $((8 << 20)) 78
import_into "$img" "$d/seed"

nbdkit -U - "$RBDX_PLUGIN" "$img" \
  --run "$RBDX_BUILD/tests/cases/zero-unaligned \$uri $d/expected" ||
  fail "zero-unaligned failed"
rbd export --no-progress "$img" "$d/exported" >/dev/null
cmp "$d/exported" "$d/expected" ||
  fail "rbd export differs from the expected image"

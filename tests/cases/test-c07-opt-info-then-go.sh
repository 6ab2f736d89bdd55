#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C07 (tests/README.md), first half: NBD_OPT_INFO for
# export X, then NBD_OPT_GO for export Y; GO must report Y's size and
# flags (NBD doc/proto.md, NBD_OPT_INFO / NBD_OPT_GO).  X is a name rbdx
# refuses ("rbd/other") or "" (the served image); Y is the image's
# canonical name "rbd/IMAGE"; also GO for a refused name after a good
# INFO must fail.  Run on a writable and on a read-only (-r) server so
# the flags GO reports differ between the runs.
. "$RBDX_TESTS/lib.sh"
requires_cluster
prog=$(test_prog cases/opt-info-go)

img=$(new_image 24M)
size=$(image_size "$img")
[ "$size" = 25165824 ] || fail "rbd info says $img has $size bytes"

say "writable server"
with_export "$img" "$prog \$uri $img $size 0" ||
  fail "INFO then GO on a writable export"
say "read-only server (nbdkit -r)"
with_export -r "$img" "$prog \$uri $img $size 1" ||
  fail "INFO then GO on a read-only export"

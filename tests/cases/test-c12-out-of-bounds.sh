#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C12 (tests/README.md): with client strict mode off,
# read 4096 @ size-2048 -> NBD_EINVAL, write 4096 @ size-2048 ->
# NBD_ENOSPC, read of length 0, then read 512 @ size-512 succeeds; no
# disconnect (C program bounds).  The image's tail is checked with
# `rbd export` afterwards: the refused write changed nothing.
. "$RBDX_TESTS/lib.sh"
requires_cluster
d=$(tmpdir)
img=$(new_image 8M)

prog=$(test_prog cases/bounds)
with_export "$img" "$prog \$uri" || fail "bounds failed"
rbd export --no-progress "$img" "$d/exported" >/dev/null
[ "$(stat -c %s "$d/exported")" = $((8 << 20)) ] || fail "image size changed"
if tail -c 2048 "$d/exported" | od -An -tx1 | grep -q ' ee ee ee ee'; then
  fail "the refused write reached the image"
fi

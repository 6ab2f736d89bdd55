#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C09 (tests/README.md): on an 8 GiB sparse image, 512
# bytes of 0x55 at 3 GiB, WRITE_ZEROES of 0xFFFFF000 bytes at 0, TRIM of
# 0xFFFFF000 bytes at 4 GiB: the bytes at 3 GiB read as zero, no
# overflow, no disconnect (C program zero-huge).
. "$RBDX_TESTS/lib.sh"
requires_cluster
img=$(new_image 8G)

prog=$(test_prog cases/zero-huge)
with_export "$img" "$prog \$uri" || fail "zero-huge failed"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C10 (tests/README.md): a 1000-byte image, not a
# multiple of 512.  Filled with known data through NBD (nbdcopy), then
# `qemu-img map --output=json`, `nbdinfo --map` and `nbdcopy` to a file
# all succeed; the copy equals `rbd export`; the extents cover exactly
# [0, 1000).
# QEMU rounds an NBD export's size up to 512 bytes and synthesises the
# padding [1000, 1024) itself as zero: qemu-img map must report the
# server's [0, 1000) as data and only that padding as zero.
# Covers: NBD doc/proto.md "NBD_CMD_BLOCK_STATUS" (extents may not go
# past the end of the export), "NBD_OPT_INFO and NBD_OPT_GO" (export
# size), block size minimum 1 (rbdx.c rbdx_block_size).
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/clients/common.sh"
requires_cluster
requires nbdcopy nbdinfo qemu-img cmp

d=$(tmpdir)
size=1000
img=$(new_image "${size}B")
[ "$(image_size "$img")" = "$size" ] ||
  fail "rbd create --size ${size}B did not make a $size-byte image"
head -c "$size" /dev/urandom >"$d/src"

serve "$d/sock" -- "$img"
u=$(uri "$d/sock")

say "nbdinfo: size $size"
got=$(nbdinfo --size "$u") || fail "nbdinfo --size failed"
expect_same "nbdinfo --size" "$size" "$got"

say "never written: one hole"
nbdinfo --map "$u" >"$d/map0" || fail "nbdinfo --map on the empty image failed"
got=$(nbdinfo_map "$d/map0" "$size") || fail "nbdinfo --map extents do not cover [0, $size)"
expect_same "nbdinfo --map, empty image" "0 $size hole,zero" "$got"
qemu-img map -f raw --output=json "$u" >"$d/map0.json" || fail "qemu-img map on the empty image failed"
got=$(qemu_map "$d/map0.json" 1024) || fail "qemu-img map extents are malformed"
expect_same "qemu-img map, empty image" "0 1024 zero" "$got"

say "fill through NBD with nbdcopy"
nbdcopy "$d/src" "$u" || fail "nbdcopy file -> export failed"

say "nbdinfo --map"
nbdinfo --map "$u" >"$d/map" || fail "nbdinfo --map failed"
cat "$d/map" >&2
got=$(nbdinfo_map "$d/map" "$size") || fail "nbdinfo --map extents do not cover [0, $size)"
expect_same "nbdinfo --map" "0 $size data" "$got"
nbdinfo --map --totals "$u" >"$d/totals" || fail "nbdinfo --map --totals failed"
got=$(nbdinfo_totals "$d/totals" "$size") || fail "nbdinfo --map --totals does not add up to $size"
expect_same "nbdinfo --map --totals" "$size data" "$got"

say "qemu-img map --output=json"
qemu-img map -f raw --output=json "$u" >"$d/map.json" || fail "qemu-img map failed"
cat "$d/map.json" >&2
got=$(qemu_map "$d/map.json" 1024) || fail "qemu-img map extents are malformed"
expect_same "qemu-img map" "0 $size data
$size 24 zero" "$got"

say "nbdcopy export -> file"
nbdcopy "$u" "$d/copy" || fail "nbdcopy export -> file failed"
stop_server "$d/sock"

rbd export --no-progress "$img" "$d/export" >&2
[ "$(stat -c %s "$d/copy")" = "$size" ] || fail "nbdcopy wrote $(stat -c %s "$d/copy") bytes, expected $size"
cmp "$d/export" "$d/copy" || fail "nbdcopy copy differs from rbd export"
cmp "$d/src" "$d/copy" || fail "nbdcopy copy differs from the data written"

say "ok"

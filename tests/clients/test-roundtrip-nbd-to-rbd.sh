#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Data written through an rbdx export by real NBD clients is what the
# rbd CLI exports afterwards: nbdcopy (file -> URI, over an image
# pre-filled with other bytes, with a sparse all-zero middle that
# nbdcopy sends as zeroing requests) and then `qemu-io write -P` patterns
# at offsets that are aligned, unaligned, straddle an object boundary,
# and touch the odd-sized end of the image.
# Covers: WRITE / WRITE_ZEROES (rbdx_pwrite, rbdx_zero), NBD
# doc/proto.md "NBD_CMD_WRITE", "NBD_CMD_WRITE_ZEROES".
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires nbdcopy qemu-io cmp

d=$(tmpdir)
M=$((1024 * 1024))
size=$((10 * M + 4097))

# Source: random, a 3 MiB sparse hole at [4 MiB, 7 MiB) (spanning the
# object boundary at 4 MiB only from its start), random again.
head -c $((4 * M)) /dev/urandom >"$d/src"
truncate -s $((7 * M)) "$d/src"
head -c $((size - 7 * M)) /dev/urandom >>"$d/src"
[ "$(stat -c %s "$d/src")" = "$size" ] || fail "bad source size"

img=$(new_image "${size}B")
serve "$d/sock" -- "$img"
u=$(uri "$d/sock")

say "pre-fill with 0xee so that zeroed ranges must really be written"
qemu-io -f raw -c "write -P 0xee 0 $size" "$u" >/dev/null || fail "pre-fill failed"

say "nbdcopy file -> $u"
nbdcopy "$d/src" "$u" || fail "nbdcopy failed"
cp "$d/src" "$d/expected"

say "qemu-io patterns"
# OFFSET LENGTH BYTE
writes=(
  "0 512 a1"                      # aligned start
  "1 1 a2"                        # one byte, unaligned
  "4095 2 a3"                     # across a 4 KiB boundary
  "65537 3000 a4"                 # unaligned offset and length
  "$((4 * M - 100)) 200 a5"       # straddles the 4 MiB object boundary
  "$((5 * M + 7)) 70000 a6"       # inside the zeroed hole
  "$((8 * M - 1)) $((M + 2)) a7"  # object boundary, > 1 MiB, unaligned
  "$((size - 4097)) 4097 a8"      # the odd tail, up to the very end
  "$((size - 1)) 1 a9"            # the last byte
)
args=()
for w in "${writes[@]}"; do
  set -- $w
  args+=(-c "write -P 0x$3 $1 $2")
  put_pattern "$d/expected" "$1" "$2" "$3"
done
qemu-io -f raw "${args[@]}" "$u" >"$d/qemu-io.log" ||
  { cat "$d/qemu-io.log" >&2; fail "qemu-io writes failed"; }
[ "$(stat -c %s "$d/expected")" = "$size" ] || fail "expected file grew"

stop_server "$d/sock"

say "rbd export"
rbd export --no-progress "$img" "$d/export" >&2
cmp "$d/expected" "$d/export" || fail "rbd export differs from what was written through NBD"
say "ok"

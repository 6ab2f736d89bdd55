#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `nbdinfo --map` and `nbdinfo --map --totals` (NBD_CMD_BLOCK_STATUS,
# base:allocation) show what is allocated in the image, per whole RBD
# object, and the extents tile [0, size) exactly:
#   - written objects are "data", never-written ones "hole,zero";
#   - a snapshot export shows the snapshot's allocation, not the head's
#     later writes and discards;
#   - a clone (snap create + protect + clone) shows the parent's
#     objects as data (rbd_diff_iterate2 with include_parent) beside
#     its own writes;
#   - an image without fast-diff (--image-feature layering) is all data.
# Covers: NBD doc/proto.md "NBD_CMD_BLOCK_STATUS", "base:allocation
# metadata context"; plugin/rbdx.c rbdx_extents, server/core/ctx.c
# rbdx_ctx_extents; plugin docs "BLOCK_STATUS".
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/clients/common.sh"
requires_cluster
requires nbdinfo qemu-io

d=$(tmpdir)
M=$((1024 * 1024))
O=$((4 * M))

# check_map LABEL IMAGE SIZE EXPECTED-MAP EXPECTED-TOTALS [NBDKIT-OPTS...]
check_map() {
  local label=$1 img=$2 size=$3 map=$4 totals=$5 got
  shift 5
  with_export "$@" "$img" "nbdinfo --map \$uri >'$d/map' &&
                           nbdinfo --map --totals \$uri >'$d/totals'" ||
    fail "$label: nbdinfo --map or --map --totals failed"
  cat "$d/map" >&2
  got=$(nbdinfo_map "$d/map" "$size") || fail "$label: nbdinfo --map extents are malformed"
  expect_same "$label: nbdinfo --map" "$map" "$got"
  got=$(nbdinfo_totals "$d/totals" "$size" | sort) ||
    fail "$label: nbdinfo --map --totals is malformed"
  expect_same "$label: nbdinfo --map --totals" "$(sort <<<"$totals")" "$got"
}

# write_nbd IMAGE QEMU-IO-COMMAND...: write through an rbdx export.
write_nbd() {
  local img=$1 c q=""
  shift
  for c in "$@"; do q+=" -c '$c'"; done
  with_export "$img" "qemu-io -f raw $q \"\$uri\" >/dev/null" ||
    fail "qemu-io$q on $img failed"
}

say "plain image: objects 0, 3, 5 written (0 and 5 partly)"
size=$((6 * O))
img=$(new_image "${size}B")
write_nbd "$img" "write -P 0x01 100 4096" "write -P 0x03 $((3 * O)) $O" \
  "write -P 0x05 $((size - 10)) 10"
# What the snapshot below must keep showing.
plain_map="0 $O data
$O $((2 * O)) hole,zero
$((3 * O)) $O data
$((4 * O)) $O hole,zero
$((5 * O)) $O data"
plain_totals="$((3 * O)) data
$((3 * O)) hole,zero"
check_map plain "$img" "$size" "$plain_map" "$plain_totals"

say "snapshot export: head changes after the snapshot do not show"
rbd snap create --no-progress "$img@s1" >&2
write_nbd "$img" "write -P 0x11 $O 512" "discard $((3 * O)) $O"
check_map head "$img" "$size" "0 $((2 * O)) data
$((2 * O)) $((3 * O)) hole,zero
$((5 * O)) $O data" "$plain_totals"
check_map snapshot "$img@s1" "$size" "$plain_map" "$plain_totals"
check_map "snapshot, nbdkit -r" "$img@s1" "$size" "$plain_map" \
  "$plain_totals" -r

say "clone: the parent's objects are data in the child"
psize=$((4 * O))
parent=$(new_image "${psize}B")
write_nbd "$parent" "write -P 0x21 0 $M" "write -P 0x22 $((2 * O + 5)) 7"
rbd snap create --no-progress "$parent@base" >&2
rbd snap protect "$parent@base" >&2
child=$parent-child
# lib.sh removes images newest first (the child before its parent) and
# unprotects snapshots before purging them.
own_image "$child"
rbd clone "$parent@base" "$child" >&2
write_nbd "$child" "write -P 0x23 $((3 * O)) 4096"
check_map clone "$child" "$psize" "0 $O data
$O $O hole,zero
$((2 * O)) $((2 * O)) data" "$((3 * O)) data
$O hole,zero"
with_export -r "$child" "qemu-io -f raw -r -c 'read -P 0x21 0 $M' -c 'read -P 0x22 $((2 * O + 5)) 7' \
  -c 'read -P 0x23 $((3 * O)) 4096' -c 'read -P 0 $O $O' \"\$uri\" >/dev/null" ||
  fail "clone does not read back the parent's and its own data"

say "no fast-diff (--image-feature layering): all data"
lsize=$((3 * O))
limg=$(new_image "${lsize}B" --image-feature layering)
write_nbd "$limg" "write -P 0x31 $O 4096"
check_map layering "$limg" "$lsize" "0 $lsize data" "$lsize data"

say "ok"

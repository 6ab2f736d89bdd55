#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# QEMU's NBD client drives every write-type command rbdx advertises
# through `nbd+unix:///?socket=...` URIs, and QEMU's tools see the result:
#   qemu-io write -P / read -P, write -z (WRITE_ZEROES with NO_HOLE),
#   write -z -u (WRITE_ZEROES, may punch), discard (TRIM), flush,
#   write -f (FUA), eight aio_write in flight then aio_flush;
#   qemu-img map --output=json: a written object is data, a never
#   written, a discarded and a zeroed-with-unmap object are zero;
#   qemu-img info: raw, right virtual size;
#   qemu-img compare: equal to a local file built from the same writes,
#   and the first differing byte is found after one byte is changed.
# Covers: NBD doc/proto.md "NBD_CMD_WRITE" (FUA), "NBD_CMD_WRITE_ZEROES"
# (NO_HOLE), "NBD_CMD_TRIM", "NBD_CMD_FLUSH", "NBD_CMD_BLOCK_STATUS";
# plugin/rbdx.c rbdx_pwrite/rbdx_zero/rbdx_trim/rbdx_flush/rbdx_extents.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/clients/common.sh"
requires_cluster
requires qemu-io qemu-img

d=$(tmpdir)
M=$((1024 * 1024))
O=$((4 * M))                    # object size (order 22, the default)
size=$((5 * O))
img=$(new_image "${size}B")
serve "$d/sock" -- "$img"
u=$(uri "$d/sock")
truncate -s "$size" "$d/expected"

# qio ARGS...: run qemu-io on the export; print its output if it fails
# (qemu-io exits 1 when any command, e.g. a pattern check, failed).
qio() {
  local out
  if ! out=$(qemu-io -f raw "$@" "$u" 2>&1) || grep -q -i 'fail' <<<"$out"; then
    printf '%s\n' "$out" >&2
    fail "qemu-io $*"
  fi
}

say "write -P / read -P"
qio -c "write -P 0x11 0 $M" -c "read -P 0x11 0 $M"
put_pattern "$d/expected" 0 $M 11

say "write -z (NO_HOLE): aligned and unaligned, neighbours untouched"
qio -c "write -z 4096 8192" -c "read -P 0 4096 8192" \
    -c "read -P 0x11 0 4096" -c "read -P 0x11 12288 4096" \
    -c "write -z 100001 333" -c "read -P 0 100001 333" \
    -c "read -P 0x11 100000 1" -c "read -P 0x11 100334 1"
put_pattern "$d/expected" 4096 8192 00
put_pattern "$d/expected" 100001 333 00

say "write -z -u (may unmap) inside an object"
qio -c "write -z -u 65536 65536" -c "read -P 0 65536 65536" \
    -c "read -P 0x11 65535 1" -c "read -P 0x11 131072 1"
put_pattern "$d/expected" 65536 65536 00

say "write -f (FUA), flush"
qio -c "write -f -P 0x22 $((2 * M)) 65536" -c "flush" \
    -c "write -f -P 0x23 $((2 * M + 65536 + 3)) 1000" \
    -c "read -P 0x22 $((2 * M)) 65536" -c "read -P 0x23 $((2 * M + 65539)) 1000"
put_pattern "$d/expected" $((2 * M)) 65536 22
put_pattern "$d/expected" $((2 * M + 65539)) 1000 23

say "eight aio_write in flight, then aio_flush"
args=()
for i in 1 2 3 4 5 6 7 8; do
  off=$((3 * M + i * 8192 + (i % 2) * 7)); len=$((4096 + i * 100))
  args+=(-c "aio_write -P 0x3$i $off $len")
  put_pattern "$d/expected" "$off" "$len" "3$i"
done
qio "${args[@]}" -c "aio_flush"
# Read back on a new connection.
args=()
for i in 1 2 3 4 5 6 7 8; do
  off=$((3 * M + i * 8192 + (i % 2) * 7)); len=$((4096 + i * 100))
  args+=(-c "read -P 0x3$i $off $len")
done
qio "${args[@]}"

say "object 2 written then discarded; object 3 written then zeroed with unmap"
qio -c "write -P 0x44 $((2 * O)) $O" -c "read -P 0x44 $((2 * O)) $O" \
    -c "write -P 0x55 $((3 * O)) $O" -c "flush"
# librbd removes a wholly discarded object, so it reads back as zero
# (TRIM in general need not zero; for whole RBD objects it does).
qio -c "discard $((2 * O)) $O" -c "read -P 0 $((2 * O)) $O" \
    -c "write -z -u $((3 * O)) $O" -c "read -P 0 $((3 * O)) $O"

say "object 4: one FUA byte at the very end"
qio -c "write -f -P 0x66 $((size - 1)) 1" -c "read -P 0x66 $((size - 1)) 1" \
    -c "read -P 0 $((4 * O)) $((O - 1))"
put_pattern "$d/expected" $((size - 1)) 1 66

say "qemu-img map --output=json"
qemu-img map -f raw --output=json "$u" >"$d/map.json" || fail "qemu-img map failed"
got=$(qemu_map "$d/map.json" "$size") || fail "qemu-img map extents are malformed"
expect_same "qemu-img map" "0 $O data
$O $((3 * O)) zero
$((4 * O)) $O data" "$got"

say "qemu-img info"
qemu-img info "$u" >&2 || fail "qemu-img info failed"
qemu-img info --output=json "$u" >"$d/info.json" || fail "qemu-img info --output=json failed"
got=$(python3 -c 'import json,sys; i=json.load(open(sys.argv[1])); print(i["format"], i["virtual-size"])' "$d/info.json")
expect_same "qemu-img info" "raw $size" "$got"

say "qemu-img compare"
qemu-img compare -f raw -F raw "$u" "$d/expected" >&2 ||
  fail "qemu-img compare: the export differs from the expected file"
bad=$((3 * M + 5 * 8192 + 7 + 17))       # inside aio write 5
printf '\x99' | dd of="$d/expected" bs=1 seek=$bad conv=notrunc status=none
rc=0
out=$(qemu-img compare -f raw -F raw "$u" "$d/expected" 2>&1) || rc=$?
[ "$rc" = 1 ] || { echo "$out" >&2; fail "qemu-img compare exit $rc after a changed byte, expected 1"; }
# qemu-img compare names the 512-byte sector holding the first difference.
grep -q "offset $((bad / 512 * 512))!" <<<"$out" ||
  { echo "$out" >&2; fail "qemu-img compare did not name the sector of offset $bad"; }

stop_server "$d/sock"
say "ok"

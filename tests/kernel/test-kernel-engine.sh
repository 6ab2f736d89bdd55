#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-kernel-engine: the Linux kernel NBD client on the built-in engine
# (server/rbdx-engine): the real engine's transmission loop answers the
# kernel's requests (READ, WRITE with and without FUA, FLUSH, TRIM) over 4
# connections, and the data is in the image.
#
# The guest cannot reach the cluster, so the engine runs on the host with
# its --oldstyle test hook behind the relay, and the guest's mapper maps
# the image spec with the engine's stand-in (tests/kernel/standin-engine):
# it negotiates each connection with the host's engine and relays bytes
# unchanged (see its header).  So the mapper, the supervisor's control
# protocol and the kernel all run as with the real engine, and every
# request the kernel sends is parsed and answered by the real engine.
#
# Asserts:
#   - rbdx map --connections 4 SPEC (engine by default) gives /dev/nbd0 of
#     the image's size with 4 connections to the host's engine, and the
#     engine got --control and the spec;
#   - ext4: files written, synced, caches dropped, read back by sha256;
#   - fio randwrite 4-64 KiB, 16 in flight, verify=crc32c, direct I/O,
#     with fsync every 32 writes (FLUSH), on a raw region;
#   - blkdiscard of 8 MiB (whole objects): reads back as zeros;
#   - unmap: the engine's connections end and the engine logs no error;
#   - on the host: e2fsck of the exported image is clean, debugfs finds the
#     files with the guest's sums, and the raw region has the guest's sum.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/kernel/lib-uml.sh"
uml_requires
requires_cluster
requires e2fsck debugfs sha256sum
mapper=$(uml_mapper map)

img=$(new_image 256M)
uml_setup
sock="$UML_DIR/engine.sock"
serve_engine "$sock" -- "$img"
uml_bridge "$sock"
uml_guest_mount "$(dirname "$mapper")"
uml_guest_mount "$RBDX_BUILD/tests/kernel"
uml_guest_env NBD_EXPORT="$img" MAPPER="$mapper" IMG_BYTES=$((256 << 20)) \
  STANDIN_ENGINE="$(cd "$RBDX_BUILD/tests/kernel" && pwd -P)/standin-engine"

cat >"$UML_DIR/guest-engine.sh" <<'EOF2'
load_nbd
export RBDX_ENGINE=$STANDIN_ENGINE
dev=$("$MAPPER" map --connections 4 "$NBD_EXPORT") || fail "rbdx map failed"
[ "$dev" = /dev/nbd0 ] || fail "map printed $dev"
[ "$(dev_bytes nbd0)" -eq "$IMG_BYTES" ] || fail "nbd0 is $(dev_bytes nbd0) bytes"
four() { [ "$(tcp_conns "$NBD_PORT")" -eq 4 ]; }
wait_until 10 four || fail "$(tcp_conns "$NBD_PORT") connections to the engine, expected 4"
grep -qx -- --control /share/engine-args || fail "the engine got no --control: $(cat /share/engine-args)"
grep -qx "image=$NBD_EXPORT" /share/engine-args || fail "the engine did not get image=SPEC"

mkfs.ext4 -q -F -b 4096 /dev/nbd0 128M
mkdir -p /mnt/fs
mount /dev/nbd0 /mnt/fs
mkdir -p /mnt/fs/data
for sz in 4096 65537 1048576 5000000; do
  head -c "$sz" /dev/urandom >"/mnt/fs/data/file-$sz"
done
(cd /mnt/fs && find data -type f | sort | xargs sha256sum) >/share/sums
sync
umount /mnt/fs
echo 3 >/proc/sys/vm/drop_caches
mount /dev/nbd0 /mnt/fs
(cd /mnt/fs && sha256sum -c --quiet /share/sums) || fail "checksums differ after remount"
umount /mnt/fs

# Raw region [160 MiB, 224 MiB): writes with FLUSHes, verified.
fio --name=region --filename=/dev/nbd0 --offset=160M --size=64M \
    --rw=randwrite --bsrange=4k-64k --direct=1 --ioengine=libaio --iodepth=16 \
    --fsync=32 --verify=crc32c --do_verify=1 --verify_fatal=1 \
    --output=/share/fio.txt || { cat /share/fio.txt; fail "fio verify failed"; }
grep -q 'err= 0' /share/fio.txt || { cat /share/fio.txt; fail "fio reported errors"; }
dd if=/dev/nbd0 bs=1M skip=160 count=64 iflag=direct status=none | sha256sum |
  cut -d' ' -f1 >/share/region.sha

# TRIM of whole 4 MiB objects at [232 MiB, 240 MiB) after writing them.
dd if=/dev/urandom of=/dev/nbd0 bs=1M seek=232 count=8 oflag=direct status=none
blkdiscard -f -o $((232 << 20)) -l $((8 << 20)) /dev/nbd0 || fail "blkdiscard failed"
[ "$(dd if=/dev/nbd0 bs=1M skip=232 count=8 iflag=direct status=none | tr -d '\0' | wc -c)" -eq 0 ] ||
  fail "the discarded range does not read as zeros"

"$MAPPER" unmap /dev/nbd0 || fail "unmap failed"
gone() { [ "$(tcp_conns "$NBD_PORT")" -eq 0 ]; }
wait_until 10 gone || fail "connections left after unmap"
dmesg | grep -E "I/O error|Buffer I/O" && fail "the kernel logged I/O errors"
say "ok"
EOF2

uml_run "$UML_DIR/guest-engine.sh" 400
grep -E 'WRITE:|READ:' "$UML_SHARE/fio.txt" >&2 2>/dev/null || true
! grep -q "error" "$sock.log" || fail "the engine logged errors: $(grep error "$sock.log" | head -5)"

say "checking the image on the host"
raw="$UML_DIR/image.raw"
rbd export --no-progress "$img" "$raw" >/dev/null
e2fsck -fn "$raw" >"$UML_DIR/e2fsck.log" 2>&1 ||
  { cat "$UML_DIR/e2fsck.log" >&2; fail "e2fsck found errors in the exported image"; }
while read -r sum path; do
  got=$(debugfs -R "cat /$path" "$raw" 2>/dev/null | sha256sum | cut -d' ' -f1)
  [ "$got" = "$sum" ] || fail "$path differs in the image"
done <"$UML_SHARE/sums"
[ "$(dd if="$raw" bs=1M skip=160 count=64 status=none | sha256sum | cut -d' ' -f1)" = \
  "$(cat "$UML_SHARE/region.sha")" ] || fail "the raw region differs in the image"
say "ok: the kernel's requests through the built-in engine reached the image"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-kernel-resize: an rbdx image grown with `rbd resize` while the kernel
# NBD client has it mapped (4 connections, ext4 mounted) becomes usable in
# full on the mapped device, without unmapping.  Growth only; README C11
# covers a shrink for NBD clients.
#
# The kernel learns a new size only when someone reconfigures the device
# (NBD_CMD_RECONFIGURE with NBD_ATTR_SIZE_BYTES over netlink, as rbd-nbd
# does); nbd-client 3.24 cannot.  And nbdkit bounds every request by the size
# its connection negotiated, so the device's existing connections must also
# be replaced by ones that negotiated the new size before I/O past the old
# end works.  Both are the mapper's job, so the test needs it:
#   $RBDX_MAPPER (default $RBDX_BUILD/server/rbdx), run inside the guest as
#     MAPPER map --device /dev/nbd0 --connections 4 --io-timeout 60 \
#                --reattach-timeout 120 nbd://HOST:PORT/EXPORT
#     (configures the device, prints it, leaves a supervisor running)
#     MAPPER unmap /dev/nbd0
# and skips with "needs the rbdx mapper's resize support" without it.
#
# This is the NBD URI path (the server is not the mapper's own, so every
# connection is replaced before the size grows); the image-spec path, where
# the mapper's server publishes the size and no connection is replaced, is
# in test-kernel-mapper.
# Asserts, after `rbd resize` from 256 MiB to 512 MiB on the host:
#   - /sys/block/nbd0/size follows within 30 s, and 4 connections are up
#     (the mapper may replace them; it must not lose any);
#   - a direct read of the last 4 KiB of the device succeeds and is zeros
#     (I/O past the old end reaches the server);
#   - online resize2fs grows the mounted ext4 to 512 MiB, a file written
#     afterwards and the files written before keep their sha256 sums across
#     umount, dropped caches and mount; e2fsck -fn is clean;
#   - on the host, `rbd export` is a clean 512 MiB ext4 with the guest's UUID.
# Covers: README "When the image is resized", case C11 (growth, kernel side).
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/kernel/lib-uml.sh"
uml_requires
requires_cluster
requires e2fsck dumpe2fs
mapper=$(uml_mapper resize)

img=$(new_image 256M)
uml_setup
sock="$UML_DIR/nbd.sock"
uml_serve "$sock" "$img"
uml_bridge "$sock"
uml_guest_mount "$(dirname "$mapper")"
uml_guest_env NBD_EXPORT="$img" MAPPER="$mapper" \
  OLD_BYTES=$((256 << 20)) NEW_BYTES=$((512 << 20))

cat >"$UML_DIR/guest-resize.sh" <<'EOF'
load_nbd
"$MAPPER" map --device /dev/nbd0 --connections 4 --io-timeout 60 \
  --reattach-timeout 120 "nbd://$NBD_HOST:$NBD_PORT/$NBD_EXPORT"
[ "$(dev_bytes nbd0)" -eq "$OLD_BYTES" ] || fail "nbd0 is $(dev_bytes nbd0) bytes, not $OLD_BYTES"
mkfs.ext4 -q -F -b 4096 /dev/nbd0
mkdir -p /mnt/fs
mount /dev/nbd0 /mnt/fs
head -c $((8 << 20)) /dev/urandom >/mnt/fs/before
sync
step mapped
wait_host resized 60

size_is_new() { [ "$(dev_bytes nbd0)" -eq "$NEW_BYTES" ]; }
wait_until 30 size_is_new || fail "nbd0 is still $(dev_bytes nbd0) bytes 30 s after the resize"
say "nbd0 is now $(dev_bytes nbd0) bytes"
four_conns() { [ "$(tcp_conns "$NBD_PORT")" -eq 4 ]; }
wait_until 30 four_conns || fail "$(tcp_conns "$NBD_PORT") connections after the resize, expected 4"
blockdev --getsize64 /dev/nbd0
# The new end must be reachable, and a grown RBD image reads zeros there.
dd if=/dev/nbd0 of=/tmp/tail bs=4096 skip=$(( NEW_BYTES / 4096 - 1 )) count=1 \
  iflag=direct status=none || fail "reading the last 4 KiB of the grown device failed"
[ "$(stat -c %s /tmp/tail)" -eq 4096 ] || fail "short read at the end of the grown device"
cmp -s /tmp/tail <(head -c 4096 /dev/zero) || fail "the grown area does not read as zeros"

resize2fs /dev/nbd0 || fail "online resize2fs failed"
blocks=$(dumpe2fs -h /dev/nbd0 2>/dev/null | sed -n 's/^Block count: *//p')
[ "$blocks" -eq $(( NEW_BYTES / 4096 )) ] || fail "ext4 has $blocks blocks after resize2fs"
head -c $((8 << 20)) /dev/urandom >/mnt/fs/after
(cd /mnt/fs && sha256sum before after) >/share/sums
umount /mnt/fs
e2fsck -fn /dev/nbd0 || fail "e2fsck found errors after the online resize"
blockdev --flushbufs /dev/nbd0
echo 3 >/proc/sys/vm/drop_caches
mount /dev/nbd0 /mnt/fs
(cd /mnt/fs && sha256sum -c --quiet /share/sums) || fail "checksums differ after remount"
umount /mnt/fs
dumpe2fs -h /dev/nbd0 2>/dev/null | sed -n 's/^Filesystem UUID: *//p' >/share/fs-uuid
"$MAPPER" unmap /dev/nbd0
dev_gone() { [ "$(dev_bytes nbd0)" -eq 0 ]; }
wait_until 10 dev_gone || fail "nbd0 still has a size after unmap"
EOF

uml_boot "$UML_DIR/guest-resize.sh"
uml_wait_step mapped 120
say "growing $img to 512 MiB"
rbd resize --no-progress --size 512M "$img"
uml_signal resized
uml_finish 300

raw="$UML_DIR/image.raw"
rbd export --no-progress "$img" "$raw" >/dev/null
[ "$(stat -c %s "$raw")" -eq $((512 << 20)) ] || fail "exported image is $(stat -c %s "$raw") bytes"
e2fsck -fn "$raw" >"$UML_DIR/e2fsck.log" 2>&1 || { cat "$UML_DIR/e2fsck.log" >&2; fail "e2fsck found errors in the exported image"; }
blocks=$(dumpe2fs -h "$raw" 2>/dev/null | sed -n 's/^Block count: *//p')
[ "$blocks" -eq $(( (512 << 20) / 4096 )) ] || fail "exported ext4 has $blocks blocks"
uuid=$(dumpe2fs -h "$raw" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p')
[ "$uuid" = "$(cat "$UML_SHARE/fs-uuid")" ] || fail "exported image has UUID '$uuid', the guest's is '$(cat "$UML_SHARE/fs-uuid")'"
say "ok: the mapped device grew to 512 MiB and ext4 was resized online"

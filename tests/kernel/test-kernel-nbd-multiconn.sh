#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-kernel-nbd-multiconn: the Linux kernel NBD client (nbd.ko of Debian's
# user-mode-linux 6.1, configured by nbd-client 3.24 over netlink) attaches
# an rbdx export of a default-feature image (exclusive-lock, object-map,
# fast-diff) with 4 connections and keeps an ext4 file system and raw-device
# data intact end to end.
#
# Asserts:
#   - nbd-client -C 4 succeeds (the kernel refuses more than one connection
#     unless the export advertises multi-conn), the device has the image's
#     size, and 4 TCP connections are established (counted in the guest and
#     at the relay in the namespace);
#   - mkfs.ext4, mount, files written with sha256 sums, umount, dropped
#     caches, mount again: every sum matches;
#   - fio randwrite with verify=crc32c (direct I/O) on a region outside the
#     file system passes (dd + sha256 if the guest has no fio);
#   - nbd-client -d detaches: size 0, all connections closed;
#   (Not asserted: that all 4 connections carry I/O.  The UML guest has one
#   CPU, hence one blk-mq queue, and nbd.ko sends every request on the
#   connection of its queue; the test logs the bytes per connection.)
#   - on the host, `rbd export` of the image is a clean ext4 (e2fsck -fn,
#     same UUID as in the guest), debugfs reads every file with the guest's
#     sums, and the raw region has the checksum the guest computed.
# Covers: README "Attach it" (nbd-client -C 4), multi-conn advertisement.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/kernel/lib-uml.sh"
uml_requires
requires_cluster
requires e2fsck dumpe2fs debugfs sha256sum

img=$(new_image 256M)
uml_setup
sock="$UML_DIR/nbd.sock"
uml_serve "$sock" "$img"
uml_bridge "$sock"
uml_guest_env NBD_EXPORT="$img" IMG_BYTES=$((256 << 20))

cat >"$UML_DIR/guest-multiconn.sh" <<'EOF'
load_nbd
nbd-client "$NBD_HOST" "$NBD_PORT" /dev/nbd0 -N "$NBD_EXPORT" -C 4 -b 4096 -t 60 ||
  fail "nbd-client -C 4 failed"
[ "$(dev_bytes nbd0)" -eq "$IMG_BYTES" ] || fail "nbd0 is $(dev_bytes nbd0) bytes, not $IMG_BYTES"
n=$(tcp_conns "$NBD_PORT")
[ "$n" -eq 4 ] || fail "$n connections to the server, expected 4"
nbd-client -c /dev/nbd0 || fail "nbd-client -c: nbd0 not connected"
step mapped
wait_host counted 60

# ext4 on the first 160 MiB; the rest is the raw region for fio.
mkfs.ext4 -q -F -b 4096 /dev/nbd0 160M
mkdir -p /mnt/fs
mount /dev/nbd0 /mnt/fs
mkdir -p /mnt/fs/data/small
for sz in 4096 102400 1048576 3145851 8388608; do
  head -c "$sz" /dev/urandom >"/mnt/fs/data/file-$sz"
done
for i in $(seq 100); do
  head -c $(( (i * 997) % 8192 + 1 )) /dev/urandom >"/mnt/fs/data/small/$i"
done
(cd /mnt/fs && find data -type f | sort | xargs sha256sum) >/share/sums
umount /mnt/fs
blockdev --flushbufs /dev/nbd0
echo 3 >/proc/sys/vm/drop_caches
mount /dev/nbd0 /mnt/fs
(cd /mnt/fs && sha256sum -c --quiet /share/sums) || fail "checksums differ after remount"
umount /mnt/fs
dumpe2fs -h /dev/nbd0 2>/dev/null | sed -n 's/^Filesystem UUID: *//p' >/share/fs-uuid

# Raw region [192 MiB, 256 MiB).
if command -v fio >/dev/null; then
  fio --name=region --filename=/dev/nbd0 --offset=192M --size=64M \
      --rw=randwrite --bsrange=4k-64k --direct=1 --ioengine=libaio --iodepth=16 \
      --verify=crc32c --do_verify=1 --verify_fatal=1 --output=/share/fio.txt ||
    { cat /share/fio.txt; fail "fio verify failed"; }
  grep -q 'err= 0' /share/fio.txt || { cat /share/fio.txt; fail "fio reported errors"; }
else
  head -c $((64 << 20)) /dev/urandom >/tmp/region
  dd if=/tmp/region of=/dev/nbd0 bs=1M seek=192 oflag=direct conv=fsync status=none
  echo 3 >/proc/sys/vm/drop_caches
  [ "$(dd if=/dev/nbd0 bs=1M skip=192 count=64 iflag=direct status=none | sha256sum)" = \
    "$(sha256sum </tmp/region)" ] || fail "raw region differs"
fi
dd if=/dev/nbd0 bs=1M skip=192 count=64 iflag=direct status=none | sha256sum |
  cut -d' ' -f1 >/share/region.sha
step io-done
wait_host sampled 60

nbd-client -d /dev/nbd0
for i in $(seq 100); do
  [ "$(dev_bytes nbd0)" -eq 0 ] && [ "$(tcp_conns "$NBD_PORT")" -eq 0 ] && break
  sleep 0.1
done
[ "$(dev_bytes nbd0)" -eq 0 ] || fail "nbd0 still has a size after nbd-client -d"
[ "$(tcp_conns "$NBD_PORT")" -eq 0 ] || fail "connections left after nbd-client -d"
EOF

uml_boot "$UML_DIR/guest-multiconn.sh"
uml_wait_step mapped 120
n=$(uml_host_conns)
say "the relay sees $n established connections"
[ "$n" -eq 4 ] || fail "the relay sees $n connections, expected 4"
uml_signal counted
uml_wait_step io-done 300
# For the log only: how the kernel spread the I/O over the connections.  A
# UML guest has one CPU, so blk-mq gives nbd one hardware queue and every
# request goes to the first connection; the others carry only the handshake.
say "bytes received per connection: $(ip netns exec "$UML_NS" ss -Htni state established \
  "( sport = :$UML_PORT )" | grep -o 'bytes_received:[0-9]*' | cut -d: -f2 | tr '\n' ' ')"
uml_signal sampled
uml_finish 300
grep -E 'WRITE:|READ:' "$UML_SHARE/fio.txt" >&2 2>/dev/null || true

say "checking the image on the host"
raw="$UML_DIR/image.raw"
rbd export --no-progress "$img" "$raw" >/dev/null
e2fsck -fn "$raw" >"$UML_DIR/e2fsck.log" 2>&1 || { cat "$UML_DIR/e2fsck.log" >&2; fail "e2fsck found errors in the exported image"; }
uuid=$(dumpe2fs -h "$raw" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p')
if [ -z "$uuid" ] || [ "$uuid" != "$(cat "$UML_SHARE/fs-uuid")" ]; then
  fail "exported image has file system UUID '$uuid', the guest made '$(cat "$UML_SHARE/fs-uuid")'"
fi
nfiles=0
while read -r sum path; do
  got=$(debugfs -R "cat /$path" "$raw" 2>/dev/null | sha256sum | cut -d' ' -f1)
  [ "$got" = "$sum" ] || fail "$path in the exported image has sha256 $got, the guest wrote $sum"
  nfiles=$((nfiles + 1))
done <"$UML_SHARE/sums"
[ "$nfiles" -eq 105 ] || fail "checked $nfiles files, expected 105"
region=$(dd if="$raw" bs=1M skip=192 count=64 status=none | sha256sum | cut -d' ' -f1)
[ "$region" = "$(cat "$UML_SHARE/region.sha")" ] ||
  fail "raw region of the exported image differs from what the guest read"
say "ok: 4 connections, ext4 + $nfiles files and the fio region verified in the guest and in rbd export"

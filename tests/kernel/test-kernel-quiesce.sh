#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-kernel-quiesce: quiesce=true with the kernel's NBD client and a
# real filesystem freeze: ext4 on /dev/nbd0 (4 connections to the
# built-in engine), a writer keeping dirty page cache, and `rbd snap
# create` on the host meanwhile.
#
# The engine runs on the host (--oldstyle, behind the relay, as in
# test-kernel-engine.sh); its hook runs on the host too, so the hook
# asks the guest to freeze (/share/host.freeze) and waits until the guest
# ran `fsfreeze -f` (step frozen), then the same for the thaw.  The
# freeze writes the dirty data back through the engine while the hook
# runs: if writes were held before the hook, fsfreeze would never end,
# the hook would time out and the snapshot would fail.
#
# The hook's DEVICE comes from the guest's mapper: `rbdx map --quiesce`
# gives its server quiesce_device_file= in its private directory and
# writes /dev/nbd0 there once the kernel picked the device; the stand-in
# engine links /share/quiesce-device to that file, which the host's
# engine reads (quiesce_device_file=).
#
# Asserts:
#   - the mapper gave its server quiesce_device_file= and wrote
#     "/dev/nbd0" there;
#   - rbd snap create succeeds; the hook ran once for "/dev/nbd0
#     quiesce" (what the mapper wrote) and once for unquiesce, in that
#     order;
#   - the guest's fsfreeze -f and -u returned; the writer saw no error;
#     the kernel logged no I/O error;
#   - the snapshot's filesystem is clean as it is (e2fsck -fn, no journal
#     to replay: the freeze left it consistent), and so is the head's
#     after the unmap.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/kernel/lib-uml.sh"
uml_requires
requires_cluster
requires e2fsck
mapper=$(uml_mapper map)

img=$(new_image 256M)
uml_setup
cat >"$UML_DIR/hook" <<HOOK
#!/bin/bash
echo "\$(date +%s.%N) start \$1 \$2" >>"$UML_DIR/hook.log"
if [ "\$2" = quiesce ]; then ask=freeze want=frozen; else ask=thaw want=thawed; fi
: >"$UML_SHARE/host.\$ask"
for i in \$(seq 600); do
  [ -e "$UML_SHARE/step.\$want" ] && break
  sleep 0.05
done
[ -e "$UML_SHARE/step.\$want" ] || exit 1
echo "\$(date +%s.%N) end \$1 \$2" >>"$UML_DIR/hook.log"
HOOK
chmod +x "$UML_DIR/hook"
sock="$UML_DIR/engine.sock"
serve_engine "$sock" -- "$img" quiesce=true "quiesce_hook=$UML_DIR/hook" \
  "quiesce_device_file=$UML_SHARE/quiesce-device" quiesce_timeout=60
uml_bridge "$sock"
uml_guest_mount "$(dirname "$mapper")"
uml_guest_mount "$RBDX_BUILD/tests/kernel"
uml_guest_env NBD_EXPORT="$img" MAPPER="$mapper" \
  STANDIN_ENGINE="$(cd "$RBDX_BUILD/tests/kernel" && pwd -P)/standin-engine"

cat >"$UML_DIR/guest-quiesce.sh" <<'EOF2'
load_nbd
export RBDX_ENGINE=$STANDIN_ENGINE
# --quiesce: the mapper tells its server the device (the hook here is
# the host's; the guest's is never run).
dev=$("$MAPPER" map --quiesce --quiesce-hook /bin/true --connections 4 "$NBD_EXPORT") ||
  fail "rbdx map failed"
[ "$dev" = /dev/nbd0 ] || fail "map printed $dev"
grep -q '^quiesce_device_file=/share/run/sup-[0-9]*/quiesce-device$' /share/engine-args ||
  fail "the server got no quiesce_device_file=: $(cat /share/engine-args)"
[ "$(cat /share/quiesce-device)" = /dev/nbd0 ] ||
  fail "the device file holds '$(cat /share/quiesce-device)'"
mkfs.ext4 -q -F -b 4096 /dev/nbd0
mkdir -p /mnt/fs
mount /dev/nbd0 /mnt/fs
# Buffered writes, no sync: the page cache holds dirty data when the
# freeze comes.
( i=0
  while [ ! -e /share/host.stop ]; do
    dd if=/dev/urandom of=/mnt/fs/f$((i % 64)) bs=64k count=8 status=none ||
      { echo "dd failed" >/share/writer.err; exit 1; }
    i=$((i + 1))
    echo $i >/share/writes
  done ) &
writer=$!
step mounted
wait_host freeze 300
fsfreeze -f /mnt/fs || fail "fsfreeze -f failed"
step frozen
wait_host thaw 120
fsfreeze -u /mnt/fs || fail "fsfreeze -u failed"
step thawed
wait_host stop 120
wait "$writer" || fail "the writer failed: $(cat /share/writer.err 2>/dev/null)"
umount /mnt/fs
"$MAPPER" unmap /dev/nbd0 || fail "unmap failed"
dmesg | grep -E "I/O error|Buffer I/O" && fail "the kernel logged I/O errors"
say "ok"
EOF2

uml_boot "$UML_DIR/guest-quiesce.sh"
uml_wait_step mounted 200
some() {
  local n
  n=$(cat "$UML_SHARE/writes" 2>/dev/null) || true
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 5 ]
}
wait_for 120 some || fail "the guest's writer made no progress"
say "rbd snap create while the guest writes"
rbd snap create "$img@k1" || fail "rbd snap create failed ($(cat "$UML_DIR/hook.log" 2>/dev/null))"
uml_signal stop
uml_finish 300
# rbd snap create returns once the unquiesce notifications are sent; the
# unquiesce hook ends when the guest has thawed.
wait_for 30 grep -q ' end /dev/nbd0 unquiesce$' "$UML_DIR/hook.log" ||
  fail "the unquiesce hook did not end: $(cat "$UML_DIR/hook.log")"
[ "$(grep -c ' start /dev/nbd0 quiesce$' "$UML_DIR/hook.log")" = 1 ] &&
  [ "$(grep -c ' end /dev/nbd0 unquiesce$' "$UML_DIR/hook.log")" = 1 ] ||
  fail "hook calls: $(cat "$UML_DIR/hook.log")"
[ "$(awk '{print $4}' "$UML_DIR/hook.log" | tr '\n' ' ')" = "quiesce quiesce unquiesce unquiesce " ] ||
  fail "hook calls out of order: $(cat "$UML_DIR/hook.log")"

say "checking the snapshot and the head on the host"
raw="$UML_DIR/snap.raw"
rbd export --no-progress "$img@k1" "$raw" >/dev/null
e2fsck -fn "$raw" >"$UML_DIR/e2fsck-snap.log" 2>&1 ||
  { cat "$UML_DIR/e2fsck-snap.log" >&2; fail "the snapshot's filesystem is not clean"; }
rm -f "$raw"
rbd export --no-progress "$img" "$raw" >/dev/null
e2fsck -fn "$raw" >"$UML_DIR/e2fsck-head.log" 2>&1 ||
  { cat "$UML_DIR/e2fsck-head.log" >&2; fail "the head's filesystem is not clean"; }
rm -f "$raw"
say "ok: the snapshot of a frozen ext4 through $img is consistent"

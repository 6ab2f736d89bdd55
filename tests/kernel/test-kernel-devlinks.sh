#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-kernel-devlinks: the /dev/rbdx devlinks, os-brick's "path" and the
# mapping an unmap takes, in a UML guest kernel: cases C52, C53, C54, C80-C82, C85.
#
# The guest needs no cluster: the mapper's engine is the stand-in
# (tests/kernel/standin-engine), forwarding every mapping's connections to
# the guest's own nbdkit memory server (STANDIN_URI), which states no
# image identity, so each image spec is a mapping of its own name.
# Asserts, in the guest:
#   - C52: a read-only and a read-write connection_info of one volume
#     (ro, rw, ro again): two devices, the read-only one read-only; every
#     "path" printed is a block device that leads to that map's device,
#     and the read-only attachment's path still leads to the read-only
#     device after the read-write map (no devlink taken over); unmap
#     --connection-info of rw disconnects the read-write device and
#     leaves the read-only one connected, and of ro the other way round;
#     an unmap of the mode not mapped succeeds and disconnects nothing;
#   - C54: an image name of 300 bytes (no devlink: too long), an image
#     named like a namespace of its pool mapped after one of that
#     namespace's volumes, and the reverse order: every "path" printed is
#     a block device (never a directory) leading to its map's device;
#     after the unmaps no devlink and no directory of theirs is left;
#   - C53: an image name of 1000 bytes mapped: the rbd-nbd personality's
#     list-mapped (json, xml, plain) shows the whole name;
#   - C80: a mapping's supervisor and server killed, its device then
#     disconnected by another user (rbdx with a run directory of its
#     own) and mapped by it to another image: list-mapped no longer shows
#     the old image, its devlink is gone, `unmap OLD` exits 3 and leaves
#     the other user's device connected; without the reuse, the stale
#     state and its devlink go at the next list-mapped, and the next
#     mapping on that device is not named by the old devlink;
#   - C81: a run directory on a full file system: the map exits 1 naming
#     "No space left on device" and leaves no device connected to the
#     image; with room again the image maps, is listed and unmaps;
#   - C82: a connection_info with a keyring and parameters that fit the
#     state's limit only without the keyring's keyring=: the map exits 2
#     naming the keyring, leaves no keyring file and maps nothing;
#   - C85: `rbdx map` of a connection_info killed (SIGTERM) while its
#     server hangs in its start: the supervisor stops that server and
#     removes the keyring within 20 s, no device serves the image, and a
#     map right after goes through (the node's lock is free).
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/kernel/lib-uml.sh"
uml_requires
mapper=$(uml_mapper connection-info)
uml_mapper nbd-compat >/dev/null

uml_setup
[ -x "$UML_DIR/root/usr/bin/nbdkit" ] || skip "the guest root has no nbdkit"
uml_guest_mount "$(dirname "$mapper")"
uml_guest_mount "$RBDX_BUILD/tests/kernel"
uml_guest_env MAPPER="$mapper" \
  STANDIN_ENGINE="$(cd "$RBDX_BUILD/tests/kernel" && pwd -P)/standin-engine"

cat >"$UML_DIR/guest-devlinks.sh" <<'EOF2'
load_nbd
export RBDX_ENGINE=$STANDIN_ENGINE
nbdkit -f -U /tmp/mem.sock memory 64M &
mem=$!
wait_until 10 test -S /tmp/mem.sock || fail "the guest's nbdkit memory did not start"
export STANDIN_URI="nbd+unix:///?socket=/tmp/mem.sock"

# conninfo NAME MODE FILE: a Cinder connection_info of volume NAME
# (access_mode MODE, none if empty).
conninfo() {
  printf '{"driver_volume_type":"rbd","data":{"name":"%s"%s}}\n' "$1" \
    "${2:+,\"access_mode\":\"$2\"}" >"$3"
}
field() { sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p" <<<"$2"; }
connected() { [ -e "/sys/block/${1#/dev/}/pid" ]; }
# map_ok FILE: map it; print the device; its "path" must be a block
# device that leads to that device.
map_ok() {
  local out path dev
  out=$("$MAPPER" map --connection-info "$1") || fail "map --connection-info $1 failed"
  say "map $1 printed: $out"
  path=$(field path "$out"); dev=$(field device "$out")
  case $dev in /dev/nbd[0-9]*) ;; *) fail "map $1 printed no device: $out" ;; esac
  [ -b "$path" ] || fail "map $1: path $path is not a block device ($(ls -ld "$path" 2>&1))"
  [ "$(readlink -f "$path")" = "$dev" ] || fail "map $1: path $path leads to $(readlink -f "$path"), not $dev"
  echo "$out"
}
leads() { [ -b "$1" ] && [ "$(readlink -f "$1")" = "$2" ] || fail "$3: $1 leads to $(readlink -f "$1" 2>&1), not $2"; }

# --- C52: read-only and read-write attachments of one volume ---
conninfo rbd/img52 ro /tmp/ro.json
conninfo rbd/img52 rw /tmp/rw.json
conninfo rbd/img52 "" /tmp/none.json
o1=$(map_ok /tmp/ro.json); p1=$(field path "$o1"); d1=$(field device "$o1")
[ "$(cat /sys/block/${d1#/dev/}/ro)" = 1 ] || fail "the ro attachment's $d1 is not read-only"
o2=$(map_ok /tmp/rw.json); p2=$(field path "$o2"); d2=$(field device "$o2")
[ "$d2" != "$d1" ] || fail "the rw attachment got the ro one's $d1"
[ "$(cat /sys/block/${d2#/dev/}/ro)" = 0 ] || fail "the rw attachment's $d2 is read-only"
leads "$p1" "$d1" "the ro attachment's path after the rw map"
o3=$(map_ok /tmp/ro.json)
[ "$o3" = "$o1" ] || fail "mapping ro again printed $o3, not $o1"
leads "$p1" "$d1" "the ro attachment's path after the third map"
leads "$p2" "$d2" "the rw attachment's path after the third map"
"$MAPPER" unmap --connection-info /tmp/rw.json || fail "unmap of rw failed"
! connected "$d2" || fail "unmap of rw left the rw $d2 connected"
connected "$d1" || fail "unmap of rw disconnected the ro attachment's $d1"
leads "$p1" "$d1" "the ro attachment's path after the rw unmap"
"$MAPPER" unmap --connection-info /tmp/none.json || fail "unmap of rw (no access_mode) failed"
connected "$d1" || fail "unmap of rw (no access_mode), not mapped, disconnected the ro $d1"
o2=$(map_ok /tmp/none.json); d2=$(field device "$o2")
[ "$(cat /sys/block/${d2#/dev/}/ro)" = 0 ] || fail "no access_mode mapped read-only"
"$MAPPER" unmap --connection-info /tmp/ro.json || fail "unmap of ro failed"
! connected "$d1" || fail "unmap of ro left $d1 connected"
connected "$d2" || fail "unmap of ro disconnected the rw $d2"
"$MAPPER" unmap --connection-info /tmp/ro.json || fail "unmap of ro, not mapped, failed"
connected "$d2" || fail "unmap of ro, not mapped, disconnected the rw $d2"
"$MAPPER" unmap --connection-info /tmp/rw.json || fail "the last unmap of rw failed"
! connected "$d2" || fail "the last unmap of rw left $d2 connected"
say "C52 ok"

# --- C54: devlinks that cannot be made ---
long=$(printf 'l%.0s' $(seq 300))
conninfo "rbd/$long" "" /tmp/long.json
map_ok /tmp/long.json >/dev/null
"$MAPPER" unmap --connection-info /tmp/long.json || fail "unmap of the long name failed"
conninfo rbd/ns54/vol "" /tmp/vol.json
conninfo rbd/ns54 "" /tmp/ns.json
for order in "vol ns" "ns vol"; do
  outs=()
  for v in $order; do outs+=("$(map_ok /tmp/$v.json)"); done
  # Both paths still lead to their own devices.
  for o in "${outs[@]}"; do leads "$(field path "$o")" "$(field device "$o")" "order $order"; done
  for v in $order; do
    "$MAPPER" unmap --connection-info /tmp/$v.json || fail "unmap of $v failed"
  done
  [ ! -e /dev/rbdx/rbd ] || fail "order $order left $(find /dev/rbdx/rbd)"
done
say "C54 ok"

# --- C53: list-mapped shows the whole name ---
ln -s "$MAPPER" /tmp/rbd-nbd
img=$(printf 'i%.0s' $(seq 999))x
dev=$("$MAPPER" map "rbd/$img") || fail "map of a 1000-byte name failed"
for fmt in json xml plain; do
  /tmp/rbd-nbd list-mapped --format $fmt >/tmp/list.$fmt || fail "list-mapped --format $fmt failed"
  grep -q "$img" /tmp/list.$fmt || fail "list-mapped --format $fmt cut the name: $(cat /tmp/list.$fmt)"
done
grep -q "\"image\":\"$img\"" /tmp/list.json || fail "list-mapped json: $(cat /tmp/list.json)"
grep -q "<image>$img</image>" /tmp/list.xml || fail "list-mapped xml: $(cat /tmp/list.xml)"
"$MAPPER" unmap "rbd/$img" || fail "unmap of the 1000-byte name failed"
! connected "$dev" || fail "$dev is still connected"
say "C53 ok"

# --- C80: a killed supervisor's device, disconnected and reused by
# another user (rbd-nbd, another run directory: here rbdx with its own) ---
kill9() {
  kill -9 "$(sed -n 's/^supervisor=//p' "/share/run/${1#/dev/}")" \
    "$(sed -n 's/^server=//p' "/share/run/${1#/dev/}")" 2>/dev/null
  wait_until 10 sh -c "! kill -0 $(sed -n 's/^supervisor=//p' "/share/run/${1#/dev/}") 2>/dev/null" ||
    fail "the supervisor of $1 did not die"
}
other() { RBDX_RUN_DIR=/tmp/runB RBDX_DEV_DIR=/tmp/devB "$MAPPER" "$@"; }
dA=$("$MAPPER" map -c 1 rbd/img80a) || fail "map of img80a failed"
leads /dev/rbdx/rbd/img80a "$dA" "img80a's devlink"
kill9 "$dA"
other unmap "$dA" || fail "the other user's unmap of $dA failed"
dB=$(other map -c 1 --device "$dA" rbd/img80b) || fail "the other user's map on $dA failed"
connected "$dA" || fail "the other user's $dA is not connected"
"$MAPPER" list-mapped >/tmp/list80 || fail "list-mapped failed"
! grep -q img80a /tmp/list80 || fail "list-mapped still shows img80a on the reused $dA: $(cat /tmp/list80)"
[ ! -e /dev/rbdx/rbd/img80a ] && [ ! -L /dev/rbdx/rbd/img80a ] ||
  fail "img80a's devlink outlived its mapping: $(ls -l /dev/rbdx/rbd/img80a)"
rc=0; "$MAPPER" unmap rbd/img80a 2>/tmp/err80 || rc=$?
[ "$rc" = 3 ] || fail "unmap of img80a, whose device another user took over, exited $rc: $(cat /tmp/err80)"
connected "$dA" || fail "unmap of img80a disconnected the other user's $dA"
other unmap "$dA" || fail "the other user's last unmap failed"
# The same without a reuse first: the stale state goes with its devlink,
# and the next mapping on that device is not named by the old one.
dC=$("$MAPPER" map -c 1 rbd/img80c) || fail "map of img80c failed"
kill9 "$dC"
other unmap "$dC" || fail "the other user's unmap of $dC failed"
"$MAPPER" list-mapped >/tmp/list80 || fail "list-mapped failed"
! grep -q img80c /tmp/list80 || fail "list-mapped shows the disconnected img80c"
[ ! -L /dev/rbdx/rbd/img80c ] || fail "img80c's devlink outlived its mapping"
dD=$("$MAPPER" map -c 1 rbd/img80d) || fail "map of img80d failed"
[ ! -L /dev/rbdx/rbd/img80c ] || fail "img80c's devlink names $dD now"
"$MAPPER" unmap rbd/img80d || fail "unmap of img80d failed"
say "C80 ok"

# --- C81: a run directory with no room left: a map fails, nothing stays ---
mkdir -p /tmp/full && mount -t tmpfs -o size=64k tmpfs /tmp/full ||
  fail "cannot mount the small tmpfs"
full() { RBDX_RUN_DIR=/tmp/full/run RBDX_DEV_DIR=/tmp/full/dev "$MAPPER" "$@"; }
d81=$(full map -c 1 rbd/img81a) || fail "map with room failed"
full unmap rbd/img81a || fail "unmap with room failed"
dd if=/dev/zero of=/tmp/full/fill bs=1k count=1000 2>/dev/null || true  # ENOSPC
rc=0; full map -c 1 rbd/img81b >/tmp/out81 2>/tmp/err81 || rc=$?
[ "$rc" = 1 ] || fail "a map with no room for its state exited $rc: $(cat /tmp/out81 /tmp/err81)"
grep -q "No space left on device" /tmp/err81 ||
  fail "the failed map does not say why: $(cat /tmp/err81)"
for b in /sys/block/nbd*/backend; do
  ! grep -q img81b "$b" 2>/dev/null || fail "${b%/backend} still serves img81b"
done
rm -f /tmp/full/fill
d81=$(full map -c 1 rbd/img81b) || fail "the map after room was made failed"
full list-mapped | grep -q img81b || fail "img81b is not listed"
full unmap rbd/img81b || fail "unmap of img81b failed"
umount /tmp/full
say "C81 ok"

# --- C82: a connection_info keyring counts in the parameters' limit ---
printf '{"driver_volume_type":"rbd","data":{"name":"rbd/img82","auth_enabled":true,"auth_username":"cinder","keyring":"[client.cinder]\\n\\tkey = AQBsZ1FmAAAAABAAJ8QSdBxEyn6zcmzTWc3ztQ==\\n"}}\n' >/tmp/ci82.json
# conf=/etc/AAA... so that the parameters fit without the keyring's
# keyring=/share/run/keyrings/XXXXXX.keyring (45 bytes) and not with it.
conf82=/etc/$(printf 'a%.0s' $(seq 4040))
rc=0; "$MAPPER" map -c 1 --connection-info /tmp/ci82.json -o "conf=$conf82" >/tmp/out82 2>/tmp/err82 || rc=$?
[ "$rc" = 2 ] || fail "a map whose keyring= does not fit the state exited $rc: $(cat /tmp/out82 /tmp/err82)"
grep -q "with the keyring's keyring=" /tmp/err82 || fail "the refusal does not name the keyring: $(cat /tmp/err82)"
[ -z "$(ls /share/run/keyrings 2>/dev/null)" ] || fail "the refused map left a keyring: $(ls /share/run/keyrings)"
for b in /sys/block/nbd*/backend; do
  ! grep -q img82 "$b" 2>/dev/null || fail "${b%/backend} serves img82"
done
say "C82 ok"

# --- C85: a map killed while its server starts ends the attempt ---
printf '#!/bin/sh\necho $$ >/tmp/hang.pid\nexec sleep 300\n' >/tmp/hang-engine
chmod +x /tmp/hang-engine
printf '{"driver_volume_type":"rbd","data":{"name":"rbd/img85","auth_enabled":true,"auth_username":"cinder","keyring":"[client.cinder]\\n\\tkey = AQBsZ1FmAAAAABAAJ8QSdBxEyn6zcmzTWc3ztQ==\\n"}}\n' >/tmp/ci85.json
rm -f /tmp/hang.pid
RBDX_ENGINE=/tmp/hang-engine "$MAPPER" map -c 1 --connection-info /tmp/ci85.json >/dev/null 2>/tmp/err85 &
mp=$!
wait_until 20 test -s /tmp/hang.pid || fail "the hanging server did not start"
hp=$(cat /tmp/hang.pid)
kill -TERM "$mp"; wait "$mp" 2>/dev/null || true
wait_until 20 sh -c "! kill -0 $hp 2>/dev/null" ||
  fail "the server of the interrupted map still runs"
[ -z "$(ls /share/run/keyrings 2>/dev/null)" ] ||
  fail "the interrupted map left its keyring: $(ls /share/run/keyrings)"
for b in /sys/block/nbd*/backend; do
  ! grep -q img85 "$b" 2>/dev/null || fail "${b%/backend} serves img85 after the interrupted map"
done
# The node's lock is free again: a map goes through at once.
d85=$(timeout 20 "$MAPPER" map -c 1 rbd/img85) || fail "a map after the interrupted one failed"
"$MAPPER" unmap rbd/img85 || fail "unmap of img85 failed"
say "C85 ok"

[ -z "$(ls /share/run 2>/dev/null | grep -vxE 'lock|keyrings')" ] || fail "state left: $(ls /share/run)"
kill "$mem"; wait "$mem" 2>/dev/null || true
say "ok"
EOF2

uml_run "$UML_DIR/guest-devlinks.sh" 300
say "ok: devlinks never taken over, paths lead to their devices, unmap by access mode, whole names listed, stale states never claim another mapping's device"

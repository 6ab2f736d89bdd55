#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-kernel-mapper: `rbdx map`, `list-mapped`, `attach` and `unmap` end to
# end in a UML guest kernel, for an image spec (the mapper starts and
# supervises its own server) and for an NBD URI, plus the mapper's errors.
#
# The guest cannot reach the sandbox cluster (it listens on 127.0.0.1 of the
# host), so for the image spec the mapper's server is a stand-in: the test
# sets RBDX_ENGINE to tests/kernel/standin-engine, which records the
# command line the mapper built, listens on the engine's control socket
# and answers each CONNECT with a connection it negotiated with the
# host's rbdx server through the relay (so the guest kernel talks to the
# host's server).  What is proven for spec mode: the engine's command
# line (spec, parameters), the private control socket, supervision
# (restart after a crash), attach after the supervisor is killed, and
# unmap stopping the server; then `--engine nbdkit` with RBDX_NBDKIT set
# to a script that runs the guest's nbdkit with the mapper's options but
# the nbd plugin.  The real engine with the kernel is test-kernel-engine.sh;
# the real plugin with that command line is what every other test runs.
#
# The guest runs the URI part first (against a plain rbdx server), then the
# host restarts its server with size_file= and advertise_size=max, as the
# mapper starts its own, for the spec part.
# Asserts, in the guest (4 connections unless said):
#   - CEPH_ARGS="--id admin" map SPEC --format json: JSON with device,
#     image, connections, server and supervisor pids; the engine got
#     --control under RBDX_RUN_DIR, the canonical spec and id=admin (the
#     id of $CEPH_ARGS, recorded so that attach keeps it); 4 connections
#     reach the host; data written to the device is read back; mapping
#     the same spec again prints the same device, and with
#     encryption_format= or exclusive=true is refused naming it (C63);
#   - list-mapped (plain and JSON) shows the mapping;
#   - the server is killed: the supervisor starts a new one and re-attaches,
#     data reads back, no I/O error in the kernel log;
#   - the supervisor is killed: a map of the spec fails pointing to
#     attach; `rbdx attach /dev/nbd0` (no $CEPH_ARGS)
#     brings a new supervisor and server (the old server is gone) with
#     id=admin, 4 connections, data reads back;
#   - the image grows on the host (64 -> 96 MiB): the device follows within
#     10 s through the size file, with the same 4 connections, and the new
#     end reads as zeros;
#   - unmap of a mounted device fails and changes nothing, and so does
#     SIGTERM to its supervisor (a file written after it reads back
#     through O_DIRECT, no I/O error in the kernel log); after umount,
#     unmap by spec disconnects, stops supervisor and server, removes state;
#   - an unmap while a map is starting (its server takes 3 s) waits for
#     it and unmaps (exit 0), the map succeeds, nothing is left; a map
#     killed (SIGKILL) while starting, then a second map: one device;
#   - URI mode: nbds:// is refused; map --device /dev/nbd1 with --read-only gives a read-only
#     device; a URI of a server that states no identity (the guest's
#     nbdkit memory) mapped read-only, then read-only again prints the same
#     device, read-write (or --device /dev/nbd5) a device of its own; map --device /dev/nbd1 of another URI fails "already
#     connected", leaving nbd1 as it was; unmap /dev/nbd1;
#   - errors leave nothing mapped or running: a server that exits at start
#     (its message is shown), nothing listening at the URI, no such device
#     to unmap (exit 3, "not mapped"), bad options (exit 2).
# On the host: the data the guest wrote is in the image (rbd export).
# Covers: rbdx(8) map/unmap/list-mapped/attach, README "Map it to a block
# device".
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/kernel/lib-uml.sh"
uml_requires
requires_cluster
mapper=$(uml_mapper map)

img=$(new_image 64M)
uml_setup
[ -x "$UML_DIR/root/usr/bin/nbdkit" ] || skip "the guest root has no nbdkit"
sock="$UML_DIR/nbd.sock"
uml_serve "$sock" "$img"
uml_bridge "$sock"
uml_guest_mount "$(dirname "$mapper")"
uml_guest_mount "$RBDX_BUILD/tests/kernel"
# The identity the real plugin states for the image (export description).
ident=$(nbdkit -U - "$RBDX_PLUGIN" "$img" --run 'nbdinfo --json "$uri"' |
  python3 -c 'import json, re, sys
print(re.search(r"\(identity ([^)]*)\)", json.load(sys.stdin)["exports"][0]["description"]).group(1))')
say "the image's identity: $ident"
uml_guest_env NBD_EXPORT="$img" MAPPER="$mapper" RBDX_PLUGIN=/plugin/rbdx.so NBD_IDENTITY="$ident" \
  STANDIN_ENGINE="$(cd "$RBDX_BUILD/tests/kernel" && pwd -P)/standin-engine"

cat >"$UML_DIR/guest-mapper.sh" <<'EOF'
load_nbd
json_field() { sed -n "s/.*\"$1\":\\([^,}]*\\).*/\\1/p" | tr -d '"'; }
supervisors() { pgrep -f "^$MAPPER " | wc -l; }
servers() { pgrep -f 'nbdkit|standin-engine' | wc -l; }
nothing_left() {
  [ "$(supervisors)" -eq 0 ] || fail "a supervisor is left: $(pgrep -af "^$MAPPER ")"
  [ "$(servers)" -eq 0 ] || fail "a server is left: $(pgrep -af 'nbdkit|standin-engine')"
  [ -z "$(ls /share/run 2>/dev/null | grep -vx lock)" ] || fail "state left in /share/run: $(ls /share/run)"
  for d in 0 1 2 3; do
    [ ! -e /sys/block/nbd$d/pid ] || fail "/dev/nbd$d is still connected"
  done
}
# The stand-in server (see the host script's header).
standin_nbdkit /tmp/nbdkit
cat >/tmp/engine-fails <<'F'
#!/bin/bash
echo "rbdx-engine: error: rbdx: image 'rbd/missing' does not exist" >&2
exit 1
F
chmod +x /tmp/engine-fails
export RBDX_NBDKIT=/tmp/nbdkit RBDX_ENGINE=$STANDIN_ENGINE
spec="rbd/$(basename "$NBD_EXPORT")"

# --- URI mode ---
uri="nbd://$NBD_HOST:$NBD_PORT/$NBD_EXPORT"
rc=0; "$MAPPER" map "nbds://$NBD_HOST:$NBD_PORT/x" 2>/tmp/err || rc=$?
[ "$rc" -eq 2 ] && grep -q "nbd+unix" /tmp/err || fail "nbds:// gave exit $rc: $(cat /tmp/err)"
dev=$("$MAPPER" map --device /dev/nbd1 --connections 2 --read-only "$uri") || fail "map URI failed"
[ "$dev" = /dev/nbd1 ] || fail "map --device /dev/nbd1 printed $dev"
[ "$(cat /sys/block/nbd1/ro)" = 1 ] || fail "nbd1 is not read-only"
if dd if=/dev/zero of=/dev/nbd1 bs=4k count=1 oflag=direct status=none 2>/dev/null; then
  fail "a write to the read-only device succeeded"
fi
# Mapped again, a URI whose server states no image identity (so the
# mapper can only go by the URI): a read-only map prints the read-only
# device; a read-write map gets a device of its own, never the
# read-only one, and so does a map --device elsewhere.
nbdkit -f -U /tmp/mem.sock memory 64M &
mem=$!
wait_until 10 test -S /tmp/mem.sock || fail "the guest's nbdkit memory did not start"
muri="nbd+unix:///?socket=/tmp/mem.sock"
ro=$("$MAPPER" map --read-only "$muri") || fail "map --read-only of $muri failed"
again=$("$MAPPER" map --read-only "$muri") || fail "mapping $muri read-only again failed"
[ "$again" = "$ro" ] || fail "a second read-only map of $muri printed $again, not $ro"
rw=$("$MAPPER" map "$muri") || fail "a read-write map of $muri mapped read-only failed"
[ "$rw" != "$ro" ] && [ "$(cat "/sys/block/${rw#/dev/}/ro")" = 0 ] ||
  fail "a read-write map of $muri mapped read-only on $ro printed $rw"
again=$("$MAPPER" map --read-only "$muri") || fail "mapping $muri read-only a third time failed"
[ "$again" = "$ro" ] || fail "a read-only map of $muri mapped both ways printed $again"
other=$("$MAPPER" map --device /dev/nbd5 "$muri") || fail "map --device /dev/nbd5 of $muri failed"
[ "$other" = /dev/nbd5 ] || fail "map --device /dev/nbd5 of the mapped $muri printed $other"
for dev in "$other" "$rw" "$ro"; do "$MAPPER" unmap "$dev" || fail "unmap $dev failed"; done
kill "$mem"; wait "$mem" 2>/dev/null || true
if "$MAPPER" map --device /dev/nbd1 "nbd://$NBD_HOST:$NBD_PORT" 2>/tmp/err; then
  fail "mapping onto a connected device succeeded"
fi
grep -q "already connected" /tmp/err || fail "mapping onto nbd1 said: $(cat /tmp/err)"
[ "$(supervisors)" -eq 1 ] || fail "the failed map left a supervisor"
"$MAPPER" unmap /dev/nbd1 || fail "unmap /dev/nbd1 failed"
nothing_left

# --- errors ---
if RBDX_ENGINE=/tmp/engine-fails "$MAPPER" map rbd/missing 2>/tmp/err; then
  fail "map with a failing server succeeded"
fi
grep -q "does not exist" /tmp/err || fail "the server's message is not shown: $(cat /tmp/err)"
nothing_left
if "$MAPPER" map "nbd://$NBD_HOST:1/x" 2>/tmp/err; then fail "map of a dead URI succeeded"; fi
grep -qi "connect" /tmp/err || fail "map of a dead URI said: $(cat /tmp/err)"
nothing_left
rc=0; "$MAPPER" unmap /dev/nbd3 2>/tmp/err || rc=$?
[ "$rc" -eq 3 ] && grep -q "not mapped" /tmp/err || fail "unmap of an unmapped device: rc $rc (3: not mapped), $(cat /tmp/err)"
rc=0; "$MAPPER" map --connections 0 "$NBD_EXPORT" 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "--connections 0 gave exit $rc, not 2"
rc=0; "$MAPPER" map --device /dev/sda "$NBD_EXPORT" 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "--device /dev/sda gave exit $rc, not 2"
nothing_left
step uri-done
wait_host sized 60

# --- spec mode ---
out=$(CEPH_ARGS="--id admin" "$MAPPER" map --connections 4 --format json "$NBD_EXPORT")
say "map printed: $out"
[ "$(echo "$out" | json_field device)" = /dev/nbd0 ] || fail "not /dev/nbd0: $out"
[ "$(echo "$out" | json_field image)" = "$spec" ] || fail "image is not $spec: $out"
[ "$(echo "$out" | json_field connections)" = 4 ] || fail "not 4 connections: $out"
server=$(echo "$out" | json_field server_pid)
sup=$(echo "$out" | json_field supervisor_pid)
[ -d "/proc/$server" ] && [ -d "/proc/$sup" ] || fail "server $server or supervisor $sup not running"
grep -qx -- --control /share/engine-args || fail "no --control"
grep -q "^/share/run/sup-$sup/nbd.sock$" /share/engine-args || fail "socket not private: $(cat /share/engine-args)"
grep -qx "image=$spec" /share/engine-args || fail "spec $spec not passed as image=: $(cat /share/engine-args)"
grep -qx -- -- /share/engine-args || fail "no -- before the parameters: $(cat /share/engine-args)"
grep -qx id=admin /share/engine-args || fail "the id of \$CEPH_ARGS was not passed as id=admin"
grep -qx writers=shared /share/engine-args || fail "4 connections without writers=shared"
grep -qx advertise_size=max /share/engine-args || fail "no advertise_size=max"
grep -q "^size_file=/share/run/sup-$sup/size$" /share/engine-args || fail "no private size_file"
! grep -qx -- --readonly /share/engine-args || fail "--readonly without -r"
four() { [ "$(tcp_conns "$NBD_PORT")" -eq 4 ]; }
wait_until 10 four || fail "$(tcp_conns "$NBD_PORT") connections to the host, expected 4"
[ "$(dev_bytes nbd0)" -eq $((64 << 20)) ] || fail "nbd0 is $(dev_bytes nbd0) bytes"
head -c $((4 << 20)) /dev/urandom >/tmp/data
dd if=/tmp/data of=/dev/nbd0 bs=1M seek=40 oflag=direct status=none
sha256sum </tmp/data | cut -d' ' -f1 >/share/data.sha256
check_data() {
  [ "$(dd if=/dev/nbd0 bs=1M skip=40 count=4 iflag=direct status=none | sha256sum | cut -d' ' -f1)" = \
    "$(cat /share/data.sha256)" ] || fail "data read back differs ($1)"
}
check_data "after map"
again=$("$MAPPER" map "$NBD_EXPORT" id=admin) || fail "mapping the mapped spec again failed"
[ "$again" = /dev/nbd0 ] || fail "mapping again printed '$again'"
[ "$(supervisors)" -eq 1 ] || fail "mapping again started another supervisor"
# Case C63: a map of the mapped image that asks for another view of it
# (decrypted) or another lock policy is refused, naming the parameter;
# none of them gets /dev/nbd0 or a device of its own.
printf 'secret\n' >/tmp/pass
chmod 0600 /tmp/pass
for p in "encryption_format=luks2 encryption_passphrase_file=/tmp/pass" exclusive=true; do
  rc=0
  # shellcheck disable=SC2086
  "$MAPPER" map "$NBD_EXPORT" id=admin $p >/tmp/out 2>/tmp/err || rc=$?
  [ $rc -eq 1 ] && grep -q "mapped on /dev/nbd0 with other ${p%%=*}= parameters" /tmp/err ||
    fail "map of the mapped spec with $p: exit $rc: $(cat /tmp/out /tmp/err)"
done
[ "$(supervisors)" -eq 1 ] && [ ! -e /sys/block/nbd1/pid ] ||
  fail "a map with other content parameters left a mapping"

list=$("$MAPPER" list-mapped)
say "list-mapped: $list"
echo "$list" | grep -E "^/dev/nbd0 +$spec +4 +$server +$sup " || fail "list-mapped does not show the mapping"
"$MAPPER" list-mapped --format json | grep -q "\"device\":\"/dev/nbd0\",\"image\":\"$spec\"" ||
  fail "list-mapped --format json: $("$MAPPER" list-mapped --format json)"

# The server crashes: the supervisor restarts it and re-attaches.
kill -9 "$server"
restarted() {
  local p
  p=$("$MAPPER" list-mapped --format json | json_field server_pid)
  [ -n "$p" ] && [ "$p" != "$server" ] && [ "$p" != null ] && [ -d "/proc/$p" ]
}
wait_until 20 restarted || fail "no new server 20 s after the crash"
wait_until 20 four || fail "$(tcp_conns "$NBD_PORT") connections after the restart"
check_data "after the server restart"
# The image identity the server stated at map time pins every later
# server to that image, whatever its name means by then.
grep -qx "identity=$NBD_IDENTITY" /share/engine-args ||
  fail "the restarted server is not pinned to $NBD_IDENTITY: $(cat /share/engine-args)"
"$MAPPER" list-mapped --format json | grep -q "\"identity\":\"$NBD_IDENTITY\"" ||
  fail "list-mapped does not show identity $NBD_IDENTITY: $("$MAPPER" list-mapped --format json)"
# rbdx status counts the restart and the re-attached connections (the
# stand-in server writes no metrics; test-metrics.sh covers those).
st=$("$MAPPER" status --format json /dev/nbd0) || fail "rbdx status failed"
say "status: $st"
echo "$st" | grep -q '"server_restarts":[1-9]' || fail "status does not count the server restart: $st"
echo "$st" | grep -q '"reattaches":[1-9]' || fail "status does not count the re-attached connections: $st"
"$MAPPER" status | grep -q "^/dev/nbd0: $spec" || fail "plain status: $("$MAPPER" status)"

# The supervisor dies: attach brings a new supervisor and server (and
# kills the old server if it outlived its supervisor).
server=$("$MAPPER" list-mapped --format json | json_field server_pid)
kill -9 "$sup"
gone() { [ "$(supervisors)" -eq 0 ]; }
wait_until 10 gone || fail "the supervisor outlived SIGKILL"
[ -e /sys/block/nbd0/pid ] || fail "nbd0 was disconnected when its supervisor died"
# C84: list-mapped and status say that nothing supervises it, and show
# no pid of a process that is gone.
"$MAPPER" list-mapped --format json >/tmp/list84 2>/tmp/err84 || fail "list-mapped failed"
grep -q '"supervised":false' /tmp/list84 && grep -q '"supervisor_pid":null' /tmp/list84 ||
  fail "list-mapped --format json of a mapping without its supervisor: $(cat /tmp/list84)"
grep -q "supervisor is gone.*rbdx attach /dev/nbd0" /tmp/err84 ||
  fail "list-mapped says nothing of the gone supervisor: $(cat /tmp/err84)"
"$MAPPER" list-mapped 2>/dev/null | awk 'NR == 2 && $5 != "-" { exit 1 }' ||
  fail "list-mapped shows the dead supervisor's pid: $("$MAPPER" list-mapped 2>&1)"
"$MAPPER" status /dev/nbd0 | grep -q "supervisor is gone" ||
  fail "status says nothing of the gone supervisor: $("$MAPPER" status /dev/nbd0 2>&1)"
# A map meanwhile does not pass the dead mapping off as mapped: it
# points to attach.
rc=0; "$MAPPER" map "$NBD_EXPORT" id=admin 2>/tmp/err || rc=$?
[ $rc -eq 1 ] && grep -q "supervisor is gone .*rbdx attach /dev/nbd0" /tmp/err ||
  fail "map of a mapping whose supervisor died: exit $rc, $(cat /tmp/err)"
out=$("$MAPPER" attach --format json /dev/nbd0) || fail "rbdx attach failed"
say "attach printed: $out"
sup=$(echo "$out" | json_field supervisor_pid)
[ -d "/proc/$sup" ] || fail "no supervisor after attach"
[ ! -d "/proc/$server" ] || fail "the old server (pid $server) still runs after attach"
[ "$(servers)" -eq 1 ] || fail "$(servers) servers after attach: $(pgrep -ax nbdkit)"
wait_until 20 four || fail "$(tcp_conns "$NBD_PORT") connections after attach"
check_data "after attach"
grep -qx id=admin /share/engine-args || fail "attach lost id=admin: $(cat /share/engine-args)"
grep -qx "identity=$NBD_IDENTITY" /share/engine-args || fail "attach lost the identity: $(cat /share/engine-args)"
# C83: attach of a served device naming another image is refused; naming
# its own image, it asks the supervisor as without one.
rc=0; "$MAPPER" attach /dev/nbd0 rbd/c83-other 2>/tmp/err || rc=$?
[ $rc -eq 1 ] && grep -q "serves .*not rbd/c83-other: nothing was changed" /tmp/err ||
  fail "attach /dev/nbd0 naming another image: exit $rc, $(cat /tmp/err)"
"$MAPPER" attach /dev/nbd0 "$NBD_EXPORT" >/dev/null ||
  fail "attach /dev/nbd0 naming its own image failed"

# The image grows on the host: the real plugin there rewrites its
# size_file (which the stand-in linked ours to); the device follows without
# new connections (advertise_size=max).
conns_before=$(ss -Htn state established "( dport = :$NBD_PORT )" | awk '{print $3}' | sort)
step spec-mapped
wait_host grown 60
grown() { [ "$(dev_bytes nbd0)" -eq $((96 << 20)) ]; }
wait_until 10 grown || fail "nbd0 is $(dev_bytes nbd0) bytes 10 s after the image grew to 96 MiB"
dd if=/dev/nbd0 of=/tmp/tail bs=4096 skip=$(( (96 << 20) / 4096 - 1 )) count=1 iflag=direct status=none ||
  fail "reading the grown end failed"
cmp -s /tmp/tail <(head -c 4096 /dev/zero) || fail "the grown end does not read as zeros"
[ "$(ss -Htn state established "( dport = :$NBD_PORT )" | awk '{print $3}' | sort)" = "$conns_before" ] ||
  fail "the connections were replaced for the growth"
check_data "after the growth"

# Busy: mounted (the file system ends before the data at 40 MiB).
mkfs.ext4 -q -F /dev/nbd0 32M
mkdir -p /mnt/fs
mount /dev/nbd0 /mnt/fs
if "$MAPPER" unmap "$spec" 2>/tmp/err; then fail "unmap of a mounted device succeeded"; fi
grep -q "in use" /tmp/err || fail "unmap of a mounted device said: $(cat /tmp/err)"
[ -d "/proc/$sup" ] && [ -e /sys/block/nbd0/pid ] || fail "the refused unmap changed something"
# SIGTERM to the supervisor of the mounted device (systemd stopping
# rbdx-map.service, an operator's kill): it stays mapped and served, so
# data written after it reaches the image; before, the device was
# disconnected at once and the page cache's data lost.
kill -TERM "$sup"
refused() { grep -q "stays mapped" "/share/run/sup-$sup/supervisor.log"; }
wait_until 10 refused || fail "no word of a refused SIGTERM: $(tail -3 "/share/run/sup-$sup/supervisor.log")"
[ -d "/proc/$sup" ] && [ -e /sys/block/nbd0/pid ] || fail "SIGTERM disconnected the mounted device"
head -c 1M /dev/urandom >/mnt/fs/after-term
sync -f /mnt/fs/after-term || fail "sync after SIGTERM failed"
cmp -s /mnt/fs/after-term <(dd if=/mnt/fs/after-term bs=1M iflag=direct status=none) ||
  fail "the file written after SIGTERM does not read back"
umount /mnt/fs
"$MAPPER" unmap "$spec" || fail "unmap failed"
nothing_left

# An unmap while a map is still starting (its server slow to come up)
# waits for that map, then unmaps it: never "not mapped" while the map
# goes on to map the image.
cat >/tmp/engine-slow <<EOS
#!/bin/sh
: >/tmp/slow-started
sleep 3
exec "$STANDIN_ENGINE" "\$@"
EOS
chmod +x /tmp/engine-slow
rm -f /tmp/slow-started
RBDX_ENGINE=/tmp/engine-slow "$MAPPER" map "$NBD_EXPORT" id=admin >/tmp/slow.out 2>&1 &
mp=$!
wait_until 20 test -e /tmp/slow-started || fail "the slow server did not start: $(cat /tmp/slow.out)"
"$MAPPER" unmap "$spec" 2>/tmp/err || fail "unmap during a starting map failed: $(cat /tmp/err)"
wait "$mp" || fail "the map that was starting failed: $(cat /tmp/slow.out)"
nothing_left
# The map killed (SIGKILL) while its supervisor is still starting: a
# second map waits for that supervisor to record its mapping, then
# prints its device; one device in all.
rm -f /tmp/slow-started
RBDX_ENGINE=/tmp/engine-slow "$MAPPER" map "$NBD_EXPORT" id=admin >/tmp/slow.out 2>&1 &
mp=$!
wait_until 20 test -e /tmp/slow-started || fail "the slow server did not start: $(cat /tmp/slow.out)"
kill -9 "$mp"
wait "$mp" 2>/dev/null || true
second=$("$MAPPER" map "$NBD_EXPORT" id=admin) || fail "the second map failed"
connected=$(ls -d /sys/block/nbd*/pid 2>/dev/null | wc -l)
[ "$connected" -eq 1 ] || fail "$connected devices for one image after a killed map and a second one"
[ -e "/sys/block/${second#/dev/}/pid" ] || fail "the second map printed $second, which is not connected"
"$MAPPER" unmap "$spec" || fail "unmap after the killed map failed"
nothing_left

# nbdkit stays selectable (--engine nbdkit): the stand-in nbdkit then.
dev=$("$MAPPER" map --engine nbdkit --connections 2 "$NBD_EXPORT" id=admin) ||
  fail "map --engine nbdkit failed"
grep -qx -- --unix /share/nbdkit-args || fail "no --unix: $(cat /share/nbdkit-args)"
grep -qx /plugin/rbdx.so /share/nbdkit-args || fail "plugin not \$RBDX_PLUGIN"
grep -qx id=admin /share/nbdkit-args || fail "id=admin not passed to nbdkit"
grep -qx "image=$NBD_EXPORT" /share/nbdkit-args || fail "nbdkit did not get image=SPEC: $(cat /share/nbdkit-args)"
[ "$(grep -nx -- -- /share/nbdkit-args | cut -d: -f1)" -lt "$(grep -nx /plugin/rbdx.so /share/nbdkit-args | cut -d: -f1)" ] ||
  fail "no -- before the plugin: $(cat /share/nbdkit-args)"
[ "$dev" = /dev/nbd0 ] || fail "map --engine nbdkit printed $dev"
check_data "through nbdkit"
"$MAPPER" unmap "$dev" || fail "unmap of the nbdkit mapping failed"
nothing_left
dmesg | grep -E "I/O error|Buffer I/O" && fail "the kernel logged I/O errors"

say "ok"
EOF

uml_boot "$UML_DIR/guest-mapper.sh"
uml_wait_step uri-done 180
# Spec mode next: a server like the mapper's own (size_file, advertise_size=max).
stop_server "$sock"
rm -f "$sock"
uml_serve "$sock" "$img" size_file="$UML_SHARE/size" advertise_size=max
uml_signal sized
uml_wait_step spec-mapped 120
# Written once the guest's connections were open.
[ "$(cat "$UML_SHARE/size")" = $((64 << 20)) ] || fail "size_file holds '$(cat "$UML_SHARE/size")'"
rbd resize --no-progress --size 96M "$img"
uml_signal grown
uml_finish 300

# The guest's write reached the image.
want=$(cat "$UML_SHARE/data.sha256")
rbd export --no-progress "$img" "$UML_DIR/image.raw" >/dev/null
got=$(dd if="$UML_DIR/image.raw" bs=1M skip=40 count=4 status=none | sha256sum | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "the image does not hold the data the guest wrote"
say "ok: map, list-mapped, restart, attach, unmap and the errors work in the guest kernel"

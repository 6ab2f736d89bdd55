#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-kernel-nbd-compat: the rbd-nbd personality in a UML guest kernel,
# driven by ceph-csi's own command lines (internal/rbd/rbd_attach.go:
# createPath's map and attach, getDeviceList's list-mapped, and
# detachRBDImageOrDeviceSpec's unmap), through a link named rbd-nbd to
# the mapper, as the package installs it (LIBEXECDIR/rbdx/compat/rbd-nbd).
#
# As in test-kernel-mapper, the guest cannot reach the cluster: the
# mapper's engine is the stand-in (tests/kernel/standin-engine), which
# records its command line and forwards to the host's rbdx server of the
# image.
# Asserts, in the guest:
#   - `rbd-nbd --help` lists --cookie on stdout, stderr empty (ceph-csi's
#     cookie probe);
#   - a map with --keyfile and a --log-file in a missing directory is
#     refused before its keyring is written
#     and leaves no keyring behind;
#   - ceph-csi's map line prints /dev/nbd0 alone; the kernel's backend
#     identifier is the cookie (the volume id), the count and the image
#     identity; the server got id=,
#     mon_host= and ceph.log_file= from the Ceph options, and for
#     --keyfile keyring=/share/run/keyrings/XXXXXX.keyring (0600,
#     "[client.ID]\n\tkey = KEY", recorded in the state file), never
#     ceph.keyfile= or the key; the supervisor's and the server's stderr
#     is the --log-file, which holds the supervisor's lines; data written
#     reads back;
#   - list-mapped --format=json shows rbd-nbd's record of the mapping
#     (pool, namespace, image, snap, device, cookie, id the supervisor);
#   - detach stops supervisor and server and leaves the device connected;
#     an attach naming another cookie or none is refused with rbd-nbd's
#     messages; ceph-csi's attach line gets the device back with its
#     connections, and the data reads back; again after the run directory
#     is deleted too, with a read waiting across it: the 4 connections
#     come back from the kernel's identifier
#     (COOKIE;rbdx:connections=4;rbdx:identity=ID),
#     the read returns the data; each attach leaves one keyring, the new
#     server's;
#   - unmap disconnects; unmap of the spec then says "rbd-nbd: SPEC is not
#     mapped" (exit 1), which ceph-csi takes as done; nothing is left, no
#     keyring either, the log file stays;
#   - map -f stays in the foreground; SIGTERM to it detaches (the device
#     stays connected), attach gets it back; a map -f that finds the image
#     mapped already stays too, but SIGTERM to it leaves that mapping be;
#   - map --show-cookie prints "/dev/nbd0 COOKIE" through a pipe that
#     ends with the command; the supervisor holds no descriptor of its
#     caller's (case C67);
#   - `rbd device map -t nbd -o ...`, `rbd device list -t nbd --format
#     json` and `rbd device unmap -t nbd` through a copy of Debian's rbd
#     beside a link rbd-nbd -> the mapper: the device path, the -o options
#     (2 connections; notrim reaching the server as notrim=true), rbd-nbd's
#     list record, the device disconnected;
#   - the kernel logged no I/O error.
# On the host: the guest's data is in the image.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/kernel/lib-uml.sh"
uml_requires
requires_cluster
mapper=$(uml_mapper nbd-compat)

img=$(new_image 64M)
uml_setup
sock="$UML_DIR/nbd.sock"
uml_serve_for_mapper "$sock" "$img" "$mapper"
# The rbd CLI runs the rbd-nbd beside its own executable (/proc/self/exe
# + "-nbd", Ceph src/tools/rbd/action/Nbd.cc): a copy of Debian's rbd
# beside a link rbd-nbd -> the mapper, as rbdx.pod tells users to do.
compat=$(uml_rbd_compat "$mapper")
uml_guest_env NBD_EXPORT="$img" MAPPER="$mapper" COMPAT="$compat" \
  STANDIN_ENGINE="$(cd "$RBDX_BUILD/tests/kernel" && pwd -P)/standin-engine"

cat >"$UML_DIR/guest-nbd-compat.sh" <<'EOF2'
load_nbd
export RBDX_ENGINE=$STANDIN_ENGINE
ln -s "$MAPPER" /tmp/rbd-nbd
rn=/tmp/rbd-nbd
volid=0001-0009-rook-ceph-0000000000000002-ab6b5e3f-1c9c-11ee-8d7e-0242ac110003
mons=10.0.0.1:6789,10.0.0.2:6789
mkdir -p /tmp/csi
key=AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==
echo "$key" >/tmp/csi/keyfile-1
chmod 0600 /tmp/csi/keyfile-1
# ceph-csi: "--id", ID, "-m", MONS, "--keyfile=" FILE, "--log-file", LOG
csi=(--id csi-rbd-node -m "$mons" --keyfile=/tmp/csi/keyfile-1 --log-file /tmp/csi/rbd-nbd-vol.log)
supervisors() { pgrep -f "^($MAPPER|$rn) " | wc -l; }
servers() { pgrep -f standin-engine | wc -l; }

# keyring_ok WHEN: the server has a keyring of the mapping's own for the
# key file, and it is the only one.
keyring_ok() {
  local kr
  kr=$(sed -n 's/^keyring=//p' /share/engine-args)
  case $kr in /share/run/keyrings/??????.keyring) ;; *) fail "$1: keyring=$kr" ;; esac
  ! grep -q '^ceph.keyfile=' /share/engine-args || fail "$1: the server got ceph.keyfile="
  ! grep -qF "$key" /share/engine-args || fail "$1: the key is on the server's command line"
  [ "$(stat -c %a "$kr")" = 600 ] || fail "$1: $kr has mode $(stat -c %a "$kr")"
  [ "$(cat "$kr")" = "$(printf '[client.csi-rbd-node]\n\tkey = %s' "$key")" ] ||
    fail "$1: $kr holds $(cat "$kr")"
  grep -qx "keyring_file=$kr" /share/run/nbd0 || fail "$1: the state does not own $kr"
  [ "$(ls /share/run/keyrings | wc -l)" -eq 1 ] || fail "$1: keyrings $(ls /share/run/keyrings)"
  say "$1: the server's keyring=$kr (0600), no ceph.keyfile="
}

"$rn" --help >/tmp/help 2>/tmp/err || fail "rbd-nbd --help failed"
grep -q -- --cookie /tmp/help || fail "rbd-nbd --help lists no --cookie"
[ ! -s /tmp/err ] || fail "rbd-nbd --help wrote on stderr: $(cat /tmp/err)"

# A log file in a missing directory is refused before the keyring is
# written (the check of ceph.log_file=, case C41), and leaves none.
rc=0; "$rn" "${csi[@]:0:5}" --log-file /nonexistent/x.log map "$NBD_EXPORT" --cookie="$volid" \
  2>/tmp/err || rc=$?
[ "$rc" -eq 1 ] && grep -q -- "--log-file /nonexistent/x.log: its directory /nonexistent" /tmp/err ||
  fail "map with a log file in a missing directory: rc $rc, $(cat /tmp/err)"
[ -z "$(ls /share/run/keyrings 2>/dev/null)" ] || fail "the failed map left $(ls /share/run/keyrings)"
say "a failed map left no keyring: $(cat /tmp/err)"

# With the StorageClass's mapOptions "connections=4", which ceph-csi
# appends as --connections=4.
dev=$("$rn" "${csi[@]}" map "$NBD_EXPORT" --try-netlink --reattach-timeout=300 \
  --io-timeout=0 --cookie="$volid" --connections=4) || fail "ceph-csi's map line failed"
say "map printed: $dev"
[ "$dev" = /dev/nbd0 ] || fail "map printed '$dev', not /dev/nbd0 alone"
backend=$(cat /sys/block/nbd0/backend)
[ "$backend" = "$volid;rbdx:connections=4;rbdx:identity=$(sed -n 's/^identity=//p' /share/run/nbd0)" ] &&
  grep -q '^identity=.' /share/run/nbd0 ||
  fail "backend identifier $backend, not the cookie, the count and the identity"
grep -qx "image=$NBD_EXPORT" /share/engine-args || fail "the image is not the server's"
grep -qx id=csi-rbd-node /share/engine-args || fail "no id=: $(cat /share/engine-args)"
grep -qx "mon_host=$mons" /share/engine-args || fail "no mon_host="
grep -qx ceph.log_file=/tmp/csi/rbd-nbd-vol.log /share/engine-args || fail "no ceph.log_file="
keyring_ok "map"
sup=$(pgrep -f "^($MAPPER|$rn) " | head -1)
for p in "$sup" "$(pgrep -f standin-engine)"; do
  [ "$(readlink "/proc/$p/fd/2")" = /tmp/csi/rbd-nbd-vol.log ] ||
    fail "process $p logs to $(readlink "/proc/$p/fd/2"), not the --log-file"
done
grep -q "supervising $NBD_EXPORT for map" /tmp/csi/rbd-nbd-vol.log ||
  fail "the log file lacks the supervisor's lines: $(cat /tmp/csi/rbd-nbd-vol.log)"
[ ! -e "/share/run/sup-$sup/supervisor.log" ] && [ ! -e "/share/run/sup-$sup/server.log" ] ||
  fail "logs in the run directory despite --log-file"
conns=$(sed -n 's/^connections=//p' /share/run/nbd0)
[ "$conns" = 4 ] || fail "$conns connections, not 4"
all_conns() { [ "$(tcp_conns "$NBD_PORT")" -eq "$conns" ]; }
wait_until 10 all_conns || fail "$(tcp_conns "$NBD_PORT") connections, the state says $conns"
head -c $((2 << 20)) /dev/urandom >/tmp/data
dd if=/tmp/data of=/dev/nbd0 bs=1M seek=16 oflag=direct status=none || fail "write failed"
sha256sum </tmp/data | cut -d' ' -f1 >/share/data.sha256
check_data() {
  [ "$(dd if=/dev/nbd0 bs=1M skip=16 count=2 iflag=direct status=none | sha256sum | cut -d' ' -f1)" = \
    "$(cat /share/data.sha256)" ] || fail "data read back differs ($1)"
}
check_data "after map"

list=$("$rn" list-mapped --format=json) || fail "list-mapped failed"
say "list-mapped: $list"
sup=$(pgrep -f "^($MAPPER|$rn) " | head -1)
pool=${NBD_EXPORT%%/*}
image=${NBD_EXPORT#*/}
[ "$list" = "[{\"id\":$sup,\"pool\":\"$pool\",\"namespace\":\"\",\"image\":\"$image\",\"snap\":\"\",\"device\":\"/dev/nbd0\",\"cookie\":\"$volid\"}]" ] ||
  fail "list-mapped --format=json: $list"

# The node plugin restarts: its rbd-nbd processes are gone.
"$rn" detach /dev/nbd0 || fail "detach failed"
[ "$(supervisors)" -eq 0 ] && [ "$(servers)" -eq 0 ] ||
  fail "detach left $(supervisors) supervisors, $(servers) servers"
[ -e /sys/block/nbd0/pid ] || fail "detach disconnected /dev/nbd0"
rc=0; "$rn" "${csi[@]}" attach "$NBD_EXPORT" --device /dev/nbd0 --cookie=other 2>/tmp/err || rc=$?
[ "$rc" -eq 1 ] && [ "$(cat /tmp/err)" = "rbd-nbd: cookie mismatch" ] ||
  fail "attach with another cookie: rc $rc, $(cat /tmp/err)"
rc=0; "$rn" "${csi[@]}" attach "$NBD_EXPORT" --device /dev/nbd0 2>/tmp/err || rc=$?
[ "$rc" -eq 1 ] && [ "$(cat /tmp/err)" = "rbd-nbd: must specify cookie to attach" ] ||
  fail "attach without a cookie: rc $rc, $(cat /tmp/err)"
# ceph-csi's heal.
out=$("$rn" "${csi[@]}" attach "$NBD_EXPORT" --device /dev/nbd0 --try-netlink \
  --reattach-timeout=300 --io-timeout=0 --cookie="$volid" --connections=4) ||
  fail "ceph-csi's attach line failed"
say "attach printed: $out"
[ "$out" = /dev/nbd0 ] || fail "attach printed '$out'"
[ "$(supervisors)" -eq 1 ] || fail "$(supervisors) supervisors after attach"
wait_until 20 all_conns || fail "$(tcp_conns "$NBD_PORT") connections after attach, not $conns"
check_data "after attach"
keyring_ok "attach"
[ "$(cat /sys/block/nbd0/backend)" = "$backend" ] || fail "attach changed the backend identifier"

# Again, and this time the run directory is lost too (a node plugin
# container without a hostPath for it), with a read waiting meanwhile:
# the count comes from the kernel's identifier; the attach line is
# ceph-csi's without mapOptions.
"$rn" detach "$NBD_EXPORT" || fail "detach by spec failed"
[ "$(supervisors)" -eq 0 ] && [ "$(servers)" -eq 0 ] || fail "the second detach left processes"
rm -rf /share/run
(dd if=/dev/nbd0 bs=1M skip=16 count=2 iflag=direct status=none | sha256sum | cut -d' ' -f1 \
  >/tmp/waiting.sha256) &
reader=$!
out=$("$rn" "${csi[@]}" attach "$NBD_EXPORT" --device /dev/nbd0 --try-netlink \
  --reattach-timeout=300 --io-timeout=0 --cookie="$volid") ||
  fail "ceph-csi's attach line without state failed"
[ "$out" = /dev/nbd0 ] || fail "the stateless attach printed '$out'"
[ "$(sed -n 's/^connections=//p' /share/run/nbd0)" = 4 ] ||
  fail "the stateless attach did not take 4 connections from the kernel's identifier"
wait_until 20 all_conns || fail "$(tcp_conns "$NBD_PORT") connections after the stateless attach"
wait "$reader" || fail "the read waiting across the stateless attach failed"
[ "$(cat /tmp/waiting.sha256)" = "$(cat /share/data.sha256)" ] ||
  fail "the read waiting across the stateless attach returned other data"
check_data "after the stateless attach"
keyring_ok "the stateless attach"

"$rn" unmap /dev/nbd0 || fail "unmap failed"
[ ! -e /sys/block/nbd0/pid ] || fail "/dev/nbd0 is still connected"
rc=0; "$rn" unmap "$NBD_EXPORT" 2>/tmp/err || rc=$?
[ "$rc" -eq 1 ] && [ "$(cat /tmp/err)" = "rbd-nbd: $NBD_EXPORT is not mapped" ] ||
  fail "unmap of the unmapped spec: rc $rc, $(cat /tmp/err)"
[ "$(supervisors)" -eq 0 ] && [ "$(servers)" -eq 0 ] || fail "processes left after unmap"
[ -z "$(ls /share/run 2>/dev/null | grep -vx -e lock -e keyrings)" ] || fail "state left: $(ls /share/run)"
[ -z "$(ls /share/run/keyrings)" ] || fail "unmap left the keyring $(ls /share/run/keyrings)"
grep -q "/dev/nbd0 unmapped" /tmp/csi/rbd-nbd-vol.log || fail "the log file lacks the unmap"
[ "$("$rn" list-mapped --format=json)" = "[]" ] || fail "list-mapped after unmap"

# -f: the process stays while the device is mapped; SIGTERM detaches.
"$rn" -f map "$NBD_EXPORT" --cookie=fg1 --connections=2 >/tmp/fg.out 2>/tmp/fg.err &
fg=$!
printed() { [ -s /tmp/fg.out ]; }
wait_until 30 printed || fail "map -f printed nothing: $(cat /tmp/fg.err)"
[ "$(cat /tmp/fg.out)" = /dev/nbd0 ] || fail "map -f printed '$(cat /tmp/fg.out)'"
sleep 1
kill -0 "$fg" 2>/dev/null || fail "map -f did not stay in the foreground"
kill -TERM "$fg"
wait "$fg" || fail "map -f exited $? on SIGTERM"
[ "$(supervisors)" -eq 0 ] && [ "$(servers)" -eq 0 ] || fail "SIGTERM to map -f left processes"
[ -e /sys/block/nbd0/pid ] || fail "SIGTERM to map -f disconnected /dev/nbd0"
out=$("$rn" attach "$NBD_EXPORT" --device /dev/nbd0 --cookie=fg1) || fail "attach after map -f failed"
[ "$out" = /dev/nbd0 ] || fail "attach after map -f printed '$out'"
check_data "after map -f, SIGTERM, attach"
# map -f of an image that is already mapped prints that device and stays;
# a signal then ends only that process, never the mapping it did not make.
"$rn" -f map "$NBD_EXPORT" --cookie=fg1 >/tmp/fg2.out 2>/tmp/fg2.err &
fg=$!
printed2() { [ -s /tmp/fg2.out ]; }
wait_until 30 printed2 || fail "map -f of a mapped image printed nothing: $(cat /tmp/fg2.err)"
[ "$(cat /tmp/fg2.out)" = /dev/nbd0 ] || fail "map -f of a mapped image printed '$(cat /tmp/fg2.out)'"
kill -TERM "$fg"
wait "$fg" || fail "the second map -f exited $? on SIGTERM"
[ "$(supervisors)" -eq 1 ] && [ "$(servers)" -eq 1 ] ||
  fail "SIGTERM to a map -f that found the image mapped stopped the mapping"
check_data "after SIGTERM to a second map -f"
"$rn" unmap "$NBD_EXPORT" || fail "unmap by spec failed"
[ ! -e /sys/block/nbd0/pid ] || fail "/dev/nbd0 is still connected after unmap by spec"

# --show-cookie prints "DEVICE COOKIE", and its output ends when map does,
# for a caller that reads it to the end (a pipe, as `$(...)`); and the
# supervisor keeps none of the caller's descriptors (fd 9 here, left
# without O_CLOEXEC).  Case C67.
("$rn" map "$NBD_EXPORT" --cookie=sc1 --show-cookie 9>/tmp/held | cat >/tmp/sc.out) &
pipe=$!
ended() { ! kill -0 "$pipe" 2>/dev/null; }
wait_until 60 ended || fail "the output of map --show-cookie never ended"
[ "$(cat /tmp/sc.out)" = "/dev/nbd0 sc1" ] || fail "map --show-cookie printed '$(cat /tmp/sc.out)'"
sup=$(pgrep -f "^($MAPPER|$rn) " | head -1)
held=$(ls -l "/proc/$sup/fd" | grep -e /tmp/held -e pipe: -e memfd:) &&
  fail "the supervisor holds its caller's descriptors: $held"
"$rn" unmap /dev/nbd0 || fail "unmap after --show-cookie failed"

# `rbd device map -t nbd` through the copy of rbd beside the personality:
# -o options become rbd-nbd flags (connections is rbdx's own).
rbdcli() { LD_LIBRARY_PATH=$COMPAT "$COMPAT/rbd" "$@"; }
dev=$(rbdcli --id admin device map -t nbd -o try-netlink,reattach-timeout=60,connections=2,notrim \
  "$NBD_EXPORT") || fail "rbd device map -t nbd failed"
say "rbd device map printed: $dev"
[ "$dev" = /dev/nbd0 ] || fail "rbd device map printed '$dev'"
grep -qx id=admin /share/engine-args || fail "rbd's --id did not reach the server"
grep -qx notrim=true /share/engine-args || fail "-o notrim did not reach the server as notrim=true"
[ "$(sed -n 's/^connections=//p' /share/run/nbd0)" = 2 ] || fail "-o connections=2 not used"
conns=2
wait_until 10 all_conns || fail "$(tcp_conns "$NBD_PORT") connections, not 2"
check_data "through rbd device map"
list=$(rbdcli device list -t nbd --format json) || fail "rbd device list -t nbd failed"
say "rbd device list: $list"
echo "$list" | grep -q "\"image\":\"$image\",\"snap\":\"\",\"device\":\"/dev/nbd0\"" ||
  fail "rbd device list -t nbd --format json: $list"
rbdcli device unmap -t nbd /dev/nbd0 || fail "rbd device unmap -t nbd failed"
[ ! -e /sys/block/nbd0/pid ] || fail "/dev/nbd0 is still connected after rbd device unmap"
[ "$(supervisors)" -eq 0 ] || fail "a supervisor is left after rbd device unmap"
dmesg | grep -E "I/O error|Buffer I/O" && fail "the kernel logged I/O errors"
say "ok"
EOF2

uml_run "$UML_DIR/guest-nbd-compat.sh" 300

want=$(cat "$UML_SHARE/data.sha256")
rbd export --no-progress "$img" "$UML_DIR/image.raw" >/dev/null
got=$(dd if="$UML_DIR/image.raw" bs=1M skip=16 count=2 status=none | sha256sum | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "the image does not hold the data the guest wrote"
say "ok: ceph-csi's map, list-mapped, detach, attach and unmap lines against the personality"

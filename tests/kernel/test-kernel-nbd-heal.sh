#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-kernel-nbd-heal: ceph-csi's volume healer against the rbd-nbd
# personality in a UML guest kernel, with I/O running across the heal.
# The command lines are ceph-csi's (internal/rbd/rbd_attach.go):
#   probe:  rbd-nbd --help (SetRbdNbdToolFeatures: exit 0, no stderr,
#           --cookie on stdout);
#   map:    rbd --id ID -m MONS --keyfile=FILE --log-file LOG map POOL/IMG
#             --device-type nbd --options try-netlink
#             --options reattach-timeout=300 --options io-timeout=0
#             --options cookie=VOLID --options connections=4
#           (appendNbdDeviceTypeAndOptions; the last one is a StorageClass's
#           mapOptions "nbd:connections=4", rbdx's own option);
#   list:   rbd device list --format=json --device-type nbd;
#   heal:   rbd-nbd --id ID -m MONS --keyfile=FILE --log-file LOG attach
#             POOL/IMG --device /dev/nbdX --try-netlink
#             --reattach-timeout=300 --io-timeout=0 --cookie=VOLID
#             --connections=4
#           (createPath with a device, appendRbdNbdCliOptions: what the
#           healer's NodeStageVolume runs after the node plugin restarted);
#   unmap:  rbd unmap /dev/nbdX --device-type nbd, then rbd unmap POOL/IMG
#           --device-type nbd, whose "rbd-nbd: POOL/IMG is not mapped"
#           ceph-csi takes as done (detachRBDImageOrDeviceSpec).
# The rbd CLI is a copy of Debian's rbd beside a link rbd-nbd -> the
# mapper (it runs the rbd-nbd beside its own executable); the mapper runs
# with its default run directory, /run/rbdx, as in a node plugin.
#
# As in test-kernel-nbd-compat, the guest cannot reach the cluster: the
# mapper's engine is the stand-in (tests/kernel/standin-engine), which
# relays to the host's nbdkit with the plugin.  The host serves pool=rbd,
# so the stand-in reaches image IMG or OTHER by export name
# (STANDIN_URI), and each states its own identity.
# Asserts, in the guest:
#   - map prints /dev/nbd0; the kernel's backend identifier starts with
#     the cookie and the count; the state records the image's identity
#     (POOLID/IMAGEID, computed on the host from `ceph osd pool ls` and
#     `rbd info`); 4 connections; list shows the mapping;
#   - fio (randwrite, 4-64 KiB, 16 in flight, crc32c verify) runs; while
#     requests are in flight the supervisor and the engine are killed
#     with SIGKILL (by PID) and /run/rbdx is deleted; the device stays
#     connected and the kernel holds fio's requests; ceph-csi's list
#     shows no device before and after the deletion (a device without
#     its process is not mapped for waitForPath, which lets the healer
#     attach);
#   - an attach with another cookie is refused ("rbd-nbd: cookie
#     mismatch"), and so is an attach with the right cookie naming another
#     image (the kernel's identifier pins the identity), both exit 1,
#     without touching the device;
#   - ceph-csi's heal line prints /dev/nbd0; fio finishes with no error
#     and its verify passes; the device serves the same identity (the new
#     state, `rbdx status`), with 4 connections again (the state, `rbdx
#     status`, and 4 established connections to the host);
#   - both unmap lines behave as ceph-csi expects; the kernel logged no
#     I/O error.
# On the host: the image holds what the guest read back after the heal.
# RBDX_CSI_TRANSCRIPT=FILE writes the ceph-csi lines with their stdout,
# stderr and exit status to FILE (the key and key file path redacted).
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/kernel/lib-uml.sh"
uml_requires
requires_cluster
requires ceph
mapper=$(uml_mapper nbd-compat)

img=$(new_image 64M)
other=$(new_image 64M)
pool_id=$(ceph osd pool ls detail --format json |
  /usr/bin/python3 -c 'import json, sys; print([p["pool_id"] for p in json.load(sys.stdin) if p["pool_name"] == "rbd"][0])')
image_id=$(rbd info --format json "$img" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
say "the image's identity: $pool_id/$image_id"
uml_setup
sock="$UML_DIR/nbd.sock"
uml_serve "$sock" pool=rbd
uml_bridge "$sock"
uml_guest_mount "$(dirname "$mapper")"
uml_guest_mount "$RBDX_BUILD/tests/kernel"
compat=$(uml_rbd_compat "$mapper")
uml_guest_env NBD_EXPORT="$img" OTHER_EXPORT="$other" IDENTITY="$pool_id/$image_id" \
  MAPPER="$mapper" COMPAT="$compat" \
  STANDIN_ENGINE="$(cd "$RBDX_BUILD/tests/kernel" && pwd -P)/standin-engine"

cat >"$UML_DIR/guest-nbd-heal.sh" <<'EOF2'
load_nbd
# ceph-csi's node plugin sets no run directory: the mapper's default.
unset RBDX_RUN_DIR
run=/run/rbdx
export RBDX_ENGINE=$STANDIN_ENGINE
export STANDIN_URI="nbd://$NBD_HOST:$NBD_PORT/${NBD_EXPORT#*/}"
export PATH=$COMPAT:$PATH LD_LIBRARY_PATH=$COMPAT
volid=0001-0009-rook-ceph-0000000000000002-ab6b5e3f-1c9c-11ee-8d7e-0242ac110003
mons=$NBD_HOST:6789
mkdir -p /tmp/csi/log /etc/ceph
# The node plugin's container has a ceph.conf (ceph-csi writes one with
# the cephx settings); the monitors come with each command line.
printf '[global]\nauth_cluster_required = cephx\nauth_service_required = cephx\nauth_client_required = cephx\n' \
  >/etc/ceph/ceph.conf
key=AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==
echo "$key" >/tmp/csi/keyfile-1
chmod 0600 /tmp/csi/keyfile-1
log=/tmp/csi/log/rbd-nbd-$volid.log
# createPath's first arguments.
csi=(--id csi-rbd-node -m "$mons" --keyfile=/tmp/csi/keyfile-1 --log-file "$log")
t=/share/transcript.txt
: >"$t"
# csi_run CMD...: run a ceph-csi line, its output in /tmp/out and
# /tmp/err, its status in $rc; record all four in the transcript.
csi_run() {
  rc=0
  "$@" >/tmp/out 2>/tmp/err || rc=$?
  { printf '$'; printf ' %q' "$@"; printf '\n'
    sed 's/^/  stdout: /' /tmp/out; sed 's/^/  stderr: /' /tmp/err
    printf '  exit: %d\n\n' "$rc"; } >>"$t"
}
note() { printf '# %s\n\n' "$*" >>"$t"; }
state() { sed -n "s/^$1=//p" "$run/nbd0"; }
all_conns() { [ "$(tcp_conns "$NBD_PORT")" -eq 4 ]; }
inflight() { [ "$(awk '{print $1 + $2}' /sys/block/nbd0/inflight)" -gt 0 ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }

# SetRbdNbdToolFeatures: rbd-nbd --help, stdout naming --cookie, no stderr.
rc=0; rbd-nbd --help >/tmp/out 2>/tmp/err || rc=$?
[ "$rc" -eq 0 ] && [ ! -s /tmp/err ] && grep -q -- --cookie /tmp/out ||
  fail "rbd-nbd --help: exit $rc, stderr $(cat /tmp/err)"
note "rbd-nbd --help: exit 0, stderr empty, $(wc -l </tmp/out) lines on stdout, among them: $(grep -- --cookie /tmp/out | tr -s ' ')"

csi_run rbd "${csi[@]}" map "$NBD_EXPORT" --device-type nbd --options try-netlink \
  --options reattach-timeout=300 --options io-timeout=0 --options "cookie=$volid" \
  --options connections=4
[ "$rc" -eq 0 ] || fail "ceph-csi's map line: exit $rc, $(cat /tmp/err)"
[ "$(cat /tmp/out)" = /dev/nbd0 ] || fail "map printed '$(cat /tmp/out)', not /dev/nbd0"
backend=$(cat /sys/block/nbd0/backend)
case $backend in "$volid;rbdx:connections=4"*) ;; *) fail "backend identifier $backend" ;; esac
[ "$(state identity)" = "$IDENTITY" ] || fail "mapped identity $(state identity), not $IDENTITY"
[ "$(state connections)" = 4 ] || fail "$(state connections) connections, not 4"
wait_until 20 all_conns || fail "$(tcp_conns "$NBD_PORT") connections to the host, not 4"
say "mapped: backend $backend, identity $(state identity)"

csi_run rbd device list --format=json --device-type nbd
[ "$rc" -eq 0 ] || fail "ceph-csi's list line: exit $rc, $(cat /tmp/err)"
grep -q "\"id\":$(state supervisor),\"pool\":\"rbd\",\"namespace\":\"\",\"image\":\"${NBD_EXPORT#*/}\",\"snap\":\"\",\"device\":\"/dev/nbd0\"" \
  /tmp/out || fail "rbd device list: $(cat /tmp/out)"

# fio on a region of the device, left running across the heal.
fio --name=heal --filename=/dev/nbd0 --offset=8M --size=48M --rw=randwrite \
  --bsrange=4k-64k --direct=1 --ioengine=libaio --iodepth=16 --verify=crc32c \
  --do_verify=1 --verify_fatal=1 --output=/share/fio.txt &
fio=$!
wait_until 60 inflight || fail "fio has no request in flight"
sup=$(state supervisor)
eng=$(state server)
[ "$sup" -gt 1 ] && [ "$eng" -gt 1 ] || fail "no supervisor ($sup) or engine ($eng) in the state"
grep -q standin-engine "/proc/$eng/cmdline" || fail "process $eng is not the engine"
# The supervisor first: once its SIGKILL is pending it runs no more code,
# so it cannot restart the engine.
kill -9 "$sup" "$eng"
wait_until 20 gone "$sup" || fail "the supervisor $sup outlived SIGKILL"
wait_until 20 gone "$eng" || fail "the engine $eng outlived SIGKILL"
kill -0 "$fio" 2>/dev/null || fail "fio ended before the kill (make its job larger)"
# The healer's NodeStageVolume first looks for the image among the
# mapped devices (waitForPath): a device without its process must not
# be listed, with its state file or without, or ceph-csi never attaches.
note "kill -9 $sup $eng (supervisor, engine) while fio runs on /dev/nbd0"
csi_run rbd device list --format=json --device-type nbd
[ "$rc" -eq 0 ] && [ "$(cat /tmp/out)" = "[]" ] ||
  fail "list with the processes dead: exit $rc, $(cat /tmp/out) $(cat /tmp/err)"
rm -rf "$run"
note "rm -rf $run"
csi_run rbd device list --format=json --device-type nbd
[ "$rc" -eq 0 ] && [ "$(cat /tmp/out)" = "[]" ] ||
  fail "list with the state gone: exit $rc, $(cat /tmp/out) $(cat /tmp/err)"
[ -e /sys/block/nbd0/pid ] || fail "the kill disconnected /dev/nbd0"
# The kernel holds fio's I/O for the reattach timeout: fio is still
# running and no request failed (the heal below then asserts that every
# write completed and verifies).  /sys/block/nbd0/inflight is only shown,
# not required: whether the requests fio has waiting count there depends
# on where each was when the connections died (a CI run once read 0 for
# 20 s after the kill, the guest kernel 6.1).
kill -0 "$fio" 2>/dev/null || fail "fio ended after the kill"
! dmesg | grep -E "I/O error|Buffer I/O" || fail "the kernel failed a request after the kill"
say "killed supervisor $sup and engine $eng, removed $run; $(cat /sys/block/nbd0/inflight) counted in flight"
note "/dev/nbd0 still connected; the kernel holds" \
  "$(awk '{print $1 + $2}' /sys/block/nbd0/inflight) request(s) of fio's"

# Refused: another cookie; the right cookie with another image.
csi_run rbd-nbd "${csi[@]}" attach "$NBD_EXPORT" --device /dev/nbd0 --try-netlink \
  --reattach-timeout=300 --io-timeout=0 --cookie=other-volume --connections=4
[ "$rc" -eq 1 ] && [ "$(cat /tmp/err)" = "rbd-nbd: cookie mismatch" ] ||
  fail "attach with another cookie: exit $rc, $(cat /tmp/err)"
STANDIN_URI="nbd://$NBD_HOST:$NBD_PORT/${OTHER_EXPORT#*/}" \
  csi_run rbd-nbd "${csi[@]}" attach "$OTHER_EXPORT" --device /dev/nbd0 --try-netlink \
  --reattach-timeout=300 --io-timeout=0 --cookie="$volid" --connections=4
[ "$rc" -eq 1 ] && grep -q "not the image $IDENTITY that /dev/nbd0 was mapped from" /tmp/err ||
  fail "attach of another image with the cookie: exit $rc, $(cat /tmp/err)"
[ "$(wc -l </tmp/err)" -eq 1 ] && grep -q '^rbd-nbd: ' /tmp/err ||
  fail "the refusal is not one rbd-nbd: line: $(cat /tmp/err)"
kill -0 "$fio" 2>/dev/null || fail "fio ended during the refused attaches"
[ "$(tcp_conns "$NBD_PORT")" -eq 0 ] || fail "a refused attach left connections"

# The healer.
csi_run rbd-nbd "${csi[@]}" attach "$NBD_EXPORT" --device /dev/nbd0 --try-netlink \
  --reattach-timeout=300 --io-timeout=0 --cookie="$volid" --connections=4
[ "$rc" -eq 0 ] || fail "ceph-csi's attach line: exit $rc, $(cat /tmp/err)"
[ "$(cat /tmp/out)" = /dev/nbd0 ] || fail "attach printed '$(cat /tmp/out)'"
rc=0; wait "$fio" || rc=$?
[ "$rc" -eq 0 ] || { cat /share/fio.txt; fail "fio failed across the heal (exit $rc)"; }
grep -q 'err= 0' /share/fio.txt || { cat /share/fio.txt; fail "fio reported errors"; }
! grep -q 'verify: bad' /share/fio.txt || fail "fio's verify failed"
say "fio: $(grep -E 'WRITE:|READ:' /share/fio.txt | tr -s ' ' | tr '\n' ';')"
[ "$(state identity)" = "$IDENTITY" ] || fail "healed identity $(state identity), not $IDENTITY"
[ "$(state connections)" = 4 ] || fail "$(state connections) connections after the heal"
[ "$(state supervisor)" != "$sup" ] || fail "the state names the killed supervisor"
wait_until 20 all_conns || fail "$(tcp_conns "$NBD_PORT") connections to the host after the heal"
"$MAPPER" status /dev/nbd0 >/tmp/status || fail "rbdx status failed"
grep -q "^/dev/nbd0: $NBD_EXPORT identity $IDENTITY\$" /tmp/status &&
  grep -q "^  connections 4," /tmp/status || fail "rbdx status: $(cat /tmp/status)"
case $(cat /sys/block/nbd0/backend) in "$backend") ;; *) fail "the heal changed the backend identifier" ;; esac
dd if=/dev/nbd0 bs=1M skip=8 count=48 iflag=direct status=none | sha256sum | cut -d' ' -f1 \
  >/share/region.sha256
say "healed: $(tr '\n' ' ' </tmp/status)"
note "fio finished: exit 0, err= 0, verify passed; rbdx status: $(head -2 /tmp/status | tr -s ' ' | tr '\n' ';')" \
  "$(tcp_conns "$NBD_PORT") connections"

csi_run rbd unmap /dev/nbd0 --device-type nbd
[ "$rc" -eq 0 ] || fail "ceph-csi's unmap line: exit $rc, $(cat /tmp/err)"
[ ! -e /sys/block/nbd0/pid ] || fail "/dev/nbd0 is still connected"
csi_run rbd unmap "$NBD_EXPORT" --device-type nbd
[ "$rc" -ne 0 ] && grep -qF "rbd-nbd: $NBD_EXPORT is not mapped" /tmp/err ||
  fail "unmap of the unmapped image: exit $rc, $(cat /tmp/err)"
[ -z "$(pgrep -f standin-engine)" ] || fail "an engine is left"
[ -z "$(ls "$run/keyrings" 2>/dev/null)" ] || fail "a keyring is left: $(ls "$run/keyrings")"
dmesg | grep -E "I/O error|Buffer I/O" && fail "the kernel logged I/O errors"
say "ok"
EOF2

uml_run "$UML_DIR/guest-nbd-heal.sh" 400

if [ -n "${RBDX_CSI_TRANSCRIPT:-}" ]; then
  key=AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==
  sed -e "s|$key|<key>|g" -e 's|--keyfile=[^ ]*|--keyfile=<key file>|g' \
    -e 's|/run/rbdx/keyrings/[^ ]*|<keyring>|g' "$UML_SHARE/transcript.txt" >"$RBDX_CSI_TRANSCRIPT"
  say "transcript in $RBDX_CSI_TRANSCRIPT"
fi
want=$(cat "$UML_SHARE/region.sha256")
rbd export --no-progress "$img" "$UML_DIR/image.raw" >/dev/null
got=$(dd if="$UML_DIR/image.raw" bs=1M skip=8 count=48 status=none | sha256sum | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "the image does not hold what the guest read after the heal"
say "ok: ceph-csi's map, list, heal (attach after SIGKILL and a lost /run/rbdx) and unmap with fio across it"

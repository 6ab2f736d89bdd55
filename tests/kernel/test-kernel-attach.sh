#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-kernel-attach: OpenStack-style attach in a UML guest kernel.  A
# recorded Cinder RBD connection_info (the sandbox's monitors, a cephx user
# with its keyring, front-end qos_specs, access_mode) goes through
# `rbdx map --connection-info`, I/O on the stable name /dev/rbdx/POOL/VOLUME,
# and `rbdx unmap --connection-info`, as os-brick's connect and disconnect.
#
# As in test-kernel-mapper, the guest cannot reach the cluster, so the
# mapper's engine is a stand-in (tests/kernel/standin-engine) that records its command line and forwards
# to the host's real rbdx server; the host then starts the real plugin
# with exactly the recorded plugin parameters (user, monitors, the keyring
# file the mapper wrote from the connection_info, qos.*) and proves they
# serve the volume.
# Asserts, in the guest:
#   - map prints os-brick's device info {"type":"block","path":
#     "/dev/rbdx/POOL/VOLUME","device":"/dev/nbd0"}; the link points at
#     /dev/nbd0; the server got image=VOLUME, id=, mon_host= (hosts:ports),
#     keyring= (a 0600 file of its own in RUN_DIR/keyrings holding
#     data.keyring, in a 0700 directory, owned by the state, which is
#     0600 in a 0755 run directory (as rbdx@.socket makes it) and holds
#     no key), qos.iops_limit= and the other
#     qos_specs; data written through the link reads back;
#   - mapping the same connection_info again prints the same device info
#     and writes no other keyring; unmapping another, unmapped volume
#     leaves the keyring;
#   - unmap --connection-info disconnects, removes the link, the keyring
#     file and the state; unmapping it again succeeds quietly;
#   - access_mode "ro" (just the data object given) maps read-only;
#   - a connection_info of another driver_volume_type is refused (exit 2).
# On the host: the recorded parameters serve the volume through the real
# plugin, and the guest's data is in the image.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/kernel/lib-uml.sh"
uml_requires
requires_cluster
requires ceph
mapper=$(uml_mapper connection-info)

sbdir=$(dirname "$CEPH_CONF")
"$RBDX_TESTS/ceph-sandbox" status "$sbdir" >/dev/null 2>&1 ||
  skip "CEPH_CONF is not a tests/ceph-sandbox cluster (cannot add a user)"
user="cinder$$"
at_exit "ceph auth rm client.$user >/dev/null 2>&1; rm -f $sbdir/ceph.client.$user.keyring"
keyring=$("$RBDX_TESTS/ceph-sandbox" add-user "$sbdir" "$user")

img=$(new_image 64M)
uml_setup
[ -x "$UML_DIR/root/usr/bin/nbdkit" ] || skip "the guest root has no nbdkit"
sock="$UML_DIR/nbd.sock"
uml_serve_for_mapper "$sock" "$img" "$mapper"

# The recorded connection_info: what Cinder's RBD driver returns, with this
# sandbox's monitors (address and port from its conf) and user.
python3 - "$CEPH_CONF" "$img" "$user" "$keyring" >"$UML_SHARE/conn.json" <<'PY'
import json, re, sys
conf, img, user, keyring = sys.argv[1:]
mons = re.search(r"mon[ _]host\s*=\s*(.*)", open(conf).read()).group(1)
addrs = re.findall(r"v1:([0-9.]+):([0-9]+)", mons) or re.findall(r"([0-9.]+):([0-9]+)", mons)
print(json.dumps({
    "driver_volume_type": "rbd",
    "data": {
        "name": img, "hosts": [a for a, _ in addrs], "ports": [p for _, p in addrs],
        "cluster_name": "ceph", "auth_enabled": True, "auth_username": user,
        "secret_type": "ceph", "secret_uuid": "0a1b2c3d-0000-4000-8000-000000000001",
        "keyring": open(keyring).read(), "volume_id": "9f1e0d2c-volume",
        "access_mode": "rw", "discard": True,
        "qos_specs": {"total_iops_sec": "500", "read_bytes_sec": 10485760,
                      "write_iops_sec_max": 800},
    }}))
PY
mon_host=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["data"]
print(",".join("%s:%s" % hp for hp in zip(d["hosts"], d["ports"])))' "$UML_SHARE/conn.json")
uml_guest_env MAPPER="$mapper" RBDX_PLUGIN=/plugin/rbdx.so VOLUME="$img" \
  CINDER_USER="$user" MON_HOST="$mon_host" \
  STANDIN_ENGINE="$(cd "$RBDX_BUILD/tests/kernel" && pwd -P)/standin-engine"

cat >"$UML_DIR/guest-attach.sh" <<'EOF2'
load_nbd
export RBDX_ENGINE=$STANDIN_ENGINE
link="/dev/rbdx/$VOLUME"

out=$("$MAPPER" map --connection-info /share/conn.json) || fail "map --connection-info failed"
say "map printed: $out"
[ "$out" = "{\"type\":\"block\",\"path\":\"$link\",\"device\":\"/dev/nbd0\"}" ] ||
  fail "unexpected device info: $out"
[ "$(readlink "$link")" = /dev/nbd0 ] || fail "$link does not point at /dev/nbd0"
grep -qx "image=$VOLUME" /share/engine-args || fail "the volume is not the server's image="
grep -qx "id=$CINDER_USER" /share/engine-args || fail "no id=$CINDER_USER"
grep -qx "mon_host=$MON_HOST" /share/engine-args || fail "no mon_host=$MON_HOST"
kr=$(sed -n 's/^keyring=//p' /share/engine-args)
case $kr in /share/run/keyrings/??????.keyring) ;; *) fail "no keyring= of its own in /share/run/keyrings: '$kr'" ;; esac
grep -qx "qos.iops_limit=500" /share/engine-args || fail "no qos.iops_limit=500"
grep -qx "qos.read_bps_limit=10485760" /share/engine-args || fail "no qos.read_bps_limit"
grep -qx "qos.write_iops_burst=800" /share/engine-args || fail "no qos.write_iops_burst"
! grep -qx -- --readonly /share/engine-args || fail "rw volume mapped read-only"
[ "$(stat -c %a "$kr")" = 600 ] || fail "the keyring file is mode $(stat -c %a "$kr")"
[ "$(stat -c %a /share/run)" = 755 ] || fail "the run directory is mode $(stat -c %a /share/run), not 0755 (rbdx@.socket's)"
[ "$(stat -c %a /share/run/keyrings)" = 700 ] || fail "the keyrings directory is mode $(stat -c %a /share/run/keyrings)"
[ "$(stat -c %a /share/run/nbd0)" = 600 ] || fail "the state file is mode $(stat -c %a /share/run/nbd0)"
grep -qx "keyring_file=$kr" /share/run/nbd0 || fail "the state does not own $kr: $(cat /share/run/nbd0)"
secret=$(sed -n 's/^[[:space:]]*key *= *//p' "$kr")
[ -n "$secret" ] || fail "no key in $kr"
! grep -qF -- "$secret" /share/run/nbd0 || fail "the key is in the state file"
grep -q "client.$CINDER_USER" "$kr" || fail "the keyring file does not hold the user's key"
cp /share/engine-args /share/recorded-args
head -c $((1 << 20)) /dev/urandom >/tmp/data
dd if=/tmp/data of="$link" bs=1M seek=8 oflag=direct status=none || fail "write through $link failed"
[ "$(dd if="$link" bs=1M skip=8 count=1 iflag=direct status=none | sha256sum)" = \
  "$(sha256sum </tmp/data)" ] || fail "data read back through $link differs"
sha256sum </tmp/data | cut -d' ' -f1 >/share/data.sha256
again=$("$MAPPER" map --connection-info - </share/conn.json) || fail "mapping again failed"
[ "$again" = "$out" ] || fail "mapping again printed $again"
[ "$(ls /share/run/keyrings)" = "$(basename "$kr")" ] || fail "mapping again wrote a keyring: $(ls /share/run/keyrings)"
# Unmapping a volume that is not mapped leaves the mapped one's keyring.
sed "s|\"name\": \"$VOLUME\"|\"name\": \"${VOLUME%%/*}/other-$$\"|" /share/conn.json >/tmp/other.json
grep -q "other-$$" /tmp/other.json || fail "cannot make another volume's connection_info"
"$MAPPER" unmap --connection-info /tmp/other.json || fail "unmap of an unmapped volume failed"
[ -e "$kr" ] || fail "unmap of an unmapped volume removed the mapped volume's keyring"
step mapped
wait_host checked 120

"$MAPPER" unmap --connection-info /share/conn.json || fail "unmap --connection-info failed"
[ ! -e /sys/block/nbd0/pid ] || fail "/dev/nbd0 is still connected"
[ ! -e "$link" ] && [ ! -L "$link" ] || fail "$link is left"
[ ! -e "$kr" ] || fail "the keyring file is left"
"$MAPPER" unmap --connection-info /share/conn.json || fail "unmap of an unmapped volume failed"

# Just the data object, read-only.
python3 -c 'import json, sys
d = json.load(open("/share/conn.json"))["data"]
d["access_mode"] = "ro"
print(json.dumps(d))' >/tmp/ro.json 2>/dev/null ||
  sed 's/"access_mode": "rw"/"access_mode": "ro"/' /share/conn.json >/tmp/ro.json
out=$("$MAPPER" map --connection-info /tmp/ro.json) || fail "read-only map failed"
[ "$(cat /sys/block/nbd0/ro)" = 1 ] || fail "access_mode ro did not map read-only"
grep -qx -- --readonly /share/engine-args || fail "no --readonly for access_mode ro"
"$MAPPER" unmap --connection-info /tmp/ro.json || fail "unmap of the read-only volume failed"

echo '{"driver_volume_type": "iscsi", "data": {"name": "rbd/x"}}' >/tmp/iscsi.json
rc=0; "$MAPPER" map --connection-info /tmp/iscsi.json 2>/tmp/err || rc=$?
[ "$rc" -eq 2 ] && grep -q "not rbd" /tmp/err || fail "an iscsi connection_info gave exit $rc: $(cat /tmp/err)"
[ -z "$(ls /share/run 2>/dev/null | grep -vxE 'lock|keyrings')" ] || fail "state left: $(ls /share/run)"
[ -z "$(ls /share/run/keyrings 2>/dev/null)" ] || fail "keyrings left: $(ls /share/run/keyrings)"
say "ok"
EOF2

uml_boot "$UML_DIR/guest-attach.sh"
uml_wait_step mapped 180
# The real plugin with the recorded parameters (the keyring path is the
# guest's /share, which is $UML_SHARE here) serves the volume.
mapfile -t params < <(grep -E '^(id|mon_host|keyring|qos\.[a-z_]+)=' "$UML_SHARE/recorded-args" |
  sed "s|^keyring=/share/|keyring=$UML_SHARE/|")
say "the recorded parameters: ${params[*]}"
env -u CEPH_CONF nbdkit -U "$(new_socket)" "$RBDX_PLUGIN" "$img" "${params[@]}" \
  --run 'nbdinfo --size "$uri"' >"$UML_DIR/real.out" 2>&1 ||
  fail "the real plugin does not serve with the recorded parameters: $(cat "$UML_DIR/real.out")"
[ "$(cat "$UML_DIR/real.out")" = $((64 << 20)) ] || fail "real plugin: $(cat "$UML_DIR/real.out")"
uml_signal checked
uml_finish 300

want=$(cat "$UML_SHARE/data.sha256")
rbd export --no-progress "$img" "$UML_DIR/image.raw" >/dev/null
got=$(dd if="$UML_DIR/image.raw" bs=1M skip=8 count=1 status=none | sha256sum | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "the image does not hold the data the guest wrote"
say "ok: map/unmap --connection-info, the stable link, the recorded parameters serve the volume"

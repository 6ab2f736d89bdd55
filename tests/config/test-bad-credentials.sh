#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Proves: wrong cephx credentials make nbdkit exit non-zero before
# serving, with one error naming the user (nbdkit-rbdx-plugin.pod,
# PARAMETERS id=, keyring=): id= with the "client." prefix, a user that
# does not exist, a missing keyring file, a keyring with the wrong
# secret (also when the conf names the right keyring: keyring= wins), a
# keyring without a key for the id, and a user whose caps do not allow
# opening the image.  Positive controls: a restricted user (profile rbd
# on pool rbd) serves reads and writes via id= + keyring= and via id=
# alone; a user with read-only caps serves with nbdkit -r.  Documents
# that without -r such a user passes the start-up probe (which opens
# read-only) and each connection is then refused with a caps message.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires qemu-io ceph ceph-authtool
. "$RBDX_TESTS/config/config-lib.sh"

img=$(new_image 16M --image-feature layering)
rw='qemu-io -f raw -c "write -P 0x6b 0 64k" -c "read -P 0x6b 0 64k" "$uri"'
ro='qemu-io -r -f raw -c "read -P 0x6b 0 64k" "$uri"'
u="cfg$$"

# Rejected while parsing.
refused "id='client.x'" "without the 'client.' prefix" "id=x" -- "$img" id=client.x
refused "keyring='$CFG_SCRATCH/none'" "cannot read it" -- \
  "$img" "keyring=$CFG_SCRATCH/none"

# Rejected by the cluster (in .get_ready, before the fork and serving).
refused "client.nosuch$$" "refused the key" -- "$img" "id=nosuch$$"
ceph-authtool --create-keyring "$CFG_SCRATCH/wrong-admin" --gen-key \
  -n client.admin >/dev/null
refused "client.admin" "refused the key" -- \
  "$img" "keyring=$CFG_SCRATCH/wrong-admin"
: >"$CFG_SCRATCH/empty"
refused "client.admin" -- "$img" "keyring=$CFG_SCRATCH/empty"

# A restricted user: the ordinary way to run rbdx.
sandbox_user "${u}rw"
rwkr=$USER_KEYRING
cp "$rwkr" "$CFG_SCRATCH/rw.keyring"
served "$rw" -- "$img" "id=${u}rw" "keyring=$CFG_SCRATCH/rw.keyring"
served "$rw" -- "$img" "id=${u}rw"           # keyring from the conf
# keyring= replaces the conf's keyring for this user: a wrong secret
# there is refused although the conf names the right one.
ceph-authtool --create-keyring "$CFG_SCRATCH/wrong-rw" --gen-key \
  -n "client.${u}rw" >/dev/null
refused "client.${u}rw" "refused the key" -- \
  "$img" "id=${u}rw" "keyring=$CFG_SCRATCH/wrong-rw"
# A keyring that has no key for this id at all.
refused "client.${u}rw" -- \
  "$img" "id=${u}rw" "keyring=$(dirname "$CEPH_CONF")/ceph.client.admin.keyring"

# A user that may talk to the monitors but has no OSD caps.  Ceph 16
# answers its open with EPERM ("may not open image"); OSDs of Ceph 17 and
# later refuse its connection and the start-up probe's bounded OSD
# timeout ends the wait ("could not open image"): both name the caps.
sandbox_user "${u}nocaps" mon 'allow r'
refused "client.${u}nocaps" "open image '$img'" "caps" -- \
  "$img" "id=${u}nocaps" "keyring=$USER_KEYRING"

# A user that may only read.
sandbox_user "${u}ro" mon 'profile rbd' osd 'profile rbd-read-only pool=rbd'
rokr=$USER_KEYRING
served "$rw" -- "$img"                       # put data there as admin
served "$ro" -- -r "$img" "id=${u}ro" "keyring=$rokr"
# Without -r the start-up probe (read-only) passes; each connection
# then fails to open the image read-write, naming the caps.
errf="$CFG_SCRATCH/ro-rw.err"
if timeout 60 nbdkit -U "$(new_socket)" "$RBDX_PLUGIN" "$img" "id=${u}ro" "keyring=$rokr" \
     --run "$ro" >/dev/null 2>"$errf"; then
  fail "a read-write open by a read-only user succeeded: $(cat "$errf")"
fi
grep -qF "client.${u}ro may not open image '$img' (check its cephx caps) for a connection that may write: a writable open needs osd 'profile rbd pool=rbd' (with read-only caps, serve with nbdkit -r)" \
  "$errf" || fail "no caps message for a read-only user: $(cat "$errf")"
say "ok"

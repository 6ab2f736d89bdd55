#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-c24-secrets: case C24 (tests/README.md): a keyring from a
# connection_info is written only once every check passed, belongs to
# the mapping that wrote it and is removed only by that mapping's end; a
# raw key is refused on a command line.  No cluster, no kernel: the
# servers are stand-ins (RBDX_NBDKIT, RBDX_ENGINE) that record a start.
# Asserts:
#   - as user nobody, RBDX_RUN_DIR=D (D nobody's own, so a keyring could
#     be written there): map --connection-info with an inline keyring
#     fails "needs root" and leaves D empty; map rbd/x ceph.key=KEY (and
#     key=, -o ceph.keyfile=) exits 2 naming the parameter and pointing
#     to keyring=FILE, without showing KEY, and leaves D empty;
#   - as root, on a host without an NBD driver: the failed map leaves no
#     keyring in D/keyrings (skipped where the host has one: the map
#     would load it);
#   - with rbd/ns/img recorded as mapped (a state file whose supervisor
#     is a live process of this test, owning D/keyrings/K1.keyring) and
#     an old-style D/keyrings/rbd%ns%img.keyring that another live
#     mapping owns: unmap --connection-info of the unmapped rbd/ns%img
#     succeeds and removes neither, nor the states;
#   - a keyring no state names (what a map and its supervisor, both
#     SIGKILLed before the mapping was saved, leave): list-mapped, which
#     does not take RUN_DIR/lock, leaves it; the next unmap, which does,
#     removes it and nothing else;
#   - a mapping whose supervisor is dead and whose device is gone is
#     forgotten with its own keyring file (list-mapped), while a state
#     naming a file outside D/keyrings removes nothing there.
# The keyring's mode (0600) while mapped and its removal at unmap are
# tests/kernel/test-kernel-attach.sh; state file and run directory modes
# tests/unit/test-state.c.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/mapper/mapper-lib.sh"
mapper_requires
requires python3
nobody_requires

key=AQBvb2tleWtleWtleWtleWtleWtleWtleWtleWsecret==
d=$(tmpdir)
chmod 0755 "$d"
mkdir "$d/bin" "$d/D"
chown nobody "$d/D"
standin_servers "$d"
export RBDX_RUN_DIR=$d/D RBDX_DEV_DIR=$d/dev
conninfo() { # conninfo NAME: a connection_info with an inline keyring
  python3 - "$1" "$key" <<'PY'
import json, sys
print(json.dumps({"driver_volume_type": "rbd", "data": {
    "name": sys.argv[1], "auth_enabled": True, "auth_username": "cinder",
    "keyring": "[client.cinder]\n\tkey = %s\n" % sys.argv[2],
    "hosts": ["127.0.0.1"], "ports": ["6789"]}}))
PY
}
run() { # run WANT-STATUS CMD...: stderr in $d/err
  local want=$1 rc=0
  shift
  "$@" >"$d/out" 2>"$d/err" || rc=$?
  [ $rc -eq "$want" ] || fail "$* exited $rc, not $want: $(cat "$d/err")"
}
d_empty() {
  [ -z "$(find "$d/D" -mindepth 1 -not -name lock)" ] ||
    fail "$1: left in RBDX_RUN_DIR: $(find "$d/D" -mindepth 1 -printf '%p %m\n')"
  ! grep -rqF "$key" "$d/D" || fail "$1: the key is in a file under $d/D"
  [ ! -e "$d/started" ] || fail "$1: a server was started: $(cat "$d/started")"
}

conninfo rbd/ns/img >"$d/ci.json"
chmod 0644 "$d/ci.json"
run 1 as_nobody "$rbdx" map --connection-info "$d/ci.json"
grep -q "needs root" "$d/err" || fail "map as nobody said: $(cat "$d/err")"
d_empty "map --connection-info as nobody"
say "as nobody: the failed map left no keyring (RBDX_RUN_DIR empty)"

for p in "ceph.key=$key" "key=$key"; do
  run 2 as_nobody "$rbdx" map rbd/x "$p"
  grep -qF "parameter ${p%%=*}= refused" "$d/err" && grep -qF "keyring=FILE" "$d/err" ||
    fail "map rbd/x ${p%%=*}=... said: $(cat "$d/err")"
  ! grep -qF "$key" "$d/err" || fail "the message shows the key: $(cat "$d/err")"
  d_empty "map rbd/x ${p%%=*}="
done
run 2 "$rbdx" map -o ceph.keyfile=/etc/ceph/key rbd/x
grep -qF "parameter ceph.keyfile= refused" "$d/err" || fail "ceph.keyfile= said: $(cat "$d/err")"
run 2 "$rbdx" map rbd/x "ceph.key=$key"
d_empty "map rbd/x ceph.key= as root"
say "raw keys refused (ceph.key=, key=, ceph.keyfile=), never shown or written"

if [ ! -e /sys/module/nbd ] && ! command -v modprobe >/dev/null 2>&1; then
  run 1 "$rbdx" map --connection-info "$d/ci.json"
  grep -q "no NBD driver" "$d/err" || fail "map as root said: $(cat "$d/err")"
  [ -z "$(ls -A "$d/D/keyrings" 2>/dev/null)" ] || fail "a keyring was left: $(ls -l "$d/D/keyrings")"
  d_empty "map --connection-info as root"
  say "as root without an NBD driver: no keyring left"
else
  say "this host has an NBD driver (or modprobe): not mapping as root here"
fi

# rbd/ns/img "mapped": a state file whose supervisor is a live process.
sleep 600 &
live=$!
at_exit "kill $live 2>/dev/null"
start() { awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$1/stat"; }
mkdir -m 0700 "$d/D/keyrings"
k1=$d/D/keyrings/K1.keyring old="$d/D/keyrings/rbd%ns%img.keyring"
for f in "$k1" "$old"; do printf '[client.cinder]\n\tkey = %s\n' "$key" >"$f"; chmod 0600 "$f"; done
state() { # state INDEX SUPERVISOR TARGET KEYRING-FILE
  printf '%s\n' "index=$1" "target=$3" "connections=1" "supervisor=$2" \
    "supervisor_start=$(start "$2" 2>/dev/null || echo 1)" "server=0" "server_start=0" \
    "keyring_file=$4" "params=id=cinder"$'\x1f'"keyring=$4"$'\x1f' >"$d/D/nbd$1"
}
state 5 "$live" rbd/ns/img "$k1"
state 8 "$live" rbd/ns/old "$old"
: >"$d/D/lock"
chmod 0600 "$d/D/lock"
conninfo 'rbd/ns%img' >"$d/ci2.json"
run 0 "$rbdx" unmap --connection-info "$d/ci2.json"
[ -e "$k1" ] || fail "unmap of the unmapped rbd/ns%img removed the keyring of the mapped rbd/ns/img"
[ -e "$old" ] || fail "unmap of the unmapped rbd/ns%img removed $old"
[ -e "$d/D/nbd5" ] && [ -e "$d/D/nbd8" ] && kill -0 "$live" ||
  fail "unmap of rbd/ns%img touched the mappings of rbd/ns/img and rbd/ns/old"
say "unmap --connection-info of unmapped rbd/ns%img left rbd/ns/img's keyring alone"

# A keyring no mapping names: its map and supervisor were killed first.
orphan=$d/D/keyrings/Orphan.keyring
printf '[client.cinder]\n\tkey = %s\n' "$key" >"$orphan"
chmod 0600 "$orphan"
run 0 "$rbdx" list-mapped
[ -e "$orphan" ] || fail "list-mapped (without the map lock) removed an unnamed keyring"
run 0 "$rbdx" unmap --connection-info "$d/ci2.json"
[ ! -e "$orphan" ] || fail "unmap (holding the map lock) left a keyring no mapping names"
[ -e "$k1" ] && [ -e "$old" ] || fail "removing the unnamed keyring removed a mapping's"
say "a keyring no mapping names was removed by the next unmap, holding the map lock"

# A dead mapping is forgotten with its own keyring, and only that.
sh -c 'exit 0' &
dead=$!
wait $dead
k2=$d/D/keyrings/K2.keyring
printf 'k\n' >"$k2"
printf 'k\n' >"$d/outside.keyring"
state 6 "$dead" rbd/dead "$k2"
state 7 "$dead" rbd/dead2 "$d/outside.keyring"
run 0 "$rbdx" list-mapped
[ ! -e "$d/D/nbd6" ] && [ ! -e "$d/D/nbd7" ] || fail "the dead mappings' states are left"
[ ! -e "$k2" ] || fail "the dead mapping's keyring is left"
[ -e "$d/outside.keyring" ] || fail "a keyring_file outside RUN_DIR/keyrings was removed"
[ -e "$k1" ] && [ -e "$old" ] || fail "forgetting a dead mapping removed another's keyring"
grep -q 'rbd/ns/img' "$d/out" || fail "list-mapped lost the live mapping: $(cat "$d/out")"
say "a dead mapping was forgotten with its keyring; nothing else removed"
say "ok"

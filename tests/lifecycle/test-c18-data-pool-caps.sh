#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C18 (tests/README.md): the cephx user may use the image's pool but
# not its data pool (`rbd create --data-pool`), where every data object
# lives.  The header opens fine, so without a check every request would
# fail with EPERM and nothing would say why unless nbdkit ran with -v.
# Asserts:
#   - no rights on the data pool: nbdkit exits non-zero before serving,
#     naming the data pool and the missing read capability;
#   - read-only rights there: the server starts, a writable connection is
#     refused with an error-level message naming the data pool and the
#     missing write capability, and `nbdkit -r` serves reads;
#   - pool mode (nothing checked at start): opening the image fails with
#     an error-level message (no -v) naming the data pool.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires ceph nbdinfo

sbdir=$(dirname "$CEPH_CONF")
"$RBDX_TESTS/ceph-sandbox" status "$sbdir" >/dev/null 2>&1 ||
  skip "CEPH_CONF is not a tests/ceph-sandbox cluster (cannot add users)"

dpool="t-c18-$$"
at_exit "ceph osd pool rm $dpool $dpool --yes-i-really-really-mean-it >/dev/null 2>&1"
ceph osd pool create "$dpool" 8 >/dev/null 2>&1
timeout 60 rbd pool init "$dpool"
img=$(new_image 64M --data-pool "$dpool")
d=$(tmpdir)

# user NAME OSDCAPS: a cephx user with mon 'profile rbd'; prints its id.
user() {
  at_exit "ceph auth rm client.$1 >/dev/null 2>&1; rm -f $sbdir/ceph.client.$1.keyring"
  "$RBDX_TESTS/ceph-sandbox" add-user "$sbdir" "$1" mon 'profile rbd' osd "$2" >/dev/null
}

noread="c18n$$"
readonly_d="c18r$$"
user "$noread" "profile rbd pool=rbd"
user "$readonly_d" "profile rbd pool=rbd, profile rbd-read-only pool=$dpool"

say "no rights on the data pool: refused before serving"
if nbdkit -U - "$RBDX_PLUGIN" "$img" id="$noread" --run true \
     >"$d/out" 2>"$d/err"; then
  fail "nbdkit served $img although client.$noread may not read $dpool"
fi
grep -q "may not read the data objects of image '$img' in pool '$dpool'" "$d/err" ||
  fail "the message does not name the data pool and the read capability: $(cat "$d/err")"

say "read-only rights on the data pool: writable connections refused, -r serves"
serve "$d/s.sock" -- "$img" id="$readonly_d" 2>"$d/err2"
# Said at start, before any client connects (the plugin is not told of
# -r then, so it serves and refuses writable connections).
grep -q "may not write the data objects of image '$img' in pool '$dpool'.*every connection that may write will be refused" "$d/err2" ||
  fail "nbdkit did not say at start that client.$readonly_d may not write $dpool: $(cat "$d/err2")"
if nbdinfo --size "$(uri "$d/s.sock")" >/dev/null 2>&1; then
  fail "a writable connection was accepted although client.$readonly_d may not write $dpool"
fi
stop_server "$d/s.sock"
grep -q "error: rbdx: client.$readonly_d may not write the data objects of image '$img' in pool '$dpool'" "$d/err2" ||
  fail "the refusal is not logged at error level naming the data pool: $(cat "$d/err2")"
nbdkit -U - -r "$RBDX_PLUGIN" "$img" id="$readonly_d" \
  --run 'nbdsh -u "$uri" -c "assert h.pread(4096, 0) == bytes(4096)"' ||
  fail "nbdkit -r does not serve reads to client.$readonly_d"

say "pool mode: the open fails loudly"
serve "$d/p.sock" -- pool=rbd id="$noread" 2>"$d/err3"
if nbdinfo --size "$(uri "$d/p.sock" "${img#rbd/}")" >/dev/null 2>&1; then
  fail "pool mode opened $img for client.$noread"
fi
stop_server "$d/p.sock"
grep -q "error: rbdx: client.$noread may not read the data objects of image '$img' in pool '$dpool'" "$d/err3" ||
  fail "pool mode: the failure is not logged at error level: $(cat "$d/err3")"

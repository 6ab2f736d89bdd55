#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-kernel-nbd-unmap: cases C60 and C61 in a UML guest, through a link
# named rbd-nbd to the mapper, with the stand-in engine
# (tests/kernel/standin-engine) as in test-kernel-nbd-compat.  One image
# is mapped twice: its head read-write on /dev/nbd0 and a --snap-id or
# --read-only mapping on /dev/nbd1.
# Asserts, in the guest:
#   - C60: list-mapped shows the --snap-id 4 mapping's snap as "@4" (JSON)
#     and the head's as ""; `unmap --snap-id 4 SPEC` disconnects /dev/nbd1
#     and leaves /dev/nbd0 and its supervisor; `unmap --snap-id 5 SPEC`
#     is refused with "rbd-nbd: SPEC is not mapped", exit 1, nbd0 kept;
#     after `map --read-only SPEC` (nbd1), `unmap --device /dev/nbd1
#     SPEC` disconnects nbd1 alone, and again is refused (not mapped);
#     `detach --snap-id 4 SPEC` stops nbd1's supervisor (nbd1 stays
#     connected) and leaves nbd0's (`rbd device unmap -t nbd --snap-id
#     N SPEC` runs this unmap; Debian's rbd has no --snap-id, so it is
#     not driven here);
#   - C61: `-f map --read-only SPEC` prints /dev/nbd1 and stays; an unmap
#     of /dev/nbd1 meanwhile (no wait for -f's map lock) ends it (exit 0)
#     with nbd0 mapped; a second one,
#     SIGTERM, exits 0 and has detached nbd1 (its supervisor gone, the
#     device connected), nbd0 and its supervisor untouched;
#   - nbd0's supervisor is the same process throughout (the detached
#     nbd1's partition scan fails with I/O errors on its unmap: not
#     checked).
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/kernel/lib-uml.sh"
uml_requires
requires_cluster
mapper=$(uml_mapper nbd-unmap)

img=$(new_image 64M)
uml_setup
sock="$UML_DIR/nbd.sock"
uml_serve_for_mapper "$sock" "$img" "$mapper"
uml_guest_env NBD_EXPORT="$img" MAPPER="$mapper" \
  STANDIN_ENGINE="$(cd "$RBDX_BUILD/tests/kernel" && pwd -P)/standin-engine"

cat >"$UML_DIR/guest-nbd-unmap.sh" <<'EOF2'
load_nbd
export RBDX_ENGINE=$STANDIN_ENGINE
ln -s "$MAPPER" /tmp/rbd-nbd
rn=/tmp/rbd-nbd
sup_of() { sed -n 's/^supervisor=//p' "/share/run/nbd$1" 2>/dev/null; }
connected() { [ -e "/sys/block/nbd$1/pid" ]; }
head_ok() {
  connected 0 || fail "$1: /dev/nbd0 (the head) was disconnected"
  [ "$(sup_of 0)" = "$sup0" ] && kill -0 "$sup0" 2>/dev/null ||
    fail "$1: the head's supervisor $sup0 is gone"
}
not_mapped() {
  local rc=0
  "$rn" "$@" 2>/tmp/err || rc=$?
  [ "$rc" -eq 1 ] && [ "$(cat /tmp/err)" = "rbd-nbd: $NBD_EXPORT is not mapped" ] ||
    fail "rbd-nbd $*: rc $rc, $(cat /tmp/err)"
}
map1() {
  local dev
  dev=$("$rn" map "$@" "$NBD_EXPORT") || fail "map $* failed"
  [ "$dev" = /dev/nbd1 ] || fail "map $* printed '$dev', not /dev/nbd1"
}

dev=$("$rn" map "$NBD_EXPORT") || fail "map of the head failed"
[ "$dev" = /dev/nbd0 ] || fail "map of the head printed '$dev'"
sup0=$(sup_of 0)

# C60: unmap of a spec with --snap-id takes that mapping, never the head.
map1 --snap-id 4
list=$("$rn" list-mapped --format=json) || fail "list-mapped failed"
say "list-mapped: $list"
echo "$list" | grep -q '"snap":"@4","device":"/dev/nbd1"' || fail "the --snap-id 4 record: $list"
echo "$list" | grep -q '"snap":"","device":"/dev/nbd0"' || fail "the head's record: $list"
"$rn" unmap --snap-id 4 "$NBD_EXPORT" || fail "unmap --snap-id 4 failed"
! connected 1 || fail "unmap --snap-id 4 left /dev/nbd1 connected"
head_ok "unmap --snap-id 4"
not_mapped unmap --snap-id 5 "$NBD_EXPORT"
head_ok "unmap --snap-id 5"
say "unmap --snap-id 4 took /dev/nbd1; --snap-id 5 refused"

map1 --read-only
"$rn" unmap --device /dev/nbd1 "$NBD_EXPORT" || fail "unmap --device /dev/nbd1 failed"
! connected 1 || fail "unmap --device /dev/nbd1 left it connected"
head_ok "unmap --device /dev/nbd1"
not_mapped unmap --device /dev/nbd1 "$NBD_EXPORT"
head_ok "a second unmap --device /dev/nbd1"
say "unmap --device /dev/nbd1 SPEC took /dev/nbd1 alone"

map1 --snap-id 4
sup1=$(sup_of 1)
"$rn" detach --snap-id 4 "$NBD_EXPORT" || fail "detach --snap-id 4 failed"
! kill -0 "$sup1" 2>/dev/null || fail "detach --snap-id 4 left nbd1's supervisor $sup1"
connected 1 || fail "detach --snap-id 4 disconnected /dev/nbd1"
head_ok "detach --snap-id 4"
"$rn" unmap /dev/nbd1 || fail "unmap of the detached /dev/nbd1 failed"
! connected 1 || fail "/dev/nbd1 still connected"
say "detach --snap-id 4 detached /dev/nbd1 alone"

# C61: -f stays for its own mapping (nbd1), not the head's.
"$rn" -f map --read-only "$NBD_EXPORT" >/tmp/fg.out 2>/tmp/fg.err &
fg=$!
printed() { [ -s /tmp/fg.out ]; }
wait_until 30 printed || fail "map -f printed nothing: $(cat /tmp/fg.err)"
[ "$(cat /tmp/fg.out)" = /dev/nbd1 ] || fail "map -f printed '$(cat /tmp/fg.out)'"
"$rn" unmap /dev/nbd1 || fail "unmap /dev/nbd1 under map -f failed"
fg_gone() { ! kill -0 "$fg" 2>/dev/null; }
wait_until 10 fg_gone || { kill -KILL "$fg"; fail "map -f stayed after its /dev/nbd1 was unmapped"; }
wait "$fg" || fail "map -f exited $? after its device was unmapped"
head_ok "map -f, unmap of its device"

"$rn" -f map --read-only "$NBD_EXPORT" >/tmp/fg2.out 2>/tmp/fg2.err &
fg=$!
printed2() { [ -s /tmp/fg2.out ]; }
wait_until 30 printed2 || fail "the second map -f printed nothing: $(cat /tmp/fg2.err)"
[ "$(cat /tmp/fg2.out)" = /dev/nbd1 ] || fail "the second map -f printed '$(cat /tmp/fg2.out)'"
sup1=$(sup_of 1)
sleep 1
kill -TERM "$fg"
wait "$fg" || fail "map -f exited $? on SIGTERM"
! kill -0 "$sup1" 2>/dev/null || fail "SIGTERM to map -f left nbd1's supervisor $sup1 (not detached)"
connected 1 || fail "SIGTERM to map -f disconnected /dev/nbd1"
head_ok "SIGTERM to map -f"
say "SIGTERM to map -f detached its /dev/nbd1, the head kept"

"$rn" unmap /dev/nbd1 || fail "unmap /dev/nbd1 failed"
"$rn" unmap "$NBD_EXPORT" || fail "unmap of the head failed"
! connected 0 && ! connected 1 || fail "devices left connected"
[ "$(pgrep -f "^($MAPPER|$rn) " | wc -l)" -eq 0 ] || fail "supervisors left"
say "ok"
EOF2

uml_run "$UML_DIR/guest-nbd-unmap.sh" 300
say "ok: rbd-nbd unmap, detach, list-mapped and -f take the mapping named (C60, C61)"

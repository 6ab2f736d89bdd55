#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# pool=POOL[/NAMESPACE] (nbdkit-rbdx-plugin.pod): one server exports
# every image of a pool by export name.  Asserts:
#   - pool=rbd/NS: `nbdinfo --list` lists exactly the namespace's images
#     (canonical names POOL/NS/IMAGE) with their sizes and descriptions;
#   - export names IMAGE, POOL/NS/IMAGE and IMAGE@SNAP work; the snapshot
#     is read-only and advertises multi-conn, a write to it gets EPERM,
#     and it shows the data of the snapshot, not the head;
#   - unknown names (missing image, missing snapshot, another pool, the
#     pool without the namespace, "" with no default image) are refused
#     at negotiation (NBD_REP_ERR_UNKNOWN: the client sees "no export
#     named"), the server log names the reason, and the same server keeps
#     serving;
#   - pool=rbd image=X: X is the default export ("" works), other images
#     of the pool are exported by name (NBD_OPT_LIST includes them), an
#     image of a namespace or another pool is refused.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
requires nbdinfo

ns="t-pool-exports-$$"
rbd namespace create "rbd/$ns"
# Removes the namespace's images, then the namespace, at exit.
ns_cleanup() {
  rbd snap purge "rbd/$ns/i1" >/dev/null 2>&1
  rbd rm --no-progress "rbd/$ns/i1" >/dev/null 2>&1
  rbd rm --no-progress "rbd/$ns/i2" >/dev/null 2>&1
  rbd namespace rm "rbd/$ns" >/dev/null 2>&1
}
at_exit ns_cleanup
rbd create --size 8M "rbd/$ns/i1"
rbd create --size 16M --image-feature layering "rbd/$ns/i2"

# refused SOCKET EXPORT LOG WHY: a client asking for EXPORT is refused at
# negotiation and the server's LOG has a line matching WHY.
refused() {
  local rc=0
  nbdinfo "$(uri "$1" "$2")" >"$MC_DIR/refused.out" 2>&1 || rc=$?
  [ $rc != 0 ] || fail "export '$2' was served"
  grep -q 'no export named\|No such file' "$MC_DIR/refused.out" ||
    fail "export '$2': unexpected client error: $(cat "$MC_DIR/refused.out")"
  grep -q "$4" "$3" ||
    fail "export '$2': the server log does not say why (expected '$4'): $(tail -3 "$3")"
  say "export '$2' refused: $(grep -m1 "$4" "$3" | sed 's/.*error: //')"
}

say "pool=rbd/$ns"
sock=$MC_DIR/ns.sock
log=$MC_DIR/ns.log
serve "$sock" -- "pool=rbd/$ns" 2>"$log"
pid=$SERVER_PID
nbdinfo --list --json "$(uri "$sock")" >"$MC_DIR/list.json" ||
  fail "nbdinfo --list failed"
python3 - "$MC_DIR/list.json" "rbd/$ns" <<'PY' || fail "wrong export list"
import json, sys
exports = {e["export-name"]: e for e in json.load(open(sys.argv[1]))["exports"]}
pre = sys.argv[2] + "/"
want = {pre + "i1": 8 << 20, pre + "i2": 16 << 20}
if set(exports) != set(want):
    sys.exit("listed %s, expected %s" % (sorted(exports), sorted(want)))
for name, size in want.items():
    e = exports[name]
    if e["export-size"] != size:
        sys.exit("%s: size %d, expected %d" % (name, e["export-size"], size))
    if name not in e.get("description", ""):
        sys.exit("%s: description %r does not name the image"
                 % (name, e.get("description")))
    print("listed %s: %d bytes, %r" % (name, size, e["description"]))
PY

client_start W "$(uri "$sock" i1)"
[ "$(client_do W size)" = $((8 << 20)) ] || fail "export i1: wrong size"
[ "$(client_do W ro)" = 0 ] || fail "export i1 is read-only"
client_do W write 0 65536 51
client_do W flush
client_stop W
rbd snap create --no-progress "rbd/$ns/i1@s1" >/dev/null
client_start W "$(uri "$sock" "rbd/$ns/i1")"
client_do W write 0 65536 52
client_do W read 0 65536 52
client_stop W
client_start S "$(uri "$sock" i1@s1)"
[ "$(client_do S ro)" = 1 ] || fail "export i1@s1 is not read-only"
[ "$(client_do S mc)" = 1 ] || fail "export i1@s1 does not advertise multi-conn"
[ "$(client_do S size)" = $((8 << 20)) ] || fail "export i1@s1: wrong size"
client_do S read 0 65536 51
client_do S strict 0
client_do S writeerr 0 4096 53 EPERM
client_do S read 0 4096 51
client_stop S
client_start T "$(uri "$sock" i2)"
[ "$(client_do T size)" = $((16 << 20)) ] || fail "export i2: wrong size"
client_stop T

refused "$sock" nosuch "$log" "image 'rbd/$ns/nosuch' does not exist"
refused "$sock" i1@nosnap "$log" "snapshot 'nosnap' of image 'rbd/$ns/i1' does not exist"
refused "$sock" otherpool/i1 "$log" "export 'otherpool/i1' (pool 'otherpool', the default namespace) is not served by pool=rbd/$ns"
refused "$sock" rbd/i1 "$log" "export 'rbd/i1' (pool 'rbd', the default namespace) is not served by pool=rbd/$ns"
refused "$sock" "" "$log" "no default export"
kill -0 "$pid" && [ "$(cat "$sock.pid")" = "$pid" ] ||
  fail "the server died after refusing exports"
client_start T "$(uri "$sock" i2)"
client_do T read 0 4096 00
client_stop T
stop_server "$sock"

say "pool=rbd image=X"
r1=$(new_image 4M)
r2=$(new_image 12M)
sock=$MC_DIR/root.sock
log=$MC_DIR/root.log
serve "$sock" -- pool=rbd "image=${r1#rbd/}" 2>"$log"
pid=$SERVER_PID
[ "$(nbdinfo --size "$(uri "$sock")")" = $((4 << 20)) ] ||
  fail "the default export is not $r1"
[ "$(nbdinfo --size "$(uri "$sock" "${r2#rbd/}")")" = $((12 << 20)) ] ||
  fail "export ${r2#rbd/} does not work"
[ "$(nbdinfo --size "$(uri "$sock" "$r2")")" = $((12 << 20)) ] ||
  fail "export $r2 does not work"
# Names only: other tests' images in pool rbd come and go meanwhile.
nbdsh --opt-mode -u "$(uri "$sock")" -c '
names = []
h.opt_list(lambda name, desc: names.append(name) or 0)
print("\n".join(names))
' >"$MC_DIR/names" || fail "NBD_OPT_LIST failed"
grep -qx "$r1" "$MC_DIR/names" && grep -qx "$r2" "$MC_DIR/names" ||
  fail "NBD_OPT_LIST lacks $r1 or $r2: $(cat "$MC_DIR/names")"
! grep -q "/$ns/" "$MC_DIR/names" ||
  fail "pool=rbd lists images of namespace $ns"
refused "$sock" "rbd/$ns/i2" "$log" "export 'rbd/$ns/i2' (pool 'rbd', namespace '$ns') is not served by pool=rbd"
refused "$sock" "nosuch-$$" "$log" "image 'rbd/nosuch-$$' does not exist"
kill -0 "$pid" || fail "the server died after refusing exports"
[ "$(nbdinfo --size "$(uri "$sock")")" = $((4 << 20)) ] ||
  fail "the default export stopped working"
stop_server "$sock"

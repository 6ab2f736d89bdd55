#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# snap_id= (nbdkit-rbdx-plugin(1); rbd-nbd's --snap-id), through the
# plugin and through the mapper's built-in engine (--oldstyle hook):
#   - image snap_id=ID serves that snapshot read-only: its bytes (not
#     the head's, written after it), a write gets EPERM;
#   - after `rbd snap rename` and a new snapshot under the old name
#     (holding the head's bytes), a new connection still serves the
#     snapshot of that id;
#   - a missing id, and snap_id= with image@SNAP, are refused before
#     serving (exit 1) with a message naming them.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires nbdsh python3
d=$(tmpdir)
engine=$RBDX_BUILD/server/rbdx-engine
[ -x "$engine" ] || skip "no engine built (-Dmapper=disabled)"
img=$(new_image 8M)
head -c $((8 << 20)) /dev/urandom >"$d/a"
head -c $((8 << 20)) /dev/urandom >"$d/b"
rbd rm --no-progress "$img" >/dev/null
rbd import --no-progress "$d/a" "$img" >/dev/null
rbd snap create --no-progress "$img@s1" >/dev/null
id=$(rbd snap ls --format json "$img" | python3 -c '
import json, sys; print([s["id"] for s in json.load(sys.stdin) if s["name"] == "s1"][0])')
nbdsh_write() { # URI FILE: write FILE's bytes at 0 through NBD
  F=$2 nbdsh -u "$1" -c 'import os; h.pwrite(open(os.environ["F"], "rb").read(), 0); h.flush()'
}
# The head gets b through the plugin (so the snapshot must differ).
serve "$d/head.sock" -- "$img"
nbdsh_write "$(uri "$d/head.sock")" "$d/b" || fail "writing the head failed"
stop_server "$d/head.sock"

# reads URI FILE: the export is read-only, holds FILE's bytes, refuses a write.
reads() {
  F=$2 nbdsh -u "$1" -c '
import os
assert h.is_read_only()
assert h.pread(8 << 20, 0) == open(os.environ["F"], "rb").read(), "wrong bytes"
h.set_strict_mode(0)
try:
    h.pwrite(b"x" * 4096, 0)
    raise AssertionError("a write succeeded")
except nbd.Error as e:
    assert e.errno == "EPERM", e.errno
'
}

start() { # NAME SERVER ARGS...
  local sock=$d/$1.sock server=$2
  shift 2
  if [ "$server" = plugin ]; then serve "$sock" -- "$@"; else serve_engine "$sock" -- "$@"; fi
}

for server in plugin engine; do
  say "$server: snap_id=$id"
  start "$server-1" "$server" "$img" snap_id="$id"
  reads "$(uri "$d/$server-1.sock")" "$d/a" || fail "$server: snap_id=$id serves the wrong data"
  stop_server "$d/$server-1.sock"
done

say "renamed, and a new snapshot under the old name"
rbd snap rename "$img@s1" "$img@moved"
rbd snap create --no-progress "$img@s1" >/dev/null
for server in plugin engine; do
  start "$server-2" "$server" "$img" snap_id="$id"
  reads "$(uri "$d/$server-2.sock")" "$d/a" || fail "$server: after the rename, not the snapshot of id $id"
  stop_server "$d/$server-2.sock"
  # The name s1 now means the new snapshot (the head's bytes).
  start "$server-3" "$server" "$img@s1"
  reads "$(uri "$d/$server-3.sock")" "$d/b" || fail "$server: the new s1 is not the head's copy"
  stop_server "$d/$server-3.sock"
done

say "refused before serving"
# refused SPEC SNAP_ID MESSAGE: plugin and engine exit 1 before serving,
# saying MESSAGE.
refused() {
  local rc=0
  nbdkit -U "$d/bad.sock" -f "$RBDX_PLUGIN" "$1" snap_id="$2" 2>"$d/bad.err" || rc=$?
  [ "$rc" -eq 1 ] && [ ! -S "$d/bad.sock" ] && grep -qF "$3" "$d/bad.err" ||
    fail "nbdkit $1 snap_id=$2: exit $rc, $(cat "$d/bad.err")"
  rc=0
  timeout 60 "$engine" --oldstyle "$d/bad2.sock" "$1" snap_id="$2" 2>"$d/bad2.err" || rc=$?
  [ "$rc" -eq 1 ] && [ ! -S "$d/bad2.sock" ] && grep -qF "$3" "$d/bad2.err" ||
    fail "the engine: $1 snap_id=$2: exit $rc, $(cat "$d/bad2.err")"
}
refused "$img" 999999 "has no snapshot of id 999999"
refused "$img@moved" "$id" "snap_id= names a snapshot"
say "ok"

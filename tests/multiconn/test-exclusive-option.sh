#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# exclusive=true (nbdkit-rbdx-plugin.pod): rbdx takes the exclusive lock
# with rbd_lock_acquire(EXCLUSIVE) when the first writable connection
# opens and holds it for the server's lifetime; other clients' writes
# then fail (-EROFS) instead of taking the lock over.  Asserts:
#   - with a client connected and writing, a foreign librbd writer
#     (`rbd bench --io-type write`) fails, rbdx's writes keep working and
#     `rbd lock ls` shows one lock, the same before and after; it stays
#     after the client disconnects; after nbdkit exits no lock and no
#     watcher remain;
#   - default (exclusive=false): the foreign writer succeeds (cooperative
#     hand-over) and rbdx's writes through NBD still succeed afterwards
#     (the lock comes back), and read back;
#   - exclusive=true on a layering-only image: nbdkit exits non-zero
#     before serving, naming the missing exclusive-lock feature;
#   - exclusive=true writers=per-connection: configuration error.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster

# foreign_write IMAGE: 1 MiB of writes from another librbd client.
foreign_write() {
  timeout 60 rbd bench --io-type write --io-size 4096 --io-total 1M \
    --io-pattern rand "$1" >"$MC_DIR/bench.out" 2>&1
}

img=$(new_image 64M)
sock=$MC_DIR/x.sock

say "exclusive=true: a foreign writer is refused"
serve "$sock" -- "$img" exclusive=true
u=$(uri "$sock")
client_start A "$u"
client_do A write 0 65536 a1
client_do A flush
owner=$(lock_owners "$img")
[ "${owner%% *}" = 1 ] || fail "rbd lock ls does not show rbdx's lock: $owner"
say "lock: $owner"
rc=0
foreign_write "$img" || rc=$?
[ $rc != 0 ] || fail "a foreign writer could write while rbdx holds the lock exclusively"
[ $rc != 124 ] || fail "the foreign writer hung instead of failing"
why=$(grep -m1 -o 'bench failed.*' "$MC_DIR/bench.out" ||
      tail -1 "$MC_DIR/bench.out")
say "foreign writer failed as expected ($rc): $why"
client_do A write 65536 65536 a2 fua
client_do A flush
client_do A read 0 65536 a1
client_do A read 65536 65536 a2
[ "$(lock_owners "$img")" = "$owner" ] ||
  fail "the lock changed hands: $owner -> $(lock_owners "$img")"
client_stop A
# Held for the server's lifetime, not the connection's.
[ "$(lock_owners "$img")" = "$owner" ] ||
  fail "the lock was not kept after the last client left: $(lock_owners "$img")"
rc=0
foreign_write "$img" || rc=$?
[ $rc != 0 ] || fail "a foreign writer could write after rbdx's client left"
client_start B "$u"
client_do B read 0 65536 a1
client_do B write 131072 4096 b1
client_stop B
stop_server "$sock"
released "$img" "after nbdkit exited"

say "default (exclusive=false): cooperative hand-over"
sock=$MC_DIR/y.sock
serve "$sock" -- "$img"
u=$(uri "$sock")
client_start A "$u"
client_do A write 0 65536 c1
client_do A flush
before=$(lock_owners "$img")
foreign_write "$img" ||
  fail "the foreign writer failed without exclusive=true: $(tail -3 "$MC_DIR/bench.out")"
say "foreign writer succeeded; lock was '$before', now '$(lock_owners "$img")'"
client_do A write 0 65536 c2
client_do A flush
client_do A read 0 65536 c2
[ "$(lock_owners "$img" | cut -d' ' -f1)" = 1 ] || fail "no lock owner after rbdx wrote again"
client_stop A
stop_server "$sock"
[ "$(lock_owners "$img")" = 0 ] || fail "lock left after nbdkit exited: $(lock_owners "$img")"

say "exclusive=true on a layering-only image: refused before serving"
plain=$(new_image 16M --image-feature layering)
rc=0
timeout 60 nbdkit -U "$(new_socket)" "$RBDX_PLUGIN" "$plain" exclusive=true --run 'exit 0' \
  >"$MC_DIR/plain.out" 2>&1 || rc=$?
cat "$MC_DIR/plain.out" >&2
[ $rc != 0 ] || fail "nbdkit served $plain with exclusive=true"
[ $rc != 124 ] || fail "nbdkit hung"
grep -q 'exclusive-lock' "$MC_DIR/plain.out" ||
  fail "the error does not name the missing exclusive-lock feature"

say "exclusive=true writers=per-connection: configuration error"
rc=0
timeout 60 nbdkit -U "$(new_socket)" "$RBDX_PLUGIN" "$img" exclusive=true \
  writers=per-connection --run 'exit 0' >"$MC_DIR/conf.out" 2>&1 || rc=$?
cat "$MC_DIR/conf.out" >&2
[ $rc != 0 ] && [ $rc != 124 ] ||
  fail "exclusive=true writers=per-connection was accepted ($rc)"
grep -q 'per-connection' "$MC_DIR/conf.out" ||
  fail "the error does not explain the conflict"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# FLUSH with nothing to flush (ctx.h rbdx_ctx_flush): with rbd_cache off
# and no write on a connection since its last flush, rbdx answers FLUSH
# without calling librbd, because rbd_aio_flush on a handle that does not
# own the exclusive lock takes the lock (server/core/DESIGN.md,
# "Exclusive lock, caches and multi-conn") - a read-only
# client's flushes would otherwise pull the lock away from the writer.
# On a default-feature image with writers=per-connection (each
# connection writes through its own handle): A writes, and `rbd lock ls`
# shows A's handle as owner; B, which never wrote, sends FLUSH five
# times (and reads); the owner must not change.  Then B writes and
# flushes: the owner may change (printed only).
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster

img=$(new_image 32M)
sock=$MC_DIR/f.sock
serve "$sock" -- "$img" writers=per-connection
u=$(uri "$sock")
client_start A "$u"
client_start B "$u"
[ "$(lock_owners "$img")" = 0 ] || fail "a lock before any write: $(lock_owners "$img")"
client_do A write 0 65536 aa
client_do A flush
owner=$(lock_owners "$img")
[ "${owner%% *}" = 1 ] || fail "A's write took no lock: $owner"
say "lock owner after A's write: $owner"
for i in 1 2 3 4 5; do
  client_do B flush
  client_do B read 0 65536 aa
  now=$(lock_owners "$img")
  [ "$now" = "$owner" ] ||
    fail "B's flush $i (B never wrote) moved the lock: $owner -> $now"
done
say "five flushes on B left the lock with A"
client_do B write 65536 4096 bb
client_do B flush
say "after B wrote and flushed: $(lock_owners "$img")"
client_do A read 65536 4096 bb
client_stop A
client_stop B
stop_server "$sock"
[ "$(lock_owners "$img")" = 0 ] || fail "lock left after nbdkit exited: $(lock_owners "$img")"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C55 (tests/README.md): with connections_per_client=4 the operator
# removes rbdx's exclusive lock (`rbd lock rm`, which blocklists the Ceph
# client that held it, shared with connection A's own context).  Asserts,
# through nbdkit and through the built-in engine:
#   - A's next write fails with NBD_EIO (A stays fenced);
#   - B and C, connected while A is still open (also when B connects
#     before any request of A failed: the writer's header watch sees the
#     lock break), are served: they write
#     (through a fresh writer on a fresh Ceph client) and read back, and
#     no longer fail at open ("Cannot send after transport endpoint
#     shutdown", seen by the client as "no export named ''") as when the
#     fenced shared client was handed to them;
#   - the image's lock is now held by another client instance;
#   - after A closes, D is served too, and the image holds B's, C's and
#     D's data and not A's fenced write.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
requires ceph

# locker IMAGE: "LOCKER ID" of the image's one lock.
locker() {
  rbd lock ls --format json "$1" | python3 -c '
import json, sys
ls = json.load(sys.stdin)
assert len(ls) == 1, ls
print(ls[0]["locker"], ls[0]["id"])'
}

n=0
fence_shared() {
  local img sock u l1 id1 l2 id2 early=0
  n=$((n + 1))
  if [ "${1:-}" = early ]; then
    early=1
    shift
    say "B connects before A's write fails:"
  fi
  img=$(new_image 64M)
  sock="$MC_DIR/s$n.sock"
  if [ "${1:-}" = engine ]; then
    say "rbdx-engine connections_per_client=4: rbd lock rm of rbdx's lock"
    serve_engine "$sock" -- "$img" connections_per_client=4
  else
    say "nbdkit connections_per_client=4: rbd lock rm of rbdx's lock"
    serve "$sock" -- "$img" connections_per_client=4 2>"$sock.log"
  fi
  u=$(uri "$sock")
  client_start A "$u"
  client_do A write 0 4096 aa
  client_do A flush
  read -r l1 id1 < <(locker "$img")
  rbd lock rm "$img" "$id1" "$l1"
  # early: B connects before any request of A failed, so nothing in the
  # server has seen the fence yet.
  [ "$early" = 1 ] || client_do A writeerr 8192 4096 a2 EIO
  client_start B "$u"
  client_do B write 4096 4096 bb
  client_do B flush
  client_do B read 4096 4096 bb
  client_start C "$u"
  client_do C write 12288 4096 cc
  client_do C flush
  client_do C read 4096 4096 bb
  client_do A writeerr 8192 4096 a2 EIO
  read -r l2 id2 < <(locker "$img")
  [ "$l2" != "$l1" ] || fail "the lock is still held by the fenced client $l1"
  client_stop A
  client_start D "$u"
  client_do D write 16384 4096 dd
  client_do D flush
  client_do D read 12288 4096 cc
  client_stop B
  client_stop C
  client_stop D
  stop_server "$sock"
  [ "$(bytes_at "$img" 0)" = "aa " ] || fail "A's write before the fence is not in $img"
  [ "$(bytes_at "$img" 4096)" = "bb " ] || fail "B's write is not in $img"
  [ "$(bytes_at "$img" 8192)" = "00 " ] || fail "A's fenced write landed"
  [ "$(bytes_at "$img" 12288)" = "cc " ] || fail "C's write is not in $img"
  [ "$(bytes_at "$img" 16384)" = "dd " ] || fail "D's write is not in $img"
}

fence_shared
fence_shared early
if [ -x "$RBDX_BUILD/server/rbdx-engine" ]; then
  fence_shared engine
else
  say "no rbdx-engine built: its row is not run"
fi
say "a fenced shared client serves no new connection"

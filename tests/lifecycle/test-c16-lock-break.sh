#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C16 (tests/README.md): the operator removes rbdx's exclusive lock
# (`rbd lock rm`, which blocklists the lock owner's client), another
# client takes the lock and writes; then A (open before the break) and B
# (opened after it) write.  Ceph's "blocklisted" errno is ESHUTDOWN (108),
# which NBD reserves for a server shutting down: rbdx must answer EIO.
# Asserts, for the shared writer (default features; through nbdkit and
# through the mapper's built-in engine, which shares the serving core)
# and exclusive=true:
#   - A's writes fail with NBD_EIO (not ESHUTDOWN), within 15 s (no hang),
#     and keep failing (A stays fenced, like a krbd mapping without
#     recover_session); A stays connected and still reads (its own
#     context was not fenced) the new owner's data;
#   - B, connected right after the break (before any write of A failed),
#     writes through a fresh writer, before and after the new owner wrote,
#     and reads it back;
#   - the new owner's 0xCC at 0 is never overwritten by A (with
#     exclusive=true B's fresh writer takes the lock for good, so the other
#     client's write fails and B writes the 0xCC);
#   - the fence is logged at error level (no -v).
# And for per-connection writers (layering-only, no lock): the operator
# blocklists A's client address (`ceph osd blocklist add`): A's reads and
# writes fail with NBD_EIO, a new connection B works.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
requires qemu-io ceph

# timed_writeerr NAME OFF: a write on NAME must fail with EIO within 15 s.
timed_writeerr() {
  local t0=$SECONDS
  client_do "$1" writeerr "$2" 4096 aa EIO
  [ $((SECONDS - t0)) -le 15 ] ||
    fail "$1's fenced write took $((SECONDS - t0)) s to fail"
}

n=0
lock_break() {
  local img sock u log locker id
  n=$((n + 1))
  img=$(new_image 64M)
  sock="$MC_DIR/s$n.sock"
  log="$MC_DIR/s$n.log"
  if [ "${1:-}" = engine ]; then
    shift
    say "default features, rbdx-engine $*: rbd lock rm of rbdx's lock"
    serve_engine "$sock" -- "$img" "$@"
    log=$sock.log
  else
    say "default features $*: rbd lock rm of rbdx's lock"
    serve "$sock" -- "$img" "$@" 2>"$log"
  fi
  u=$(uri "$sock")
  client_start A "$u"
  client_do A write 0 4096 aa
  client_do A flush
  read -r locker id < <(rbd lock ls --format json "$img" | python3 -c '
import json, sys
ls = json.load(sys.stdin)
assert len(ls) == 1, ls
print(ls[0]["locker"], ls[0]["id"])')
  rbd lock rm "$img" "$id" "$locker"
  # B connects before any write of A has failed: the fence must be found
  # when B gets its writer, not only after a failed write.
  client_start B "$u"
  client_do B write 4096 4096 bb
  client_do B flush
  # Another client asks for the lock and writes: librbd hands B's writer's
  # lock over, unless exclusive=true made B's writer keep it.
  if [ "${1:-}" = exclusive=true ]; then
    if qemu-io -f raw "rbd:$img:conf=$CEPH_CONF" -c "write -P 0xcc 0 4096" \
         >"$MC_DIR/qemu.out" 2>&1; then
      fail "exclusive=true: another client wrote while rbdx's new writer holds the lock"
    fi
    client_do B write 0 4096 cc    # what the checks below expect at 0
    client_do B flush
  else
    qemu-io -f raw "rbd:$img:conf=$CEPH_CONF" -c "write -P 0xcc 0 4096" \
      >/dev/null
  fi
  timed_writeerr A 0
  timed_writeerr A 8192
  client_do A alive
  client_do A read 0 4096 cc
  client_do B read 4096 4096 bb
  client_do B write 12288 4096 b2
  client_do B flush
  timed_writeerr A 0
  client_stop A
  client_stop B
  stop_server "$sock"
  [ "$(bytes_at "$img" 0)" = "cc " ] || fail "the new owner's data at 0 was overwritten"
  [ "$(bytes_at "$img" 4096)" = "bb " ] || fail "B's write is not in $img"
  [ "$(bytes_at "$img" 8192)" = "00 " ] || fail "A's fenced write landed"
  [ "$(bytes_at "$img" 12288)" = "b2 " ] || fail "B's second write is not in $img"
  grep -q 'error: rbdx: .*blocklisted' "$log" ||
    fail "the fence was not logged at error level: $(cat "$log")"
  grep -q ESHUTDOWN "$log" && fail "ESHUTDOWN in the log: $(cat "$log")"
  true
}

blocklist_client() {
  local img sock u addr
  n=$((n + 1))
  img=$(new_image 64M --image-feature layering)
  sock="$MC_DIR/s$n.sock"
  say "layering only: ceph osd blocklist add of A's client"
  serve "$sock" -- "$img"
  u=$(uri "$sock")
  client_start A "$u"
  client_do A write 0 4096 aa
  addr=$(rbd status --format json "$img" | python3 -c '
import json, sys
w = json.load(sys.stdin)["watchers"]
assert len(w) == 1, w
print(w[0]["address"])')
  at_exit "ceph osd blocklist rm '$addr' >/dev/null 2>&1"
  ceph osd blocklist add "$addr" >/dev/null 2>&1
  timed_writeerr A 0
  client_do A readerr 0 4096 EIO
  client_do A alive
  client_start B "$u"
  client_do B read 0 4096 aa
  client_do B write 4096 4096 bb
  client_do B flush
  client_stop A
  client_stop B
  stop_server "$sock"
  [ "$(bytes_at "$img" 4096)" = "bb " ] || fail "B's write is not in $img"
}

lock_break
lock_break exclusive=true
if [ -x "$RBDX_BUILD/server/rbdx-engine" ]; then
  lock_break engine
else
  say "no rbdx-engine built: its row is not run"
fi
blocklist_client

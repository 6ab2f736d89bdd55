#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C15 (tests/README.md): a snapshot served by an open connection is
# removed.  A read-only snapshot handle has no header watch, so nothing
# would tell it; reads of a removed snapshot must fail, never return zeros
# or the head's data.
# Asserts (single-image and pool mode, and single-image through the
# mapper's built-in engine, which shares the serving core; its test
# hook has no block status, so the engine row checks reads only):
#   - before the removal A reads the snapshot's 0x11 and gets block status;
#   - after `rbd snap rm`, within 10 s (rbdx's update watch fires within a
#     second; the margin is for a loaded machine), A's reads fail with
#     NBD_EIO, and any read that still succeeds meanwhile returns 0x11;
#   - from then on reads and block status fail with NBD_EIO, also after a
#     snapshot of the same name is created again, and A stays connected;
#   - the failure is logged at error level (no -v);
#   - a new connection reads the new snapshot (0x22, written to the head
#     before it was taken).
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
requires qemu-io

# read_until_eio: poll A until its read fails with EIO; a success must
# still carry the snapshot's bytes.
read_until_eio() {
  local line
  line=$(client_try A readerr 0 4096 EIO)
  case $line in
    ok) return 0 ;;
    *"succeeded, expected EIO"*) return 1 ;;   # data checked below
    *) fail "A's read after the removal: ${line#err }" ;;
  esac
}

n=0
run() {
  local mode=$1 img sock u name log
  n=$((n + 1))
  img=$(new_image 8M)
  pattern_file "$MC_DIR/11" $((8 << 20)) 11
  import_into "$img" "$MC_DIR/11"
  rbd snap create --no-progress "$img@s" >/dev/null
  sock="$MC_DIR/s$n.sock"
  log="$MC_DIR/s$n.log"
  say "$mode mode: the snapshot served is removed"
  if [ "$mode" = pool ]; then
    serve "$sock" -- pool=rbd 2>"$log"
    name="${img#rbd/}@s"
  elif [ "$mode" = engine ]; then
    # The engine's oldstyle test hook has no structured replies, so no
    # block status: reads only.
    serve_engine "$sock" -- "$img@s"
    log=$sock.log name=
  else
    serve "$sock" -- "$img@s" 2>"$log"
    name=
  fi
  u=$(uri "$sock" "$name")
  client_start A "$u"
  client_do A read 0 4096 11
  [ "$mode" = engine ] || client_do A bs 0 65536 >/dev/null

  rbd snap rm --no-progress "$img@s"
  wait_for 10 read_until_eio || {
    client_do A read 0 4096 11
    fail "A still reads the removed snapshot 10 s after rbd snap rm"
  }
  client_do A readerr 0 4096 EIO
  client_do A readerr $((4 << 20)) 65536 EIO
  [ "$mode" = engine ] || client_do A bserr 0 65536 EIO
  client_do A alive

  # The head gets new data and a new snapshot of the same name.
  qemu-io -f raw "rbd:$img:conf=$CEPH_CONF" -c "write -P 0x22 0 4096" \
    >/dev/null
  rbd snap create --no-progress "$img@s" >/dev/null
  client_do A readerr 0 4096 EIO
  [ "$mode" = engine ] || client_do A bserr 0 4096 EIO
  client_do A alive

  client_start B "$u"
  client_do B read 0 4096 22
  client_do B read 4096 4096 11
  [ "$mode" = engine ] || client_do B bs 0 65536 >/dev/null
  client_stop A
  client_stop B
  stop_server "$sock"
  grep -q 'error: rbdx: .*the snapshot was removed' "$log" ||
    fail "the removal was not logged at error level: $(cat "$log")"
}

run image
run pool
if [ -x "$RBDX_BUILD/server/rbdx-engine" ]; then
  run engine
else
  say "no rbdx-engine built: its row is not run"
fi

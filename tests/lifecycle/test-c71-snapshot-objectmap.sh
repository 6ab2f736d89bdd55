#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C71 (tests/README.md): the object map of a served snapshot
# changes under its connection.  An image without object-map holds 0xaa,
# its snapshot s is served (nbdkit, and rbdx-engine) and read by A; then
# `rbd feature enable object-map,fast-diff` and `rbd object-map rebuild
# IMAGE@s`; and a clone of another image with a snapshot cs served while
# the clone is flattened (`rbd flatten`).
# Asserts: within 10 s of each operation (rbdx reloads the snapshot on
# the header update; reads in between may still see the old map), A
# reads the snapshot's 0xaa at 0 and at 4 MiB, and keeps reading it; A
# stays connected; `rbd export` of the snapshot is still all 0xaa.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster

reads_aa() {
  [ "$(client_try A read 0 4096 aa)" = ok ] &&
    [ "$(client_try A read $((4 << 20)) 4096 aa)" = ok ]
}

# open_snap SPEC [engine]: serve SPEC, connect A, check it reads 0xaa.
n=0
open_snap() {
  n=$((n + 1))
  sock="$MC_DIR/s$n.sock"
  if [ "${2:-}" = engine ]; then serve_engine "$sock" -- "$1"
  else serve "$sock" -- "$1" 2>"$sock.err"; fi
  client_start A "$(uri "$sock")"
  reads_aa || fail "A does not read the snapshot's data at first"
}

# after WHAT COMMAND...: run COMMAND; within 10 s A reads 0xaa again.
after() {
  local what=$1
  shift
  "$@" >/dev/null || fail "$what failed"
  wait_for 10 reads_aa ||
    fail "A's reads 10 s after $what: $(client_try A read 0 4096 aa)"
}

# close_snap: A still reads 0xaa a second later and is alive; stop all.
close_snap() {
  sleep 1
  reads_aa || fail "A's reads went wrong again"
  client_do A alive
  client_stop A
  stop_server "$sock"
}

objectmap_rebuild() {
  local img
  img=$(new_image 8M)
  import_into "$img" "$MC_DIR/aa" --image-feature layering,exclusive-lock
  rbd snap create --no-progress "$img@s" >/dev/null
  say "${1:-nbdkit}: object-map enabled and rebuilt under a served snapshot"
  open_snap "$img@s" "${1:-}"
  after "rbd feature enable object-map" rbd feature enable "$img" object-map,fast-diff
  after "rbd object-map rebuild" rbd object-map rebuild --no-progress "$img@s"
  close_snap
  [ "$(bytes_at "$img@s" 0)" = "aa " ] || fail "the snapshot itself changed"
}

flatten() {
  local parent clone
  parent=$(new_image 8M)
  import_into "$parent" "$MC_DIR/aa"
  rbd snap create --no-progress "$parent@p" >/dev/null
  rbd snap protect "$parent@p"
  clone=$parent-clone
  rbd clone "$parent@p" "$clone"
  own_image "$clone"
  rbd snap create --no-progress "$clone@cs" >/dev/null
  say "${1:-nbdkit}: a clone flattened under its served snapshot"
  open_snap "$clone@cs" "${1:-}"
  after "rbd flatten" rbd flatten --no-progress "$clone"
  close_snap
}

pattern_file "$MC_DIR/aa" $((8 << 20)) aa
objectmap_rebuild
objectmap_rebuild engine
flatten
flatten engine
say "ok"

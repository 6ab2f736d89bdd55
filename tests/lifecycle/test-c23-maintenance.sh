#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tests/lifecycle: maintenance operations on a served image (case C23).
#
# One `nbdkit rbdx pool=rbd` serves a fresh default-feature image per
# operation; four connections (multi-conn) write stamped 4 KiB blocks
# while the rbd command runs under `timeout 30`.  For each operation the
# test asserts the exit status Ceph gives (0, or its error at once), that
# it returned within 30 s, that the export still serves (a new
# connection), and that every acknowledged write reads back through
# NBD and in an `rbd export`.  After `rbd object-map rebuild`, block
# status must show the written blocks as data and the rest as holes.
# Some operations run again against a single-image server with
# exclusive=true (the lock taken with rbd_lock_acquire) and against the
# mapper's built-in engine (the same serving core).
# The table of outcomes is in nbdkit-rbdx-plugin(1), LIFECYCLE.
#
# Root cause of the stall this guards against: rbdx's update watch
# called librbd synchronously from librbd's callback; see server/core/ctx.c,
# on_update.
. "$(dirname "$0")/../lib.sh"
requires_cluster
requires python3 timeout
requires_python_nbd

clients=$(dirname "$0")/c23-clients.py
d=$(tmpdir)
sock=$d/nbd.sock
serve "$sock" -- pool=rbd
CONNS=4 BLOCKS=64 LIMIT=30
summary=$d/summary
# export_uri IMAGE: its URI on the current server ($sock): the bare image
# name in pool mode, the full spec on a single-image server.
single=false
export_uri() { if $single; then uri "$sock" "$1"; else uri "$sock" "${1#rbd/}"; fi; }

# start_writers IMAGE TAG: the writers of IMAGE in $d/w (waits until each
# connection wrote a round).
start_writers() {
  rm -rf "$d/w"
  mkdir "$d/w"
  /usr/bin/python3 "$clients" write "$(export_uri "$1")" \
    "$CONNS" "$BLOCKS" "$d/w" "$2" 2>"$d/w/log" &
  WRITERS=$!
  wait_for 60 test -e "$d/w/ready" ||
    fail "$2: the writers did not start: $(cat "$d/w/log")"
}

stop_writers() {
  touch "$d/w/stop"
  wait "$WRITERS" || fail "writers of $1 failed: $(cat "$d/w/log")"
}

# check_image IMAGE WHAT: the export serves a new connection and every
# acknowledged write reads back through it and in an rbd export.
check_image() {
  rm -f "$d/export"
  rbd export --no-progress "$1" "$d/export" >/dev/null
  /usr/bin/python3 "$clients" check "$(export_uri "$1")" "$d/w" \
    "$d/export" >"$d/check" || fail "$2: $(cat "$d/check")"
}

# maint NAME WANT_RC IMAGE RBD-ARGS...: run `rbd RBD-ARGS` under the
# writers of IMAGE; assert its status and time, then check the image.
maint() {
  local name=$1 want=$2 img=$3 rc=0 t0 ms
  shift 3
  start_writers "$img" "$name"
  t0=${EPOCHREALTIME/[.,]/}
  timeout "$LIMIT" rbd "$@" >"$d/out" 2>&1 || rc=$?
  ms=$(((${EPOCHREALTIME/[.,]/} - t0) / 1000))
  stop_writers "$img"
  [ "$rc" != 124 ] || fail "$name: rbd $* did not return within $LIMIT s"
  [ "$rc" = "$want" ] ||
    fail "$name: rbd $* exited $rc, expected $want: $(cat "$d/out")"
  check_image "$img" "$name"
  printf '%-40s rc=%-3s %6d ms  %s\n' "$name" "$rc" "$ms" "$(cat "$d/check")" |
    tee -a "$summary" >&2
}

features() {
  rbd info --format json "$1" |
    /usr/bin/python3 -c 'import json,sys; print(",".join(json.load(sys.stdin)["features"]))'
}
has_feature() { [[ ,$(features "$1"), == *,$2,* ]]; }

# Features.
img=$(new_image 64M)
maint feature-disable-object-map 0 "$img" feature disable "$img" fast-diff,object-map
! has_feature "$img" object-map || fail "object-map still enabled on $img"
maint feature-enable-object-map 0 "$img" feature enable "$img" object-map,fast-diff
has_feature "$img" fast-diff || fail "fast-diff not enabled on $img"
maint object-map-rebuild 0 "$img" object-map rebuild --no-progress "$img"
[ -z "$(rbd info --format json "$img" | /usr/bin/python3 -c \
  'import json,sys; print(*json.load(sys.stdin)["flags"])')" ] ||
  fail "$img: flags left after the rebuild: $(rbd info "$img" | grep flags)"
/usr/bin/python3 "$clients" allocated "$(uri "$sock" "${img#rbd/}")" "$BLOCKS" >&2 ||
  fail "block status after object-map rebuild"

img=$(new_image 64M --image-feature layering,exclusive-lock)
maint feature-disable-exclusive-lock 0 "$img" feature disable "$img" exclusive-lock
img=$(new_image 64M --image-feature layering)
maint feature-enable-exclusive-lock 0 "$img" feature enable "$img" exclusive-lock
img=$(new_image 64M)
maint feature-enable-journaling 0 "$img" feature enable "$img" journaling
has_feature "$img" journaling || fail "journaling not enabled on $img"
maint feature-disable-journaling 0 "$img" feature disable "$img" journaling

# Snapshots, size, space.
img=$(new_image 64M)
maint snap-create 0 "$img" snap create "$img@s1"
rbd snap ls "$img" | grep -q ' s1 ' || fail "no snapshot s1 on $img"
maint snap-rm 0 "$img" snap rm --no-progress "$img@s1"
maint resize-grow 0 "$img" resize --no-progress --size 128M "$img"
[ "$(nbdinfo --size "$(uri "$sock" "${img#rbd/}")")" = $((128 << 20)) ] ||
  fail "a new connection does not see the new size of $img"
maint sparsify 0 "$img" sparsify --no-progress "$img"

# A served clone flattened.
parent=$(new_image 64M)
/usr/bin/python3 - "$(uri "$sock" "${parent#rbd/}")" <<'EOF'
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(b"P" * (1 << 20), 32 << 20); h.flush(); h.shutdown()
EOF
rbd snap create --no-progress "$parent@base" >/dev/null
rbd snap protect "$parent@base"
clone=${parent}-clone
own_image "$clone"
rbd clone "$parent@base" "$clone"
maint flatten-clone 0 "$clone" flatten --no-progress "$clone"
nbdsh -u "$(uri "$sock" "${clone#rbd/}")" \
  -c 'assert h.pread(1 << 20, 32 << 20) == b"P" * (1 << 20)' ||
  fail "the flattened clone lost its parent's data"

# Mirroring (snapshot mode) and migration.
rbd mirror pool enable rbd image
at_exit "rbd mirror pool disable rbd >/dev/null 2>&1"
img=$(new_image 64M)
maint mirror-image-enable-snapshot 0 "$img" mirror image enable "$img" snapshot
rbd mirror image disable --force "$img" >/dev/null 2>&1 || true
img=$(new_image 64M)
own_image "$img-migrated"
maint migration-prepare 16 "$img" migration prepare "$img" "$img-migrated"
grep -q 'Device or resource busy' "$d/out" ||
  fail "migration prepare: not Ceph's EBUSY: $(cat "$d/out")"

# Rollback needs the exclusive lock, and librbd does not ask a live
# owner to give it up for a rollback: Ceph fails it at once with EROFS
# while rbdx's writer holds the lock.  Once the clients have gone (the
# writer closes with its last connection and releases the lock) the
# rollback works and a new connection reads the snapshot's data.
img=$(new_image 64M)
start_writers "$img" rb1
stop_writers "$img"
cp "$d/w/acked.json" "$d/snap.json"
rbd snap create --no-progress "$img@before" >/dev/null
maint snap-rollback-while-served 30 "$img" snap rollback --no-progress "$img@before"
grep -q 'Read-only file system' "$d/out" ||
  fail "snap rollback: not Ceph's EROFS: $(cat "$d/out")"
released "$img" "the last connection to $img closed" 10
t0=${EPOCHREALTIME/[.,]/}
timeout "$LIMIT" rbd snap rollback --no-progress "$img@before" >/dev/null ||
  fail "snap rollback of $img with no client connected"
cp "$d/snap.json" "$d/w/acked.json"
check_image "$img" snap-rollback-after-disconnect
printf '%-40s rc=%-3s %6d ms  %s\n' snap-rollback-no-client 0 \
  $(((${EPOCHREALTIME/[.,]/} - t0) / 1000)) "$(cat "$d/check")" |
  tee -a "$summary" >&2

# exclusive=true: the writer takes the lock with rbd_lock_acquire (no
# automatic hand-over); librbd still forwards maintenance requests to it.
img=$(new_image 64M)
sock=$d/excl.sock single=true
serve "$sock" -- "$img" exclusive=true
maint exclusive-feature-disable-object-map 0 "$img" feature disable "$img" fast-diff,object-map
maint exclusive-feature-enable-object-map 0 "$img" feature enable "$img" object-map,fast-diff
maint exclusive-object-map-rebuild 0 "$img" object-map rebuild --no-progress "$img"
maint exclusive-snap-create 0 "$img" snap create --no-progress "$img@s1"
maint exclusive-resize-grow 0 "$img" resize --no-progress --size 128M "$img"
maint exclusive-snap-rollback 30 "$img" snap rollback --no-progress "$img@s1"

# The mapper's built-in engine shares the serving core (and its update
# thread): the same for it.
if [ -x "$RBDX_BUILD/server/rbdx-engine" ]; then
  img=$(new_image 64M)
  sock=$d/engine.sock single=true
  serve_engine "$sock" -- "$img"
  maint engine-feature-disable-object-map 0 "$img" feature disable "$img" fast-diff,object-map
  maint engine-snap-create 0 "$img" snap create --no-progress "$img@s1"
  maint engine-resize-grow 0 "$img" resize --no-progress --size 128M "$img"
else
  say "no rbdx-engine built: its rows are not run"
fi

say "summary:"
cat "$summary" >&2

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Data integrity under several connections: fio (nbd engine, one NBD
# connection per job) runs 4 KiB random reads and writes with
# verify=crc32c on an rbdx export, each job in its own 2 MiB region
# that crosses a 4 MiB object boundary (job i: [8i+3, 8i+5) MiB); then
# nbdcopy, with as many connections, copies the export and the copy must
# equal `rbd export` of the image.  Asserts: fio exits 0 with no I/O or
# verify error, and the copy is identical.
# How fio verifies here (fio 3.33, time_based): after each pass over its
# region a job reads back every block it wrote in the pass and checks
# the checksum and the header (offset, per-write seed), so a lost or
# stale write is caught, not only a torn one; a pass still running when
# the time is up is not verified, hence the small regions: one pass takes
# about a second, so a run verifies many passes.  (With overlapping
# regions this setup reports "bad header rand_seed" at once: checked.)
# verify_backlog is not used: in that mode fio 3.33 did not notice
# blocks overwritten by another job.  As a guard against a silent lack
# of verify passes, fio must have read at least 1.3 x what it wrote
# (the random reads alone are about 1 x).
# On a default-feature image (exclusive-lock: writers=auto means every
# connection's writes go through the shared lock-owning writer; checked
# through the multi-conn flag) and on a layering-only image (each
# connection writes through its own handle).
#
# Usage: test-integrity-fio-randrw.sh IMAGES CONNECTIONS SECONDS [soak]
#   IMAGES: lock, layering or both.  With "soak" the test is skipped (77)
#   unless RBDX_SOAK=1 (a run of >= 60 s with 8 connections).
# meson registers: 4 connections x 30 s on each kind of image and
# 8 connections x 20 s on the exclusive-lock image (suite cluster), and
# 8 connections x 60 s on both (suite soak).
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
[ $# -ge 3 ] || fail "usage: $0 lock|layering|both CONNECTIONS SECONDS [soak]"
kinds=$1 conns=$2 secs=$3
if [ "${4:-}" = soak ] && [ "${RBDX_SOAK:-0}" != 1 ]; then
  skip "soak test: set RBDX_SOAK=1 to run it"
fi
requires_cluster
requires fio nbdcopy nbdinfo
fio --enghelp=nbd >/dev/null 2>&1 || skip "fio has no nbd engine"
size=$((conns * 8))             # MiB: 8 MiB per connection

run() {
  local img=$1 sock=$2 u
  say "$img: $conns connections x $secs s of verified random read/write"
  serve "$sock" -- "$img"
  u=$(uri "$sock")
  nbdinfo --json "$u" | python3 -c '
import json, sys
e = json.load(sys.stdin)["exports"][0]
sys.exit(0 if e["can_multi_conn"] else "multi-conn is not advertised")' ||
    fail "$img: no multi-conn (writers=auto should share the writer)"
  rc=0
  fio --output-format=json --output="$MC_DIR/fio.json" --name=integrity \
    --ioengine=nbd --uri="$u" --rw=randrw --bs=4k --iodepth=16 \
    --numjobs="$conns" --offset=3M --size=2M --offset_increment=8M \
    --time_based --runtime="$secs" --verify=crc32c --verify_fatal=1 \
    --verify_state_save=0 \
    --group_reporting >"$MC_DIR/fio.out" 2>&1 || rc=$?
  python3 - "$MC_DIR/fio.json" "$img" <<'PY' || rc=1
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
r, w = j["read"], j["write"]
print("%s: read %d IOPS (%d KiB, incl. verify), write %d IOPS (%d KiB), "
      "error %d" % (sys.argv[2], r["iops"], r["io_kbytes"], w["iops"],
                    w["io_kbytes"], j["error"]))
if j["error"] or w["io_kbytes"] == 0 or r["io_kbytes"] < 1.3 * w["io_kbytes"]:
    sys.exit("fio: error, no writes, or less than 1.3 x as many bytes read "
             "as written (no verify pass?)")
PY
  if [ $rc != 0 ]; then
    grep -i -m5 'verify\|error\|fail' "$MC_DIR/fio.out" >&2 || true
    fail "$img: fio failed ($rc)"
  fi
  nbdcopy -C "$conns" "$u" "$MC_DIR/copy" || fail "$img: nbdcopy failed"
  rbd export --no-progress "$img" "$MC_DIR/export" >/dev/null
  cmp "$MC_DIR/copy" "$MC_DIR/export" ||
    fail "$img: nbdcopy of the export differs from rbd export"
  rm -f "$MC_DIR/copy" "$MC_DIR/export"
  stop_server "$sock"
  [ "$(lock_owners "$img")" = 0 ] || fail "$img: lock left after nbdkit exited"
}

case $kinds in
  lock|both) img=$(new_image ${size}M); run "$img" "$MC_DIR/lock.sock" ;;&
  layering|both) img=$(new_image ${size}M --image-feature layering)
                 run "$img" "$MC_DIR/layering.sock" ;;
  lock) ;;
  *) fail "unknown image kind '$kinds'" ;;
esac

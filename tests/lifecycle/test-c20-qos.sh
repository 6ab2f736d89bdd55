#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C20 (tests/README.md): an image's QoS limit holds for the export as
# a whole.  librbd throttles per handle and rbdx opens a handle per
# connection, so without rbdx's per-image buckets 4 connections got 4x the
# limit (805 IOPS against rbd_qos_iops_limit=200).
# Asserts, with fio's nbd engine (one NBD connection per job, 4k randread,
# QD4, 10 s):
#   - `rbd config image set ... rbd_qos_iops_limit 200`: total IOPS at 1, 4
#     and 8 jobs is at most 224 and at least 100 (I/O was not starved),
#     and every job gets at least 40 % of an equal share.  The ceiling is
#     what the bucket allows, not a tolerance: a bucket holds one second's
#     worth (qos.*_burst unset), full after any idle second, so a 10 s run
#     may do 11 s of the limit, plus what is in flight when it ends
#     (up to 32 requests: 0.16 s): 200 x 11.16 / 10 = 223.2;
#   - changing the image's limit to 100 while the server runs: once the
#     server logs the new limit (read when a connection opens and by the
#     update watch of open ones: debug message "QoS for all connections:
#     iops=100", so no waiting on a clock), a new run stays at most 112
#     (100 x 11.16 / 10);
#   - qos.iops_limit=100 given to the server overrides the image's 200;
#     qos.read_bps_limit=409600 (100 x 4 KiB reads/s) limits bytes;
#   - qos.* cannot raise or remove the image's limit: qos.iops_limit=0,
#     and qos.iops_limit=1000 with qos.iops_burst=5000, keep the image's
#     200 (at most 224 through 4 connections, not 4 x 200 as librbd's
#     per-handle throttles alone would allow), each logged at error level;
#   - image limits written as Ceph reads them: rbd_qos_iops_limit +50 is
#     50 (at most 56 through 4 connections), rbd_qos_bps_limit 1M is
#     1000000 bytes/s (SI, as Ceph's unsigned options): at most 1172 KiB/s
#     over fio's 10 s of 64 KiB reads
#     (976.6 x (10 + 1 s of bucket + 1 s of the 16 x 64 KiB in flight,
#     which fio's runtime misses) / 10);
#   - WRITE_ZEROES counts its length against the byte limit, as librbd
#     does: 12 MiB of zeroes under qos.write_bps_limit=4M take at least 2 s;
#   - a request waiting for its turn (qos.bps_limit=1) does not hold up
#     nbdkit's shutdown: SIGTERM ends the server within 15 s.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires fio
requires nbdinfo

d=$(tmpdir)
img=$(new_image 64M)
rbd config image set "$img" rbd_qos_iops_limit 200
# Data to read (reads of never-written objects are cheap but count too).
nbdkit -U - "$RBDX_PLUGIN" "$img" --run 'nbdcopy -- [ nbdkit pattern size=64M ] "$uri"'

# run_fio SOCKET JOBS SECONDS [BS]: total read IOPS, then each job's, on
# stdout (with BS, KiB/s instead of IOPS).
run_fio() {
  fio --name=qos --ioengine=nbd --uri="nbd+unix:///?socket=$1" --rw=randread \
    --bs="${4:-4k}" --iodepth=4 --numjobs="$2" --time_based --runtime="$3" \
    --size=64M --output-format=json --output="$d/fio.json" >/dev/null 2>&1 ||
    fail "fio failed: $(cat "$d/fio.json" 2>/dev/null | tail -5)"
  python3 - "$d/fio.json" "${4:-}" <<'PY'
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
iops = [j["read"]["bw"] if sys.argv[2] else j["read"]["iops"] for j in jobs]
errs = sum(j["error"] for j in jobs)
assert errs == 0, "fio reported errors"
print("%.1f" % sum(iops), *["%.1f" % i for i in iops])
PY
}

# check LABEL MAX MIN SOCKET JOBS SECONDS: fio's total within [MIN, MAX]
# and every job at least 40 % of an equal share.
check() {
  local label=$1 max=$2 min=$3 total per
  shift 3
  read -r total per < <(run_fio "$@")
  say "$label: $total IOPS in total, per job: $per"
  python3 - "$total" "$max" "$min" "$2" $per <<'PY' || fail "$label: $total IOPS (per job: $per), expected $3..$2"
import sys
total, hi, lo, n = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
per = [float(x) for x in sys.argv[5:]]
ok = lo <= total <= hi and len(per) == n and min(per) >= 0.4 * total / n
sys.exit(0 if ok else 1)
PY
}

# -v for the debug message that says the server applied a new limit;
# without the per-request lines.
serve "$d/a.sock" -v -D nbdkit.backend.datapath=0 -- "$img" 2>"$d/a.log"
for jobs in 1 4 8; do
  check "rbd_qos_iops_limit=200, $jobs connection(s)" 224 100 "$d/a.sock" "$jobs" 10
done

say "the image's limit changes to 100 while served"
rbd config image set "$img" rbd_qos_iops_limit 100
# The server reads the limits when a connection opens and on every header
# update while one is open: open one, then wait for the message.
nbdinfo --size "$(uri "$d/a.sock")" >/dev/null || fail "nbdinfo failed"
wait_for 60 grep -q "QoS for all connections: iops=100" "$d/a.log" ||
  fail "the server did not apply the image's new limit within 60 s: $(grep QoS "$d/a.log" | tail -2)"
check "rbd_qos_iops_limit=100 (changed), 4 connections" 112 50 "$d/a.sock" 4 10
stop_server "$d/a.sock"
rbd config image set "$img" rbd_qos_iops_limit 200

serve "$d/b.sock" -- "$img" qos.iops_limit=100
check "qos.iops_limit=100 over the image's 200, 4 connections" 112 50 "$d/b.sock" 4 10
stop_server "$d/b.sock"
serve "$d/c.sock" -- "$img" qos.iops_limit=0 qos.read_bps_limit=409600 2>"$d/c.log"
check "qos.read_bps_limit=409600, 4 connections" 112 50 "$d/c.sock" 4 10
stop_server "$d/c.sock"
grep -q "qos.iops_\* asks for more than the image's own rbd_qos_iops_limit=200" "$d/c.log" ||
  fail "qos.iops_limit=0 over the image's limit was not reported: $(tail -3 "$d/c.log")"
# qos.* cannot raise the image's limit: librbd holds each handle to the
# image's 200, so a shared 1000 would let 4 connections do 800.
serve "$d/r.sock" -- "$img" qos.iops_limit=1000 qos.iops_burst=5000 2>"$d/r.log"
check "qos.iops_limit=1000 over the image's 200, 4 connections" 224 100 "$d/r.sock" 4 10
stop_server "$d/r.sock"
grep -q "qos.iops_\* asks for more than the image's own rbd_qos_iops_limit=200" "$d/r.log" ||
  fail "qos.iops_limit=1000 over the image's 200 was not reported: $(tail -3 "$d/r.log")"

say "Ceph's notation: rbd_qos_iops_limit +50, rbd_qos_bps_limit 1M"
# "+50" is 50 to Ceph: read as no limit, 4 handles would do 200.
rbd config image set "$img" rbd_qos_iops_limit +50
serve "$d/p.sock" -- "$img"
check "rbd_qos_iops_limit=+50, 4 connections" 56 25 "$d/p.sock" 4 10
stop_server "$d/p.sock"
rbd config image remove "$img" rbd_qos_iops_limit
rbd config image set "$img" rbd_qos_bps_limit 1M
serve "$d/e.sock" -- "$img"
# fio divides by its own runtime, which misses part of the first request wait
# (up to 16 x 64 KiB in flight at 1 MB/s), and the bucket may start full.
check "rbd_qos_bps_limit=1M, 64 KiB reads, 4 connections (KiB/s, not IOPS)" 1172 500 "$d/e.sock" 4 10 64k
stop_server "$d/e.sock"
rbd config image remove "$img" rbd_qos_bps_limit

say "WRITE_ZEROES counts its bytes"
serve "$d/z.sock" -- "$img" qos.write_bps_limit=4M
t0=${EPOCHREALTIME/[.,]/}
nbdsh -u "$(uri "$d/z.sock")" -c 'for i in range(3): h.zero(4 << 20, i * (4 << 20), 1)' ||
  fail "WRITE_ZEROES failed"  # flag 1: NO_HOLE, real zeros written
ms=$(((${EPOCHREALTIME/[.,]/} - t0) / 1000))
say "12 MiB of zeroes under 4 MiB/s took $ms ms"
[ "$ms" -ge 2000 ] || fail "12 MiB of zeroes under qos.write_bps_limit=4M took only $ms ms"
stop_server "$d/z.sock"

say "a request waiting for QoS does not hold up shutdown"
serve "$d/w.sock" -- "$img" qos.bps_limit=1
nbdsh -u "$(uri "$d/w.sock")" -c 'h.pread(4096, 0)' >/dev/null 2>&1 &
reader=$!
sleep 1
kill -0 "$reader" 2>/dev/null || fail "the 4 KiB read under qos.bps_limit=1 did not wait"
kill "$SERVER_PID"
wait_for 15 exited "$SERVER_PID" || fail "nbdkit did not exit within 15 s of SIGTERM"
wait "$reader" 2>/dev/null || true

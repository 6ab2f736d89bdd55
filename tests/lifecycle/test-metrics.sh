#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# metrics_file= (man page METRICS): request counters in Prometheus' text
# format, per image and per connection.
# Asserts, with metrics_interval=1:
#   - the file appears and parses as Prometheus text (name{labels} value);
#   - after fio (nbd engine, 4 connections, 2000 4k reads and 2000 4k
#     writes in all), rbdx_requests_total{op="read"} and {op="write"} for
#     the image are at least fio's counts and the bytes match 4 KiB each;
#     the histogram's count equals the requests (closed connections'
#     counts are kept);
#   - a read past the end of the image after it shrank under the open
#     connection counts a read error, as EINVAL in
#     rbdx_request_errors_by_errno_total;
#   - with `rbd config image set ... rbd_qos_iops_limit` the QoS wait time
#     grows;
#   - the file is rewritten after the server stops (final counts), and
#     passes metrics-check.py (case C27);
#   - `rbdx status` of a mapping whose server wrote that file shows its
#     counts and the supervisor's (plain and JSON).
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires fio nbdsh

d=$(tmpdir)
img=$(new_image 64M)
serve "$d/s.sock" -- "$img" metrics_file="$d/rbdx.prom" metrics_interval=1
u=$(uri "$d/s.sock")
wait_for 10 test -s "$d/rbdx.prom" || fail "no metrics file within 10 s"

fio --name=m --ioengine=nbd --uri="$u" --rw=randrw --rwmixread=50 --bs=4k \
  --iodepth=4 --numjobs=4 --size=64M --number_ios=1000 --randrepeat=1 \
  --output-format=json --output="$d/fio.json" >/dev/null 2>&1 || fail "fio failed"
# A read that reaches rbdx and fails there: past the end of the image
# after it shrank under the open connection.
nbdsh -u "$u" -c - <<PY || fail "no EINVAL for a read past the shrunk end"
import subprocess, time
subprocess.run(["rbd", "resize", "--no-progress", "--allow-shrink",
                "--size", "32M", "$img"], check=True)
for i in range(100):
    try:
        h.pread(4096, 48 << 20)
    except nbd.Error as e:
        assert e.errno == "EINVAL", e
        break
    time.sleep(0.1)
else:
    raise SystemExit("the read past the shrunk end kept succeeding")
PY

read -r fr fw < <(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
print(sum(x["read"]["total_ios"] for x in j), sum(x["write"]["total_ios"] for x in j))' "$d/fio.json")
# The file is rewritten every second (metrics_interval=1), by a thread
# that a busy machine may delay: wait for it to hold fio's requests and
# the read error, within 60 s.
counted() {
  [ "$(metric "$d/rbdx.prom" rbdx_requests_total 'op="read"')" -ge "$fr" ] &&
    [ "$(metric "$d/rbdx.prom" rbdx_requests_total 'op="write"')" -ge "$fw" ] &&
    [ "$(metric "$d/rbdx.prom" rbdx_request_errors_by_errno_total 'errno="EINVAL"')" -ge 1 ]
}
wait_for 60 counted || say "the metrics file did not reach fio's counts within 60 s"
reads=$(metric "$d/rbdx.prom" rbdx_requests_total 'op="read"')
writes=$(metric "$d/rbdx.prom" rbdx_requests_total 'op="write"')
rbytes=$(metric "$d/rbdx.prom" rbdx_request_bytes_total 'op="read"')
wbytes=$(metric "$d/rbdx.prom" rbdx_request_bytes_total 'op="write"')
hist=$(metric "$d/rbdx.prom" rbdx_request_duration_seconds_count 'op="read"')
rerr=$(metric "$d/rbdx.prom" rbdx_request_errors_total 'op="read"')
einval=$(metric "$d/rbdx.prom" rbdx_request_errors_by_errno_total 'errno="EINVAL"')
conns=$(grep -c 'rbdx_conn_requests_total{.*op="write"' "$d/rbdx.prom" || true)
say "fio: $fr reads, $fw writes; metrics: $reads reads ($rbytes B), $writes writes ($wbytes B), histogram $hist, read errors $rerr (EINVAL $einval), $conns connections"
[ "$reads" -ge "$fr" ] && [ "$writes" -ge "$fw" ] || fail "fewer requests counted than fio made"
[ "$wbytes" = $((writes * 4096)) ] || fail "write bytes $wbytes for $writes writes of 4 KiB"
[ "$hist" = "$reads" ] || fail "the read histogram counts $hist, requests $reads"
[ "$rerr" -ge 1 ] && [ "$einval" -ge 1 ] || fail "the read past the end was not counted as an EINVAL error"

say "QoS wait time"
# The limit reaches the open image when librbd refreshes it (a header
# update notification), and the token bucket starts with a burst: no
# fixed number of reads is sure to wait.  So batches of 100 reads at
# 100 IOPS until the file shows more than 1 s waited (each batch past
# the burst waits about 1 s), within 120 s.
rbd config image set "$img" rbd_qos_iops_limit 100
qos_reads=0
qos_waited() {
  nbdsh -u "$u" -c 'for i in range(100): h.pread(4096, i * 4096)' || fail "reads under QoS failed"
  qos_reads=$((qos_reads + 100))
  waited=$(metric "$d/rbdx.prom" rbdx_qos_wait_seconds_total '')
  python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 1.0 else 1)' "$waited"
}
wait_for 120 qos_waited ||
  fail "rbdx_qos_wait_seconds_total is $waited after $qos_reads reads at 100 IOPS"
say "waited for QoS: $waited s ($qos_reads reads)"
stop_server "$d/s.sock"
final=$(metric "$d/rbdx.prom" rbdx_requests_total 'op="read"')
[ "$final" -ge $((reads + qos_reads)) ] || fail "the final write lacks the last reads ($final)"
# The strict format check of C27 (test-c27-metrics-format.sh) on this
# file too; exit 2: no prometheus_client to check with.
rc=0
"$RBDX_TESTS/lifecycle/metrics-check.py" "$d/rbdx.prom" || rc=$?
case $rc in
  0) say "the final file passes metrics-check.py" ;;
  2) say "python3-prometheus-client is not installed: format not checked" ;;
  *) fail "the final metrics file is not strict Prometheus text (above)" ;;
esac

# `rbdx status` reads such a file for a mapping (the mapper's own server
# writes one): a mapping's state pointing at it, in a run directory of
# this test's own, with this shell standing in for the live supervisor.
mapper=$RBDX_BUILD/server/rbdx
[ -x "$mapper" ] || { say "no mapper built: rbdx status not checked"; exit 0; }
run="$d/run"
mkdir -p "$run"
cat >"$run/nbd99" <<EOS
index=99
target=$img
connections=4
supervisor=$$
supervisor_start=$(awk '{print $22}' /proc/$$/stat)
identity=1/abc
metrics=$d/rbdx.prom
reattaches=3
resizes=1
server_restarts=1
EOS
RBDX_RUN_DIR="$run" "$mapper" status --format json /dev/nbd99 >"$d/status.json" ||
  fail "rbdx status failed"
python3 - "$d/status.json" "$final" "$writes" <<'PY' || fail "rbdx status: $(cat "$d/status.json")"
import json, sys
(s,) = json.load(open(sys.argv[1]))
assert s["device"] == "/dev/nbd99" and s["identity"] == "1/abc", s
assert (s["reattaches"], s["resizes"], s["server_restarts"]) == (3, 1, 1), s
assert s["requests"]["read"] == int(sys.argv[2]), s["requests"]
assert s["requests"]["write"] == int(sys.argv[3]), s["requests"]
assert s["bytes"]["write"] == 4096 * int(sys.argv[3]), s["bytes"]
assert s["errors"]["read"] >= 1 and s["qos_wait_seconds"] > 0.3, s
PY
RBDX_RUN_DIR="$run" "$mapper" status /dev/nbd99 | grep -q "re-attached 3" ||
  fail "rbdx status (plain): $(RBDX_RUN_DIR="$run" "$mapper" status /dev/nbd99)"
say "rbdx status: $(cat "$d/status.json")"

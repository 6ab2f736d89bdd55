#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# An image's QoS limit changed again and again while requests wait for
# their turn (include/rbdx/qos.h, rbdx_qos_generation): each change
# reserves the waiting requests again under the new limits.  Nothing may
# be lost or answered twice on the way, and once the limit is gone they
# must go on within the bound test-qos-removed.sh holds (the update
# watch and a RBDX_QOS_RECHECK_NS recheck).
# Asserts, for nbdkit rbdx (completion=callback and the default) and the
# built-in engine: 8 writes of 128 KiB and 4 reads in flight at once
# under rbd_qos_bps_limit=16384 (about 70 s of wait); the limit set to
# 131072, 8192, 65536, 4096 and 32768, one after another as fast as the
# rbd CLI goes; then set to 0 (no limit): every request completes exactly
# once without error within 30 s of that, the writes read back, and the
# QoS wait counted is under 120 s (a count taken off twice would wrap
# to about 1.8e10 s).
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires_python_nbd

d=$(tmpdir)
img=$(new_image 16M)

# check SOCK METRICS KIND
check() {
  /usr/bin/python3 - "$@" "$img" <<'PY' || fail "$3: see above"
import nbd, subprocess, sys, time
from rbdxtest import qos_waited
sock, metrics, kind, img = sys.argv[1:5]
def limit(v):
    subprocess.run(["rbd", "config", "image", "set", img,
                    "rbd_qos_bps_limit", str(v)], check=True,
                   capture_output=True)
h = nbd.NBD()
h.connect_unix(sock)
L = 128 << 10
pats = [bytes([i + 1]) * L for i in range(8)]
calls = {}
def done(name):
    def cb(err):
        calls.setdefault(name, []).append(getattr(err, "value", err))
        return 1
    return cb
for i, p in enumerate(pats):
    h.aio_pwrite(p, (i + 1) * L, completion=done(("w", i)))
for i in range(4):
    h.aio_pread(nbd.Buffer(L), (9 + i) * L, completion=done(("r", i)))
end = time.monotonic() + 60
while qos_waited(metrics) < 20:
    h.poll(0)
    if time.monotonic() > end or len(calls) == 12:
        sys.exit(f"{kind}: the requests were never delayed (waited {qos_waited(metrics)} s,"
                 f" {len(calls)} done)")
    time.sleep(0.1)
for v in (131072, 8192, 65536, 4096, 32768):
    limit(v)
    h.poll(0)
limit(0)
removed = time.monotonic()
while len(calls) < 12 and time.monotonic() - removed < 30:
    h.poll(1)
late = time.monotonic() - removed
time.sleep(1)
h.poll(0)
if len(calls) < 12:
    sys.exit(f"{kind}: {12 - len(calls)} requests still wait 30 s after the "
             "limit was set to 0")
bad = {k: v for k, v in calls.items() if v != [0]}
if bad:
    sys.exit(f"{kind}: requests answered wrongly or more than once: {bad}")
for i, p in enumerate(pats):
    if h.pread(L, (i + 1) * L) != p:
        sys.exit(f"{kind}: write {i} does not read back")
print(f"{kind}: all 12 done {late:.1f} s after the limit was set to 0",
      file=sys.stderr)
time.sleep(2.5)          # metrics_interval=1: the file catches up
if not 0 < qos_waited(metrics) < 120:
    sys.exit(f"{kind}: {qos_waited(metrics)} s of QoS wait counted")
h.shutdown()
PY
}

for mode in callback default; do
  rbd config image set "$img" rbd_qos_bps_limit 16384
  if [ "$mode" = default ]; then
    serve "$d/n-$mode.sock" -- "$img" "metrics_file=$d/n-$mode.prom" metrics_interval=1
  else
    serve "$d/n-$mode.sock" -- "$img" "metrics_file=$d/n-$mode.prom" metrics_interval=1 \
      completion=$mode
  fi
  check "$d/n-$mode.sock" "$d/n-$mode.prom" "nbdkit completion=$mode"
  stop_server "$d/n-$mode.sock"
done

rbd config image set "$img" rbd_qos_bps_limit 16384
serve_engine "$d/e.sock" "$img" "metrics_file=$d/e.prom" metrics_interval=1
check "$d/e.sock" "$d/e.prom" engine
stop_server "$d/e.sock"
say "requests waiting while the limit changes are answered once, in bound"

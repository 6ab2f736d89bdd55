#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# An image's QoS limit removed (`rbd config image rm ... rbd_qos_bps_limit`)
# while a request waits for its turn: the request goes on under the new
# limits (include/rbdx/qos.h, rbdx_qos_generation), not when the old
# limit would have let it.  Before, a 1 MiB write under
# rbd_qos_bps_limit=4096 waited its whole 256 s after the limit was gone
# (seen: 32 s for 1 MiB at 32768 B/s, limit removed after 2 s).
# Asserts, for nbdkit rbdx and the built-in engine: once the server's
# metrics file shows the write reserved (rbdx_qos_wait_seconds_total
# above 200 s: no waiting on a clock for it), the limit is removed, and
# the write completes within 30 s (the update watch and a 250 ms recheck;
# 256 s under the old limit), and reads back; the wait counted is then
# under 60 s (the time not waited is taken off).
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires_python_nbd

d=$(tmpdir)
img=$(new_image 16M)

# check SOCK METRICS KIND
check() {
  /usr/bin/python3 - "$@" "$img" <<'PY' || fail "$3: see above"
import nbd, subprocess, sys, threading, time
from rbdxtest import qos_waited
sock, metrics, kind, img = sys.argv[1:5]
h = nbd.NBD()
h.connect_unix(sock)
data = b"\xa5" * (1 << 20)
done, errs = [], []
def write():
    try:
        h.pwrite(data, 1 << 20)
        done.append(time.monotonic())
    except Exception as e:
        errs.append(repr(e))
t = threading.Thread(target=write, daemon=True)
t.start()
end = time.monotonic() + 60
while qos_waited(metrics) < 200:
    if time.monotonic() > end or errs or done:
        sys.exit(f"{kind}: the write was never delayed (waited {qos_waited(metrics)} s, "
                 f"done {bool(done)}, {errs})")
    time.sleep(0.1)
subprocess.run(["rbd", "config", "image", "rm", img, "rbd_qos_bps_limit"],
               check=True, capture_output=True)
removed = time.monotonic()
t.join(30)
if errs:
    sys.exit(f"{kind}: the write failed: {errs}")
if not done:
    sys.exit(f"{kind}: the write still waits 30 s after the limit was removed")
if h.pread(1 << 20, 1 << 20) != data:
    sys.exit(f"{kind}: the write does not read back")
print(f"{kind}: the write went on {done[0] - removed:.1f} s after the limit "
      "was removed", file=sys.stderr)
time.sleep(2.5)          # metrics_interval=1: the file catches up
if qos_waited(metrics) >= 60:
    sys.exit(f"{kind}: {qos_waited(metrics)} s of QoS wait counted")
h.shutdown()
PY
}

rbd config image set "$img" rbd_qos_bps_limit 4096
serve "$d/n.sock" -- "$img" "metrics_file=$d/n.prom" metrics_interval=1
check "$d/n.sock" "$d/n.prom" nbdkit
stop_server "$d/n.sock"

rbd config image set "$img" rbd_qos_bps_limit 4096
serve_engine "$d/e.sock" "$img" "metrics_file=$d/e.prom" metrics_interval=1
check "$d/e.sock" "$d/e.prom" engine
stop_server "$d/e.sock"
say "a waiting request follows the removal of the image's limit"

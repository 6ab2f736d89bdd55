#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# connections_per_client=K (include/rbdx/cluster.h, rbdx_cluster_acquire):
# K connections share one Ceph client, each with its own image handle.
# For nbdkit rbdx and the built-in engine (--oldstyle), K = 4, 8
# connections to a default-feature image (so the shared writer is a 9th
# context): every connection writes its own 64 KiB, flushes, and every
# connection reads back all eight (multi-conn consistency across shared
# and separate clients); the server holds at most 3 Ceph clients
# (ms_dispatch threads: one per client, Ceph 16), against 9 without the
# parameter; after every connection closed, a new one is served.  Then
# connections_per_client=0 is a startup error naming the parameter.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires_python_nbd

img=$(new_image 16M)
dir=$(tmpdir)

# check SOCK PID KIND MAX_CLIENTS MIN_CLIENTS
check() {
  /usr/bin/python3 - "$@" <<'PY' || fail "$3: see above"
import nbd, sys, time
from rbdxtest import threads_named
sock, pid, kind, most, least = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
def clients():
    return threads_named(pid, "ms_dispatch")
hs = []
for i in range(8):
    h = nbd.NBD()
    h.connect_unix(sock)
    hs.append(h)
for i, h in enumerate(hs):
    h.pwrite(bytes([0x30 + i]) * 65536, i * 65536)
    h.flush()
for j, h in enumerate(hs):
    for i in range(8):
        if h.pread(65536, i * 65536) != bytes([0x30 + i]) * 65536:
            sys.exit(f"{kind}: connection {j} reads wrong data at block {i}")
n = clients()
print(f"{kind}: 8 connections, {n} Ceph clients", file=sys.stderr)
if not least <= n <= most:
    sys.exit(f"{kind}: {n} Ceph clients for 8 connections, expected {least} to {most}")
for h in hs:
    h.shutdown()
time.sleep(0.5)
h = nbd.NBD()
h.connect_unix(sock)
if h.pread(65536, 7 * 65536) != bytes([0x37]) * 65536:
    sys.exit(f"{kind}: a new connection after all closed reads wrong data")
h.shutdown()
PY
}

serve "$dir/n1.sock" -- "$img" connections_per_client=4
check "$dir/n1.sock" "$SERVER_PID" "nbdkit K=4" 3 2
stop_server "$dir/n1.sock"
serve "$dir/n2.sock" -- "$img"
check "$dir/n2.sock" "$SERVER_PID" "nbdkit K=1" 9 9
stop_server "$dir/n2.sock"

if [ -x "$RBDX_BUILD/server/rbdx-engine" ]; then
  serve_engine "$dir/e.sock" "$img" connections_per_client=4
  check "$dir/e.sock" "$SERVER_PID" "engine K=4" 3 2
  stop_server "$dir/e.sock"
else
  say "no rbdx-engine built: engine part not run"
fi

out=$(nbdkit -U - "$RBDX_PLUGIN" "$img" connections_per_client=0 --run true 2>&1) &&
  fail "connections_per_client=0 was accepted"
grep -q "connections_per_client='0'" <<<"$out" || fail "connections_per_client=0: $out"
say "connections_per_client=4 shares clients and keeps the data right"

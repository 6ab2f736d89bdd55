#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# C27: the metrics file (metrics_file=, man page METRICS) passes a strict
# parser of Prometheus' text format: every family's samples together,
# under one HELP and one TYPE line (tests/lifecycle/metrics-check.py says
# exactly what is checked).
# Asserts, for both front ends:
#   - nbdkit, pool=rbd, two images: a connection to each (and one to the
#     first, closed before, whose totals the file keeps) with reads,
#     writes and a read past the end (an error) on each; while both are
#     open the file shows both images and both connections, and passes
#     metrics-check.py;
#   - rbdx-engine (its --oldstyle test hook), one image, two open
#     connections after I/O: the same.
. "$RBDX_TESTS/lib.sh"
requires_cluster
/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null ||
  skip "python3-prometheus-client is not installed (scripts/deps)"
check=$RBDX_TESTS/lifecycle/metrics-check.py

d=$(tmpdir)
a=$(new_image 16M)
b=$(new_image 16M)

# io_and_snapshot PROM OUT IMAGES N URI...: the first URI once, closed;
# then every URI open at once, each with 8 reads, 8 writes and one read
# past the end; while they are open, wait until PROM shows IMAGES
# images and N open connections, and copy it to OUT.
io_and_snapshot() {
  /usr/bin/python3 - "$@" <<'PY'
import nbd, re, shutil, sys, time
prom, out, images, conns, uris = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]

def io(h):
    size = h.get_size()
    for i in range(8):
        h.pwrite(b"\x5a" * 4096, i * 4096)
        h.pread(4096, i * 4096)
    try:
        h.pread(4096, size, flags=0)
    except nbd.Error:
        pass
    else:
        raise SystemExit("a read past the end succeeded")

def handle(uri):
    h = nbd.NBD()
    h.set_strict_mode(0)
    h.connect_uri(uri)
    return h

first = handle(uris[0])
io(first)
first.shutdown()
hs = [handle(u) for u in uris]
for h in hs:
    io(h)
for _ in range(200):
    try:
        text = open(prom).read()
    except FileNotFoundError:
        text = ""
    open_conns = set(re.findall(r'^rbdx_conn_requests_total\{.*conn="(\d+)",op="write"\} 8$', text, re.M))
    names = set(re.findall(r'^rbdx_connections\{image="([^"]*)"', text, re.M))
    if len(open_conns) >= conns and len(names) >= images:
        shutil.copy(prom, out)
        break
    time.sleep(0.1)
else:
    raise SystemExit("within 20 s the metrics file never showed %d images and "
                     "%d open connections with 8 writes each:\n%s" % (images, conns, text))
for h in hs:
    h.shutdown()
PY
}

say "nbdkit, pool=rbd, two images"
serve "$d/s.sock" -- pool=rbd metrics_file="$d/p.prom" metrics_interval=1
io_and_snapshot "$d/p.prom" "$d/p-open.prom" 2 2 \
  "$(uri "$d/s.sock" "$a")" "$(uri "$d/s.sock" "$b")" ||
  fail "I/O through nbdkit, or its metrics file"
"$check" "$d/p-open.prom" || fail "nbdkit's metrics file is not strict Prometheus text (above)"
say "nbdkit's file: $(grep -c '^#' "$d/p-open.prom") comment lines, $(grep -vc '^#' "$d/p-open.prom") samples"
grep -q "^rbdx_requests_total{image=\"$a\",.*op=\"write\"} 16$" "$d/p-open.prom" ||
  fail "the closed connection's writes are not in $a's total: $(grep "^rbdx_requests_total.*write" "$d/p-open.prom")"
stop_server "$d/s.sock"
"$check" "$d/p.prom" || fail "nbdkit's final metrics file is not strict Prometheus text (above)"

say "rbdx-engine, two connections"
serve_engine "$d/e.sock" -- "$a" metrics_file="$d/e.prom" metrics_interval=1
io_and_snapshot "$d/e.prom" "$d/e-open.prom" 1 2 \
  "$(uri "$d/e.sock")" "$(uri "$d/e.sock")" ||
  fail "I/O through rbdx-engine, or its metrics file ($(tail -3 "$d/e.sock.log"))"
"$check" "$d/e-open.prom" || fail "the engine's metrics file is not strict Prometheus text (above)"
stop_server "$d/e.sock"
"$check" "$d/e.prom" || fail "the engine's final metrics file is not strict Prometheus text (above)"
say "both files pass"

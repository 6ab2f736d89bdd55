#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# C65 (tests/README.md): a client queues 40 writes of 4 KiB behind
# qos.write_iops_limit=5 (nbdkit --threads=4), then sends NBD_CMD_DISC
# (libnbd's nbd_shutdown) while most of them still wait.  nbdkit ends a
# plugin's sleep alike on NBD_CMD_DISC, a hang-up and its own shutdown,
# so the plugin fails the waiting ones unsent (NBD_ESHUTDOWN) rather
# than carry out writes of a client that may have left (case C39).
# Asserts:
#   - every write answered OK is on the image, and every write that
#     failed is not (the block still reads as zeros): nothing
#     acknowledged is lost, nothing refused lands;
#   - nbdkit's "aborting sleep" error lines number at most its 4
#     threads, not one per request (the plugin stops waiting on a
#     connection once nbdkit ended one wait; there were 40 lines).
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires python3

d=$(tmpdir)
img=$(new_image 16M)
serve "$d/s.sock" --threads=4 -- "$img" qos.write_iops_limit=5 2>"$d/log"
/usr/bin/python3 - "$(uri "$d/s.sock")" <<'PY' || fail "a write's answer and the image disagree"
import sys
import nbd

uri, n = sys.argv[1], 40
h = nbd.NBD()
h.connect_uri(uri)
cookies = {}
for i in range(n):
    buf = nbd.Buffer.from_bytearray(bytearray([i + 1]) * 4096)
    cookies[h.aio_pwrite(buf, i * 4096)] = i
h.shutdown()            # NBD_CMD_DISC once the writes are sent
res = {}
for c, i in cookies.items():
    try:
        h.aio_command_completed(c)
        res[i] = 0
    except nbd.Error as e:
        res[i] = e.errnum
ok = sum(1 for v in res.values() if v == 0)
print("answered OK: %d of %d; errors: %s" % (ok, n, sorted(set(res.values()) - {0})))
h2 = nbd.NBD()
h2.connect_uri(uri)
bad = []
for i, e in sorted(res.items()):
    data = h2.pread(4096, i * 4096)
    if e == 0 and data != bytes([i + 1]) * 4096:
        bad.append("write %d acknowledged, not on the image" % i)
    if e != 0 and data != bytes(4096):
        bad.append("write %d failed (errno %d) but is on the image" % (i, e))
h2.shutdown()
if bad:
    sys.exit("; ".join(bad))
PY
stop_server "$d/s.sock"
lines=$(grep -c "aborting sleep" "$d/log" || true)
say "nbdkit logged $lines 'aborting sleep' lines"
[ "$lines" -le 4 ] || fail "nbdkit logged $lines 'aborting sleep' lines for one connection of 4 threads"
say "ok"

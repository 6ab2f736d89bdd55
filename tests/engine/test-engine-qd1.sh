#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-engine-qd1: the engine's reader at queue depth 1 and 2, where it
# polls before it reads again when the socket was emptied and at most
# one request is in flight (server/engine/reader.c).  Raw NBD requests
# (Python sockets) through the --oldstyle test hook.
#
# Asserts, every reply within 20 s (a stalled reader is a timeout) and
# each exactly once with the right handle and data:
#   - 200 QD1 write-then-read rounds of 4 KiB return what was written;
#   - QD2 in separate sends: a second request sent at once, 2 ms, 20 ms
#     after the first, before the first reply is read, both answered;
#   - a write whose header and payload come in two sends 300 ms apart,
#     and one whose payload is cut in three sends, is written whole;
#   - a request header itself split in two sends 300 ms apart;
#   - a half-close (shutdown SHUT_WR) right after a read and a write:
#     both answered, then the engine closes the connection;
#   - under qos.bps_limit=65536 (the engine's own limit, not librbd's), a
#     256 KiB write A (due within 4 s), then the header of a write B
#     whose payload is sent only once A was answered: A must be answered
#     (within 60 s) while the reader waits for B's payload, then B.
. "$RBDX_TESTS/lib.sh"
requires_cluster
d=$(tmpdir)
img=$(new_image 16M)
serve_engine "$d/e.sock" -- "$img"
SOCK="$d/e.sock" python3 - <<'PY' || fail "QD1/QD2 cases failed"
import os, socket, struct, time
from rbdxtest import recvn
P = os.environ["SOCK"]
READ, WRITE = 0, 1
MAGIC = 0x25609513
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(P)
    s.settimeout(20)          # a stalled reply raises socket.timeout
    assert recvn(s, 152)[:8] == b"NBDMAGIC"
    return s
def hdr(t, off, n, h):
    return struct.pack(">IHHQQI", MAGIC, 0, t, h, off, n)
def reply(s, n=0):
    magic, err, h = struct.unpack(">IIQ", recvn(s, 16))
    assert magic == 0x67446698, hex(magic)
    return err, h, (recvn(s, n) if err == 0 and n else b"")
def read_ok(s, off, n, h, want):
    err, got_h, data = reply(s, n)
    assert (err, got_h) == (0, h), ("read", h, err, got_h)
    assert data == want, "data of read %d" % h

s = conn()
image = bytearray(16 << 20)
for i in range(200):
    off, data = (i * 4096 * 7) % (16 << 20), os.urandom(4096)
    s.sendall(hdr(WRITE, off, 4096, 2 * i) + data)
    assert reply(s) == (0, 2 * i, b""), ("write", i)
    image[off:off + 4096] = data
    s.sendall(hdr(READ, off, 4096, 2 * i + 1))
    read_ok(s, off, 4096, 2 * i + 1, data)
print("200 QD1 write/read rounds")

h = 1000
for gap in (0, 0.002, 0.02):
    for k in range(20):
        a, b = (k * 8192) % (1 << 20), (k * 8192 + 4096) % (1 << 20)
        s.sendall(hdr(READ, a, 4096, h))
        if gap:
            time.sleep(gap)
        s.sendall(hdr(READ, b, 4096, h + 1))
        got = {}
        for _ in range(2):
            err, rh, data = reply(s, 4096)
            assert err == 0 and rh in (h, h + 1) and rh not in got, (err, rh)
            got[rh] = data
        assert got[h] == image[a:a + 4096] and got[h + 1] == image[b:b + 4096]
        h += 2
print("QD2 in separate sends")

data = os.urandom(65536)
s.sendall(hdr(WRITE, 1 << 20, len(data), h))
time.sleep(0.3)
s.sendall(data)
assert reply(s) == (0, h, b"")
image[1 << 20:(1 << 20) + len(data)] = data
h += 1
data = os.urandom(65536)
s.sendall(hdr(WRITE, 2 << 20, len(data), h) + data[:100])
time.sleep(0.3)
s.sendall(data[100:30000])
time.sleep(0.3)
s.sendall(data[30000:])
assert reply(s) == (0, h, b"")
image[2 << 20:(2 << 20) + len(data)] = data
h += 1
s.sendall(hdr(READ, 1 << 20, 2 << 20, h))
read_ok(s, 1 << 20, 2 << 20, h, bytes(image[1 << 20:3 << 20]))
h += 1
x = hdr(READ, 2 << 20, 65536, h)
s.sendall(x[:11])
time.sleep(0.3)
s.sendall(x[11:])
read_ok(s, 2 << 20, 65536, h, bytes(image[2 << 20:(2 << 20) + 65536]))
print("split writes and split header")
s.close()

s = conn()
data = os.urandom(8192)
s.sendall(hdr(READ, 1 << 20, 4096, 1) + hdr(WRITE, 4 << 20, len(data), 2) + data)
s.shutdown(socket.SHUT_WR)
got = set()
for _ in range(2):
    magic, err, rh = struct.unpack(">IIQ", recvn(s, 16))
    assert magic == 0x67446698 and err == 0 and rh in (1, 2) and rh not in got, (err, rh)
    if rh == 1:
        assert recvn(s, 4096) == image[1 << 20:(1 << 20) + 4096], "half-close read"
    got.add(rh)
assert s.recv(1) == b"", "connection not closed after the half-close"
s.close()
s = conn()
s.sendall(hdr(READ, 4 << 20, 8192, 3))
read_ok(s, 4 << 20, 8192, 3, data)
s.close()
print("half-close")
PY
stop_server "$d/e.sock"

serve_engine "$d/q.sock" -- "$img" qos.bps_limit=65536
SOCK="$d/q.sock" python3 - <<'PY' || fail "a delayed write waited for a later write's payload"
import os, socket, struct, sys, time
from rbdxtest import recvn
P = os.environ["SOCK"]
def hdr(h, off, n):
    return struct.pack(">IHHQQI", 0x25609513, 0, 1, h, off, n)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(P)
assert recvn(s, 152)[:8] == b"NBDMAGIC"
t0 = time.monotonic()
s.sendall(hdr(1, 0, 256 << 10) + b"\x11" * (256 << 10) + hdr(2, 1 << 20, 4096))
# B's payload is sent only after A's reply: a reader that waits for it
# before it submits A never answers (no timing involved but the bound).
s.settimeout(60)
try:
    got = struct.unpack(">IIQ", recvn(s, 16))
except socket.timeout:
    sys.exit("write A not answered in 60 s while B's payload is held back")
assert got == (0x67446698, 0, 1), got
print(f"A answered after {time.monotonic() - t0:.1f} s", file=sys.stderr)
s.sendall(b"\x22" * 4096)
s.settimeout(20)
assert struct.unpack(">IIQ", recvn(s, 16)) == (0x67446698, 0, 2)
s.close()
PY
say "passed"

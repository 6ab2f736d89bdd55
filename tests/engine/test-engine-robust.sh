#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-engine-robust: the built-in engine's transmission loop against a
# client that misbehaves, through its --oldstyle test hook with raw NBD
# requests (Python sockets), on one engine process that must survive all
# of it.
#
# Asserts:
#   - an unknown command gets NBD_EINVAL and the connection lives on; a
#     zero-length read and write succeed;
#   - 300 pipelined 256 KiB reads sent without reading any reply (the
#     socket fills, replies queue in the engine) are all answered, each
#     once, with the right data;
#   - a bad request magic, a write over 32 MiB, and a write whose payload
#     is cut short by the client's hang-up end only that connection;
#   - 64 requests in flight when the client hangs up: the engine lives;
#   - after all of that a new connection works, the engine's memory did
#     not grow without bound (RSS below 512 MiB), and SIGTERM with
#     requests in flight ends it with status 0.
. "$RBDX_TESTS/lib.sh"
requires_cluster
d=$(tmpdir)
img=$(new_image 64M)
serve_engine "$d/e.sock" -- "$img"
SOCK="$d/e.sock" python3 - <<'PY' || fail "robustness checks failed"
import os, socket, struct

def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(os.environ["SOCK"])
    g = b""
    while len(g) < 152:
        g += s.recv(152 - len(g))
    assert g[:8] == b"NBDMAGIC", g[:8]
    return s

def req(s, t, off, n, data=b"", flags=0, h=0, magic=0x25609513):
    s.sendall(struct.pack(">IHHQQI", magic, flags, t, h, off, n) + data)

def recvn(s, n):
    b = bytearray()
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError
        b += c
    return bytes(b)

def reply(s, n=0):
    magic, err, h = struct.unpack(">IIQ", recvn(s, 16))
    assert magic == 0x67446698
    data = recvn(s, n) if err == 0 and n else b""
    return err, h, data

def closed(s):
    s.settimeout(20)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True

# Unknown command, zero-length requests.
s = conn()
req(s, 9, 0, 0, h=1)
assert reply(s)[:2] == (22, 1), "unknown command"
req(s, 0, 0, 0, h=2)
assert reply(s)[:2] == (0, 2), "zero read"
req(s, 1, 0, 0, h=3)
assert reply(s)[:2] == (0, 3), "zero write"
pattern = os.urandom(4 << 20)
req(s, 1, 0, len(pattern), pattern, h=4)
assert reply(s)[:2] == (0, 4)

# Pipelined reads, no reply read until all are sent.
N, L = 300, 256 << 10
for i in range(N):
    req(s, 0, (i * L) % (4 << 20), L, h=1000 + i)
seen = {}
for i in range(N):
    err, h, data = reply(s, L)
    assert err == 0 and 1000 <= h < 1000 + N and h not in seen, (err, h)
    off = ((h - 1000) * L) % (4 << 20)
    assert data == pattern[off:off + L], "data of request %d" % h
    seen[h] = True
assert len(seen) == N
s.close()

# Bad magic; write over 32 MiB; a payload cut short.
s = conn(); req(s, 0, 0, 512, magic=0x12345678); assert closed(s), "bad magic"
s = conn(); req(s, 1, 0, 64 << 20); assert closed(s), "write over 32 MiB"
s = conn(); req(s, 1, 0, 1 << 20, b"x" * 1000); s.close()

# Hang up with requests in flight.
s = conn()
for i in range(64):
    req(s, 0, i * 65536, 65536, h=i)
s.close()

# Still serving.
s = conn()
req(s, 0, 0, 4096, h=7)
assert reply(s, 4096) == (0, 7, pattern[:4096]), "after the abuse"
for i in range(32):
    req(s, 0, i * 4096, 4096, h=i)
# left in flight for the SIGTERM below
open(os.environ["SOCK"] + ".inflight", "w").write("ok")
import time; time.sleep(0.2)
PY
rss=$(awk '/VmRSS/ {print $2}' "/proc/$SERVER_PID/status")
say "engine RSS after the abuse: $((rss / 1024)) MiB"
[ "$rss" -lt $((512 * 1024)) ] || fail "engine RSS $rss KiB"
kill -0 "$SERVER_PID" || fail "the engine died"
pid=$SERVER_PID
kill "$pid"
wait_for 20 exited "$pid" || fail "the engine did not exit on SIGTERM"
rc=0; wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || fail "the engine exited $rc"
! grep -qi "sanitizer\|assert" "$d/e.sock.log" || fail "engine log: $(tail -5 "$d/e.sock.log")"
say "ok"

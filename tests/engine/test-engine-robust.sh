#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-engine-robust: the built-in engine's transmission loop against
# clients that misbehave, through its --oldstyle test hook with raw NBD
# requests (Python sockets), and its control socket against idle
# clients.
#
# Asserts (one engine process survives all of part 1):
#   - as nbdkit answers them: an unknown command, an unknown flag,
#     NO_HOLE or FAST_ZERO on a write, REQ_ONE or DF on a read, a flush
#     with a length, zero-length reads and trims get NBD_EINVAL,
#     zero-length writes and zeroes NBD_ENOSPC; a write over 32 MiB gets
#     NBD_EINVAL after its payload was read; the connection lives on;
#   - 300 pipelined 256 KiB reads sent without reading any reply (the
#     socket fills, replies queue) are all answered once with the right
#     data;
#   - memory stays bounded: 800 x 1 MiB reads with no reply read, and
#     40 x 32 MiB reads sent at once: RSS stays under 512 MiB;
#   - a bad request magic or a payload cut short ends only that
#     connection; a hang-up with 64 requests in flight is survived;
#   - SIGTERM while a client holds 50 MiB of unread replies: exit 0
#     within 20 s; so too while one has filled the whole in-flight room
#     with 300 1 MiB reads whose replies it does not read (over 256
#     requests and 128 MiB: the reader waited for room for ever, C62).
# Part 2, QoS (qos.write_iops_limit=2, qos.iops_limit=5 engines): a read
# behind throttled writes is answered before the last of them; an 8 MiB
# reply already done is not held back by throttled reads after it;
# reads delayed when the client sends NBD_CMD_DISC are answered at their
# time (20 at 5 IOPS take over 2 s), and those of a client that closes
# are dropped as read errors, never sent at once; so are writes (C39):
# once the closed client's connection is gone, exactly the 16 writes not
# counted as errors (at least 12 are) are on the image, and the drop is
# logged;
# SIGTERM with requests waiting for QoS answers them all without error.
# Part 3: the control socket and the test hook's socket are created with
# mode 0600 even under umask 000 (listen.h); 20 idle clients on the
# control socket do not keep a CONNECT from being answered.
# Part 4, a flood of refused clients (max_connections=1, one connection
# held): 300 CONNECTs on the control socket each get "ERR 16" naming
# max_connections=1, and 100 test hook clients are closed before any
# greeting; the log keeps at most 20 refusal lines per 10 s window
# (RBDX_LOG_BURST, RBDX_LOG_WINDOW_S, rbdx/errors.h), names the reason,
# and once a window has passed the next line counts the refusals not
# logged, so that lines plus counted refusals are exactly those made.
# Part 5, a listen that fails after the control socket was made: the
# test hook in a missing directory, or at a path a file holds: exit 1
# with a message naming the path, the control socket removed, the file
# found there kept (the engine removes only what it created).
# Part 6: a client that connects and goes away: the engine's threads and
# eventfds return to their idle count without another connection (its
# finished thread is joined at once, conns.h rbdx_engine_reap_fd); so do
# 4 clients that each send a read past the end and close before its
# NBD_EINVAL reply (the send fails with EPIPE).
# Part 7: parameter values and a control path holding a newline and an
# ESC sequence: exit 1, the message names the key (or path) and shows
# the value escaped on one line, without the ESC byte.
. "$RBDX_TESTS/lib.sh"
requires_cluster
d=$(tmpdir)
img=$(new_image 64M)
engine=$RBDX_BUILD/server/rbdx-engine
cat >"$d/nbd.py" <<'PY'
import os, socket, struct, threading, time
from rbdxtest import recvn
def conn(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    g = recvn(s, 152)
    assert g[:8] == b"NBDMAGIC", g[:8]
    return s
def req(s, t, off, n, data=b"", flags=0, h=0, magic=0x25609513):
    s.sendall(struct.pack(">IHHQQI", magic, flags, t, h, off, n) + data)
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
def rss_mib(pid):
    for l in open("/proc/%d/status" % pid):
        if l.startswith("VmRSS:"):
            return int(l.split()[1]) // 1024
PY
export PYTHONPATH="$d${PYTHONPATH:+:$PYTHONPATH}"

say "part 1: protocol errors, pipelining, memory bounds"
serve_engine "$d/e.sock" -- "$img"
SOCK="$d/e.sock" PID=$SERVER_PID python3 - <<'PY' || fail "part 1 failed"
import os
from nbd import *
P, pid = os.environ["SOCK"], int(os.environ["PID"])
s = conn(P)
READ, WRITE, FLUSH, TRIM, CACHE, ZERO, BS = 0, 1, 3, 4, 5, 6, 7
for i, (t, off, n, flags, data, want) in enumerate([
        (9, 0, 512, 0, b"", 22), (CACHE, 0, 512, 0, b"", 22),
        (BS, 0, 512, 0, b"", 22), (READ, 0, 512, 0x8000, b"", 22),
        (WRITE, 0, 512, 2, b"x" * 512, 22), (WRITE, 0, 512, 16, b"x" * 512, 22),
        (READ, 0, 512, 8, b"", 22), (READ, 0, 512, 4, b"", 22),
        (TRIM, 0, 512, 2, b"", 22), (FLUSH, 0, 512, 0, b"", 22),
        (READ, 0, 0, 0, b"", 22), (TRIM, 0, 0, 0, b"", 22),
        (WRITE, 0, 0, 0, b"", 28), (ZERO, 0, 0, 0, b"", 28),
        (WRITE, 0, 33 << 20, 0, b"y" * (33 << 20), 22),
        (READ, 0, 33 << 20, 0, b"", 22)]):
    req(s, t, off, n, data, flags=flags, h=i)
    err, h, _ = reply(s)
    assert (err, h) == (want, i), ("case", i, err, want)
pattern = os.urandom(4 << 20)
req(s, WRITE, 0, len(pattern), pattern, h=99)
assert reply(s)[:2] == (0, 99)

N, L = 300, 256 << 10
for i in range(N):
    req(s, READ, (i * L) % (4 << 20), L, h=1000 + i)
seen = set()
for i in range(N):
    err, h, data = reply(s, L)
    assert err == 0 and 1000 <= h < 1000 + N and h not in seen, (err, h)
    off = ((h - 1000) * L) % (4 << 20)
    assert data == pattern[off:off + L], "data of request %d" % h
    seen.add(h)
s.close()

# No reply read: the engine stops reading at its in-flight limit.  The
# headers go in one send (small sends would fill the socket's buffer
# accounting long before the engine stops reading).
s = conn(P)
s.sendall(b"".join(struct.pack(">IHHQQI", 0x25609513, 0, READ, i,
                               (i % 60) << 20, 1 << 20) for i in range(800)))
time.sleep(2)
r = rss_mib(pid)
print("RSS with 800 MiB of reads unread: %d MiB" % r)
assert r < 512, r
s.close()
# 40 x 32 MiB at once, replies read as they come.
s = conn(P)
got = []
t = threading.Thread(target=lambda: [got.append(reply(s, 32 << 20)[0]) for _ in range(40)])
t.start()
peak = 0
s.sendall(b"".join(struct.pack(">IHHQQI", 0x25609513, 0, READ, i, 0, 32 << 20) for i in range(40)))
while t.is_alive():
    peak = max(peak, rss_mib(pid)); time.sleep(0.05)
t.join()
print("peak RSS with 40 x 32 MiB reads: %d MiB" % peak)
assert got == [0] * 40, got
assert peak < 512, peak
s.close()

s = conn(P); req(s, READ, 0, 512, magic=0x12345678); assert closed(s), "bad magic"
s = conn(P); req(s, WRITE, 0, 1 << 20, b"x" * 1000); s.close()
s = conn(P)
for i in range(64):
    req(s, READ, i * 65536, 65536, h=i)
s.close()
s = conn(P)
req(s, READ, 0, 4096, h=7)
assert reply(s, 4096) == (0, 7, pattern[:4096]), "after the abuse"
s.close()

PY
# Clients that hold 50 MiB of replies unread, and 300 (the in-flight
# room and more), in the background.
SOCK="$d/e.sock" python3 - <<'PY' &
import os, time
from nbd import *
held = []
for n in (50, 300):
    s = conn(os.environ["SOCK"])
    s.sendall(b"".join(struct.pack(">IHHQQI", 0x25609513, 0, 0, i,
                                   (i % 60) << 20, 1 << 20)
                       for i in range(n)))
    held.append(s)
open(os.environ["SOCK"] + ".held", "w").write("1")
time.sleep(120)
PY
holder=$!
echo "$holder" >"$d/holder.pid"; echo "$d/holder.pid" >>"$_state/pidfiles"
wait_for 20 test -e "$d/e.sock.held" || fail "the holding client did not start"
sleep 1
pid=$SERVER_PID
kill -0 "$pid" || fail "the engine died"
kill "$pid"
wait_for 20 exited "$pid" || fail "the engine did not exit 20 s after SIGTERM with a client not reading"
rc=0; wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || fail "the engine exited $rc"
kill "$holder" 2>/dev/null || true

say "part 2: QoS"
serve_engine "$d/q.sock" -- "$img" qos.write_iops_limit=2
SOCK="$d/q.sock" python3 - <<'PY' || fail "a read waited behind throttled writes"
import os
from nbd import *
s = conn(os.environ["SOCK"])
for i in range(8):
    req(s, 1, i * 4096, 4096, b"w" * 4096, h=i)
req(s, 0, 0, 4096, h=100)
order = []
for _ in range(9):
    magic, err, h = struct.unpack(">IIQ", recvn(s, 16))
    assert err == 0, err
    if h == 100:
        recvn(s, 4096)
    order.append(h)
print("reply order:", order)
assert order.index(100) < order.index(7), order
PY
stop_server "$d/q.sock"
serve_engine "$d/q2.sock" -- "$img" qos.iops_limit=5
SOCK="$d/q2.sock" python3 - <<'PY2' || fail "a reply that was done waited behind throttled reads"
import os, time
from nbd import *
s = conn(os.environ["SOCK"])
t0 = time.monotonic()
req(s, 0, 0, 8 << 20, h=100)
for i in range(20):
    req(s, 0, i * 4096, 4096, h=i)
when = {}
while len(when) < 21:
    magic, err, h = struct.unpack(">IIQ", recvn(s, 16))
    assert err == 0, err
    recvn(s, (8 << 20) if h == 100 else 4096)
    when[h] = time.monotonic() - t0
last = max(when.values())
print("8 MiB reply after %.2f s, last 4 KiB reply after %.2f s" % (when[100], last))
# 20 reads at 5 IOPS take seconds; the 8 MiB read was done at once and
# must not wait for them (before the fix it came last but one).
assert last > 2.0, "QoS not in effect"
assert when[100] < last / 2, when[100]
PY2
stop_server "$d/q2.sock"
# Requests delayed by QoS when the client ends its connection: after
# NBD_CMD_DISC (the client still reading) they are answered at their
# time, not all sent to librbd at once; after a close they are dropped
# (counted as read errors), never sent.  Either way the image's limit
# holds for a client that disconnects.
serve_engine "$d/q4.sock" -- "$img" qos.iops_limit=5 metrics_file="$d/q4.prom" metrics_interval=1
SOCK="$d/q4.sock" python3 - <<'PY4' || fail "QoS-delayed requests at NBD_CMD_DISC"
import os, time
from nbd import *
s = conn(os.environ["SOCK"])
t0 = time.monotonic()
for i in range(20):
    req(s, 0, i * 4096, 4096, h=i)
req(s, 2, 0, 0, h=99)                     # NBD_CMD_DISC
for _ in range(20):
    magic, err, h = struct.unpack(">IIQ", recvn(s, 16))
    assert err == 0, err
    recvn(s, 4096)
took = time.monotonic() - t0
print("20 reads at 5 IOPS, then DISC: all answered after %.2f s" % took)
assert took > 2.0, "the delayed reads were sent at once after DISC"
assert closed(s)
s = conn(os.environ["SOCK"])
for i in range(40):
    req(s, 0, i * 4096, 4096, h=i)
s.close()
PY4
dropped() { [ "$(metric "$d/q4.prom" rbdx_request_errors_total 'op="read"')" -ge 20 ]; }
wait_for 60 dropped ||
  fail "40 reads delayed by QoS from a closed client were not dropped: $(grep errors_total "$d/q4.prom")"
say "QoS-delayed requests: paced after DISC, dropped after a close"
stop_server "$d/q4.sock"
# C39: writes delayed by QoS when the client closes are dropped too,
# never carried out later (by then another connection may have written
# the same blocks).  Once the 16 are answered (into the void) and the
# connection is gone (rbdx_connections 0, nothing in flight), exactly
# the writes that were not counted as errors are on the image.
serve_engine "$d/q5.sock" -v -- "$img" qos.write_iops_limit=2 \
  metrics_file="$d/q5.prom" metrics_interval=1
SOCK="$d/q5.sock" python3 - <<'PY5' || fail "C39: writes to a closing connection"
import os
from nbd import *
s = conn(os.environ["SOCK"])
for i in range(16):
    req(s, 1, (48 << 20) + i * 4096, 4096, b"C39 dead client." * 256, h=i)
s.close()
PY5
wait_for 30 metrics_settled "$d/q5.prom" write 16 || fail "C39: the closed client's connection stayed: $(grep -E '^rbdx_(conn|req)' "$d/q5.prom")"
dropped=$(metric "$d/q5.prom" rbdx_request_errors_total 'op="write"')
[ "$dropped" -ge 12 ] || fail "C39: only $dropped of 16 writes delayed by QoS (2 IOPS) were dropped"
grep -q "client left with $dropped requests not yet sent" "$d/q5.sock.log" ||
  fail "C39: the drop was not logged: $(tail -n3 "$d/q5.sock.log")"
SOCK="$d/q5.sock" DROPPED=$dropped python3 - <<'PY6' || fail "C39: what landed"
import os
from nbd import *
s = conn(os.environ["SOCK"])
req(s, 0, 48 << 20, 16 * 4096, h=1)
magic, err, h = struct.unpack(">IIQ", recvn(s, 16))
assert err == 0, err
data = recvn(s, 16 * 4096)
blocks = [data[i * 4096:(i + 1) * 4096] for i in range(16)]
landed = [i for i in range(16) if blocks[i] == b"C39 dead client." * 256]
assert all(b == bytes(4096) for i, b in enumerate(blocks) if i not in landed)
print("writes landed:", landed, "dropped:", os.environ["DROPPED"])
assert len(landed) == 16 - int(os.environ["DROPPED"]), landed
PY6
say "C39: $dropped of 16 QoS-delayed writes of a closed client dropped, the rest landed"
stop_server "$d/q5.sock"
serve_engine "$d/q3.sock" -- "$img" qos.iops_limit=5
SOCK="$d/q3.sock" python3 - >"$d/q3.out" 2>&1 <<'PY' &
import os
from nbd import *
s = conn(os.environ["SOCK"])
for i in range(20):
    req(s, 0, i * 4096, 4096, h=i)
open(os.environ["SOCK"] + ".sent", "w").write("1")
errs = []
for _ in range(20):
    magic, err, h = struct.unpack(">IIQ", recvn(s, 16))
    if err == 0:
        recvn(s, 4096)
    errs.append(err)
print("errors:", errs)
assert errs == [0] * 20, errs
PY
client=$!
wait_for 20 test -e "$d/q3.sock.sent" || fail "the QoS client did not send"
kill "$SERVER_PID"
wait "$client" || fail "SIGTERM with QoS waiters: $(cat "$d/q3.out")"
wait_for 20 exited "$SERVER_PID" || fail "the engine did not exit"

say "part 3: socket modes, idle control clients"
(umask 000; exec "$engine" --control "$d/ctl.sock" --oldstyle "$d/old.sock" \
   "$img" 2>>"$d/ctl.log") &
echo $! >"$d/ctl.pid"; echo "$d/ctl.pid" >>"$_state/pidfiles"
wait_for 20 test -S "$d/ctl.sock" || fail "no control socket: $(cat "$d/ctl.log")"
wait_for 20 test -S "$d/old.sock" || fail "no test hook socket: $(cat "$d/ctl.log")"
for s in ctl old; do
  mode=$(stat -c %a "$d/$s.sock")
  [ "$mode" = 600 ] || fail "$s.sock has mode $mode under umask 000, not 600"
done
CTL="$d/ctl.sock" python3 - <<'PY' || fail "an idle control client blocked a CONNECT"
import os, socket
idle = []
for _ in range(20):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(os.environ["CTL"]); idle.append(c)
c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
c.settimeout(60)
c.connect(os.environ["CTL"])
c.send(b"CONNECT")
msg, fds, _, _ = socket.recv_fds(c, 1024, 1)
assert msg.startswith(b"OK ") and len(fds) == 1, msg
PY
kill "$(cat "$d/ctl.pid")"

say "part 4: a flood of refused clients"
"$engine" --control "$d/fl.sock" --oldstyle "$d/flo.sock" "$img" \
  max_connections=1 2>>"$d/fl.log" &
echo $! >"$d/fl.pid"; echo "$d/fl.pid" >>"$_state/pidfiles"
wait_for 20 test -S "$d/flo.sock" || fail "no engine: $(cat "$d/fl.log")"
CTL="$d/fl.sock" OLD="$d/flo.sock" LOG="$d/fl.log" python3 - <<'PY' ||
import os, re, socket, time
log = os.environ["LOG"]
c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
c.settimeout(60)
c.connect(os.environ["CTL"])
c.send(b"CONNECT")
msg, fds, _, _ = socket.recv_fds(c, 1024, 1)
assert msg.startswith(b"OK ") and len(fds) == 1, msg   # held to the end
def refuse_control():
    c.send(b"CONNECT")
    msg, fds, _, _ = socket.recv_fds(c, 1024, 1)
    assert msg.startswith(b"ERR 16 max_connections=1 reached") and not fds, msg
def refuse_oldstyle():
    o = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    o.settimeout(60)
    o.connect(os.environ["OLD"])
    assert o.recv(1) == b"", "a greeting past max_connections=1"
    o.close()
def lines():
    return [l for l in open(log, errors="replace")
            if "connection refused: max_connections=1 reached" in l]
t0 = time.monotonic()
for _ in range(300):
    refuse_control()
for _ in range(100):
    refuse_oldstyle()
made, took = 400, time.monotonic() - t0
got = lines()
windows = int(took // 10) + 1
print("400 refusals in %.1f s: %d log lines" % (took, len(got)))
assert 1 <= len(got) <= 20 * (windows + 1), (len(got), took)
# A window later the next refusal is logged with the count of those
# that were not (polled: one refusal every 0.2 s for up to 60 s).
deadline = time.monotonic() + 60
while not any("more errors were not logged" in l for l in lines()):
    assert time.monotonic() < deadline, "no line counted the refusals not logged"
    refuse_control(); made += 1
    time.sleep(0.2)
got = lines()
counted = sum(int(m.group(1)) for m in
              (re.search(r"; (\d+) more errors were not logged", l) for l in got) if m)
print("%d refusals: %d logged, %d counted as not logged" % (made, len(got), counted))
assert len(got) + counted == made, (len(got), counted, made)
PY
  fail "the refusals flooded the log or lost their reason: $(tail -3 "$d/fl.log")"
kill "$(cat "$d/fl.pid")"

say "part 5: a failed listen leaves nothing behind"
echo keep >"$d/taken"
# run_failing NAME OLDSTYLE-PATH: the engine with --control $d/NAME.sock,
# which must fail; its rc in $d/NAME.rc, its messages in $d/NAME.log.
run_failing() {
  local rc=0
  "$engine" --control "$d/$1.sock" --oldstyle "$2" "$img" 2>"$d/$1.log" &
  echo $! >"$d/$1.pid"; echo "$d/$1.pid" >>"$_state/pidfiles"
  wait_for 120 exited "$(cat "$d/$1.pid")" || fail "$1: the engine did not exit"
  wait "$(cat "$d/$1.pid")" || rc=$?
  [ "$rc" -eq 1 ] || fail "$1: exit $rc, not 1: $(cat "$d/$1.log")"
  grep -qF "$2" "$d/$1.log" || fail "$1: no message naming $2: $(cat "$d/$1.log")"
  [ ! -e "$d/$1.sock" ] || fail "$1: the control socket $d/$1.sock was left behind"
}
run_failing nodir "$d/missing/old.sock"
run_failing taken "$d/taken"
[ "$(cat "$d/taken")" = keep ] || fail "the file at the test hook's path was touched"
# The control socket's own path held by a file: refused, the file kept.
echo keep >"$d/ctl-taken.sock"
rc=0; timeout 120 "$engine" --control "$d/ctl-taken.sock" "$img" 2>"$d/ctl-taken.log" || rc=$?
[ "$rc" -eq 1 ] && grep -qF "$d/ctl-taken.sock" "$d/ctl-taken.log" ||
  fail "a control path held by a file: exit $rc: $(cat "$d/ctl-taken.log")"
[ "$(cat "$d/ctl-taken.sock")" = keep ] || fail "the file at the control path was touched"

say "part 6: a finished connection is reaped without another"
"$engine" --control "$d/rp.sock" --oldstyle "$d/rpo.sock" "$img" 2>>"$d/rp.log" &
echo $! >"$d/rp.pid"; echo "$d/rp.pid" >>"$_state/pidfiles"
wait_for 20 test -S "$d/rpo.sock" || fail "no engine: $(cat "$d/rp.log")"
OLD="$d/rpo.sock" PID=$(cat "$d/rp.pid") python3 - <<'PY' ||
import os, time
from nbd import *
pid = int(os.environ["PID"])
def state():
    # Threads, and eventfds: each connection's own is closed only when
    # its thread is joined (a thread that exited unjoined is already
    # gone from /proc/PID/task, so the threads alone cannot tell).
    fds = []
    for f in os.listdir("/proc/%d/fd" % pid):
        try:
            fds.append(os.readlink("/proc/%d/fd/%s" % (pid, f)))
        except FileNotFoundError:
            pass
    return len(os.listdir("/proc/%d/task" % pid)), fds.count("anon_inode:[eventfd]")
def until(what, pred):
    deadline = time.monotonic() + 30
    while not pred(state()):
        assert time.monotonic() < deadline, (what, idle, state())
        time.sleep(0.05)
idle = state()
s = conn(os.environ["OLD"])
until("the connection's thread never started", lambda st: st[0] > idle[0] and st[1] > idle[1])
print("idle (threads, eventfds) %s, serving %s" % (idle, state()))
s.close()
until("the finished connection was not reaped", lambda st: st == idle)
print("back to %s without another connection" % (state(),))
# Clients that send a request the reader refuses at once (a read past
# the end: NBD_EINVAL) and close before its reply: the reply's send fails
# (EPIPE), and each connection must still end.
for i in range(4):
    s = conn(os.environ["OLD"])
    req(s, 0, 1 << 62, 4096, h=i)
    s.close()
until("a connection whose reply could not be sent was not ended", lambda st: st == idle)
print("4 clients gone before their refused reply: back to %s" % (state(),))
PY
  fail "a finished connection stayed until the next one: $(tail -3 "$d/rp.log")"
kill "$(cat "$d/rp.pid")"

say "part 7: values with a newline and ESC are logged escaped"
h=$'x\nFORGED\e[31m'
# unsplit WORD ENGINE-ARGS...: the engine exits 1 with WORD in its log,
# the value escaped (\x0a, \x1b), no line split, no ESC byte.
unsplit() {
  local w=$1 rc=0
  shift
  timeout 120 "$engine" "$@" 2>"$d/h.log" || rc=$?
  [ "$rc" -eq 1 ] || fail "rbdx-engine $*: exit $rc, not 1: $(cat -A "$d/h.log")"
  grep -qF -- "$w" "$d/h.log" || fail "rbdx-engine $*: no '$w' in: $(cat -A "$d/h.log")"
  grep -qF 'x\x0aFORGED\x1b[31m' "$d/h.log" &&
    ! grep -q $'\e' "$d/h.log" && ! grep -q '^FORGED' "$d/h.log" ||
    fail "rbdx-engine $*: the value is not escaped on one line: $(cat -A "$d/h.log")"
}
unsplit "conf='/nonexistent/x" --control "$d/h.sock" "$img" "conf=/nonexistent/$h"
unsplit "keyring='/nonexistent/x" --control "$d/h.sock" "$img" "keyring=/nonexistent/$h"
unsplit "id='client.x" --control "$d/h.sock" "$img" "id=client.$h"
unsplit "image='rbd/x" --control "$d/h.sock" "rbd/x$h"
unsplit "unknown parameter 'k" --control "$d/h.sock" "$img" "k$h=1"
unsplit "quiesce hook '/nonexistent/x" --control "$d/h.sock" "$img" quiesce=true \
  "quiesce_hook=/nonexistent/$h"
unsplit "metrics_file='/nonexistent/x" --control "$d/h.sock" "$img" \
  "metrics_file=/nonexistent/$h/m.prom"
unsplit "cannot listen on $d/nodirx" --control "$d/nodir$h/c.sock" "$img"
say "ok"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-engine-commands: the mapper's built-in engine (server/rbdx-engine)
# answers every NBD command as the plugin does, and refuses bad input
# before serving.  Driven through its --oldstyle test hook with nbdsh and
# nbdcopy, and through its control socket as the supervisor uses it.
#
# Asserts:
#   - SIGTERM while it probes an unreachable cluster: exit 1 at once;
#   - a wrong image, pool=, an unknown option and a metrics_file= that is
#     a directory: exit 1 before listening, with a message naming what
#     was wrong;
#   - the handshake states the image's size, flush, FUA, trim, write
#     zeroes, fast zero and multi-conn (default features: shared writer);
#   - write, FUA write, read, write zeroes (with and without NO_HOLE),
#     trim and flush act on the image (rbd export agrees);
#   - a read or trim past the end gets EINVAL, a write or write zeroes
#     past the end ENOSPC, FAST_ZERO with NO_HOLE ENOTSUP, a read over
#     32 MiB EINVAL, and the connection lives on;
#   - nbdcopy with 4 connections copies 48 MiB in and out unchanged;
#   - the control socket: CONNECT answers "OK SIZE FLAGS MIN_BLOCK
#     IDENTITY" with a socket in the transmission phase (identity = pool
#     id/image id of the image), on which raw NBD write, read, flush and
#     disconnect work; an unknown request gets "ERR", and so do
#     "CONNECT\0junk", "CONNECTX" and other near misses (the whole
#     message must be the word), after which CONNECT still works;
#   - --readonly: writes get EPERM, reads work; a snapshot spec serves the
#     snapshot's data;
#   - SIGTERM, with metrics_file= (whose writer thread must not take the
#     signal): exit 0, the metrics written, no watcher left on the image;
#   - a read-only export advertises no FUA, trim or zeroes.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires nbdsh nbdcopy
engine=$RBDX_BUILD/server/rbdx-engine
[ -x "$engine" ] || skip "no engine built (-Dmapper=disabled)"
d=$(tmpdir)
img=$(new_image 64M)
export IMG=$img

say "bad input exits 1 before serving"
for bad in "rbd/does-not-exist-$$" "pool=rbd" "$img frobnicate=1" "$img metrics_file=$d"; do
  rc=0
  # shellcheck disable=SC2086
  timeout 60 "$engine" --oldstyle "$d/bad.sock" $bad 2>"$d/bad.err" || rc=$?
  [ "$rc" -eq 1 ] || fail "'$bad': exit $rc, not 1"
  [ ! -S "$d/bad.sock" ] || fail "'$bad': it listened"
  case $bad in
    rbd/does-not-exist*) grep -q "does-not-exist" "$d/bad.err" ;;
    pool=*) grep -q "pool=" "$d/bad.err" ;;
    *metrics_file=*) grep -q "metrics_file=.$d.: names a directory, not a file" "$d/bad.err" ;;
    *) grep -q "frobnicate" "$d/bad.err" ;;
  esac || fail "'$bad' said: $(cat "$d/bad.err")"
done

say "SIGTERM while the cluster cannot be reached ends it before serving"
printf '[client.admin]\n\tkey = AQBRvN1jAAAAABAAvQvH3vGo0LBDU4r2mPw0sw==\n' >"$d/fake.keyring"
env -u CEPH_CONF "$engine" --oldstyle "$d/x.sock" rbd/x mon_host=127.0.0.1:9 \
  keyring="$d/fake.keyring" 2>"$d/x.err" &
xpid=$!
echo "$xpid" >"$d/x.pid"; echo "$d/x.pid" >>"$_state/pidfiles"
sleep 2
kill -0 "$xpid" || fail "the engine did not wait for the unreachable cluster: $(cat "$d/x.err")"
kill "$xpid"
rc=0; timeout 20 tail --pid="$xpid" -f /dev/null || fail "SIGTERM did not end the engine while it probed"
wait "$xpid" || rc=$?
[ "$rc" -eq 1 ] && grep -q "stopped before serving" "$d/x.err" ||
  fail "SIGTERM during the probe: exit $rc, $(cat "$d/x.err")"

export D=$d
serve_engine "$d/e.sock" -- "$img"
uri="nbd+unix:///?socket=$d/e.sock"

say "commands and errors"
nbdsh -u "$uri" -c '
import os
size = 64 << 20
assert h.get_size() == size, h.get_size()
for f in ("can_flush", "can_fua", "can_trim", "can_zero", "can_fast_zero",
          "can_multi_conn"):
    assert getattr(h, f)(), f
assert not h.is_read_only()
h.set_strict_mode(0)
a = os.urandom(1 << 20)
h.pwrite(a, 1 << 20)
h.pwrite(b"F" * 4096, 0, nbd.CMD_FLAG_FUA)
assert h.pread(1 << 20, 1 << 20) == a
h.zero(65536, (1 << 20) + 4096)
h.zero(4096, (1 << 20) + 131072, nbd.CMD_FLAG_NO_HOLE)
h.trim(1 << 20, 8 << 20)
h.flush()
want = bytearray(a)
want[4096:4096 + 65536] = bytes(65536)
want[131072:131072 + 4096] = bytes(4096)
assert h.pread(1 << 20, 1 << 20) == bytes(want)
open(os.environ["D"] + "/want", "wb").write(bytes(want))
def expect(errno, f):
    try:
        f()
    except nbd.Error as e:
        assert e.errno == errno, (e.errno, errno)
        return
    raise AssertionError("no error, expected " + errno)
expect("EINVAL", lambda: h.pread(4096, size))
expect("EINVAL", lambda: h.trim(4096, size))
expect("ENOSPC", lambda: h.pwrite(b"x" * 4096, size - 100))
expect("ENOSPC", lambda: h.zero(4096, size))
expect("ENOTSUP", lambda: h.zero(4096, 0, nbd.CMD_FLAG_FAST_ZERO | nbd.CMD_FLAG_NO_HOLE))
expect("EINVAL", lambda: h.pread(33 << 20, 0))
assert h.pread(4096, 0) == b"F" * 4096
h.shutdown()
' || fail "nbdsh commands failed"
rbd export --no-progress "$img" "$d/img.raw" >/dev/null
cmp <(dd if="$d/img.raw" bs=1M skip=1 count=1 status=none) "$d/want" ||
  fail "rbd export differs from what the engine acknowledged"
[ "$(head -c 4096 "$d/img.raw" | tr -d F | wc -c)" -eq 0 ] || fail "the FUA write is not in the image"

say "nbdcopy, 4 connections"
head -c $((48 << 20)) /dev/urandom >"$d/data"
nbdcopy --connections 4 "$d/data" "$uri" || fail "nbdcopy to the engine failed"
nbdcopy --connections 4 "$uri" "$d/back" || fail "nbdcopy from the engine failed"
cmp <(head -c $((48 << 20)) "$d/back") "$d/data" || fail "nbdcopy read back differs"
rbd export --no-progress "$img" "$d/img2.raw" >/dev/null
cmp <(head -c $((48 << 20)) "$d/img2.raw") "$d/data" || fail "rbd export differs after nbdcopy"

say "control socket"
stop_server "$d/e.sock"
"$engine" --control "$d/ctl.sock" "$img" metrics_file="$d/metrics.prom" metrics_interval=1 \
  2>>"$d/ctl.log" &
ctl_pid=$!
echo "$ctl_pid" >"$d/ctl.pid"; echo "$d/ctl.pid" >>"$_state/pidfiles"
wait_for 20 test -S "$d/ctl.sock" || fail "no control socket: $(cat "$d/ctl.log")"
ident="1/$(rbd info --format json "$img" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')"
pool_id=$(ceph osd pool ls detail --format json 2>/dev/null |
  python3 -c 'import json,sys; print([p["pool_id"] for p in json.load(sys.stdin) if p["pool_name"]=="rbd"][0])')
ident="$pool_id/${ident#1/}"
CTL="$d/ctl.sock" IDENT="$ident" python3 - <<'PY' || fail "control protocol check failed"
import os, socket, struct
def connect():
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(os.environ["CTL"])
    return c
c = connect()
c.send(b"CONNECT")
msg, fds, _, _ = socket.recv_fds(c, 1024, 1)
f = msg.decode().split()
assert f[0] == "OK" and len(fds) == 1, msg
assert int(f[1]) == 64 << 20, f
assert int(f[2]) & (1 << 8), "no multi-conn: %s" % f
assert f[4] == os.environ["IDENT"], (f[4], os.environ["IDENT"])
s = socket.socket(fileno=fds[0])
def req(t, off, n, data=b"", flags=0, h=7):
    s.sendall(struct.pack(">IHHQQI", 0x25609513, flags, t, h, off, n) + data)
def reply(n=0):
    b = b""
    while len(b) < 16 + n:
        chunk = s.recv(16 + n - len(b))
        assert chunk, "EOF"
        b += chunk
    magic, err, h = struct.unpack(">IIQ", b[:16])
    assert magic == 0x67446698, hex(magic)
    return err, h, b[16:]
data = os.urandom(8192)
req(1, 40 << 20, 8192, data, flags=1, h=1)        # FUA write
assert reply() == (0, 1, b"")
req(0, 40 << 20, 8192, h=2)
assert reply(8192) == (0, 2, data)
req(3, 0, 0, h=3)                                  # flush
assert reply()[:2] == (0, 3)
req(0, 64 << 20, 4096, h=4)                        # read past the end
assert reply()[:2] == (22, 4)
req(2, 0, 0)                                       # disconnect
assert s.recv(1) == b""
c2 = connect()
c2.send(b"HELLO")
assert c2.recv(1024).startswith(b"ERR "), "no ERR for an unknown request"
# The request word is compared over the whole message: trailing bytes
# (after a NUL too), a longer word, a shorter one and a message longer
# than the engine's buffer are refused, with no socket attached, and
# the control connection stays usable.
for bad in (b"CONNECT\0junk", b"CONNECTX", b"CONNECT\n", b"CONNEC",
            b"CONNECT" + b"\0" * 200):
    c2.send(bad)
    msg, fds, _, _ = socket.recv_fds(c2, 1024, 1)
    assert msg.startswith(b"ERR ") and not fds, (bad, msg, fds)
c2.send(b"CONNECT")
msg, fds, _, _ = socket.recv_fds(c2, 1024, 1)
assert msg.startswith(b"OK ") and len(fds) == 1, msg
os.close(fds[0])
open(os.environ.get("D", "/tmp") + "/ctl-data", "wb").write(data)
PY
kill "$ctl_pid"
wait_for 20 exited "$ctl_pid" || fail "the engine did not exit on SIGTERM"
wait "$ctl_pid" || fail "the engine exited $? on SIGTERM"
[ ! -S "$d/ctl.sock" ] || fail "the control socket was left behind"
grep -q '^rbdx_requests_total' "$d/metrics.prom" || fail "no metrics written: $(head -3 "$d/metrics.prom")"
rbd export --no-progress "$img" "$d/img3.raw" >/dev/null
cmp <(dd if="$d/img3.raw" bs=1M skip=40 count=1 status=none | head -c 8192) "$d/ctl-data" ||
  fail "the control socket's write is not in the image"
watchers=$(rbd status --format json "$img" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["watchers"]))')
[ "$watchers" -eq 0 ] || fail "$watchers watcher(s) left after the engine exited"

say "read-only and snapshot"
serve_engine "$d/ro.sock" --readonly -- "$img"
nbdsh -u "nbd+unix:///?socket=$d/ro.sock" -c '
assert h.is_read_only()
assert not h.can_fua() and not h.can_trim() and not h.can_zero()
h.set_strict_mode(0)
try:
    h.pwrite(b"x" * 512, 0)
    raise AssertionError("a write succeeded")
except nbd.Error as e:
    assert e.errno == "EPERM", e.errno
assert len(h.pread(4096, 0)) == 4096
' || fail "read-only export"
stop_server "$d/ro.sock"
rbd snap create --no-progress "$img@s1"
serve_engine "$d/snap.sock" -- "$img@s1"
nbdcopy "nbd+unix:///?socket=$d/snap.sock" "$d/snap" || fail "reading the snapshot failed"
rbd export --no-progress "$img@s1" "$d/snap.want" >/dev/null
cmp "$d/snap" "$d/snap.want" || fail "the snapshot reads differently"
stop_server "$d/snap.sock"
say "ok"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C87 (tests/README.md): nbdkit rbdx pool=rbd exclusive=true.  The
# last owner of image A's exclusive lock died (SIGKILL) with its watch
# not yet expired, so the shared writer of A's first connection waits in
# rbd_lock_acquire (about 30 s, until the OSD drops the dead watch).
# Asserts: once the server logs that it takes A's lock, a connection to
# another image B opens, writes and reads back while A's connection is
# still waiting; then A's connection either opens or is refused, and the
# server still runs.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires_python_nbd

dir=$(tmpdir)
a=$(new_image 16M)
b=$(new_image 16M)
# Take A's lock (by writing) and die without releasing it.
/usr/bin/python3 - "$a" <<'PY' || true
import os, signal, sys
import rados, rbd
c = rados.Rados(conffile=os.environ["CEPH_CONF"])
c.connect()
io = c.open_ioctx(sys.argv[1].split("/")[0])
img = rbd.Image(io, sys.argv[1].split("/", 1)[1])
img.write(b"x" * 4096, 0)
os.kill(os.getpid(), signal.SIGKILL)
PY
rbd lock ls "$a" 2>/dev/null | grep -q . || fail "the dead client holds no lock of $a"
sock="$dir/s.sock"
serve "$sock" -v -- pool=rbd exclusive=true 2>"$dir/log"
say "a connection to $a waits for its dead lock owner"
/usr/bin/python3 - "$sock" "${a#rbd/}" >"$dir/a.out" 2>&1 <<'PY' &
import sys
import nbd
h = nbd.NBD()
h.set_export_name(sys.argv[2])
try:
    h.connect_unix(sys.argv[1])
    print("A opened")
except nbd.Error as e:
    print("A refused:", e)
PY
apid=$!
wait_for 60 grep -q "${a#rbd/}: taking the exclusive lock" "$dir/log" ||
  fail "the server never took A's lock: $(tail -5 "$dir/log")"
say "meanwhile a connection to $b"
/usr/bin/python3 - "$sock" "${b#rbd/}" <<'PY' || fail "B's connection failed"
import sys
import nbd
h = nbd.NBD()
h.set_export_name(sys.argv[2])
h.connect_unix(sys.argv[1])
h.pwrite(b"\x5b" * 4096, 0)
h.flush()
assert h.pread(4096, 0) == b"\x5b" * 4096
h.shutdown()
PY
kill -0 "$apid" 2>/dev/null ||
  fail "A's connection was not waiting any more when B's was done: $(cat "$dir/a.out")"
wait_for 120 exited "$apid" || fail "A's connection still waits after 120 s"
say "$(cat "$dir/a.out")"
kill -0 "$SERVER_PID" 2>/dev/null || fail "nbdkit died: $(tail -5 "$dir/log")"
say "ok"

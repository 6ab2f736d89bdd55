#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# OSD and monitor outages under open connections: cases C04 and C05
# (tests/README.md) and the rows "OSD outage" and "Monitor outage" of the
# man page's LIFECYCLE section.  The sandbox's daemons are paused with
# SIGSTOP (tests/ceph-sandbox pause-osd/pause-mon): to clients that is an
# outage, and no data is lost.  Runs alone (meson is_parallel: false):
# every other test would stall meanwhile.
# Asserts:
#   - C04, default timeouts: a write issued while the OSD is down stays
#     pending (its client is still waiting 5 s later), completes once the
#     OSD is back after 10 s, and reads back; the connection carries on.
#     Every pause here stays under 15 s, not the case's 20: after a pause
#     a PG of the sandbox was seen to stay stuck (every later request to
#     it delayed), which is the sandbox's problem, not the client's (its
#     resume-osd probes every PG and makes osd.0 re-peer if one is stuck);
#     tests/soak/run really stops and starts the OSD instead;
#   - C04 with ceph.rados_osd_op_timeout=3: a read and a write fail with
#     NBD_EIO within 14 s while the OSD is down, the connection stays
#     usable, and I/O works again once the OSD is back (the range of the
#     failed write is undefined, the rest intact);
#   - C05: nbdcopy --connections=4 out of that export while the OSD is
#     down exits non-zero (a failed read is an NBD error, never zeros); with
#     the OSD up its copy equals `rbd export`;
#   - monitor outage: an open connection keeps reading and writing; a new
#     connection (ceph.client_mount_timeout=5) fails within 60 s with a
#     message naming the monitors, and the server lives on; once the
#     monitor is back a new connection works.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
requires nbdsh nbdcopy nbdinfo

sbdir=$(dirname "$CEPH_CONF")
sandbox=$RBDX_TESTS/ceph-sandbox
"$sandbox" status "$sbdir" >/dev/null 2>&1 ||
  skip "CEPH_CONF is not a tests/ceph-sandbox cluster (cannot pause its daemons)"
at_exit "'$sandbox' resume-osd '$sbdir' >/dev/null 2>&1; '$sandbox' resume-mon '$sbdir' >/dev/null 2>&1"

# timed SECONDS CMD...: CMD must finish (any status) within SECONDS.
timed() {
  local max=$1 t0=$SECONDS rc=0
  shift
  "$@" || rc=$?
  [ $((SECONDS - t0)) -le "$max" ] || fail "'$*' took $((SECONDS - t0)) s (at most $max)"
  return $rc
}

say "C04: a write while the OSD is down waits, then lands"
img=$(new_image 16M)
serve "$MC_DIR/a.sock" -- "$img"
ua=$(uri "$MC_DIR/a.sock")
client_start A "$ua"
client_do A write 0 4096 a1
"$sandbox" pause-osd "$sbdir" 2>/dev/null
nbdsh -u "$ua" -c 'h.pwrite(b"\xc4" * 65536, 65536); h.flush()' &
writer=$!
sleep 5
kill -0 "$writer" 2>/dev/null || fail "the write finished while the OSD was down"
sleep 5
"$sandbox" resume-osd "$sbdir"
# Bounded: a write that never completes is a failure with the cluster's
# view printed, not a hang.
if ! wait_for 120 exited "$writer"; then
  say "the write is still pending 120 s after the OSD came back:"
  timeout 20 ceph -s >&2 || true
  timeout 20 ceph daemon osd.0 dump_ops_in_flight 2>&1 |
    grep -E '"(description|flag_point|age)"' | head -n 30 >&2 || true
  tail -20 "$sbdir"/log/osd.0.log >&2 2>/dev/null || true
  kill "$writer" 2>/dev/null || true
  fail "the write issued during the outage did not complete"
fi
wait "$writer" || fail "the write issued during the outage failed"
client_do A read 65536 65536 c4
client_do A read 0 4096 a1
client_do A write 4096 4096 a2
client_stop A
stop_server "$MC_DIR/a.sock"

say "C04/C05: with rados_osd_op_timeout=3 requests fail with EIO, nbdcopy fails"
img2=$(new_image 16M)
serve "$MC_DIR/b.sock" -- "$img2" ceph.rados_osd_op_timeout=3
ub=$(uri "$MC_DIR/b.sock")
client_start B "$ub"
client_do B write 0 65536 b1
client_do B flush
"$sandbox" pause-osd "$sbdir" 2>/dev/null
timed 14 client_do B readerr 0 4096 EIO
"$sandbox" resume-osd "$sbdir"
"$sandbox" pause-osd "$sbdir" 2>/dev/null
timed 14 client_do B writeerr 8192 4096 b2 EIO
"$sandbox" resume-osd "$sbdir"
client_do B alive
rm -f "$MC_DIR/copy"
"$sandbox" pause-osd "$sbdir" 2>/dev/null
if timed 14 nbdcopy --connections=4 "$ub" "$MC_DIR/copy" 2>"$MC_DIR/nbdcopy.err"; then
  fail "nbdcopy succeeded while the OSD was down"
fi
"$sandbox" resume-osd "$sbdir"
# A write that failed leaves its range undefined (NBD doc/proto.md: the OSD
# may still apply it); the rest must be intact.
client_do B read 0 8192 b1
client_do B read 12288 53248 b1
client_do B write 8192 4096 b3
client_do B flush
client_do B read 8192 4096 b3
client_stop B
rm -f "$MC_DIR/copy"
nbdcopy --connections=4 "$ub" "$MC_DIR/copy" || fail "nbdcopy failed with the OSD up"
rbd export --no-progress "$img2" "$MC_DIR/export" >/dev/null 2>&1
cmp "$MC_DIR/copy" "$MC_DIR/export" || fail "nbdcopy's copy differs from rbd export"
stop_server "$MC_DIR/b.sock"

say "monitor outage: open connections carry on, new ones fail in bounded time"
img3=$(new_image 16M)
serve "$MC_DIR/c.sock" -- "$img3" ceph.client_mount_timeout=5 2>"$MC_DIR/c.log"
uc=$(uri "$MC_DIR/c.sock")
client_start C "$uc"
client_do C write 0 4096 c1
"$sandbox" pause-mon "$sbdir" 2>/dev/null
client_do C read 0 4096 c1
client_do C write 4096 4096 c2 fua
client_do C read 4096 4096 c2
if timed 60 nbdinfo --size "$uc" >/dev/null 2>&1; then
  fail "a new connection succeeded with the monitor down"
fi
kill -0 "$SERVER_PID" || fail "the server died during the monitor outage"
grep -q "cannot connect to Ceph cluster .* (monitors " "$MC_DIR/c.log" ||
  fail "the failed connection does not name the monitors: $(cat "$MC_DIR/c.log")"
"$sandbox" resume-mon "$sbdir" 2>/dev/null
wait_for 60 nbdinfo --size "$uc" >/dev/null 2>&1 ||
  fail "no new connection 60 s after the monitor came back"
client_do C read 4096 4096 c2
client_stop C
stop_server "$MC_DIR/c.sock"

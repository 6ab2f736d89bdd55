#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-socket-activation: rbdx@.service's own ExecStart command (read from
# the unit meson generated, with the build's plugin in place of the
# installed "rbdx") serves the image through sockets passed by socket
# activation (LISTEN_FDS, as rbdx@.socket does), on a Unix socket and on
# 127.0.0.1 TCP at once, with the unit's option variables
# (RBDX_CLUSTER_OPTS, RBDX_OPTS, NBDKIT_OPTS) split into parameters:
#  - a write through the Unix socket and one through TCP read back on the
#    other socket, nbdcopy of the export and `rbd export` both equal the
#    expected image, all from one server process (several connections);
#  - SIGTERM (systemd's stop) with a client still connected ends the
#    server by itself with status 0, and then `rbd status` shows no
#    watcher and `rbd lock ls` no lock (the exclusive=true lock is
#    released), so SIGKILL is not needed;
#  - the sockets are under RUN_DIR/sockets/, so the mapper's clean-up of
#    its run directory never removes one, whatever the pool is named
#    (case C37).
# Covers: systemd/README.md "Serving an image", "Instance names",
# "Where options go".
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires systemd-socket-activate systemd-escape qemu-io nbdcopy nbdsh ss cmp
. "$RBDX_TESTS/systemd/unit-lib.sh"

d=$(tmpdir)
img=$(new_image 16M)
# The Unix socket path of rbdx@.socket, moved from /run/rbdx to $d.
listen_path=$(sed -n 's|^ListenStream=/run/rbdx/||p' "$RBDX_UNITS/rbdx@.socket")
[ "$listen_path" = "sockets/%I.sock" ] || fail "rbdx@.socket: unexpected ListenStream=/run/rbdx/$listen_path"
sock=$d/run/sockets/$img.sock
mkdir -p "$(dirname "$sock")"   # systemd creates the parents too

# What an instance file would set; exclusive=true so that the lock's
# release on stop is checked too.
export RBDX_CLUSTER_OPTS="conf=$CEPH_CONF"
export RBDX_OPTS="exclusive=true"
export NBDKIT_OPTS="--threads=8"
unit_exec_start "$img"
say "ExecStart: ${UNIT_ARGV[*]}"
# Only the expanded command line reaches nbdkit (as under systemd, where
# the variables come from the EnvironmentFile=s): not CEPH_CONF.
unset RBDX_CLUSTER_OPTS RBDX_OPTS NBDKIT_OPTS

# A free port can be taken by another test meanwhile: try three.
for attempt in 1 2 3; do
  port=$(free_tcp_port)
  socket_activate "$d/server.pid" "$sock" "127.0.0.1:$port" -- "${UNIT_ARGV[@]}" && break
  [ $attempt -lt 3 ] || fail "cannot start systemd-socket-activate"
  rm -f "$sock"
done
pid=$SA_PID
unix_uri=$(uri "$sock")
tcp_uri="nbd://127.0.0.1:$port/"

# Writes through each socket, read back through the other.
qemu-io -f raw -c 'write -P 0xa5 0 1M' "$unix_uri" >/dev/null ||
  fail "write through the activated Unix socket failed"
[ "$(cat /proc/"$pid"/comm)" = nbdkit ] ||
  fail "process $pid is not nbdkit after the first connection"
qemu-io -f raw -c 'write -P 0x3c 8M 1M' -c 'read -P 0xa5 0 1M' "$tcp_uri" >/dev/null ||
  fail "write or read-back through the activated TCP socket failed"
qemu-io -f raw -c 'read -P 0x3c 8M 1M' -c 'read -P 0 1M 7M' "$unix_uri" >/dev/null ||
  fail "read-back through the Unix socket failed"

# The whole export (4 connections) and the image itself.
expected=$d/expected
truncate -s 16M "$expected"
pattern_file "$d/a5" 1M a5
pattern_file "$d/3c" 1M 3c
dd if="$d/a5" of="$expected" conv=notrunc status=none
dd if="$d/3c" of="$expected" bs=1M seek=8 conv=notrunc status=none
nbdcopy --connections=4 "$tcp_uri" "$d/copy" || fail "nbdcopy out of the TCP socket failed"
cmp "$expected" "$d/copy" || fail "nbdcopy's copy differs from what was written"
rbd export --no-progress "$img" "$d/export" >/dev/null
cmp "$expected" "$d/export" || fail "rbd export differs from what was written"
kill -0 "$pid" 2>/dev/null || fail "the server exited between connections"
say "Unix and TCP sockets served by one process ($pid); data matches rbd export"

# Stop the way systemd does (SIGTERM to the main process) while a client
# is connected and holds the exclusive lock.
export RBDX_READY=$d/ready RBDX_GO=$d/go
nbdsh -u "$unix_uri" -c '
import os, time
h.pwrite(b"\x5a" * 4096, 0)
open(os.environ["RBDX_READY"], "w").close()
for _ in range(300):
    if os.path.exists(os.environ["RBDX_GO"]):
        break
    time.sleep(0.05)
try:
    h.pread(4096, 0)
    print("read after SIGTERM: served")
except nbd.Error as e:
    print("read after SIGTERM: refused (%s)" % e)
' >"$d/client.out" 2>&1 &
client=$!
for i in $(seq 200); do [ -e "$RBDX_READY" ] && break; sleep 0.05; done
[ -e "$RBDX_READY" ] || fail "the held client did not connect: $(cat "$d/client.out")"
[ "$(locks "$img")" -eq 1 ] || fail "exclusive=true: expected one lock while writing, got $(rbd lock ls "$img")"
[ "$(watchers "$img")" -ge 1 ] || fail "no watcher while a client is connected"

kill -TERM "$pid"
touch "$RBDX_GO"
wait "$client" || true
say "$(cat "$d/client.out")"
wait_exit "$pid" 20
[ "$EXIT_STATUS" -eq 0 ] || fail "nbdkit exited with status $EXIT_STATUS after SIGTERM"
rm -f "$d/server.pid"

[ "$(watchers "$img")" -eq 0 ] || fail "watchers left after the server stopped: $(rbd status "$img")"
[ "$(locks "$img")" -eq 0 ] || fail "lock left after the server stopped: $(rbd lock ls "$img")"
say "SIGTERM: clean exit, no watcher, no lock"

# The units' sockets and the mapper's run directory (case C37): socket
# paths of pools named like the mapper's own entries ("sup-0", "nbd5",
# "keyrings", "lock") are under sockets/, and the mapper's clean-up of
# dead supervisors' directories (sup-PID/, pid 0 is never alive) leaves
# them alone while it still removes its own.
mapper=$RBDX_BUILD/server/rbdx
if [ -x "$mapper" ]; then
  for p in sup-0 nbd5 keyrings lock; do
    mkdir -p "$d/run/sockets/$p" && : >"$d/run/sockets/$p/img.sock"
  done
  mkdir -p "$d/run/sup-0"
  RBDX_RUN_DIR=$d/run "$mapper" list-mapped >"$d/lm.out" 2>&1 ||
    fail "list-mapped with unit sockets in the run directory: $(cat "$d/lm.out")"
  for p in sup-0 nbd5 keyrings lock; do
    [ -e "$d/run/sockets/$p/img.sock" ] || fail "the mapper removed the socket of pool $p"
  done
  [ ! -e "$d/run/sup-0" ] || fail "the mapper kept a dead supervisor's directory"
  say "the mapper leaves the units' sockets alone (pools sup-0, nbd5, keyrings, lock)"
fi

# The handshake timeout (case C69; nbdkit >= 1.42 has --timeout): the
# unit passes --timeout=60, and a --timeout= in NBDKIT_OPTS wins.  With
# --timeout=2, 20 connections that never negotiate are all dropped by
# the server, while a client that finished its handshake before keeps
# being served across the same time.
if nbdkit --help 2>&1 | grep -q -- --timeout; then
  unit_exec_start "$img"
  printf '%s\n' "${UNIT_ARGV[@]}" | grep -qx -- --timeout=60 ||
    fail "rbdx@.service passes no --timeout=60: ${UNIT_ARGV[*]}"
  export RBDX_CLUSTER_OPTS="conf=$CEPH_CONF" NBDKIT_OPTS="--timeout=2"
  unit_exec_start "$img"
  unset RBDX_CLUSTER_OPTS NBDKIT_OPTS
  sock2=$d/run/sockets/timeout.sock
  socket_activate "$d/server2.pid" "$sock2" -- "${UNIT_ARGV[@]}" ||
    fail "cannot start systemd-socket-activate"
  export RBDX_SOCK2=$sock2
  nbdsh -u "$(uri "$sock2")" -c '
import os, socket, time
h.pwrite(b"\x77" * 4096, 0)
idle = []
for i in range(20):
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.environ["RBDX_SOCK2"])
    s.settimeout(30)
    idle.append(s)
dropped = 0
for s in idle:
    try:
        while s.recv(4096):
            pass            # the greeting, then the end
        dropped += 1
    except socket.timeout:
        pass
    s.close()
print("idle connections dropped: %d of 20" % dropped)
assert dropped == 20, dropped
assert h.pread(4096, 0) == b"\x77" * 4096
print("the negotiated connection is still served")
' >"$d/timeout.out" 2>&1 || fail "handshake timeout: $(cat "$d/timeout.out")"
  say "$(cat "$d/timeout.out")"
else
  say "nbdkit $(nbdkit --version) has no --timeout: the unit passes none"
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# C06 (tests/README.md): 20 clients each queue 33 reads and hang up
# at once without NBD_CMD_DISC.  The 2nd read of each fails in rbdx's own
# pread (the image was shrunk after they connected: EINVAL past the
# current end); the last one is past the negotiated end (client strict
# mode off), which nbdkit itself would refuse if it still reads it.
# Meanwhile a second client reads in a loop.  Asserts: the nbdkit server
# is the same process afterwards (serve from lib.sh), it never logged an
# assertion, rbdx's failure path was taken at least once (nbdkit -v log),
# and the reader saw no error and only the right bytes.
# Typical run: 8 s; at most ~40 s when nbdkit aborts (see below).
#
# Debian 12's nbdkit 1.32.5 has been seen to abort in raw_send_socket
# (Assertion 'sock >= 0') when clients tear connections down
# mid-request.  If the server dies here the test says so, prints the
# assertion from nbdkit's stderr and, when gdb is installed and a core
# was dumped, a backtrace of it; when it is exactly that known bug on an
# nbdkit older than the fix (1.33.10), the test exits 77 (skipped, with
# the evidence), otherwise it fails.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
prog=$(test_prog multiconn/c06-hangup)
ROUNDS=${RBDX_C06_ROUNDS:-20}

# A core of nbdkit, if it aborts, lands in the scratch directory.
cd "$MC_DIR"
ulimit -c unlimited 2>/dev/null || true

# 64 MiB, the first 32 MiB filled with 0x5c.
img=$(new_image 64M)
pattern_file "$MC_DIR/fill" $((32 << 20)) 5c
import_into "$img" "$MC_DIR/fill"
rbd resize --no-progress --size 64M "$img" >/dev/null

sock=$MC_DIR/nbd.sock
# RBDX_C06_NBDKIT_OPTS: extra nbdkit options (e.g. --threads=1).
# shellcheck disable=SC2086
serve "$sock" -v ${RBDX_C06_NBDKIT_OPTS:-} -- "$img" 2>"$MC_DIR/nbdkit.log"
pid=$SERVER_PID
u=$(uri "$sock")

server_died() {
  local known=""
  say "the nbdkit server (pid $pid) died; the end of its stderr (-v):"
  tail -n 15 "$MC_DIR/nbdkit.log" >&2
  say "assertions and errors in its stderr:"
  grep -E 'Assertion|error:' "$MC_DIR/nbdkit.log" | sort | uniq -c | head -20 >&2
  if grep -q "raw_send_socket.*Assertion" "$MC_DIR/nbdkit.log"; then
    say "this is nbdkit's own raw_send_socket assertion, not rbdx"
    say "  ($(nbdkit --version)):"
    say "  fixed upstream by nbdkit commit 9d82aa4f 'server: Don't assert on send if"
    say "  client hangs up early' (Red Hat bz 2173054), first in 1.33.10, so in stable"
    say "  1.34.0 and later; the bug came with daef505e in 1.32.4.  Workaround on"
    say "  1.32.4/1.32.5: nbdkit --threads=1 (one request at a time per connection)."
    known=" (nbdkit's raw_send_socket assertion: fixed in nbdkit >= 1.34)"
  fi
  local core
  core=$(ls "$MC_DIR"/core* 2>/dev/null | head -1 || true)
  if [ -n "$core" ] && command -v gdb >/dev/null; then
    say "backtrace of $core:"
    gdb -q -batch -ex bt "$(command -v nbdkit)" "$core" 2>&1 |
      grep -E '^#|^Core was|^Program terminated' >&2 || true
  else
    say "no core dump in $MC_DIR or no gdb" \
      "(core_pattern: $(cat /proc/sys/kernel/core_pattern))"
  fi
  # The dead server's watches expire after about 30 s; until then the
  # image cannot be removed at exit.
  kill "$reader" 2>/dev/null || true
  wait_for 45 unwatched "$img" || true
  # The case's own alternative outcome: the abort is nbdkit's known
  # bug (proven above), not rbdx's.  The service units restart the
  # server (Restart=on-failure).  Counted as skipped, never as passed.
  if [ -n "$known" ] && nbdkit_older_than 1.33.10; then
    skip "nbdkit $(nbdkit --version | awk '{print $2}') aborted in" \
      "raw_send_socket (known nbdkit bug, fixed in >= 1.34; evidence above)"
  fi
  fail "nbdkit died while clients hung up mid-request: $*$known"
}

# nbdkit_older_than X.Y.Z: is the installed nbdkit older?
nbdkit_older_than() {
  local v
  v=$(nbdkit --version | awk '{print $2}')
  [ "$v" != "$1" ] && [ "$(printf '%s\n%s\n' "$v" "$1" | sort -V | head -1)" = "$v" ]
}

# The second client: reads [0, 32 MiB) in a loop, every byte 0x5c.
"$prog" reader "$u" "$MC_DIR/stop" 5c $((32 << 20)) >"$MC_DIR/reader.out" 2>&1 &
reader=$!

mkfifo "$MC_DIR/go"
"$prog" hangup "$u" "$ROUNDS" $((48 << 20)) <"$MC_DIR/go" \
  >"$MC_DIR/hangup.out" 2>&1 &
hanger=$!
exec {go}>"$MC_DIR/go"
for i in $(seq 600); do
  grep -q '^ready' "$MC_DIR/hangup.out" && break
  kill -0 "$hanger" 2>/dev/null || break
  sleep 0.1
done
grep -q '^ready' "$MC_DIR/hangup.out" ||
  fail "the hanging-up clients did not connect: $(cat "$MC_DIR/hangup.out")"
# Shrink under the open connections: 48 MiB is now past the end.
rbd resize --no-progress --allow-shrink --size 32M "$img" >/dev/null
say "$ROUNDS clients hang up with reads in flight"
echo go >&"$go"
exec {go}>&-
hrc=0
wait "$hanger" || hrc=$?
cat "$MC_DIR/hangup.out"
[ $hrc = 0 ] || fail "the hanging-up client program failed ($hrc)"

# Let the server finish tearing down, while the reader keeps reading.
wait_for 2 exited "$pid" || true
kill -0 "$pid" 2>/dev/null || server_died "after the hang-ups"
[ "$(cat "$sock.pid")" = "$pid" ] || fail "the server's PID changed"

touch "$MC_DIR/stop"
rrc=0
wait "$reader" || rrc=$?
cat "$MC_DIR/reader.out"
kill -0 "$pid" 2>/dev/null || server_died "while the reader stopped"
if [ $rrc != 0 ]; then
  # A server that is aborting may still answer kill -0 for a moment.
  wait_for 5 exited "$pid" && server_died "while the reader read"
  fail "the second client saw an error while others hung up"
fi
! grep -qi 'assert' "$MC_DIR/nbdkit.log" ||
  fail "nbdkit logged an assertion: $(grep -i assert "$MC_DIR/nbdkit.log")"

# The failures really happened: rbdx's pread refused reads past the
# current end (a debug line with -v), nbdkit refused past the negotiated one.
n_plugin=$(grep -c "rbdx: .*: read of .* is past the image's current end" "$MC_DIR/nbdkit.log" || true)
n_server=$(grep -c 'out of range' "$MC_DIR/nbdkit.log" || true)
say "failed reads seen by the server: $n_plugin in rbdx, $n_server in nbdkit"
[ "$n_plugin" -gt 0 ] || fail "no read reached rbdx's failure path"

# Still serving: a fresh connection reads.
nbdsh -u "$u" -c 'assert h.pread(4096, 0) == b"\x5c" * 4096' ||
  fail "the server no longer serves a new client"
stop_server "$sock"
cd /

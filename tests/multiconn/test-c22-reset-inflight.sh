#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# C22 (tests/README.md): no client can take the server down by going away
# with requests in flight.  `nbdkit rbdx` serves one image on a loopback
# TCP port; a bystander connection (c22-bystander) writes stamped 4 KiB
# blocks throughout (16 in flight, FUA on every other one).  Meanwhile:
#   1. 20 tries of c22-reset.py: 64 reads of 1 MiB queued, then the socket
#      closed with SO_LINGER 0 (a TCP reset) once the unread replies have
#      piled up (the server's threads are blocked sending);
#   2. 20 tries of `nbdcopy --connections=4 --requests=64 URI null:`
#      killed with SIGKILL after 0.05, 0.10, ... 1.00 s (a fixed spread).
# After each try the test waits until the server's worker threads for the
# connections that went away have exited (nbdkit -v logs it), then checks
# the PID, so a death is pinned to its try; if they do not exit within
# 60 s the test fails with the server's threads and stacks and the OSD's
# ops in flight (hang_evidence in lib.sh), which tell a read the cluster
# never answered from a thread stuck in nbdkit or rbdx.
# Asserts: the server is the same process after every try and at the end,
# it logged no assertion, the bystander saw no error, and every write the
# bystander had acknowledged reads back at the end (it checks every block
# on a new connection).  Typical run: 35-60 s.
#
# nbdkit 1.32.4 and 1.32.5 (Debian 12) abort here (raw_send_socket:
# Assertion 'sock >= 0'); fixed by nbdkit commit 9d82aa4f, first in
# 1.33.10.  scripts/nbdkit-backport installs a fixed nbdkit on Debian 12
# (scripts/deps runs it).  On such a death the test fails at once with
# the evidence (nbdkit's stderr, a backtrace when a core was dumped);
# RBDX_C22_ALL=1 instead restarts the server after each death and fails
# at the end with the count of tries that killed it.
# RBDX_C22_TRIES: tries per variant (default 20).
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
requires python3 nbdcopy
bystander=$(test_prog multiconn/c22-bystander)
reset=$RBDX_TESTS/multiconn/c22-reset.py
TRIES=${RBDX_C22_TRIES:-20}
ALL=${RBDX_C22_ALL:-}
NBLOCKS=4096                    # the bystander's 16 MiB at the start

cd "$MC_DIR"
ulimit -c unlimited 2>/dev/null || true

# 192 MiB: the bystander's [0, 16 MiB) starts as zeros, the rest holds
# data, so that the reads and the copy move real bytes (nbdcopy skips
# holes).
img=$(new_image 192M)
pattern_file "$MC_DIR/fill" $((192 << 20)) a5
dd if=/dev/zero of="$MC_DIR/fill" bs=1M count=16 conv=notrunc status=none
import_into "$img" "$MC_DIR/fill"
rm -f "$MC_DIR/fill"

pidfile=$MC_DIR/nbdkit.pid
echo "$pidfile" >>"$_state/pidfiles"
baseline=0

# start_server: nbdkit -v (without its per-request lines) on a free
# loopback port; sets pid, port, u and log (its stderr).
start_server() {
  local try bg
  for try in 1 2 3 4 5; do
    port=$(python3 -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    rm -f "$pidfile"
    log=$MC_DIR/nbdkit.$port.log
    nbdkit -v -D nbdkit.backend.datapath=0 -i 127.0.0.1 -p "$port" \
      -P "$pidfile" --exit-with-parent "$RBDX_PLUGIN" "$img" 2>"$log" &
    bg=$!
    wait_for 30 test -s "$pidfile" -o ! -e "/proc/$bg" || true
    if [ -s "$pidfile" ]; then
      pid=$(cat "$pidfile")
      u="nbd://127.0.0.1:$port/"
      baseline=0
      return 0
    fi
    grep -q 'Address already in use' "$log" ||
      fail "nbdkit did not start (try $try): $(tail -n 5 "$log")"
  done
  fail "no free loopback port in 5 tries"
}

deaths_reset=0 deaths_copy=0
# died WHAT: the server is gone.  Print the evidence; fail, or with
# RBDX_C22_ALL=1 count it and start a new server.
died() {
  say "the nbdkit server (pid $pid) died $1; the end of its stderr:"
  tail -n 5 "$log" >&2
  local core
  core=$(ls -t "$MC_DIR"/core* 2>/dev/null | head -1 || true)
  if [ -n "$core" ] && command -v gdb >/dev/null; then
    say "backtrace of $core:"
    gdb -q -batch -ex bt "$(command -v nbdkit)" "$core" 2>&1 |
      grep -E '^#|^Program terminated' | awk '!seen[$0]++' | head -12 >&2 || true
    rm -f "$core"
  fi
  if grep -q 'raw_send_socket.*Assertion' "$log"; then
    say "nbdkit's own raw_send_socket assertion ($(nbdkit --version)):" \
      "fixed by nbdkit commit 9d82aa4f, first in 1.33.10;" \
      "scripts/nbdkit-backport installs a fixed nbdkit on Debian 12"
  fi
  [ -n "$ALL" ] || fail_dead "nbdkit died $1"
  start_server
}

# fail_dead MESSAGE: fail after a server died.  The dead server's watch
# on the image expires after about 30 s; until then the image cannot be
# removed at exit, so wait for that (stopping the bystander and a
# restarted server first).
fail_dead() {
  [ -z "${by:-}" ] || kill "$by" 2>/dev/null || true
  alive && kill "$pid" && wait_for 10 exited "$pid"
  wait_for 45 unwatched "$img" || true
  fail "$*"
}

# alive: the server is still the process we started (not a zombie).
alive() {
  [ -r "/proc/$pid/stat" ] && [ "$(cut -d' ' -f3 "/proc/$pid/stat")" != Z ] &&
    [ "$(cat "$pidfile" 2>/dev/null)" = "$pid" ]
}

# workers: nbdkit's worker threads still running (its -v log: each
# connection starts its own and they log when they exit).
workers() {
  echo $(($(grep -c 'starting worker thread' "$log") -
          $(grep -c 'exiting worker thread' "$log")))
}

# settled: the server runs no worker thread but the bystander's (it is
# done with the connections that went away), or it is gone.  nbdkit's
# abort comes from one of those workers, before it could exit, so once
# this holds, alive tells the truth about the last try.
settled() { ! alive || [ "$(workers)" -le "$baseline" ]; }

start_server
first_pid=$pid
say "nbdkit pid $pid on 127.0.0.1:$port ($(nbdkit --version))"

"$bystander" "$u" "$MC_DIR/stop" "$NBLOCKS" >"$MC_DIR/bystander.out" \
  2>"$MC_DIR/bystander.err" &
by=$!
at_exit "kill $by 2>/dev/null"
wait_for 60 grep -q '^ready' "$MC_DIR/bystander.out" ||
  fail "the bystander did not start writing: $(cat "$MC_DIR/bystander.err")"
# The baseline is all of the bystander's workers: nbdkit starts them one
# by one and each logs as it starts, so a count taken as soon as the
# bystander writes can be short (CI saw 9 and 14 of 16), and then no try
# would ever settle.  nbdkit logs how many a connection gets.
nthreads=$(sed -n 's/.*processing requests with \([0-9]*\) threads.*/\1/p' "$log" | head -n 1)
[ -n "$nthreads" ] ||
  fail "nbdkit did not log how many worker threads serve the bystander (see $log)"
started() { [ "$(workers)" -ge "$nthreads" ]; }
wait_for 30 started ||
  fail "only $(workers) of the bystander's $nthreads worker threads started"
baseline=$(workers)
say "the bystander writes; $baseline nbdkit worker threads serve it"

say "$TRIES tries: 64 reads of 1 MiB queued, then a TCP reset"
for i in $(seq "$TRIES"); do
  rc=0
  python3 "$reset" 127.0.0.1 "$port" $(((16 + (i - 1) % 4 * 16) << 20)) ||
    rc=$?
  wait_for 60 settled || {
    hang_evidence "$pid"
    fail "reset try $i: the server still holds its connection after 60 s" \
      "($(workers) worker threads, $baseline expected)"
  }
  if ! alive; then
    deaths_reset=$((deaths_reset + 1))
    died "after reset try $i"
    continue
  fi
  [ $rc = 0 ] || fail "reset try $i: the client failed ($rc)"
done

say "$TRIES tries: nbdcopy --connections=4 --requests=64 killed mid-copy"
copying=0
for i in $(seq "$TRIES"); do
  # 0.05 s to 1.00 s, evenly spread.
  ms=$((50 + (i - 1) * 950 / (TRIES > 1 ? TRIES - 1 : 1)))
  nbdcopy --connections=4 --requests=64 "$u" null: 2>"$MC_DIR/nbdcopy.err" &
  cp=$!
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  if kill -0 "$cp" 2>/dev/null; then
    copying=$((copying + 1))
    kill -9 "$cp" 2>/dev/null || true
    wait "$cp" 2>/dev/null || true
  elif ! wait "$cp"; then
    alive || { deaths_copy=$((deaths_copy + 1)); died "under nbdcopy try $i"; continue; }
    fail "nbdcopy try $i failed on its own: $(cat "$MC_DIR/nbdcopy.err")"
  fi
  wait_for 60 settled || {
    hang_evidence "$pid"
    fail "nbdcopy try $i: the server still holds its connections after 60 s" \
      "($(workers) worker threads, $baseline expected)"
  }
  if ! alive; then
    deaths_copy=$((deaths_copy + 1))
    died "after nbdcopy try $i (killed after $ms ms)"
  fi
done
say "nbdcopy was still copying when killed in $copying of $TRIES tries"

# The server must stay up a while longer: an abort comes within moments.
! wait_for 1 exited "$pid" || died "after the last try"
touch "$MC_DIR/stop"
brc=0
wait "$by" || brc=$?
cat "$MC_DIR/bystander.out" "$MC_DIR/bystander.err" >&2
if [ -n "$ALL" ] && [ $((deaths_reset + deaths_copy)) -gt 0 ]; then
  fail_dead "nbdkit died in $deaths_reset of $TRIES reset tries and" \
    "$deaths_copy of $TRIES nbdcopy tries (bystander status $brc)"
fi
[ $brc = 0 ] || fail "the bystander saw an error (status $brc)"
alive || died "while the bystander checked its writes"
[ "$pid" = "$first_pid" ] || fail "the server's PID changed"
! grep -q 'Assertion' "$log" ||
  fail "nbdkit logged an assertion: $(grep Assertion "$log")"
grep -q 'processing requests with' "$log" ||
  fail "nbdkit did not serve connections with worker threads (see $log)"
say "server pid $pid kept through $TRIES reset and $TRIES nbdcopy tries"
kill "$pid"
wait_for 10 exited "$pid" || fail "nbdkit did not exit on SIGTERM"
rm -f "$pidfile"
cd /

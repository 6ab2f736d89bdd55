#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-quiesce FRONTEND: quiesce=true with 4 connections writing, through
# the nbdkit plugin (FRONTEND=plugin) or the built-in engine
# (FRONTEND=engine, its --oldstyle hook).  Case C29 of tests/README.md.
#
# The order rbdx keeps (include/rbdx/quiesce.h): quiesce hook (writes
# flowing) -> hold new writes (logged: "writes held at T") -> wait for
# writes in librbd -> acknowledge every handle -> snapshot -> unquiesce
# notification on every handle -> held writes go on ("writes released
# at T") -> unquiesce hook.  So, with writers.py's per-write patterns and
# CLOCK_REALTIME times of each write's send and reply, the hook's own
# start/end times and rbdx's two (check.py):
#   - `rbd snap create` succeeds; the hook ran exactly once with
#     "DEVICE quiesce" and once with "DEVICE unquiesce" (DEVICE: the
#     image's canonical name, pool/image): hook, hold, release, hook;
#   - writes were acknowledged while the quiesce hook ran (it waits for
#     writers' progress itself: a hold before the hook would deadlock it);
#   - every write acknowledged before the hold is in the snapshot, none
#     sent after it is, and every write not in it was acknowledged after
#     the release; every connection had a write held;
#   - no write failed and every write is in the head image afterwards.
# A hook that exits 3: `rbd snap create` fails, no snapshot, no
# unquiesce call (as rbd-nbd), writes go on, none fails.  A hook that
# hangs with quiesce_timeout=2: `rbd snap create` fails, the hook and its
# child are killed, the unquiesce hook runs, writes go on.  Connections
# that come and go while the hook runs (one notified, one opened after
# the notification) do not hold the snapshot up: it succeeds, with the
# hook run once.
# Bad hooks are refused before serving: relative, missing, a directory,
# not executable, and quiesce_hook= without quiesce=true.
# quiesce_device_file= (what `rbdx map` gives its server): while the file
# is missing DEVICE is the image's name; then the file's /dev/nbd7 for
# both hook calls; a file holding "-o" fails the snapshot without running
# the hook.  The hook starts with descriptors 0, 1, 2 only and without
# the server's other environment variables (QUIESCE_TEST_SECRET), PATH
# kept.  rbdx's own hook, given the image's name: fails the snapshot when
# `rbdx list-mapped` cannot run (not on PATH), lets it go on when it runs
# and the image is not mapped on this host; reads a mapping of an image
# named "a 4 PID" as one column (not as ours), and fails the snapshot
# when its own image, named with a blank, is mapped by another server.
# The last handle leaving and the server stopping while the freeze hook
# hangs (quiesce_timeout=600): the hook and its child are killed at
# once, the thaw runs, the server exits within 60 s of SIGTERM.
# C39: writes a client sent while they were held, the client then killed
# (another server's hook keeps the snapshot, so the hold, going): when
# the hold ends none of them reaches the image; all count as errors.
. "${RBDX_TESTS:-$(dirname "$0")/..}/lib.sh"
requires_cluster
requires rbd
frontend=${1:?usage: test-quiesce.sh plugin|engine}
test_name=quiesce-$frontend
py=/usr/bin/python3
"$py" -c 'import nbd' 2>/dev/null || skip "$py has no nbd module (python3-libnbd)"
here=$RBDX_TESTS/quiesce
d=$(tmpdir)
conns=4
slots=8192
img=$(new_image 128M)

# The test's hook: logs "T start|end DEVICE CMD"; its behaviour comes
# from $d/mode: ok (quiesce waits until 8 more writes were acknowledged,
# at most 20 s), fail (exit 3), hang (sleeps in a child).
cat >"$d/hook" <<HOOK
#!/bin/bash
log=$d/hook.log
echo "\$(date +%s.%N) start \$1 \$2" >>"\$log"
if [ "\$2" = quiesce ]; then
  case \$(cat $d/mode) in
    ok)
      n0=\$(cat $d/progress)
      for i in \$(seq 400); do
        [ "\$(cat $d/progress)" -ge \$((n0 + 8)) ] && break
        sleep 0.05
      done ;;
    fail) echo "\$(date +%s.%N) end \$1 \$2" >>"\$log"; exit 3 ;;
    hang) echo \$\$ >$d/hook.pid; sleep 300 & echo \$! >$d/child.pid; wait ;;
    gate)
      : >$d/in-hook
      for i in \$(seq 600); do [ -e $d/go ] && break; sleep 0.05; done ;;
  esac
fi
echo "\$(date +%s.%N) end \$1 \$2" >>"\$log"
HOOK
chmod +x "$d/hook"

# start SOCK KEY=VALUE...: the server, verbose, its messages in SOCK.log.
start() {
  local sock=$1
  shift
  if [ "$frontend" = plugin ]; then
    serve "$sock" -v -- "$img" "$@" 2>>"$sock.log"
  else
    serve_engine "$sock" -v -- "$img" "$@"
  fi
}

# gate_time SOCK held|released: the time rbdx logged for it (the last).
gate_time() {
  local t
  t=$(sed -n "s/.*rbdx: quiesce: .*: writes $2 at \([0-9.]*\).*/\1/p" "$1.log" | tail -n1)
  [ -n "$t" ] || fail "rbdx logged no 'writes $2' line"
  echo "$t"
}

progress() { cat "$d/progress" 2>/dev/null || echo 0; }
grown() { [ "$(progress)" -ge "$1" ]; }

# run_writers SOCK TAG: writers.py in the background (WPID).
run_writers() {
  rm -f "$d/stop" "$d/progress"
  echo 0 >"$d/progress"
  "$py" "$here/writers.py" "$(uri "$1")" "$conns" "$slots" "$d/stop" \
    "$d/progress" "$d/$2.rec" &
  WPID=$!
  wait_for 60 grown 40 || fail "$2: writers made no progress"
}

stop_writers() {
  touch "$d/stop"
  wait "$WPID" || fail "$1: a write failed or a writer ran out of slots"
}

# Refused before serving.
say "bad hooks are refused"
mkdir "$d/dir"
: >"$d/noexec"
for bad in "quiesce_hook=relative/hook" "quiesce_hook=$d/missing" \
           "quiesce_hook=$d/dir" "quiesce_hook=$d/noexec"; do
  if [ "$frontend" = plugin ]; then
    out=$(nbdkit -U - "$RBDX_PLUGIN" "$img" quiesce=true "$bad" --run true 2>&1) &&
      fail "$bad was accepted"
  else
    out=$("$RBDX_BUILD/server/rbdx-engine" --oldstyle "$d/bad.sock" "$img" \
          quiesce=true "$bad" 2>&1) && fail "$bad was accepted"
  fi
  grep -q "quiesce" <<<"$out" || fail "$bad: no message naming it: $out"
done
if [ "$frontend" = plugin ]; then
  out=$(nbdkit -U - "$RBDX_PLUGIN" "$img" "quiesce_hook=$d/hook" --run true 2>&1) &&
    fail "quiesce_hook= without quiesce=true was accepted"
  grep -q "need quiesce=true" <<<"$out" || fail "no message: $out"
fi

# 1. A snapshot while 4 connections write.
echo ok >"$d/mode"
: >"$d/hook.log"
start "$d/s.sock" quiesce=true "quiesce_hook=$d/hook"
run_writers "$d/s.sock" snap
say "rbd snap create while $conns connections write"
rbd snap create "$img@q1" || fail "rbd snap create failed"
ended() { grep -q ' end .* unquiesce$' "$d/hook.log"; }
wait_for 30 ended || fail "the unquiesce hook did not end: $(cat "$d/hook.log")"
n=$(progress)
wait_for 60 grown $((n + 40)) || fail "writes did not go on after the snapshot"
stop_writers snap
grep -q " start $img quiesce$" "$d/hook.log" ||
  fail "the hook was not called with '$img quiesce': $(cat "$d/hook.log")"
rbd export --no-progress "$img@q1" "$d/snap.raw" >/dev/null
rbd export --no-progress "$img" "$d/head.raw" >/dev/null
"$py" "$here/check.py" "$d/snap.rec" "$slots" "$d/snap.raw" "$d/head.raw" \
  "$d/hook.log" "$(gate_time "$d/s.sock" held)" \
  "$(gate_time "$d/s.sock" released)" ||
  fail "the snapshot does not hold what was acknowledged before it"
rm -f "$d/snap.raw" "$d/head.raw"

# 2. A failing hook fails the snapshot; writes go on.
say "a failing hook fails the snapshot"
echo fail >"$d/mode"
: >"$d/hook.log"
run_writers "$d/s.sock" fail
rbd snap create "$img@q2" 2>"$d/fail.err" && fail "rbd snap create succeeded with a failing hook"
n=$(progress)
wait_for 60 grown $((n + 40)) || fail "writes did not go on after a failed hook"
stop_writers fail
rbd snap ls "$img" | grep -qw q2 && fail "snapshot q2 exists"
grep -q unquiesce "$d/hook.log" && fail "unquiesce hook ran after a failed quiesce hook"
[ "$(grep -c ' start ' "$d/hook.log")" = 1 ] || fail "hook log: $(cat "$d/hook.log")"

# 3. Connections that leave and arrive while the hook runs.
say "connections come and go during a quiesce"
echo gate >"$d/mode"
: >"$d/hook.log"
rm -f "$d/in-hook" "$d/go" "$d/leave"
run_writers "$d/s.sock" gate
# A fifth connection, open (so notified) when the snapshot starts, that
# leaves while the hook runs.
"$py" -c '
import nbd, os, sys, time
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(b"L" * 4096, 127 << 20)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
h.shutdown()' "$(uri "$d/s.sock")" "$d/leave" &
leaver=$!
in_hook() { [ -e "$d/in-hook" ]; }
wait_for 30 grown $(( $(progress) + 8 )) || fail "gate: no progress"
rbd snap create "$img@q4" 2>"$d/gate.err" &
snap=$!
wait_for 60 in_hook || fail "the hook did not start"
touch "$d/leave"
wait "$leaver" || fail "the leaving connection failed"
# One that arrives (after the notification), writes and leaves.
/usr/bin/nbdsh -u "$(uri "$d/s.sock")" -c 'h.pwrite(b"A" * 4096, 126 << 20)' ||
  fail "a connection opened during the hook failed"
touch "$d/go"
wait "$snap" || fail "rbd snap create failed with connections coming and going: $(cat "$d/gate.err")"
n=$(progress)
wait_for 60 grown $((n + 40)) || fail "writes did not go on after the snapshot"
stop_writers gate
[ "$(grep -c ' start .* quiesce$' "$d/hook.log")" = 1 ] ||
  fail "quiesce hook not run exactly once: $(cat "$d/hook.log")"
stop_server "$d/s.sock"

# 4. A hook that hangs is killed after quiesce_timeout=.
say "a hanging hook is killed after quiesce_timeout=2"
echo hang >"$d/mode"
: >"$d/hook.log"
start "$d/t.sock" quiesce=true "quiesce_hook=$d/hook" quiesce_timeout=2
run_writers "$d/t.sock" hang
rbd snap create "$img@q3" 2>"$d/hang.err" && fail "rbd snap create succeeded with a hanging hook"
n=$(progress)
wait_for 60 grown $((n + 40)) || fail "writes did not go on after the timeout"
stop_writers hang
wait_for 10 exited "$(cat "$d/child.pid")" || fail "the hook's child was not killed"
exited "$(cat "$d/hook.pid")" || fail "the hook was not killed"
rbd snap ls "$img" | grep -qw q3 && fail "snapshot q3 exists"
# Once: a timed-out hook must not make librbd send the snapshot again.
[ "$(grep -c ' start .* quiesce$' "$d/hook.log")" = 1 ] ||
  fail "quiesce hook not run exactly once: $(cat "$d/hook.log")"
wait_for 10 grep -q ' end .* unquiesce' "$d/hook.log" ||
  fail "no unquiesce hook after the timeout: $(cat "$d/hook.log")"
stop_server "$d/t.sock"

# hold SOCK: one connection (so one quiesce watch) that has written,
# until $d/release exists (HPID); released at exit too.
at_exit "touch '$d/release'"
hold() {
  rm -f "$d/release" "$d/held"
  "$py" -c '
import nbd, os, sys, time
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(b"H" * 4096, 125 << 20)
open(sys.argv[3], "w").close()
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
h.shutdown()' "$(uri "$1")" "$d/release" "$d/held" &
  HPID=$!
  wait_for 60 test -e "$d/held" || fail "the held connection did not write"
}
unhold() { touch "$d/release"; wait "$HPID" || fail "the held connection failed"; }

# 5. quiesce_device_file=, and what the hook gets besides its arguments.
say "quiesce_device_file= names the hook's DEVICE"
cat >"$d/hook2" <<HOOK
#!/bin/bash
echo "\$(date +%s.%N) start \$1 \$2" >>$d/hook2.log
if [ "\$2" = quiesce ]; then
  env >$d/hook2.env
  ls /proc/\$\$/fd >$d/hook2.fds
fi
echo "\$(date +%s.%N) end \$1 \$2" >>$d/hook2.log
HOOK
chmod +x "$d/hook2"
: >"$d/hook2.log"
export QUIESCE_TEST_SECRET=not-for-the-hook
start "$d/f.sock" quiesce=true "quiesce_hook=$d/hook2" \
  "quiesce_device_file=$d/device"
unset QUIESCE_TEST_SECRET
hold "$d/f.sock"
rbd snap create "$img@f1" || fail "rbd snap create failed without the device file"
wait_for 30 grep -q " end $img unquiesce$" "$d/hook2.log" ||
  fail "no file: DEVICE was not the image's name: $(cat "$d/hook2.log")"
echo /dev/nbd7 >"$d/device"
rbd snap create "$img@f2" || fail "rbd snap create failed with the device file"
wait_for 30 grep -q " end /dev/nbd7 unquiesce$" "$d/hook2.log" ||
  fail "DEVICE was not the file's /dev/nbd7: $(cat "$d/hook2.log")"
grep -q " start /dev/nbd7 quiesce$" "$d/hook2.log" ||
  fail "the quiesce hook did not get /dev/nbd7: $(cat "$d/hook2.log")"
echo "-o" >"$d/device"
rbd snap create "$img@f3" 2>"$d/f3.err" &&
  fail "rbd snap create succeeded with '-o' in the device file"
[ "$(grep -c ' start ' "$d/hook2.log")" = 4 ] ||
  fail "the hook ran for a bad device file: $(cat "$d/hook2.log")"
grep -q "quiesce_device_file=$d/device: not a device name in a regular file" "$d/f.sock.log" ||
  fail "no message naming the device file"
grep -q '^PATH=' "$d/hook2.env" || fail "the hook got no PATH"
grep -q QUIESCE_TEST_SECRET "$d/hook2.env" &&
  fail "the hook got the server's environment: $(cat "$d/hook2.env")"
[ "$(tr '\n' ' ' <"$d/hook2.fds")" = "0 1 2 255 " ] ||
  fail "the hook got descriptors: $(tr '\n' ' ' <"$d/hook2.fds")"
unhold
stop_server "$d/f.sock"

# 6. rbdx's own hook given the image's name.
# snap_refused SNAP SOCK TEXT WHY: `rbd snap create SNAP` fails (WHY: the
# circumstance, for the message) and the log of SOCK's server has TEXT.
snap_refused() {
  rbd snap create "$1" 2>"$d/snap.err" && fail "rbd snap create $1 succeeded $4"
  grep -q "$3" "$2.log" || fail "the hook did not say '$3': $(tail -5 "$2.log")"
}
say "rbdx's hook fails when it cannot tell the device"
rbdx_hook=$RBDX_TESTS/../server/mapper/rbdx-quiesce-hook
mkdir -p "$d/nobin" "$d/bin" "$d/run"
ln -sf "$RBDX_BUILD/server/rbdx" "$d/bin/rbdx"
[ -x "$d/bin/rbdx" ] || skip "no mapper built (-Dmapper=disabled?)"
saved_path=$PATH
export PATH="$d/nobin:/usr/bin:/bin"
start "$d/h.sock" quiesce=true "quiesce_hook=$rbdx_hook"
export PATH=$saved_path
hold "$d/h.sock"
snap_refused "$img@h1" "$d/h.sock" "cannot tell its device: rbdx list-mapped failed" \
  "although rbdx list-mapped could not run"
unhold
stop_server "$d/h.sock"
export PATH="$d/bin:/usr/bin:/bin" RBDX_RUN_DIR=$d/run
start "$d/g.sock" quiesce=true "quiesce_hook=$rbdx_hook"
export PATH=$saved_path
unset RBDX_RUN_DIR
hold "$d/g.sock"
rbd snap create "$img@h2" ||
  fail "rbd snap create failed with the image not mapped here: $(tail -5 "$d/g.sock.log")"
unhold
stop_server "$d/g.sock"

# Hostile names in the mappings the hook reads (a mapping's state file
# as `rbdx map` writes it, under a supervisor that is alive: pid 1).
# The image served has a space in its name.  /dev/nbd7 maps an image
# named "a 4 PID" (PID: our server's): its blanks must not shift
# list-mapped's columns and make the hook take /dev/nbd7 for ours, so
# the snapshot goes on (our image is not mapped here).  Then /dev/nbd8
# maps our own image under another server: the hook fails the snapshot
# and names /dev/nbd8 (matching a spec with a blank in it).
say "rbdx's hook reads mappings whose image names hold blanks"
simg="${img%%/*}/q h-$$"
rbd create --no-progress --size 128M "$simg"
own_image "$simg"
saved_img=$img
img=$simg
mkdir -p "$d/run2"
export PATH="$d/bin:/usr/bin:/bin" RBDX_RUN_DIR=$d/run2
start "$d/n.sock" quiesce=true "quiesce_hook=$rbdx_hook"
export PATH=$saved_path
unset RBDX_RUN_DIR
img=$saved_img
start1=$(awk '{ print $22 }' /proc/1/stat)
# map_state INDEX TARGET SERVER: a state file for /dev/nbdINDEX.
map_state() {
  printf 'index=%s\ntarget=%s\nbackend=rbdx:x\nsocket=%s/none.sock\nconnections=1\nsupervisor=1\nsupervisor_start=%s\nserver=%s\n' \
    "$1" "$2" "$d" "$start1" "$3" >"$d/run2/nbd$1"
}
map_state 7 "rbd/a 4 $(cat "$d/n.sock.pid")" 1
hold "$d/n.sock"
RBDX_RUN_DIR=$d/run2 "$RBDX_BUILD/server/rbdx" list-mapped >"$d/lm.out" ||
  fail "list-mapped failed with the crafted mapping"
awk 'NR == 2 { exit !($2 == "rbd/a\\x204\\x20'"$(cat "$d/n.sock.pid")"'" && $3 == 1) }' "$d/lm.out" ||
  fail "list-mapped did not print the image name as one column: $(cat "$d/lm.out")"
rbd snap create "$simg@n1" ||
  fail "rbd snap create failed: the hook took another mapping for ours: $(tail -5 "$d/n.sock.log")"
grep -q "nbd7" "$d/n.sock.log" && fail "the hook looked at /dev/nbd7: $(grep nbd7 "$d/n.sock.log")"
map_state 8 "$simg" 1
snap_refused "$simg@n2" "$d/n.sock" "is mapped on /dev/nbd8, not by this server" \
  "with our image mapped by another server, unfrozen"
unhold
stop_server "$d/n.sock"

# 7. The last handle leaving while the freeze hook hangs: the hook is
# killed at once (not after quiesce_timeout=), the thaw runs, and the
# server's stop is not held up.
say "the image's last handle leaving kills a hanging freeze hook at once"
echo hang >"$d/mode"
: >"$d/hook.log"
rm -f "$d/hook.pid" "$d/child.pid"
start "$d/k.sock" quiesce=true "quiesce_hook=$d/hook" quiesce_timeout=600
hold "$d/k.sock"
rbd snap create "$img@k1" >"$d/k1.err" 2>&1 &
snap=$!
wait_for 60 test -s "$d/child.pid" || fail "the freeze hook did not start"
unhold
pid=$(cat "$d/k.sock.pid")
kill "$pid"
wait_for 60 exited "$pid" ||
  fail "the server did not stop within 60 s of SIGTERM while its freeze hook hangs (quiesce_timeout=600)"
exited "$(cat "$d/hook.pid")" || fail "the hook was not killed"
wait_for 10 exited "$(cat "$d/child.pid")" || fail "the hook's child was not killed"
grep -q "quiesce killed: the image's last handle is closing" "$d/k.sock.log" ||
  fail "no message for the killed hook: $(tail -5 "$d/k.sock.log")"
grep -q ' end .* unquiesce' "$d/hook.log" ||
  fail "no thaw after the freeze hook was killed: $(cat "$d/hook.log")"
wait "$snap" || true            # librbd's call: the watch is gone
stop_server "$d/k.sock"

# 8. C39: writes held by the gate when their client dies are not carried
# out when the hold ends (a client that gave up this connection may have
# written the same blocks elsewhere since).  Server k2 (a hook that returns at once) holds
# as soon as it is notified; server k3's hook keeps the snapshot, so the
# hold, going until $d/go.  A client of k2 sends 8 writes while they are
# held and is killed; once the snapshot is made and k2's connection is
# gone, none of the 8 is on the image and all 8 are write errors.
say "C39: held writes of a client that died are dropped"
echo gate >"$d/mode"
: >"$d/hook.log"
rm -f "$d/in-hook" "$d/go" "$d/a.ready" "$d/a.go"
start "$d/k2.sock" quiesce=true "quiesce_hook=$d/hook2" metrics_file="$d/k2.prom" metrics_interval=1
start "$d/k3.sock" quiesce=true "quiesce_hook=$d/hook"
hold "$d/k3.sock"
"$py" -c '
import nbd, os, sys, time
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(b"R" * 4096, 119 << 20)
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
for i in range(8):
    h.aio_pwrite(b"C39 held write.\n" * 256, (120 << 20) + i * 4096)
while True:
    h.poll(-1)' "$(uri "$d/k2.sock")" "$d/a.ready" "$d/a.go" &
apid=$!
wait_for 60 test -e "$d/a.ready" || fail "C39: the client did not connect"
rbd snap create "$img@c39" 2>"$d/c39.err" &
snap=$!
wait_for 60 in_hook || fail "C39: k3's hook did not start"
wait_for 60 grep -q "writes held at" "$d/k2.sock.log" || fail "C39: k2 did not hold writes"
touch "$d/a.go"
held8() { [ "$(metric "$d/k2.prom" rbdx_requests_in_flight)" -ge 8 ]; }
wait_for 60 held8 || fail "C39: the 8 writes did not reach k2"
kill -9 "$apid"
wait "$apid" 2>/dev/null || true
touch "$d/go"
wait "$snap" || fail "C39: rbd snap create failed: $(cat "$d/c39.err")"
wait_for 60 metrics_settled "$d/k2.prom" write 9 || fail "C39: k2's connection did not end: $(grep -E '^rbdx_(conn|req)' "$d/k2.prom")"
errs=$(metric "$d/k2.prom" rbdx_request_errors_total 'op="write"')
[ "$errs" = 8 ] || fail "C39: $errs of the 8 held writes of the dead client failed, not 8"
/usr/bin/nbdsh -u "$(uri "$d/k3.sock")" -c '
import sys
data = h.pread(8 * 4096, 120 << 20)
landed = [i for i in range(8) if data[i * 4096:(i + 1) * 4096] != bytes(4096)]
sys.exit("held writes of a dead client landed: %s" % landed if landed else 0)' ||
  fail "C39: the dead client's held writes were carried out"
unhold
stop_server "$d/k3.sock"
stop_server "$d/k2.sock"
say "ok"

#!/usr/bin/env bash
# When nbdkit is told to exit (SIGTERM, as `systemctl stop` or the end
# of a --run command sends) while a client is still connected, rbdx
# still closes that connection's image: right after nbdkit has exited,
# `rbd status` shows no watcher and `rbd lock ls` no lock left behind.
# nbdkit (1.32.5, and upstream) does NOT call .close for connections
# still open when it quits ("Don't call the plugin again if quit has
# been set", server/connections.c free_connection); only .cleanup and
# .unload run, so rbdx must close such connections there.  A handle left
# open leaves its watch for osd_client_watch_timeout (30 s) and the
# exclusive lock with a dead owner: `rbd rm` fails and the next writer
# stalls meanwhile (this test fails with rbdx before commit 5ba6148).
# Found with `nbdkit -r --run 'qemu-io ...'` where qemu-io gave up in
# the handshake and nbdkit quit before the connection was closed.
# Covers: plugin lifecycle (rbdx.c file comment; nbdkit-plugin(3)
# ".cleanup"); case C03's "no rbdx lock or watcher left".
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/clients/common.sh"
requires_cluster
requires nbdsh

d=$(tmpdir)
# On failure, let the client go at once (it would stay up to 30 s).
trap 'rc=$?; set +e; touch "$d/go"; (exit $rc); _cleanup' EXIT
img=$(new_image 8M)    # default features: exclusive-lock
serve "$d/sock" -v -- "$img" 2>"$d/nbdkit.log"
# diag: what rbdx opened and closed (nbdkit -v), for a failure message.
diag() { grep -E 'rbdx: (open|opened|close|get_ready|cleanup|.*writer)|connection' "$d/nbdkit.log" >&2 || true; }
u=$(uri "$d/sock")

locks() { rbd lock ls --format json "$img" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }

say "a client writes (taking the exclusive lock) and stays connected"
nbdsh -u "$u" -c "
h.pwrite(b'\x5a' * 4096, 0)
h.flush()
open('$d/ready', 'w').close()
# Stay connected until told to go (or the test is gone), at most 30 s.
import os, time
end = time.time() + 30
while (time.time() < end and not os.path.exists('$d/go')
       and os.getppid() == $$):
    time.sleep(0.05)
" &
client=$!
for i in $(seq 200); do
  [ -e "$d/ready" ] && break
  kill -0 $client 2>/dev/null || fail "the client exited early"
  sleep 0.05
done
[ -e "$d/ready" ] || fail "the client did not write within 10 s"
w=$(watchers "$img"); l=$(locks)
# The connection's own handle, and with writers=shared (the default on
# an exclusive-lock image) the export's shared writer too.
[ "$w" -ge 1 ] || { rbd status "$img" >&2; diag; fail "no watcher while the client is connected"; }
[ "$l" = 1 ] || { rbd lock ls "$img" >&2; fail "$l locks while the client is connected, expected the exclusive lock"; }

say "SIGTERM nbdkit with the client connected, then the client goes"
# nbdkit 1.32.5 does not cut connections on SIGTERM: it waits for the
# clients to go.  The client must leave only after nbdkit has seen the
# signal, i.e. once nbdkit's main thread has left poll(2) on its
# listening socket (it then waits for the connection threads):
# /proc/PID/syscall names the system call a thread is blocked in.
pid=$SERVER_PID
before=$(cut -d' ' -f1 /proc/$pid/syscall)
kill "$pid"
for i in $(seq 100); do
  [ "$(cut -d' ' -f1 /proc/$pid/syscall 2>/dev/null)" != "$before" ] && break
  sleep 0.05
done
touch "$d/go"
wait $client || fail "the client failed"
stop_server "$d/sock"
kill -0 "$pid" 2>/dev/null && fail "nbdkit did not exit after its client left"

# A closed image drops its watch at once; allow 3 s for the OSD.
end=$((SECONDS + 3))
while :; do
  w=$(watchers "$img"); l=$(locks)
  [ "$w" = 0 ] && [ "$l" = 0 ] && break
  [ $SECONDS -lt $end ] || break
  sleep 0.1
done
if [ "$w" != 0 ] || [ "$l" != 0 ]; then
  rbd status "$img" >&2; rbd lock ls "$img" >&2; diag
  fail "after nbdkit exited: $w watcher(s), $l lock(s) left on $img (the connection's image was never closed)"
fi
say "ok"

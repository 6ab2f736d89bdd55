#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ceph_context= (include/rbdx/cct.h): the connections' Ceph clients on one
# Ceph context, where Ceph has the fix of its configuration observer
# deadlock (https://github.com/ceph/ceph/pull/53568: 17.2.8, 18.2.4, 19+).
#
# Where it has (Ceph 18.2.7, Debian 13), for nbdkit rbdx and the built-in
# engine: ceph_context=auto puts 4 connections on one context (one "log"
# thread, the context's own; the image has no exclusive-lock, so no
# shared writer); then with ceph_context=shared and an admin socket,
# 4 threads each open a connection, read 3 blocks, check them and close
# it, 25 times, while another loop runs `ceph config set client
# rados_osd_op_timeout` (an option every client's Objecter observes, so
# each push notifies the observers that connects and shutdowns add and
# remove).  Every cycle must end within 60 s (else the server's threads'
# backtraces are printed, gdb permitting, and the test fails); then a
# pushed value must show in the shared context (admin socket
# `config get`) within 60 s.
#
# Where it has not (Ceph 16.2.15, Debian 12): ceph_context=shared is a
# start-up error naming the fault, for both front ends, and
# ceph_context=auto gives each of 4 connections a context (4 "log"
# threads).
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires ceph
requires_python_nbd

auto=$(nbdkit "$RBDX_PLUGIN" --dump-plugin | sed -n 's/^rbdx_ceph_context_auto=//p')
release=$(nbdkit "$RBDX_PLUGIN" --dump-plugin | sed -n 's/^rbdx_ceph_release=//p')
say "Ceph $release: ceph_context=auto is '$auto'"
case "$auto" in shared|connection) ;; *) fail "--dump-plugin: rbdx_ceph_context_auto='$auto'" ;; esac

img=$(new_image 16M --image-feature layering)
dir=$(tmpdir)

# contexts SOCK PID WANT KIND: with 4 connections open, the server has WANT
# Ceph contexts ("log" threads: one per CephContext), and every connection
# reads what a first one wrote.
contexts() {
  /usr/bin/python3 - "$@" <<'PY' || fail "$4: see above"
import nbd, sys
from rbdxtest import threads_named
sock, pid, want, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def logs():
    return threads_named(pid, "log")
hs = []
for i in range(4):
    h = nbd.NBD()
    h.connect_unix(sock)
    hs.append(h)
hs[0].pwrite(b"\x5a" * 4096, 0)
hs[0].flush()
for j, h in enumerate(hs):
    if h.pread(4096, 0) != b"\x5a" * 4096:
        sys.exit(f"{kind}: connection {j} reads wrong data")
n = logs()
print(f"{kind}: 4 connections, {n} Ceph contexts", file=sys.stderr)
if n != want:
    sys.exit(f"{kind}: {n} Ceph contexts for 4 connections, expected {want}")
for h in hs:
    h.shutdown()
PY
}

# refused KIND COMMAND...: a start-up error naming the fault.
refused() {
  local kind=$1 out
  shift
  out=$("$@" 2>&1) && fail "$kind: ceph_context=shared was accepted on Ceph $release"
  grep -q "ceph_context=shared" <<<"$out" && grep -q "ceph/ceph/pull/53568" <<<"$out" ||
    fail "$kind: the refusal does not name the parameter and the fault: $out"
}

engine=$RBDX_BUILD/server/rbdx-engine
[ -x "$engine" ] || say "no rbdx-engine built: engine part not run"

if [ "$auto" = connection ]; then
  refused nbdkit nbdkit -U - "$RBDX_PLUGIN" "$img" ceph_context=shared --run true
  if [ -x "$engine" ]; then
    refused engine timeout 60 "$engine" --oldstyle "$dir/r.sock" "$img" ceph_context=shared
  fi
  serve "$dir/a.sock" -- "$img"
  contexts "$dir/a.sock" "$SERVER_PID" 4 "nbdkit auto"
  stop_server "$dir/a.sock"
  if [ -x "$engine" ]; then
    serve_engine "$dir/ea.sock" "$img"
    contexts "$dir/ea.sock" "$SERVER_PID" 4 "engine auto"
    stop_server "$dir/ea.sock"
  fi
  say "Ceph $release: auto is a context per connection, shared is refused"
  exit 0
fi

# The pushed option goes on every exit path.
at_exit "ceph config rm client rados_osd_op_timeout >/dev/null 2>&1 || true"

# churn SOCK PID ASOK KIND
churn() {
  /usr/bin/python3 - "$@" <<'PY' || fail "$4: see above${1:+ $(tail -n 30 "$1.log" 2>/dev/null)}"
import json, nbd, os, random, rados, shutil, subprocess, sys, threading, time
sock, pid, asok, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
WORKERS, CYCLES, DEADLINE = 4, 25, 60.0
done = [0] * WORKERS
last = [time.monotonic()] * WORKERS
errors = []
stop = threading.Event()

def expect(off):
    return b"\x5a" * 4096 if off == 0 else b"\0" * 4096

def worker(w):
    try:
        for c in range(CYCLES):
            h = nbd.NBD()
            h.connect_unix(sock)
            for off in (0, random.randrange(1, 4096) * 4096, 8192):
                if h.pread(4096, off) != expect(off):
                    raise RuntimeError(f"cycle {c}: wrong data at {off}")
            h.shutdown()
            done[w] += 1
            last[w] = time.monotonic()
    except Exception as e:
        errors.append(f"worker {w}: {e}")

def pusher():
    # librados' mon_command: a push every few ms, not a CLI start each.
    cl = rados.Rados(conffile=os.environ["CEPH_CONF"])
    cl.connect(timeout=30)
    i = 0
    while not stop.is_set():
        r, _, e = cl.mon_command(json.dumps({
            "prefix": "config set", "who": "client",
            "name": "rados_osd_op_timeout", "value": str(600 + i % 2)}), b"",
            timeout=60)
        if r != 0:
            errors.append(f"config set: {r} {e}")
            break
        i += 1
        stop.wait(0.02)
    cl.shutdown()
    pushes.append(i)

pushes = []
ts = [threading.Thread(target=worker, args=(w,), daemon=True) for w in range(WORKERS)]
p = threading.Thread(target=pusher, daemon=True)
p.start()
for t in ts:
    t.start()
while any(t.is_alive() for t in ts):
    time.sleep(0.5)
    now = time.monotonic()
    stuck = [w for w in range(WORKERS) if ts[w].is_alive() and now - last[w] > DEADLINE]
    if stuck:
        print(f"{kind}: HANG: workers {stuck} finished no cycle for {DEADLINE:.0f} s "
              f"(cycles done: {done}); the server's threads:", file=sys.stderr)
        if shutil.which("gdb"):
            subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex",
                            "thread apply all bt"], stderr=subprocess.STDOUT,
                           timeout=120)
        else:
            for t in sorted(os.listdir(f"/proc/{pid}/task")):
                try:
                    comm = open(f"/proc/{pid}/task/{t}/comm").read().strip()
                    wchan = open(f"/proc/{pid}/task/{t}/wchan").read().strip()
                except OSError:
                    continue
                print(f"  {t} {comm} {wchan}", file=sys.stderr)
        os._exit(1)
stop.set()
p.join(timeout=150)
if errors:
    sys.exit(f"{kind}: " + "; ".join(errors))
print(f"{kind}: {sum(done)} connect/read/close cycles from {WORKERS} threads, "
      f"{pushes[0] if pushes else '?'} config pushes, no stall", file=sys.stderr)
if not pushes or pushes[0] < 1:
    sys.exit(f"{kind}: no config push ran during the churn")

# A pushed value reaches the shared context.
subprocess.run(["ceph", "config", "set", "client", "rados_osd_op_timeout", "777"],
               check=True, capture_output=True)
h = nbd.NBD()
h.connect_unix(sock)       # a client on the context to receive it
end = time.monotonic() + 60
while True:
    r = subprocess.run(["ceph", "--admin-daemon", asok, "config", "get",
                        "rados_osd_op_timeout"], capture_output=True, text=True)
    if '"777"' in r.stdout:
        break
    if time.monotonic() > end:
        sys.exit(f"{kind}: the shared context never got rados_osd_op_timeout=777: "
                 f"{r.stdout} {r.stderr}")
    time.sleep(0.2)
h.shutdown()
print(f"{kind}: a monitor push reaches the shared context", file=sys.stderr)
PY
}

serve "$dir/a.sock" -- "$img"
contexts "$dir/a.sock" "$SERVER_PID" 1 "nbdkit auto"
stop_server "$dir/a.sock"
serve "$dir/s.sock" -- "$img" ceph_context=shared "ceph.admin_socket=$dir/s.asok"
churn "$dir/s.sock" "$SERVER_PID" "$dir/s.asok" "nbdkit shared"
stop_server "$dir/s.sock"

if [ -x "$engine" ]; then
  serve_engine "$dir/ea.sock" "$img"
  contexts "$dir/ea.sock" "$SERVER_PID" 1 "engine auto"
  stop_server "$dir/ea.sock"
  serve_engine "$dir/es.sock" "$img" ceph_context=shared "ceph.admin_socket=$dir/es.asok"
  churn "$dir/es.sock" "$SERVER_PID" "$dir/es.asok" "engine shared"
  stop_server "$dir/es.sock"
fi
say "Ceph $release: one Ceph context per server, no hang under churn and config pushes"

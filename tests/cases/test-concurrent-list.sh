#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# NBD_OPT_LIST from many clients at once in pool mode (tests/README.md,
# "Related tests").  Each pool-mode listing needs a Ceph client; listers
# used to make one each, all at once and outside max_connections=, and
# their export descriptions were interned in nbdkit's process-wide list
# without a lock (.list_exports runs before the connection has a
# context), which corrupted the heap (double free, SIGSEGV).
# Asserts, with pool=rbd/NS max_connections=4 and 12 images in NS:
#   - 16 threads x 8 listings each (connect, NBD_OPT_LIST, NBD_OPT_ABORT)
#     all succeed and each returns exactly the 12 names;
#   - the server (same PID) survives, and its thread count stays below
#     the listers' connection threads plus two Ceph clients' worth
#     (RBDX_CONN_THREADS = 16 each) throughout (23 measured; 123-143,
#     a client per lister, before);
#   - a listing is counted as a connection: with max_connections=1 and a
#     connection open, NBD_OPT_LIST is refused and the log names
#     max_connections=; once it is closed, listing works again;
#   - an image still opens (NBD_OPT_GO) after the flood.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires_python_nbd

listers=16 rounds=8 nimages=12
ns="cl-$$"
rbd namespace create "rbd/$ns"
at_exit "rbd namespace remove 'rbd/$ns' >/dev/null 2>&1"
names=()
for i in $(seq "$nimages"); do
  names+=("rbd/$ns/img-$i")
done
at_exit "for img in ${names[*]}; do rbd rm --no-progress \$img >/dev/null 2>&1; done"
for nm in "${names[@]}"; do
  rbd create --no-progress --size 1M "$nm"
done

d=$(tmpdir)
serve "$d/s.sock" -f -- pool="rbd/$ns" max_connections=4 2>"$d/log"
pid=$SERVER_PID
say "$listers listers x $rounds rounds against nbdkit $pid"
/usr/bin/python3 - "$d/s.sock" "$pid" "$listers" "$rounds" "${names[@]}" <<'PY' ||
import os, sys, threading
import nbd

sock, pid, listers, rounds = sys.argv[1], int(sys.argv[2]), \
    int(sys.argv[3]), int(sys.argv[4])
want = sorted(sys.argv[5:])
bound = listers + 2 * 16 + 8   # connection threads, 2 clients, nbdkit's own
errors, most = [], [0]
lock = threading.Lock()

def threads():
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0

def lister(k):
    for r in range(rounds):
        got = []
        try:
            h = nbd.NBD()
            h.set_opt_mode(True)
            h.connect_unix(sock)
            h.opt_list(lambda name, desc: got.append(name) or 0)
            h.opt_abort()
        except Exception as e:
            with lock:
                errors.append(f"lister {k} round {r}: {e}")
            continue
        n = threads()
        with lock:
            most[0] = max(most[0], n)
            if sorted(got) != want:
                errors.append(f"lister {k} round {r}: listed {sorted(got)}")

ts = [threading.Thread(target=lister, args=(k,)) for k in range(listers)]
for t in ts:
    t.start()
for t in ts:
    t.join()
if errors:
    sys.exit(f"{len(errors)} of {listers * rounds} listings failed: "
             + "; ".join(errors[:3]))
if not os.path.exists(f"/proc/{pid}"):
    sys.exit(f"the server (pid {pid}) died")
if most[0] > bound:
    sys.exit(f"the server had {most[0]} threads (bound {bound})")
print(f"{listers * rounds} listings, every one of {len(want)} names; "
      f"at most {most[0]} threads (bound {bound})", file=sys.stderr)
PY
  fail "concurrent listings: $(tail -n 5 "$d/log")"
kill -0 "$pid" 2>/dev/null || fail "nbdkit $pid died: $(tail -n 5 "$d/log")"
! grep -Eqi 'double free|corrupt|invalid (size|pointer)|segfault' "$d/log" ||
  fail "the server's log shows heap corruption: $(grep -Ei 'free|corrupt|invalid' "$d/log" | head -n 3)"

# An image still opens after the flood.
got=$(nbdsh -u "$(uri "$d/s.sock" "img-1")" -c 'print(h.get_size())') ||
  fail "img-1 does not open after the listings"
[ "$got" = 1048576 ] || fail "img-1 opened with $got bytes, expected 1048576"
stop_server "$d/s.sock"

# A listing counts as a connection of max_connections=.
serve "$d/one.sock" -f -- pool="rbd/$ns" max_connections=1 2>"$d/one.log"
/usr/bin/python3 - "$d/one.sock" "$nimages" <<'PY' ||
import sys
import nbd

sock, n = sys.argv[1], int(sys.argv[2])

def listing():
    got = []
    h = nbd.NBD()
    h.set_opt_mode(True)
    h.connect_unix(sock)
    try:
        h.opt_list(lambda name, desc: got.append(name) or 0)
    finally:
        h.opt_abort()
    return got

held = nbd.NBD()
held.set_export_name("img-2")
held.connect_unix(sock)
try:
    listing()
    sys.exit("NBD_OPT_LIST succeeded with max_connections=1 in use")
except nbd.Error:
    pass
held.shutdown()
del held
# .close gives the connection back after the client has gone.
for attempt in range(100):
    try:
        got = listing()
        break
    except nbd.Error:
        import time
        time.sleep(0.1)
else:
    sys.exit("NBD_OPT_LIST still refused 10 s after the connection closed")
if len(got) != n:
    sys.exit(f"listed {len(got)} names, expected {n}")
PY
  fail "listing against max_connections=1: $(tail -n 5 "$d/one.log")"
grep -q 'NBD_OPT_LIST refused.*max_connections=1 reached' "$d/one.log" ||
  fail "the refused listing is not logged naming max_connections=: $(tail -n 5 "$d/one.log")"
say "listings are bounded and counted; the server survived"

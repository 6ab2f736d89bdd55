#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rbd-nbd-shim: Ceph's rbd-nbd, with tests/bench/rbd-nbd-shim.so preloaded,
# serves one NBD client on a Unix socket without a kernel NBD driver, the
# way tests/bench/run drives it (system rbd-nbd-c1).
#
# Proves, against the sandbox cluster:
# - connections that hang up, or send only NBD_CMD_DISC, before any other
#   request (fio's nbd engine probes the size that way first) do not use up
#   rbd-nbd's one connection;
# - qemu-io's writes (aligned, unaligned, across the 4 MiB object boundary,
#   up to the last byte) reach the image: `rbd export` gives exactly the
#   expected bytes; then rbd-nbd exits 0 by itself after the client's
#   NBD_CMD_DISC, removes the socket and leaves no watcher or lock;
# - a second rbd-nbd reads the same bytes back through libnbd (nbdsh),
#   which sees the oldstyle handshake, the image's size and rbd-nbd's flags
#   (flush and trim, no multi-conn);
# - SIGTERM before any client: rbd-nbd exits, the socket is gone, the image
#   is released.
# Every rbd-nbd is stopped by its PID at exit if it is still running.
. "${RBDX_TESTS:-$(dirname "$0")/..}/lib.sh"
requires_cluster
requires rbd-nbd qemu-io nbdsh cmp python3

shim=$RBDX_BUILD/tests/bench/rbd-nbd-shim.so
[ -r "$shim" ] || fail "shim not built: $shim"

d=$(tmpdir)
M=$((1024 * 1024))
# A multiple of 512 (rbd-nbd checks the size in 512-byte sectors, as the
# kernel reports it), but not of the 4 MiB object size.
size=$((10 * M + 512))
img=$(new_image "${size}B")
rbd_nbd_pids=()

stop_rbd_nbd() {
  local p
  for p in "${rbd_nbd_pids[@]}"; do
    kill "$p" 2>/dev/null || continue
    wait_for 10 exited "$p" || kill -9 "$p" 2>/dev/null
  done
}
at_exit stop_rbd_nbd

# start_rbd_nbd NAME: rbd-nbd under the shim on $d/NAME.sock, log in
# $d/NAME.log; sets RBD_NBD_PID once the socket exists (= ready).
start_rbd_nbd() {
  local sock=$d/$1.sock
  RBD_NBD_SHIM_SOCKET=$sock LD_PRELOAD=$shim \
    rbd-nbd -d map "$img" >"$d/$1.out" 2>"$d/$1.log" &
  RBD_NBD_PID=$!
  rbd_nbd_pids+=("$RBD_NBD_PID")
  if ! wait_for 60 test -S "$sock"; then
    tail -n 20 "$d/$1.log" >&2
    fail "$1: rbd-nbd did not listen on $sock within 60 s"
  fi
  kill -0 "$RBD_NBD_PID" || fail "$1: rbd-nbd exited at start"
}

# wait_exit NAME PID: rbd-nbd PID exits with status 0 within 30 s.
wait_exit() {
  local rc=0
  wait_for 30 exited "$2" || fail "$1: rbd-nbd $2 still runs 30 s later"
  wait "$2" || rc=$?
  [ "$rc" -eq 0 ] || { tail -n 20 "$d/$1.log" >&2; fail "$1: rbd-nbd exit status $rc"; }
  [ ! -e "$d/$1.sock" ] || fail "$1: the shim left its socket behind"
}

say "expected content: 0x5e everywhere, then qemu-io's patterns"
pattern_file "$d/expected" "$size" 5e
args=(-c "write -P 0x5e 0 $size")
writes=(
  "0 512 a1"                      # aligned start
  "1 1 a2"                        # one byte, unaligned
  "65537 3000 a3"                 # unaligned offset and length
  "$((4 * M - 100)) 200 a4"       # straddles the 4 MiB object boundary
  "$((8 * M - 1)) $((M + 2)) a5"  # object boundary, > 1 MiB, unaligned
  "$((size - 1)) 1 a6"            # the last byte
)
for w in "${writes[@]}"; do
  set -- $w
  args+=(-c "write -P 0x$3 $1 $2")
  put_pattern "$d/expected" "$1" "$2" "$3"
done
args+=(-c flush)

start_rbd_nbd write
pid=$RBD_NBD_PID
u="nbd+unix:///?socket=$d/write.sock"
say "two probes: hang up after the handshake; NBD_CMD_DISC only"
python3 - "$u" "$size" <<'PY' || fail "the probe connections failed"
import sys, nbd
uri, size = sys.argv[1], int(sys.argv[2])
h = nbd.NBD()
h.connect_uri(uri)
assert h.get_size() == size, h.get_size()
del h                         # nbd_close: hang up, as fio's size probe
h = nbd.NBD()
h.connect_uri(uri)
h.shutdown()                  # NBD_CMD_DISC and nothing else
del h
PY
kill -0 "$pid" || fail "rbd-nbd exited after the probes"
say "qemu-io writes through rbd-nbd"
qemu-io -f raw "${args[@]}" "$u" >"$d/qemu-io.log" ||
  { cat "$d/qemu-io.log" "$d/write.log" >&2; fail "qemu-io writes failed"; }
wait_exit write "$pid"
grep -q "after 2 connection(s) without requests" "$d/write.log" ||
  { cat "$d/write.log" >&2; fail "the shim did not report the two probes"; }
released "$img" "rbd-nbd exited after the client's disconnect" 10

say "rbd export: the image holds exactly what qemu-io wrote"
rbd export --no-progress "$img" "$d/exported" >/dev/null
cmp "$d/expected" "$d/exported" || fail "rbd export differs from what was written"

say "a second rbd-nbd: libnbd reads the same bytes back"
start_rbd_nbd read
pid=$RBD_NBD_PID
nbdsh -u "nbd+unix:///?socket=$d/read.sock" -c "
import sys
assert h.get_protocol() == 'oldstyle', h.get_protocol()
assert h.get_size() == $size, h.get_size()
assert h.can_flush() and h.can_trim() and not h.can_multi_conn()
assert not h.is_read_only()
want = open('$d/expected', 'rb').read()
got = b''.join(h.pread(min(4 << 20, $size - o), o)
               for o in range(0, $size, 4 << 20))
assert got == want, 'read back differs'
h.shutdown()
" || fail "nbdsh through rbd-nbd failed"
wait_exit read "$pid"
released "$img" "the second rbd-nbd exited" 10

say "SIGTERM before any client"
start_rbd_nbd term
pid=$RBD_NBD_PID
kill -TERM "$pid"
wait_for 30 exited "$pid" || fail "rbd-nbd ignored SIGTERM for 30 s"
wait "$pid" || true
[ ! -e "$d/term.sock" ] || fail "SIGTERM: the shim left its socket behind"
grep -q "rbd-nbd stopped before a client sent a request" "$d/term.log" ||
  { cat "$d/term.log" >&2; fail "SIGTERM: the shim did not stop serving"; }
released "$img" "rbd-nbd was stopped by SIGTERM" 10
say "ok"

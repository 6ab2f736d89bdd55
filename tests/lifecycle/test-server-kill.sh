#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The server is killed (SIGKILL) while 4 connections write, then started
# again on the same image.  Every write acknowledged before the kill must
# read back (cache off: an acknowledged write is on the OSDs), and the new
# server must take the exclusive lock from its dead predecessor without
# manual steps: librbd asks the owner, which no longer answers, and
# breaks its lock once its watch has expired (about 30 s), or the write
# fails with a clear error in bounded time, never a hang.
# Asserts, on a default-feature image (shared writer, exclusive-lock):
#   - the writers record each acknowledged 4 KiB block (offset and its
#     own pattern); after the kill and a restart every one reads back;
#   - a write through the new server succeeds within 90 s (about 30 s
#     here: librbd breaks the dead owner's lock after its watch expired),
#     and once that connection closed no lock or watch of the dead server
#     is left.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires nbdsh

d=$(tmpdir)
img=$(new_image 64M)
serve "$d/s.sock" -- "$img"
first=$SERVER_PID
u=$(uri "$d/s.sock")

# Four writers, each its own connection and 16 MiB region, 4 KiB blocks
# whose every byte is (block number % 251) + 1; each acknowledged block is
# appended to its log (the write returned, so the server acknowledged it).
for w in 0 1 2 3; do
  nbdsh -u "$u" -c - >"$d/w$w.out" 2>&1 <<PY &
import os
log = open("$d/acked.$w", "a", buffering=1)
base = $w * (16 << 20)
for i in range(4096):
    off = base + i * 4096
    blk = off // 4096
    h.pwrite(bytes([blk % 251 + 1]) * 4096, off)
    log.write("%d\n" % off)
PY
done
acked() { [ "$(cat "$d"/acked.* 2>/dev/null | wc -l)" -ge 400 ]; }
wait_for 60 acked || fail "the writers did not get 400 writes acknowledged"
kill -9 "$first"
wait
n=$(cat "$d"/acked.* | wc -l)
say "killed the server after $n acknowledged writes"
rm -f "$d/s.sock" "$d/s.sock.pid"

serve "$d/s.sock" -- "$img"
cat "$d"/acked.* >"$d/acked"
nbdsh -u "$u" -c - <<PY || fail "an acknowledged write did not survive the kill"
bad = 0
for line in open("$d/acked"):
    off = int(line)
    want = bytes([off // 4096 % 251 + 1]) * 4096
    if h.pread(4096, off) != want:
        bad += 1
        print("lost: block at", off)
assert bad == 0, "%d acknowledged writes lost" % bad
print("all", sum(1 for _ in open("$d/acked")), "acknowledged writes read back")
PY

say "the new server takes the lock of its dead predecessor"
t0=$SECONDS
timeout 90 nbdsh -u "$u" -c 'h.pwrite(b"\x77" * 4096, 60 << 20); h.flush()' ||
  fail "no write through the restarted server within 90 s"
say "first write after the restart took $((SECONDS - t0)) s"
# The dead server's lock was broken, the new one's released with its
# last connection: nothing is left.
released "$img" "after the restarted server's connection closed" 10

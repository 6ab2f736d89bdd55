#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C70 (tests/README.md): a served image with snapshot-based
# mirroring is demoted and promoted again (a planned failover and
# failback) while connection A stays open; default features, so the
# writes go through the shared writer.
# Asserts (nbdkit, and rbdx-engine):
#   - A writes before the demote; after `rbd mirror image demote` its
#     write fails (NBD_EPERM: the image is non-primary, read-only);
#   - after `rbd mirror image promote`, a new connection B writes and
#     flushes, and its data is on the image (`rbd export`), while A is
#     still connected;
#   - A writes again (case C78: librbd kept the handle A's writes went
#     through read-only after the promote, and A's writes failed for as
#     long as A stayed): tried every 0.2 s, a write of A succeeds within
#     20 s (rbdx has the handle refreshed at most once a second while
#     its writes fail so), flushes, and its data is on the image;
#   - A is still alive.
# And an image already non-primary when the server starts (nbdkit and
# the engine): an error-level line at start says so and names the
# promote; a write fails with NBD_EPERM; after the promote a new
# connection writes, and so does the first connection again.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster

pool=${RBDX_POOL:-rbd}
rbd mirror pool enable "$pool" image >/dev/null 2>&1 ||
  skip "rbd mirror pool enable $pool image failed: no mirroring here"

n=0

# writes_after_promote IMAGE URI: a new connection B writes and flushes,
# and its data is on IMAGE.
writes_after_promote() {
  client_start B "$2"
  client_do B write 8192 4096 bb
  client_do B flush
  [ "$(bytes_at "$1" 8192)" = "bb " ] ||
    fail "B's write after the promote is not on the image: $(bytes_at "$1" 8192)"
}

# writes_again NAME IMAGE OFFSET BYTE: connection NAME, whose writes
# failed while IMAGE was non-primary, writes 4 KiB of BYTE at OFFSET
# within 20 s of the promote, tried every 0.2 s, flushes, and the data
# is on IMAGE.
writes_again() {
  local i ans
  for i in $(seq 100); do
    ans=$(client_try "$1" write "$3" 4096 "$4")
    [ "$ans" = ok ] && break
    case $ans in
      *EPERM*) sleep 0.2 ;;
      *) fail "$1's write after the promote: $ans" ;;
    esac
  done
  [ "$ans" = ok ] || fail "$1 still cannot write 20 s after the promote: $ans"
  client_do "$1" flush
  [ "$(bytes_at "$2" "$3")" = "$4 " ] ||
    fail "$1's write after the promote is not on the image: $(bytes_at "$2" "$3")"
}

failback() {
  local img sock u
  n=$((n + 1))
  img=$(new_image 16M)
  rbd mirror image enable "$img" snapshot >/dev/null ||
    fail "rbd mirror image enable $img snapshot failed"
  sock="$MC_DIR/s$n.sock"
  say "${1:-nbdkit}: demote and promote of a served image"
  serve_via "${1:-nbdkit}" "$sock" rw -- "$img"
  u=$(uri "$sock")
  client_start A "$u"
  client_do A write 0 4096 aa
  client_do A flush
  at_exit "rbd mirror image promote --force $img >/dev/null 2>&1"
  rbd mirror image demote "$img" >/dev/null || fail "demote failed"
  client_do A writeerr 4096 4096 ab EPERM
  rbd mirror image promote "$img" >/dev/null || fail "promote failed"
  writes_after_promote "$img" "$u"
  writes_again A "$img" 4096 ac
  [ "$(bytes_at "$img" 0)" = "aa " ] || fail "A's write before the demote is gone"
  client_do A alive
  client_stop B
  client_stop A
  stop_server "$sock"
}

# served_demoted [engine]: the image is non-primary before it is served.
served_demoted() {
  local img sock u log
  n=$((n + 1))
  img=$(new_image 16M)
  rbd mirror image enable "$img" snapshot >/dev/null ||
    fail "rbd mirror image enable $img snapshot failed"
  # Hooks run before the images are removed (a non-primary one cannot be).
  at_exit "rbd mirror image promote --force $img >/dev/null 2>&1"
  rbd mirror image demote "$img" >/dev/null || fail "demote failed"
  sock="$MC_DIR/s$n.sock"
  log="$sock.log"
  say "${1:-nbdkit}: an image served while non-primary"
  serve_via "${1:-nbdkit}" "$sock" rw -- "$img"
  grep -q "is a non-primary mirrored image: its writes fail with EPERM until .rbd mirror image promote." "$log" ||
    fail "nothing at start says $img is non-primary: $(cat "$log")"
  [ "${1:-}" = engine ] || grep -q "error: rbdx: .*non-primary" "$log" ||
    fail "the non-primary image is not said at error level: $(cat "$log")"
  u=$(uri "$sock")
  client_start A "$u"
  client_do A writeerr 0 4096 aa EPERM
  rbd mirror image promote "$img" >/dev/null || fail "promote failed"
  writes_after_promote "$img" "$u"
  writes_again A "$img" 0 ac
  client_do A alive
  client_stop B
  client_stop A
  stop_server "$sock"
}

failback
failback engine
served_demoted
served_demoted engine
say "ok"

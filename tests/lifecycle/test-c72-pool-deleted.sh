#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C72 (tests/README.md): the pool of a served image is deleted
# (`ceph osd pool delete`) while connection A stays open; through nbdkit
# and rbdx-engine.
# Asserts:
#   - once a read of A fails, it fails with NBD_EIO (the cluster says
#     EPERM; NBD_EPERM would tell the client it may not read), and so
#     do the reads and the block status that follow;
#   - A's writes fail with NBD_EIO too (the OSD's EPERM is no fault of
#     the client's);
#   - the failure is logged at error level (no -v), A stays connected.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
requires ceph

n=0
# read_fails NAME: one read of 4096 bytes at 0 has failed; any other
# answer than success or the failure wanted ends the test.
read_fails() {
  local r
  r=$(client_try A readerr 0 4096 EIO)
  case $r in
    ok) return 0 ;;
    *"succeeded"*) return 1 ;;
    *) fail "A's read after the pool was deleted: ${r#err }" ;;
  esac
}

deleted() {
  local pool sock u
  n=$((n + 1))
  pool="t-c72-$$-$n"
  at_exit "ceph osd pool rm $pool $pool --yes-i-really-really-mean-it >/dev/null 2>&1"
  ceph osd pool create "$pool" 8 >/dev/null 2>&1 || fail "ceph osd pool create $pool failed"
  timeout 60 rbd pool init "$pool" || fail "rbd pool init $pool failed"
  rbd create --no-progress --size 16M "$pool/img" || fail "rbd create failed"
  sock="$MC_DIR/s$n.sock"
  say "${1:-nbdkit}: the pool of a served image is deleted"
  serve_via "${1:-nbdkit}" "$sock" rw -- "$pool/img"
  u=$(uri "$sock")
  client_start A "$u"
  client_do A write 0 4096 aa
  client_do A flush
  client_do A read 0 4096 aa
  ceph osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1 ||
    fail "ceph osd pool rm $pool failed"
  wait_for 60 read_fails ||
    fail "A still reads its data 60 s after its pool was deleted"
  client_do A readerr 8192 4096 EIO
  [ "${1:-}" = engine ] || client_do A bserr 0 65536 EIO
  client_do A writeerr 4096 4096 ab EIO
  client_do A alive
  client_stop A
  stop_server "$sock"
  grep -q "error: .*read of 4096 bytes at offset 0 failed" "$sock.log" ||
    grep -q "rbdx: $pool/img: read of 4096 bytes at offset 0 failed" "$sock.log" ||
    fail "the failed read is not logged: $(tail -5 "$sock.log")"
}

deleted
deleted engine
say "ok"

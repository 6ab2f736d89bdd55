#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C79 (tests/README.md): a clone of a clone.  P holds 16 MiB of
# 0x11; M is a clone of P@p, G a clone of M@m, neither written.  G is
# served and three readers read it all over; then `rbd flatten M` (P's
# data copied into M), `rbd snap unprotect P@p`, `rbd snap rm P@p` and
# `rbd rm P` delete P's objects, which G's handle, keeping the chain of
# its open, would read as zeros.  Or `rbd migration prepare P P-new`,
# `execute` and `commit --force`, which deletes P after M is linked to
# P-new.
# Asserts, through nbdkit and rbdx-engine, with the admin id (a handle
# with a header watch) and with a cephx id that may not write (no
# watch, -r / --readonly):
#   - every read of each reader returned 0x11 or failed with NBD_EIO
#     (none returned zeros or anything else), and each ended with 50
#     EIOs in a row;
#   - the change is logged ("was flattened or removed");
#   - a new connection reads 0x11 at 0 and at 12 MiB.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
. "$RBDX_TESTS/lifecycle/readers.sh"
requires_cluster
requires ceph nbdsh

d=$(tmpdir)
ro="c79ro$$"
readonly_id "$ro" "$d/ro.keyring"
pattern_file "$d/parent" 16M 11
n=0

# grandchild FRONT rw|ro [migrate]
grandchild() {
  local p m g sock
  local -a ids=()
  n=$((n + 1))
  p=$(new_image 16M)
  import_into "$p" "$d/parent"
  rbd snap create --no-progress "$p@p" >/dev/null 2>&1 &&
    rbd snap protect "$p@p" || fail "cannot snapshot $p"
  m="$p-m" g="$p-g"
  rbd clone "$p@p" "$m" >/dev/null 2>&1 || fail "rbd clone of $p@p failed"
  own_image "$m"
  rbd snap create --no-progress "$m@m" >/dev/null 2>&1 &&
    rbd snap protect "$m@m" || fail "cannot snapshot $m"
  rbd clone "$m@m" "$g" >/dev/null 2>&1 || fail "rbd clone of $m@m failed"
  own_image "$g"
  sock="$d/s$n.sock"
  [ "$2" = ro ] && ids=(id="$ro" keyring="$d/ro.keyring")
  if [ "${3:-}" = migrate ]; then
    say "$1, $2: migration of the top of a served clone's chain"
  else
    say "$1, $2: flatten of the middle of a served clone's chain, then rbd rm of its top"
  fi
  serve_via "$1" "$sock" "$2" -- "$g" "${ids[@]}"
  readers_start "$d" "$(uri "$sock")" 11
  if [ "${3:-}" = migrate ]; then
    own_image "$p-new"
    rbd migration prepare "$p" "$p-new" >/dev/null 2>&1 ||
      fail "rbd migration prepare $p failed"
    rbd migration execute --no-progress "$p-new" >/dev/null 2>&1 ||
      fail "rbd migration execute failed"
    rbd migration commit --force --no-progress "$p-new" >/dev/null 2>&1 ||
      fail "rbd migration commit failed"
  else
    rbd flatten --no-progress "$m" >/dev/null 2>&1 || fail "rbd flatten $m failed"
    rbd snap unprotect "$p@p" >/dev/null 2>&1 || fail "rbd snap unprotect $p@p failed"
    rbd snap rm --no-progress "$p@p" >/dev/null 2>&1 || fail "rbd snap rm $p@p failed"
    rbd rm --no-progress "$p" >/dev/null 2>&1 || fail "rbd rm $p failed"
  fi
  readers_end "$d" "the change"
  grep -q "rbdx: .*was flattened or removed" "$sock.log" ||
    fail "the change of the chain is not logged: $(cat "$sock.log")"
  client_start B "$(uri "$sock")"
  client_do B read 0 4096 11
  client_do B read $((12 << 20)) 4096 11
  client_stop B
  stop_server "$sock"
}

grandchild nbdkit rw
grandchild nbdkit ro
grandchild nbdkit rw migrate
if [ -x "$RBDX_BUILD/server/rbdx-engine" ]; then
  grandchild engine rw
  grandchild engine ro
  grandchild engine ro migrate
fi
say "ok"

#!/usr/bin/env bash
# C03 (shared cases README): a client with 64 writes in flight (distinct
# patterns) disconnects with NBD_CMD_DISC.  A new connection to the same
# server must at once read all 64 patterns; after nbdkit exits,
# `rbd lock ls` and `rbd status` must show no lock and no watcher left.
# Run on a default-feature image (exclusive-lock: writes through the
# shared lock-owning writer) and on a layering-only image (each
# connection writes through its own handle).  Then the same with
# writers=per-connection on the exclusive-lock image.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
prog=$(test_prog multiconn/c03-disconnect-inflight)

locked=$(new_image 136M)
plain=$(new_image 136M --image-feature layering)

# check IMAGE [PLUGIN-ARGS...]
check() {
  local img=$1
  shift
  say "$img $*: 64 writes in flight, disconnect, read back"
  with_export "$img" "$@" "$prog write \$uri && $prog read \$uri" ||
    fail "C03 on $img ($*): writes in flight at the disconnect were lost"
  # nbdkit --run waits for the server to exit: nothing may be left.
  released "$img" "$img ($*): after nbdkit exited"
  rbd bench --io-type write --io-size 4096 --io-total 64K "$img" >/dev/null ||
    fail "$img: a new writer cannot write after rbdx exited"
}

check "$locked"
check "$plain"
check "$locked" writers=per-connection

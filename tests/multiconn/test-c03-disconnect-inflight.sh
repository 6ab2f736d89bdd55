#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# C03 (tests/README.md): a client with 64 writes in flight (distinct
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
dropped=0
check() {
  local img=$1 st rc=0
  shift
  st=$(tmpdir)/status
  say "$img $*: 64 writes in flight, disconnect, read back"
  with_export "$img" "$@" "$prog write \$uri $st" ||
    fail "C03 on $img ($*): the writing client failed"
  with_export "$img" "$@" "$prog read \$uri $st" || rc=$?
  case $rc in
    0) ;;
    3) dropped=$((dropped + 1)) ;;
    *) fail "C03 on $img ($*): acknowledged writes were lost" ;;
  esac
  # nbdkit --run waits for the server to exit: nothing may be left.
  released "$img" "$img ($*): after nbdkit exited"
  rbd bench --io-type write --io-size 4096 --io-total 64K "$img" >/dev/null ||
    fail "$img: a new writer cannot write after rbdx exited"
}

check "$locked"
check "$plain"
check "$locked" writers=per-connection

# Every acknowledged write was durable; if some outstanding writes were
# refused at the DISC, that is nbdkit's core (server/protocol.c answers a
# request read before NBD_CMD_DISC with ESHUTDOWN once another worker has
# processed the DISC; the plugin never sees it), not rbdx: say so and
# count the case as skipped, never as passed.
if [ "$dropped" -gt 0 ]; then
  skip "in $dropped of 3 runs nbdkit $(nbdkit --version | awk '{print $2}')" \
    "refused writes queued before NBD_CMD_DISC with ESHUTDOWN (no acknowledged" \
    "write was lost); C03 needs every outstanding request handled"
fi

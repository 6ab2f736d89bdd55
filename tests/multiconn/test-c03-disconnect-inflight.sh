#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# C03 (tests/README.md): a client with 64 writes in flight (distinct
# patterns) disconnects with NBD_CMD_DISC.  A new connection to the same
# server must at once read all 64 patterns; after nbdkit exits,
# `rbd lock ls` and `rbd status` must show no lock and no watcher left.
# Run on a default-feature image (exclusive-lock: writes through the
# shared lock-owning writer) and on a layering-only image (each
# connection writes through its own handle).  Then the same with
# writers=per-connection on the exclusive-lock image.  Each run gets a
# new image, so a refused write's region must still read as zeros.
#
# Counted as skipped, never passed, only for nbdkit's own known fault:
# writes answered with exactly NBD_ESHUTDOWN (nbdkit server/protocol.c
# answers a request read before NBD_CMD_DISC with ESHUTDOWN once another
# worker has processed the DISC), proven by the writing server's debug
# log (nbdkit -v): it saw the DISC, and none of those writes reached the
# plugin (no "pwrite ... offset=OFFSET" line for them).  Any other error,
# a write never answered, or a refused write that reached the plugin or
# changed its region fails the test.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
prog=$(test_prog multiconn/c03-disconnect-inflight)

# check FEATURES [PLUGIN-ARGS...]: FEATURES "default" or "layering".
dropped=0
evidence=()
check() {
  local features=$1 img st log rc=0 off n
  local -a opts=()
  shift
  [ "$features" = default ] || opts=(--image-feature "$features")
  img=$(new_image 136M "${opts[@]}")
  st=$(tmpdir)/status
  log=${st%/status}/nbdkit-write.log
  say "$img ($features) $*: 64 writes in flight, disconnect, read back"
  with_export -v "$img" "$@" "$prog write \$uri $st" 2>"$log" ||
    fail "C03 on $img ($*): the writing client failed: $(tail -5 "$log")"
  with_export "$img" "$@" "$prog read \$uri $st" || rc=$?
  case $rc in
    0) ;;
    3)
      # Exactly nbdkit's case?  The DISC was seen, and no refused write
      # was handed to the plugin.
      grep -q 'client sent NBD_CMD_DISC, closing connection' "$log" ||
        fail "C03 on $img ($*): writes were refused with ESHUTDOWN but" \
          "nbdkit's log shows no NBD_CMD_DISC"
      n=0
      while read -r off; do
        if grep -Eq "pwrite count=[0-9]+ offset=$off fua=" "$log"; then
          fail "C03 on $img ($*): the write at offset $off reached the" \
            "plugin and was refused with ESHUTDOWN: not nbdkit's DISC case"
        fi
        n=$((n + 1))
      done <"$st.eshutdown"
      dropped=$((dropped + 1))
      evidence+=("$n on $features $*")
      ;;
    *) fail "C03 on $img ($*): acknowledged writes were lost, or writes" \
         "were refused with other errors or never answered" ;;
  esac
  # nbdkit --run waits for the server to exit: nothing may be left.
  released "$img" "$img ($*): after nbdkit exited"
  rbd bench --io-type write --io-size 4096 --io-total 64K "$img" >/dev/null ||
    fail "$img: a new writer cannot write after rbdx exited"
}

check default
check layering
check default writers=per-connection

# Every acknowledged write was durable; the refused ones are nbdkit's
# core (the plugin never saw them), not rbdx: say so and count the case
# as skipped, never as passed.
if [ "$dropped" -gt 0 ]; then
  skip "in $dropped of 3 runs nbdkit $(nbdkit --version | awk '{print $2}')" \
    "refused writes it had read before NBD_CMD_DISC with ESHUTDOWN without" \
    "handing them to the plugin (${evidence[*]}; no acknowledged write was" \
    "lost); C03 needs every outstanding request handled"
fi

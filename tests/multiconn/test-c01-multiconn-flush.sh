#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# C01 (tests/README.md): multi-conn consistency.  A writes 4 KiB of
# 0xAA at 0, B reads, A flushes, B must read 0xAA; variant: write on A,
# flush on B, read on C; plus FUA and WRITE_ZEROES, repeated at 8 offsets
# in different objects (c01-multiconn-flush.c).
# Run where rbdx advertises multi-conn (NBD doc/proto.md
# NBD_FLAG_CAN_MULTI_CONN), each asserting nbd_can_multi_conn is true:
#   layering-only image (no exclusive-lock): writers=auto, per-connection,
#   shared; default-feature image (exclusive-lock): writers=auto (= shared)
#   and writers=shared.
# And where it must NOT be advertised (only FUA/flush on one connection
# are checked there): exclusive-lock image with writers=per-connection
# (rbdx's handles would pass the lock around), and ceph.rbd_cache=true
# (per-handle caches) on both kinds of image.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
prog=$(test_prog multiconn/c01-multiconn-flush)

plain=$(new_image 40M --image-feature layering)
locked=$(new_image 40M)
rbd info "$locked" | grep -q 'features:.*exclusive-lock' ||
  fail "$locked has no exclusive-lock: $(rbd info "$locked" | grep features)"

# run IMAGE EXPECT_MC [PLUGIN-ARGS...]
run() {
  local img=$1 mc=$2
  shift 2
  say "$img $* -> multi-conn $mc"
  with_export "$img" "$@" "$prog \$uri $mc" ||
    fail "C01 on $img with '$*' (expected multi-conn $mc) failed"
}

run "$plain" 1
run "$plain" 1 writers=auto
run "$plain" 1 writers=per-connection
run "$plain" 1 writers=shared
run "$locked" 1
run "$locked" 1 writers=auto
run "$locked" 1 writers=shared
run "$locked" 0 writers=per-connection
run "$locked" 0 ceph.rbd_cache=true
run "$plain" 0 ceph.rbd_cache=true

# Nothing left behind on the image once every server has exited.
for img in "$plain" "$locked"; do
  released "$img" "after every server exited"
done

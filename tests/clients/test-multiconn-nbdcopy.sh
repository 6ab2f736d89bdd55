#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# nbdcopy with 4 connections and 16 requests in flight per connection
# copies 64 MiB of random data into an image without exclusive-lock
# (--image-feature layering: rbdx advertises multi-conn on it) and back
# out of a read-only snapshot export, also with 4 connections; the data
# survives both ways.  nbdinfo shows can_multi_conn true for both
# exports, and the server log shows nbdcopy really opened 4 connections
# (nbdcopy uses one only without multi-conn; it also opens no more
# connections than threads, which default to the number of cores, so
# --threads=4 is given too).
# Covers: NBD doc/proto.md "NBD_FLAG_CAN_MULTI_CONN"; rbdx.c
# rbdx_can_multi_conn; plugin docs "EXPORT PROPERTIES".
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/clients/common.sh"
requires_cluster
requires nbdcopy nbdinfo cmp

d=$(tmpdir)
M=$((1024 * 1024))
size=$((64 * M))
head -c "$size" /dev/urandom >"$d/src"
img=$(new_image "${size}B" --image-feature layering)

# can_multi_conn IMAGE [NBDKIT-OPTS...]: nbdinfo's can_multi_conn.
can_multi_conn() {
  local img=$1
  shift
  with_export "$@" "$img" 'nbdinfo --json "$uri"' |
    python3 -c 'import json,sys; print(str(json.load(sys.stdin)["exports"][0]["can_multi_conn"]).lower())'
}

# copy4 LABEL WHAT SPEC ARGS...: under nbdkit -v serving SPEC, nbdcopy
# ARGS ($uri: the export) with 4 connections, 4 threads and 16 requests
# each; fail unless it worked and rbdx opened 4 connections.
copy4() {
  local log="$d/$1.log" what=$2 spec=$3 n
  shift 3
  say "nbdcopy --connections=4 --threads=4 --requests=16: $what"
  with_export -v "$spec" \
    "nbdcopy --connections=4 --threads=4 --requests=16 $*" 2>"$log" ||
    { tail -20 "$log" >&2; fail "nbdcopy $what failed"; }
  n=$(grep -c 'debug: rbdx: opened ' "$log" || true)
  [ "$n" = 4 ] || fail "nbdcopy $what used $n connections, expected 4"
}

say "writable export of a layering-only image: multi-conn"
got=$(can_multi_conn "$img") || fail "nbdinfo failed"
expect_same "can_multi_conn (writable, no exclusive-lock)" true "$got"
copy4 in "file -> export" "$img" --flush "'$d/src'" "\$uri"

rbd snap create --no-progress "$img@copy" >&2

say "read-only snapshot export: multi-conn"
got=$(can_multi_conn "$img@copy") || fail "nbdinfo failed"
expect_same "can_multi_conn (snapshot)" true "$got"
copy4 out "snapshot export -> file" "$img@copy" "\$uri" "'$d/out'"

cmp "$d/src" "$d/out" || fail "data copied in and out with 4 connections differs"
say "ok"

#!/usr/bin/env bash
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

# connections LOG: how many connections rbdx opened (nbdkit -v log).
connections() { grep -c 'debug: rbdx: opened ' "$1" || true; }

say "writable export of a layering-only image: multi-conn"
got=$(can_multi_conn "$img") || fail "nbdinfo failed"
expect_same "can_multi_conn (writable, no exclusive-lock)" true "$got"

say "nbdcopy --connections=4 --threads=4 --requests=16: file -> export"
with_export -v "$img" \
  "nbdcopy --connections=4 --threads=4 --requests=16 --flush '$d/src' \$uri" \
  2>"$d/in.log" || { tail -20 "$d/in.log" >&2; fail "nbdcopy file -> export failed"; }
n=$(connections "$d/in.log")
[ "$n" = 4 ] || fail "nbdcopy into the export used $n connections, expected 4"

rbd snap create --no-progress "$img@copy" >&2

say "read-only snapshot export: multi-conn"
got=$(can_multi_conn "$img@copy") || fail "nbdinfo failed"
expect_same "can_multi_conn (snapshot)" true "$got"

say "nbdcopy --connections=4 --threads=4 --requests=16: snapshot export -> file"
with_export -v "$img@copy" \
  "nbdcopy --connections=4 --threads=4 --requests=16 \$uri '$d/out'" \
  2>"$d/out.log" || { tail -20 "$d/out.log" >&2; fail "nbdcopy export -> file failed"; }
n=$(connections "$d/out.log")
[ "$n" = 4 ] || fail "nbdcopy out of the snapshot used $n connections, expected 4"

cmp "$d/src" "$d/out" || fail "data copied in and out with 4 connections differs"
say "ok"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# size_file= and advertise_size=max, the plugin side of the rbdx mapper's
# resize handling (server/mapper/README.md): the mapper gives the kernel the size
# from size_file and needs connections that stay usable when the image
# grows, since replacing them races nbdkit 1.32's ESHUTDOWN on EOF.
# Asserts, on a default-feature image (writes through the shared writer):
#   - a new connection is told RBDX_ADVERTISE_MAX_BYTES
#     (9223372036854771712); size_file holds the size once a connection is
#     open; block status past the end fails with EINVAL and one crossing
#     the end is clipped to it;
#   - connection A, open before a grow from 64 to 128 MiB: size_file follows
#     within 10 s; A writes and reads at 100 MiB (past the old end, which
#     advertise_size=image would refuse); before the grow, A's read at
#     64 MiB failed with EINVAL and its write with ENOSPC, and A lived on;
#   - after a shrink to 32 MiB: size_file follows; within 10 s A's read at
#     48 MiB gets EINVAL (until then only zeros), and keeps getting it;
#     below 32 MiB A still works;
#   - a snapshot export advertises its real size and leaves size_file alone;
#   - size_file=relative, size_file= in a missing directory, advertise_size=
#     bogus, advertise_size=max without size_file=, and size_file= with
#     pool= are refused before serving.
# Covers: nbdkit-rbdx-plugin(1) size_file=, advertise_size=.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster

MAX=9223372036854771712
img=$(new_image 64M)
sock="$MC_DIR/s.sock"
sizef="$MC_DIR/size"
serve "$sock" -- "$img" size_file="$sizef" advertise_size=max
u=$(uri "$sock")
[ "$(nbdinfo --size "$u")" = "$MAX" ] || fail "advertised $(nbdinfo --size "$u"), not $MAX"

client_start A "$u"
[ "$(cat "$sizef")" = $((64 << 20)) ] || fail "size_file holds '$(cat "$sizef")', not 64 MiB"
# Block status is bounded by the image too: past the end, EINVAL.
URI=$u nbdsh -c '
import os, sys
h.add_meta_context(nbd.CONTEXT_BASE_ALLOCATION)
h.connect_uri(os.environ["URI"])
try:
    h.block_status(4096, 80 << 20, lambda *a: 0)
    sys.exit("block status at 80 MiB of a 64 MiB image succeeded")
except nbd.Error as e:
    if e.errno != "EINVAL":
        sys.exit("block status past the end: %s, not EINVAL" % e)
n = 0
def count(ctx, off, ents, err):
    global n
    n += sum(ents[0::2])
h.block_status(8 << 20, 60 << 20, count)
if n != 4 << 20:
    sys.exit("block status crossing the end covered %d bytes, not 4 MiB" % n)
' || fail "block status is not bounded by the image"
client_do A write 0 65536 11
client_do A readerr $((64 << 20)) 4096 EINVAL
client_do A writeerr $((64 << 20)) 4096 5e ENOSPC
client_do A alive

rbd resize --no-progress --size 128M "$img" >/dev/null
size_is() { [ "$(cat "$sizef")" = "$1" ]; }
wait_for 10 size_is $((128 << 20)) || fail "size_file holds '$(cat "$sizef")' 10 s after the grow"
client_do A write $((100 << 20)) 65536 7e
client_do A flush
client_do A read $((100 << 20)) 65536 7e
client_do A read 0 65536 11

rbd resize --no-progress --allow-shrink --size 32M "$img" >/dev/null
wait_for 10 size_is $((32 << 20)) || fail "size_file holds '$(cat "$sizef")' 10 s after the shrink"
# size_file holds the smallest size any of the image's contexts has seen,
# so the shared writer's context may have followed the shrink before A's
# own did: each handles the header update on its own thread.  Poll A
# until it refuses the read past the new end; meanwhile a read may only
# return zeros (the shrink removed those objects before it changed the
# header; nothing was written there).
refuses_past_end() {
  local line
  line=$(client_try A readerr $((48 << 20)) 4096 EINVAL)
  case $line in
    ok) return 0 ;;
    *"succeeded (read back zeros)"*) return 1 ;;
    *) fail "A's read past the new end: ${line#err }" ;;
  esac
}
wait_for 10 refuses_past_end ||
  fail "A still reads at 48 MiB 10 s after the shrink to 32 MiB"
client_do A readerr $((48 << 20)) 4096 EINVAL
client_do A read 0 65536 11
client_do A alive
client_stop A
stop_server "$sock"

# A snapshot: its own size, no size_file.
rbd snap create --no-progress "$img@s1" >/dev/null
rm -f "$sizef"
snapsock="$MC_DIR/snap.sock"
serve "$snapsock" -- "$img@s1" size_file="$sizef" advertise_size=max
[ "$(nbdinfo --size "$(uri "$snapsock")")" = $((32 << 20)) ] ||
  fail "the snapshot export advertises $(nbdinfo --size "$(uri "$snapsock")")"
[ ! -e "$sizef" ] || fail "a snapshot export wrote size_file"
stop_server "$snapsock"
rbd snap rm --no-progress "$img@s1" >/dev/null 2>&1

# Bad values are refused before serving.
for bad in size_file=relative/path advertise_size=bogus size_file=/nonexistent/dir/f \
           advertise_size=max; do
  if out=$(nbdkit -U "$MC_DIR/bad.sock" -f "$RBDX_PLUGIN" "$img" "$bad" 2>&1); then
    fail "nbdkit served with $bad"
  fi
  echo "$out" | grep -q "${bad%%=*}=" || fail "the error for $bad does not name it: $out"
done
if out=$(nbdkit -U "$MC_DIR/bad.sock" -f "$RBDX_PLUGIN" pool=rbd size_file="$sizef" 2>&1); then
  fail "nbdkit served pool= with size_file="
fi
echo "$out" | grep -q "pool=" || fail "size_file= with pool=: $out"
say "ok: size_file follows resizes, advertise_size=max keeps connections usable"

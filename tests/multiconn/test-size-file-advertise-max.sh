#!/usr/bin/env bash
# size_file= and advertise_size=max, the plugin side of the rbdx mapper's
# resize handling (server/README.md): the mapper gives the kernel the size
# from size_file and needs connections that stay usable when the image
# grows, since replacing them races nbdkit 1.32's ESHUTDOWN on EOF.
# Asserts, on a default-feature image (writes through the shared writer):
#   - size_file holds the size when the server is up; a new connection is
#     told RBDX_ADVERTISE_MAX_BYTES (9223372036854771712);
#   - connection A, open before a grow from 64 to 128 MiB: size_file follows
#     within 10 s; A writes and reads at 100 MiB (past the old end, which
#     advertise_size=image would refuse); before the grow, A's read at
#     64 MiB failed with EINVAL and its write with ENOSPC, and A lived on;
#   - after a shrink to 32 MiB: size_file follows; A's read at 48 MiB gets
#     EINVAL; below 32 MiB A still works;
#   - a snapshot export advertises its real size and leaves size_file alone;
#   - size_file=relative and advertise_size=bogus are refused before serving.
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
[ "$(cat "$sizef")" = $((64 << 20)) ] || fail "size_file holds '$(cat "$sizef")', not 64 MiB"
[ "$(nbdinfo --size "$u")" = "$MAX" ] || fail "advertised $(nbdinfo --size "$u"), not $MAX"

client_start A "$u"
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
for bad in size_file=relative/path advertise_size=bogus; do
  if out=$(nbdkit -U "$MC_DIR/bad.sock" -f "$RBDX_PLUGIN" "$img" "$bad" 2>&1); then
    fail "nbdkit served with $bad"
  fi
  echo "$out" | grep -q "${bad%%=*}=" || fail "the error for $bad does not name it: $out"
done
say "ok: size_file follows resizes, advertise_size=max keeps connections usable"

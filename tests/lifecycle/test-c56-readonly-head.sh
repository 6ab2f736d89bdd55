#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C56 (tests/README.md): a cephx id that may not write (osd 'profile
# rbd-read-only') serves an image with nbdkit -r.  librbd then opens the
# image read-only, without a header watch: Ceph does not refuse `rbd rm`
# or `rbd resize --allow-shrink`, and nothing tells the handle.  rbdx
# polls the header of such images (RBDX_HEADPOLL_INTERVAL_MS, 1 s).
# Asserts, for connection A open on the head (through nbdkit and the
# built-in engine) and on a snapshot:
#   - before: A reads the image's 0x5a at 12 MiB;
#   - after `rbd resize --allow-shrink --size 8M` returned, within 3 s
#     A's reads at 12 MiB fail with NBD_EINVAL (never zeros after that),
#     and at 4 MiB still read 0x5a;
#   - after `rbd rm` returned, within 3 s A's reads and block status fail
#     with NBD_EIO, for good (zeros never answered after 3 s), A stays
#     connected, and the removal is logged at error level (no -v);
#   - a snapshot served the same way: after `rbd snap rm`, within 3 s A's
#     reads fail with NBD_EIO.
# Case C75: an encrypted head served so (LUKS2, 64 MiB with its 16 MiB
# header, 16 MiB of plaintext 0x5a): after `rbd resize --allow-shrink
# --size 20M` returned, within 3 s A's reads at 8 MiB and at 4 MiB fail
# with NBD_EINVAL (4 MiB of plaintext left), at 1 MiB still read 0x5a.
# Case C73: for A open on the head (nbdkit and the engine), after
# `rbd migration prepare IMAGE NEW` returned (not refused: no watch), and
# after `rbd trash mv IMAGE`, within 3 s A's reads fail with NBD_EIO, for
# good (also after `rbd migration abort` / `rbd trash restore`), logged
# at error level naming the migration or the trash.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
requires ceph

d=$(tmpdir)
ro="c56ro$$"
readonly_id "$ro" "$d/ro.keyring"

# until_err NAME SECONDS CMD...: the nbd-script command CMD (readerr, bserr)
# must succeed (the request failed as expected) within SECONDS; before then
# any read that succeeds must have carried the image's bytes (nbd-script's
# readerr reports a success with other data as a mismatch).
until_err() {
  local name=$1 secs=$2 t0=$SECONDS line
  shift 2
  while :; do
    line=$(client_try "$name" "$@")
    case $line in
      ok) return 0 ;;
    esac
    [ $((SECONDS - t0)) -lt "$secs" ] ||
      fail "'$*' on $name $secs s after the change: ${line#err }"
    sleep 0.2
  done
}

pattern_file "$d/img" 16M 5a

# head [engine]: the head through nbdkit, or through the built-in engine
# (its test hook has no block status: reads only).
head() {
  local img sock log
  img=$(new_image 16M)
  import_into "$img" "$d/img"
  say "read-only head, ${1:-nbdkit}: rbd resize --allow-shrink, then rbd rm"
  sock="$d/h-${1:-nbdkit}.sock"
  log=$sock.log
  serve_via "${1:-nbdkit}" "$sock" ro -- "$img" id="$ro" keyring="$d/ro.keyring"
  client_start A "$(uri "$sock")"
  client_do A read $((12 << 20)) 4096 5a
  rbd resize --no-progress --allow-shrink --size 8M "$img" >/dev/null 2>&1 ||
    fail "rbd resize --allow-shrink failed"
  until_err A 3 readerr $((12 << 20)) 4096 EINVAL
  client_do A readerr $((12 << 20)) 4096 EINVAL
  client_do A read $((4 << 20)) 4096 5a
  rbd rm --no-progress "$img" >/dev/null 2>&1 ||
    fail "rbd rm of $img failed (did the read-only handle watch?)"
  until_err A 3 readerr 0 4096 EIO
  client_do A readerr $((4 << 20)) 4096 EIO
  [ "${1:-}" = engine ] || client_do A bserr 0 4096 EIO
  client_do A alive
  client_stop A
  stop_server "$sock"
  # nbdkit prefixes "error: " to the plugin's error-level lines.
  local pat="error: rbdx: .*the image was removed"
  [ "${1:-}" != engine ] || pat="rbdx: .*the image was removed"
  grep -q "$pat" "$log" ||
    fail "the removal was not logged at error level: $(cat "$log")"
}

head
if [ -x "$RBDX_BUILD/server/rbdx-engine" ]; then
  head engine
else
  say "no rbdx-engine built: its row is not run"
fi

# moved KIND [engine]: the head served, then moved by KIND (migration,
# trash) and moved back.
moved() {
  local img sock log id
  img=$(new_image 16M)
  import_into "$img" "$d/img"
  sock="$d/m-$1-${2:-nbdkit}.sock"
  log="$sock.log"
  say "read-only head, ${2:-nbdkit}: $1"
  serve_via "${2:-nbdkit}" "$sock" ro -- "$img" id="$ro" keyring="$d/ro.keyring"
  client_start A "$(uri "$sock")"
  client_do A read 0 4096 5a
  id=$(rbd info --format json "$img" | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p')
  [ -n "$id" ] || fail "no id for $img"
  if [ "$1" = migration ]; then
    # Hooks run before the images are removed: the source comes back.
    at_exit "rbd migration abort --no-progress $img-new >/dev/null 2>&1"
    rbd migration prepare "$img" "$img-new" >/dev/null 2>&1 ||
      fail "rbd migration prepare of $img failed"
  else
    at_exit "rbd trash restore ${img%%/*}/$id >/dev/null 2>&1"
    rbd trash mv "$img" >/dev/null 2>&1 || fail "rbd trash mv of $img failed"
  fi
  until_err A 3 readerr 0 4096 EIO
  if [ "$1" = migration ]; then
    rbd migration abort --no-progress "$img-new" >/dev/null 2>&1 ||
      fail "rbd migration abort failed"
  else
    rbd trash restore "${img%%/*}/$id" >/dev/null 2>&1 ||
      fail "rbd trash restore of $id failed"
  fi
  client_do A readerr 0 4096 EIO
  client_do A readerr $((8 << 20)) 4096 EIO
  client_do A alive
  client_stop A
  stop_server "$sock"
  local why="the source of a migration"
  [ "$1" = migration ] || why="moved to the trash"
  grep -q "rbdx: .*the image .*$why" "$log" ||
    fail "'$why' was not logged: $(cat "$log")"
  [ "${2:-}" = engine ] || grep -q "error: rbdx: .*$why" "$log" ||
    fail "'$why' was not logged at error level: $(cat "$log")"
}

moved migration
moved trash
if [ -x "$RBDX_BUILD/server/rbdx-engine" ]; then
  moved migration engine
fi

# An encrypted head (LUKS2, encryption_format=): its plaintext starts
# after the 16 MiB header, so the header's size is not the export's.
say "read-only encrypted head: rbd resize --allow-shrink"
printf 'c56 passphrase\n' >"$d/pass"
chmod 600 "$d/pass"
img=$(new_image 64M)
rbd encryption format "$img" luks2 "$d/pass" >/dev/null 2>&1 ||
  fail "rbd encryption format failed"
enc=(encryption_format=luks2 encryption_passphrase_file="$d/pass")
nbdkit -U - "$RBDX_PLUGIN" "$img" "${enc[@]}" --run \
  'nbdsh -u "$uri" -c "h.pwrite(b\"\\x5a\" * (16 << 20), 0); h.flush()"' ||
  fail "cannot write the encrypted image"
sock="$d/e.sock"
serve "$sock" -r -- "$img" id="$ro" keyring="$d/ro.keyring" "${enc[@]}" \
  2>"$d/e.log"
client_start A "$(uri "$sock")"
client_do A read $((8 << 20)) 4096 5a
# 20 MiB of header and data: 4 MiB of plaintext left.
rbd resize --no-progress --allow-shrink --size 20M "$img" >/dev/null 2>&1 ||
  fail "rbd resize --allow-shrink failed"
until_err A 3 readerr $((8 << 20)) 4096 EINVAL
client_do A readerr $((8 << 20)) 4096 EINVAL
client_do A readerr $((4 << 20)) 4096 EINVAL
client_do A read $((1 << 20)) 4096 5a
client_stop A
stop_server "$sock"

say "read-only snapshot: rbd snap rm"
img=$(new_image 16M)
import_into "$img" "$d/img"
rbd snap create --no-progress "$img@s1" >/dev/null 2>&1
sock="$d/s.sock"
serve "$sock" -r -- "$img@s1" id="$ro" keyring="$d/ro.keyring" 2>"$d/s.log"
client_start A "$(uri "$sock")"
client_do A read $((12 << 20)) 4096 5a
rbd snap rm --no-progress "$img@s1" >/dev/null 2>&1 || fail "rbd snap rm failed"
until_err A 3 readerr $((12 << 20)) 4096 EIO
client_do A readerr 0 4096 EIO
client_stop A
stop_server "$sock"
grep -q "error: rbdx: .*the snapshot was removed" "$d/s.log" ||
  fail "the snapshot removal was not logged at error level: $(cat "$d/s.log")"
say "read-only handles notice removal and shrink within the polling window"

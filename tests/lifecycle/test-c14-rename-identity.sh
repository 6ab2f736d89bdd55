#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C14 (tests/README.md): a write must never land in another image than
# the one its connection reads.  Connection A opens image x and writes 0xAA;
# the operator renames x to x-old and creates a new, smaller x; connection B
# opens "x" and writes 0xBB.
# Asserts, for pool mode and single-image mode, with per-connection writers
# (layering-only image), the shared writer (default features) and
# exclusive=true:
#   - B negotiates the new image's size and reads back its own 0xBB;
#   - A still reads 0xAA and its later writes go to x-old;
#   - `rbd export` of x holds 0xBB and nothing of A's; x-old holds 0xAA and
#     A's later write, nothing of B's.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster

# expect_bytes IMAGE OFFSET BYTE WHY: the 4 KiB at OFFSET are all BYTE.
expect_bytes() {
  local got
  got=$(bytes_at "$1" "$2" 4096)
  [ "$got" = "$3 " ] || fail "$4: $1 at $2 holds '$got', expected all $3"
}

# run MODE FEATURES [PLUGIN-PARAMS...]; MODE is pool or image.
n=0
run() {
  local mode=$1 features=$2 img x old sock u name
  shift 2
  n=$((n + 1))
  # shellcheck disable=SC2086
  img=$(new_image 64M $features)
  x=${img#rbd/}
  old="$x-old"
  own_image "rbd/$old"
  sock="$MC_DIR/s$n.sock"
  say "$mode mode, ${features:-default features} $*: rename under an open connection"
  if [ "$mode" = pool ]; then
    serve "$sock" -- pool=rbd "$@"
    name=$x
  else
    serve "$sock" -- "$img" "$@"
    name=
  fi
  u=$(uri "$sock" "$name")

  client_start A "$u"
  client_do A write 0 4096 aa
  client_do A flush

  rbd rename "$img" "rbd/$old"
  # shellcheck disable=SC2086
  rbd create --no-progress --size 32M $features "$img"

  client_start B "$u"
  [ "$(client_do B size)" = $((32 << 20)) ] ||
    fail "B does not see the new 32 MiB image x"
  client_do B read 0 4096 00
  client_do B write 0 4096 bb
  client_do B flush
  client_do B read 0 4096 bb
  client_do A read 0 4096 aa
  client_do A write 8192 4096 a1 fua
  client_do A flush
  client_do B read 8192 4096 00
  client_do A read 8192 4096 a1
  client_stop A
  client_stop B
  stop_server "$sock"

  expect_bytes "$img" 0 bb "B's write"
  expect_bytes "$img" 8192 00 "A's write after the rename leaked into the new x"
  expect_bytes "rbd/$old" 0 aa "A's first write"
  expect_bytes "rbd/$old" 8192 a1 "A's write after the rename"
}

run pool "--image-feature layering"
run pool ""
run pool "" exclusive=true
run image "--image-feature layering"
run image ""
run image "" exclusive=true

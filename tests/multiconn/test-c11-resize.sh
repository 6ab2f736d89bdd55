#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# C11 (tests/README.md): connection A stays open on a 1 GiB image
# while another client resizes it to 2 GiB, then to 512 MiB.  rbdx
# follows resizes with rbd_update_watch (NBD cannot announce a new size,
# so old connections must get errors past the new end, never zeros).
# Asserts:
#   - a new connection sees 2 GiB after the grow, 512 MiB after the shrink;
#   - A keeps its negotiated 1 GiB and reads/writes fine inside it while
#     the image is 2 GiB;
#   - after the shrink A's read at 900 MiB (where A wrote data before)
#     fails with NBD_EINVAL at once (not zeros, not the old data, no
#     hang), a read crossing the new end fails with EINVAL too, A's write
#     at 900 MiB fails with NBD_ENOSPC, and A stays connected: reads and
#     writes below 512 MiB still work.
# Run on a default-feature image (A's writes go through the shared
# lock-owning writer, whose own watch must follow the resize too) and on
# a layering-only image, through nbdkit, and on a default-feature image
# through the mapper's built-in engine.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster

# size_of URI: the size a new connection negotiates.
size_of() { nbdinfo --size "$1"; }

check() {
  local img=$1 sock=$2 fe=${3:-nbdkit} u
  shift 2
  say "$img ($fe): A open while the image grows to 2 GiB and shrinks to 512 MiB"
  if [ "$fe" = engine ]; then
    serve_engine "$sock" -- "$img"
  else
    serve "$sock" -- "$img"
  fi
  u=$(uri "$sock")
  client_start A "$u"
  [ "$(client_do A size)" = $((1 << 30)) ] || fail "A does not see 1 GiB"
  client_do A write $((900 << 20)) 65536 9a
  client_do A write 0 65536 11
  client_do A flush

  rbd resize --no-progress --size 2G "$img" >/dev/null
  [ "$(size_of "$u")" = $((2 << 30)) ] ||
    fail "a new connection does not see 2 GiB after the grow: $(size_of "$u")"
  [ "$(client_do A size)" = $((1 << 30)) ] || fail "A's size changed"
  client_do A read $((900 << 20)) 65536 9a
  client_do A read 0 65536 11
  client_do A write $(((1 << 30) - 4096)) 4096 7e
  client_do A read $(((1 << 30) - 4096)) 4096 7e

  rbd resize --no-progress --allow-shrink --size 512M "$img" >/dev/null
  [ "$(size_of "$u")" = $((512 << 20)) ] ||
    fail "a new connection does not see 512 MiB after the shrink: $(size_of "$u")"
  client_do A readerr $((900 << 20)) 65536 EINVAL
  client_do A readerr $(((512 << 20) - 2048)) 4096 EINVAL
  client_do A writeerr $((900 << 20)) 4096 5e ENOSPC
  client_do A writeerr $(((512 << 20) - 2048)) 4096 5e ENOSPC
  client_do A alive
  client_do A read 0 65536 11
  client_do A read $(((512 << 20) - 4096)) 4096 00
  client_do A write $(((512 << 20) - 4096)) 4096 3c
  client_do A flush
  client_do A read $(((512 << 20) - 4096)) 4096 3c
  client_stop A
  stop_server "$sock"

  # What A wrote at the end landed, nothing past the end exists.
  [ "$(image_size "$img")" = $((512 << 20)) ] ||
    fail "$img is not 512 MiB any more"
  pattern_file "$MC_DIR/3c" 4096 3c
  rbd export --no-progress "$img" - 2>/dev/null | tail -c 4096 | cmp - "$MC_DIR/3c" ||
    fail "A's last write is not at the end of $img"
}

locked=$(new_image 1G)
plain=$(new_image 1G --image-feature layering)
check "$locked" "$MC_DIR/a.sock"
check "$plain" "$MC_DIR/b.sock"
# The mapper's built-in engine shares the serving core (ctx.c's update
# handling): the same on a default-feature image through it.
if [ -x "$RBDX_BUILD/server/rbdx-engine" ]; then
  check "$(new_image 1G)" "$MC_DIR/c.sock" engine
else
  say "no rbdx-engine built: its row is not run"
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Data imported with the rbd CLI reads back unchanged through an rbdx
# export with two real NBD clients: nbdcopy (URI -> file) and
# `qemu-img convert` (nbd+unix URI -> file).  The size is deliberately
# not a multiple of the 4 MiB object size (nor of 512), so the last,
# partial object and the odd tail go through the plugin too.
# Covers: READ (plugin/rbdx.c rbdx_pread), NBD doc/proto.md
# "NBD_CMD_READ"; structured replies as used by nbdcopy and qemu.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires nbdcopy qemu-img cmp

d=$(tmpdir)
size=$((12 * 1024 * 1024 + 12345))
head -c "$size" /dev/urandom >"$d/src"

img=$(new_image 1M)
import_into "$img" "$d/src"
[ "$(image_size "$img")" = "$size" ] ||
  fail "rbd import made an image of the wrong size"

serve "$d/sock" -r -- "$img"
u=$(uri "$d/sock")

say "nbdcopy $u -> file"
nbdcopy "$u" "$d/nbdcopy.out" || fail "nbdcopy failed"
cmp "$d/src" "$d/nbdcopy.out" || fail "nbdcopy read differs from the imported data"

say "qemu-img convert $u -> file"
qemu-img convert -f raw -O raw "$u" "$d/qemu.out" || fail "qemu-img convert failed"
# QEMU rounds an NBD export's size up to a multiple of 512 and reads
# the padding as zeros; the export's own bytes must match exactly.
cmp -n "$size" "$d/src" "$d/qemu.out" || fail "qemu-img read differs from the imported data"
pad=$(( $(stat -c %s "$d/qemu.out") - size ))
[ "$pad" -ge 0 ] && [ "$pad" -lt 512 ] || fail "qemu-img output has $pad extra bytes"
cmp -n "$pad" -i "$size:0" "$d/qemu.out" /dev/zero || fail "qemu-img padding is not zero"

stop_server "$d/sock"
say "ok"

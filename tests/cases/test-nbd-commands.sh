#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every NBD command and every advertised property of an rbdx export
# (NBD doc/proto.md: transmission phase commands, block size
# constraints, base:allocation, NBD_INFO_DESCRIPTION, multi-conn).
# The C program nbd-commands does the NBD side against an in-memory
# shadow; this wrapper seeds the image with `rbd import` (rbd -> NBD)
# and checks what NBD wrote with `rbd export` (NBD -> rbd).
#
# multi-conn (a FLUSH/FUA reply makes writes visible on every
# connection) must be advertised exactly when rbdx's handles can keep
# that promise without passing the exclusive-lock around:
#   default features (exclusive-lock), writers=per-connection  -> no
#   default features, default writers (one shared lock owner)  -> yes
#   default features, nbdkit -r / image@snap (read-only)       -> yes
#   --image-feature layering (no exclusive-lock), writable     -> yes
# can_write is false for nbdkit -r and for image@snap.
. "$RBDX_TESTS/lib.sh"
requires_cluster
prog=$(test_prog cases/nbd-commands)
d=$(tmpdir)

# Default features, 24 MiB = 6 objects; data only in object 3.
truncate -s 24M "$d/seed"
put_pattern "$d/seed" $((12 << 20)) 65536 c3

for writers in per-connection auto; do
  img=$(new_image 24M)
  import_into "$img" "$d/seed"
  rbd info "$img" | grep -q 'features:.*exclusive-lock.*fast-diff' ||
    fail "$img lacks the default features: $(rbd info "$img" | grep features)"
  if [ $writers = per-connection ]; then mc=0; else mc=1; fi
  # Snapshot of the seed, taken before any server runs.
  rbd snap create --no-progress "$img@s1" >/dev/null

  say "all commands on writable $img, writers=$writers (multi-conn $mc)"
  with_export "$img" writers=$writers \
    "$prog full \$uri $img $mc $d/seed $d/expected" ||
    fail "nbd-commands full failed (writers=$writers)"
  rbd export --no-progress "$img" "$d/exported" >/dev/null
  cmp "$d/exported" "$d/expected" ||
    fail "rbd export differs from what was written through NBD" \
      "(writers=$writers)"
  rm -f "$d/exported"
done

say "read-only properties: nbdkit -r $img"
with_export -r "$img" "$prog props \$uri $img 0 1 $d/expected" ||
  fail "nbdkit -r: wrong properties or contents"

# The head has changed since the snapshot: it must still read as seeded.
say "read-only properties: $img@s1"
with_export "$img@s1" "$prog props \$uri $img@s1 0 1 $d/seed" ||
  fail "$img@s1: wrong properties or contents"

say "writable properties: --image-feature layering"
img2=$(new_image 8M --image-feature layering)
with_export "$img2" "$prog props \$uri $img2 1 1" ||
  fail "layering-only image: wrong properties"

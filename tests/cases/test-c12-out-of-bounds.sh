#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C12 (tests/README.md), out-of-bounds requests: with client strict mode off,
# reads, writes (with and without FUA), WRITE_ZEROES, TRIM and
# BLOCK_STATUS crossing the end (at size-2048) and wholly past it get
# NBD_EINVAL (read, trim, block status) or NBD_ENOSPC (write, write
# zeroes), a read of length 0 is answered, none disconnects, and the
# last 512 bytes then read fine (C program bounds).  The image's tail is
# checked with `rbd export` afterwards: no refused write changed it.
# Three ways, so that both nbdkit's and rbdx's own checks are reached:
#   1. a plain export: nbdkit refuses the requests (it knows the size);
#   2. size_file= advertise_size=max: nbdkit lets every offset through
#      and only rbdx's checks against the image's size stop them;
#   3. a connection open while the image shrinks from 8 MiB to 6 MiB: it
#      keeps the old size, so past the new end only rbdx's checks (fed by
#      its update watch) stop them, and the data written past the new end
#      before the shrink never comes back.
# TRIM past the end is NBD_EINVAL in all three (NBD doc/proto.md, "Error
# values"); the bounds program's --trim-errno says so.
. "$RBDX_TESTS/lib.sh"
requires_cluster
d=$(tmpdir)
prog=$(test_prog cases/bounds)
rbdx_trim=EINVAL

# check_tail IMAGE SIZE: the image has SIZE bytes and no 0xee from a
# refused write in its last 2048 bytes.
check_tail() {
  rbd export --no-progress "$1" "$d/exported" >/dev/null
  [ "$(stat -c %s "$d/exported")" = "$2" ] ||
    fail "$1: size $(stat -c %s "$d/exported"), expected $2"
  if tail -c 2048 "$d/exported" | od -An -tx1 | grep -q ' ee ee ee ee'; then
    fail "$1: a refused write reached the image"
  fi
  rm -f "$d/exported"
}

say "1. nbdkit's checks (advertised size = image size)"
img=$(new_image 8M)
with_export "$img" "$prog \$uri" || fail "bounds (nbdkit's checks) failed"
check_tail "$img" $((8 << 20))

say "2. rbdx's checks (size_file= advertise_size=max), TRIM expects $rbdx_trim"
img=$(new_image 8M)
with_export "$img" size_file="$d/size" advertise_size=max \
  "$prog --trim-errno $rbdx_trim --image-size $((8 << 20)) \$uri" ||
  fail "bounds (rbdx's checks, advertise_size=max) failed"
check_tail "$img" $((8 << 20))

say "3. rbdx's checks after a shrink under an open connection," \
  "TRIM expects $rbdx_trim"
for features in default layering; do
  if [ $features = default ]; then img=$(new_image 8M)
  else img=$(new_image 8M --image-feature layering); fi
  with_export "$img" \
    "$prog --trim-errno $rbdx_trim --shrink $img $((6 << 20)) \$uri" ||
    fail "bounds (rbdx's checks after a shrink, $features features) failed"
  check_tail "$img" $((6 << 20))
done

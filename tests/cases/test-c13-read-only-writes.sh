#!/usr/bin/env bash
# Case C13 (../shared/cases/README.md): exports image@snap and
# nbdkit -r; WRITE 64 KiB at 0, TRIM, WRITE_ZEROES with strict mode
# off: the handshake shows read-only, each write-type request gets
# NBD_EPERM after its payload is consumed and a following read works
# (C program readonly-writes).  `rbd export` shows the image and the
# snapshot unchanged.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/cases/cases-lib.sh"
requires_cluster
keep d tmpdir
keep img new_image 8M
truncate -s 8M "$d/seed"
pattern_file "$d/5a" $((128 << 10)) 5a
dd if="$d/5a" of="$d/seed" conv=notrunc status=none
import_into "$img" "$d/seed"
rbd snap create --no-progress "$img@snap" >/dev/null

say "export $img@snap"
nbdkit -U - "$RBDX_PLUGIN" "$img@snap" \
  --run "$RBDX_BUILD/tests/cases/readonly-writes \$uri" ||
  fail "readonly-writes failed on $img@snap"
say "export $img with nbdkit -r"
nbdkit -r -U - "$RBDX_PLUGIN" "$img" \
  --run "$RBDX_BUILD/tests/cases/readonly-writes \$uri" ||
  fail "readonly-writes failed on nbdkit -r"

for s in "$img" "$img@snap"; do
  rbd export --no-progress "$s" "$d/exported" >/dev/null
  cmp "$d/exported" "$d/seed" || fail "$s changed"
  rm -f "$d/exported"
done

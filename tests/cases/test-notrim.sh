#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# notrim=true (nbdkit-rbdx-plugin(1); rbd-nbd's --notrim), through the
# plugin and through the mapper's built-in engine (--oldstyle hook):
#   - nbdinfo shows can_trim false, can_zero and can_fast_zero true;
#   - a WRITE_ZEROES of a whole 4 MiB object without NO_HOLE (holes
#     allowed) reads back as zeros, and `rbd diff` still lists that
#     object as allocated (it was written thick); without notrim the
#     same request removes the object (the control: the check can fail);
#   - a TRIM sent anyway (strict mode off) gets EINVAL, a FAST_ZERO
#     ENOTSUP (thick zeroing is never fast), and neither changes anything
#     (nor kills the server: nbdkit 1.42.3 aborts on a FAST_ZERO its
#     plugin refused in .can_fast_zero, so rbdx keeps advertising it).
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires nbdsh nbdinfo python3
d=$(tmpdir)
MiB=$((1 << 20))

# allocated IMAGE OFFSET: does `rbd diff` list an extent covering OFFSET?
allocated() {
  rbd diff --format json "$1" | python3 -c '
import json, sys
off = int(sys.argv[1])
print("yes" if any(e["offset"] <= off < e["offset"] + e["length"] and
                   e["exists"] in (True, "true") for e in json.load(sys.stdin))
      else "no")' "$2"
}

# check SERVER NOTRIM: serve a fresh 16 MiB image (4 objects) written in
# full with SERVER (plugin or engine), notrim=NOTRIM, and check.
check() {
  local server=$1 notrim=$2 img sock uri
  img=$(new_image 16M)
  sock=$d/$server-$notrim.sock
  if [ "$server" = plugin ]; then
    serve "$sock" -- "$img" notrim="$notrim"
  else
    serve_engine "$sock" -- "$img" notrim="$notrim"
  fi
  uri=$(uri "$sock")
  say "$server, notrim=$notrim"
  nbdinfo --json "$uri" >"$d/info.json" || fail "$server: nbdinfo failed"
  python3 - "$d/info.json" "$notrim" <<'PY' || fail "$server notrim=$notrim: nbdinfo: $(cat "$d/info.json")"
import json, sys
e = json.load(open(sys.argv[1]))["exports"][0]
notrim = sys.argv[2] == "true"
assert e["can_trim"] is (not notrim), e
assert e["can_fast_zero"] is True, e
assert e["can_zero"] is True, e
assert e["is_read_only"] is False, e
PY
  NOTRIM=$notrim nbdsh -u "$uri" -c '
import os
MiB = 1 << 20
notrim = os.environ["NOTRIM"] == "true"
h.pwrite(b"\xa5" * (16 * MiB), 0)
h.flush()
h.zero(4 * MiB, 4 * MiB)                  # object 1, holes allowed
assert h.pread(4 * MiB, 4 * MiB) == bytes(4 * MiB), "zeroed range not zero"
if notrim:
    h.set_strict_mode(0)
    for what, errno, f in (
            ("TRIM", "EINVAL", lambda: h.trim(4 * MiB, 8 * MiB)),
            ("FAST_ZERO", "ENOTSUP",
             lambda: h.zero(4 * MiB, 12 * MiB, nbd.CMD_FLAG_FAST_ZERO))):
        try:
            f()
            raise AssertionError(what + " succeeded")
        except nbd.Error as e:
            assert e.errno == errno, (what, e.errno)
    assert h.pread(4 * MiB, 8 * MiB) == b"\xa5" * (4 * MiB), "TRIM changed data"
    assert h.pread(4 * MiB, 12 * MiB) == b"\xa5" * (4 * MiB), "FAST_ZERO changed data"
h.flush()
h.shutdown()
' || fail "$server notrim=$notrim: NBD requests"
  stop_server "$sock"
  local got want
  got=$(allocated "$img" $((5 * MiB)))
  want=$([ "$notrim" = true ] && echo yes || echo no)
  [ "$got" = "$want" ] ||
    fail "$server notrim=$notrim: object 1 allocated: $got, wanted $want ($(rbd diff "$img" | tr '\n' ' '))"
  [ "$(allocated "$img" $((9 * MiB)))" = yes ] || fail "$server: object 2 lost"
  rm -f "$d/img.raw"
  rbd export --no-progress "$img" "$d/img.raw" >/dev/null
  cmp <(dd if="$d/img.raw" bs=1M skip=4 count=4 status=none) <(head -c $((4 * MiB)) /dev/zero) ||
    fail "$server notrim=$notrim: rbd export: the zeroed object is not zero"
  [ "$(dd if="$d/img.raw" bs=1M skip=8 count=8 status=none | tr -d '\245' | wc -c)" -eq 0 ] ||
    fail "$server notrim=$notrim: rbd export: data past the zeroed object changed"
}

for server in plugin engine; do
  check "$server" true
  check "$server" false
done
say "ok"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# identity=: the export description states the image identity
# (POOLID/[NS/]IMAGEID[@SNAPID]) and identity= pins a server to it.  The
# rbdx mapper reads the identity when it maps and starts every later
# server with identity=, so a server restarted after `rbd rename x x-old;
# rbd create x` still serves the mapped image, never the new x.
# Asserts:
#   - the description of image and snapshot exports holds the identity;
#   - with identity= of x, after the rename and re-create, a new connection
#     to the default export gets x-old (its size and data), and writes land
#     there, and nbdkit says at start (error level, without -v) that
#     the pinned image is named x-old now; a snapshot identity pins the
#     snapshot; a pinned image still named x gets no such line;
#   - a namespace named "<another image's id> x" (finding F1 of
#     tests/README.md): its image's identity is stated escaped
#     (POOLID/<id>%20x/IMAGEID), the identity cut at the space is refused
#     for that spec, and the escaped one serves that image, not the other;
#   - a malformed identity, identity= with pool=, a snapshot identity for a
#     head spec, and the identity of a removed image make nbdkit exit
#     non-zero before serving, naming the problem.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires nbdinfo nbdsh

d=$(tmpdir)
# identity_of SPEC: the identity the plugin states for SPEC.
identity_of() {
  nbdkit -U - "$RBDX_PLUGIN" "$1" --run 'nbdinfo --json "$uri"' |
    python3 -c 'import json, re, sys
m = re.search(r"\(identity ([^)]*)\)", json.load(sys.stdin)["exports"][0]["description"])
print(m.group(1) if m else "")'
}

img=$(new_image 16M)
own_image "$img-old"
nbdkit -U - "$RBDX_PLUGIN" "$img" --run 'nbdsh -u "$uri" -c "h.pwrite(b\"\\xaa\" * 4096, 0)"'
rbd snap create --no-progress "$img@s" >/dev/null
id=$(identity_of "$img")
sid=$(identity_of "$img@s")
nbdkit -U - "$RBDX_PLUGIN" "$img" identity="$id" --run true 2>"$d/err" ||
  fail "the pinned server did not start: $(cat "$d/err")"
! grep -q "not the pinned image" "$d/err" || fail "a pin to the image named so was noted: $(cat "$d/err")"
[[ $id =~ ^[0-9]+/[0-9a-f]+$ ]] || fail "no identity in the description: '$id'"
[[ $sid == "$id@"[0-9]* ]] || fail "snapshot identity '$sid' does not extend '$id'"
say "identities: $id and $sid"

rbd snap rename "$img@s" "$img@s-old"
rbd rename "$img" "$img-old"
rbd create --no-progress --size 8M "$img"
rbd snap create --no-progress "$img@s" >/dev/null

say "pinned server after rename and re-create"
nbdkit -U - "$RBDX_PLUGIN" "$img" identity="$id" --run true 2>"$d/err" ||
  fail "the pinned server did not start: $(cat "$d/err")"
grep -qF "image '$img' is not the pinned image any more: the image of identity= is named '${img#*/}-old' now" "$d/err" ||
  fail "no note that the pinned image is $img-old now: '$(cat "$d/err")'"
serve "$d/s.sock" -- "$img" identity="$id"
nbdsh -u "$(uri "$d/s.sock")" -c - <<'PY' || fail "the pinned export is not the renamed image"
assert h.get_size() == 16 << 20, h.get_size()
assert h.pread(4096, 0) == b"\xaa" * 4096
h.pwrite(b"\xbb" * 4096, 4096)
h.flush()
PY
stop_server "$d/s.sock"
rbd export --no-progress "$img" "$d/new" >/dev/null 2>&1
cmp -n 8192 "$d/new" /dev/zero || fail "a write of the pinned server reached the new $img"
serve "$d/t.sock" -- "$img@s" identity="$sid"
nbdsh -u "$(uri "$d/t.sock")" -c - <<'PY' || fail "the pinned snapshot export is not the old snapshot"
assert h.get_size() == 16 << 20, h.get_size()
assert h.pread(4096, 0) == b"\xaa" * 4096
PY
stop_server "$d/t.sock"

# refused WHY-PATTERN PLUGIN-ARGS...: nbdkit exits non-zero naming WHY.
refused() {
  local want=$1
  shift
  if nbdkit -U - "$RBDX_PLUGIN" "$@" --run true 2>"$d/err"; then
    fail "nbdkit served with $*"
  fi
  grep -q "$want" "$d/err" || fail "nbdkit $*: said '$(cat "$d/err")', expected '$want'"
}
refused "identity='2/': expected POOLID" "$img" identity=2/
refused "identity= pins the image given as image=" pool=rbd identity="$id"
refused "identity= pins" "$img" identity="$sid"
rbd snap purge --no-progress "$img-old" >/dev/null 2>&1
rbd rm --no-progress "$img-old" >/dev/null 2>&1
refused "with identity $id does not exist" "$img" identity="$id"

say "a namespace named after another image's id, with a space"
victim=$(new_image 4M)
vid=$(identity_of "$victim")
pool_id=${vid%%/*}
ns="${vid#*/} x"
nbdkit -U - "$RBDX_PLUGIN" "$victim" --run 'nbdsh -u "$uri" -c "h.pwrite(b\"\\x11\" * 4096, 0)"'
rbd namespace create "rbd/$ns"
at_exit "rbd rm --no-progress 'rbd/$ns/m' >/dev/null 2>&1; rbd namespace remove 'rbd/$ns' >/dev/null 2>&1"
rbd create --no-progress --size 8M "rbd/$ns/m"
nbdkit -U - "$RBDX_PLUGIN" "rbd/$ns/m" --run 'nbdsh -u "$uri" -c "h.pwrite(b\"\\x22\" * 4096, 0)"'
mid=$(identity_of "rbd/$ns/m")
[[ $mid =~ ^$pool_id/${vid#*/}%20x/[0-9a-f]+$ ]] || fail "identity of rbd/$ns/m is not escaped: '$mid'"
refused "identity= names an image of namespace ''" "rbd/$ns/m" identity="$vid"
serve "$d/n.sock" -- "rbd/$ns/m" identity="$mid"
nbdsh -u "$(uri "$d/n.sock")" -c - <<'PY' || fail "the escaped identity did not pin the namespace's image"
assert h.get_size() == 8 << 20, h.get_size()
assert h.pread(4096, 0) == b"\x22" * 4096
PY
stop_server "$d/n.sock"
say "identity $mid stated and pinned whole; $vid refused for rbd/$ns/m"

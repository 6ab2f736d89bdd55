#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C17 (tests/README.md): image names the export-name grammar cannot
# express.  librbd's API accepts '@' and '/' in an image name (the rbd CLI
# does not); an export name IMAGE@SNAP or POOL/IMAGE would then mean
# something else, so rbdx leaves such images out of NBD_OPT_LIST (the man
# page says so).  Names with spaces, '%', UTF-8 and the longest names
# librbd takes must keep working.
# The images live in a namespace of their own (pool=rbd/NS): a pool-mode
# NBD_OPT_LIST client such as nbdinfo --list opens every listed image, and
# other tests rename and remove theirs in pool rbd meanwhile.
# Asserts, with pool=rbd/NS:
#   - `nbdinfo --list` offers none of the '@' or '/' names;
#   - every name it offers opens with NBD_OPT_GO, and to the right image:
#     each test image has its own size, and the size negotiated matches;
#   - a space, a '%', UTF-8 and a 95-byte name are listed and open.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires nbdinfo nbdsh

prefix="t-c17-$$-"
long=$(printf "%s%0$((95 - ${#prefix}))d" "$prefix" 0)
good=("${prefix}with space" "${prefix}100%" "${prefix}ñandú-漢字" "$long")
bad=("${prefix}a@b" "${prefix}c/d")
hexes=()
for nm in "${good[@]}" "${bad[@]}"; do
  hexes+=("$(printf '%s' "$nm" | od -An -tx1 -v | tr -d ' \n')")
done
helper=$RBDX_TESTS/lifecycle/c17-names.py
ns="c17-$$"
rbd namespace create "rbd/$ns"
at_exit "rbd namespace remove 'rbd/$ns' >/dev/null 2>&1"
at_exit "'$helper' remove 'rbd/$ns' ${hexes[*]} >/dev/null 2>&1"
"$helper" create "rbd/$ns" $((4 << 20)) "${hexes[@]}"

d=$(tmpdir)
serve "$d/s.sock" -- pool="rbd/$ns"
nbdinfo --list --json "nbd+unix:///?socket=$d/s.sock" >"$d/list.json"

# The listed names of this test, one per line.
python3 - "$d/list.json" "rbd/$ns/$prefix" >"$d/ours" <<'PY'
import json, sys
prefix = sys.argv[2]
for e in json.load(open(sys.argv[1]))["exports"]:
    if e["export-name"].startswith(prefix):
        print(e["export-name"])
PY
for nm in "${bad[@]}"; do
  ! grep -qxF "rbd/$ns/$nm" "$d/ours" || fail "'$nm' is listed but cannot be opened by that name"
done
i=0
for nm in "${good[@]}"; do
  grep -qxF "rbd/$ns/$nm" "$d/ours" || fail "'$nm' is not listed: $(cat "$d/ours")"
  i=$((i + 1))
done
[ "$(wc -l <"$d/ours")" = "${#good[@]}" ] || fail "unexpected names listed: $(cat "$d/ours")"

# Open every listed name (as listed, and bare in pool mode) and check it
# is the right image by its size.
i=0
for nm in "${good[@]}"; do
  want=$(((4 << 20) + i * 1048576))
  for export in "rbd/$ns/$nm" "$nm"; do
    got=$(nbdsh -c - <<PY
h.set_export_name("""$export""")
h.connect_unix("$d/s.sock")
print(h.get_size())
h.pwrite(b"\x5a" * 512, 0)
h.flush()
assert h.pread(512, 0) == b"\x5a" * 512
h.shutdown()
PY
) || fail "export '$export' does not open"
    [ "$got" = "$want" ] || fail "export '$export' opened an image of $got bytes, expected $want"
  done
  i=$((i + 1))
done
say "${#good[@]} odd names listed and opened, ${#bad[@]} unaddressable names left out"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C28 (tests/README.md): image names with control characters.
# librbd's API accepts a newline, a carriage return, a tab, an escape or
# DEL in an image name; the export-name grammar refuses them, so
# pool-mode listing leaves such images out (the man page says why), and
# nbdkit's log names them with the characters escaped (\xHH), never as
# raw bytes that would split or forge a log line.
# The images live in a namespace of their own (as in test-c17-odd-names.sh).
# Asserts, with pool=rbd/NS:
#   - `nbdinfo --list` offers none of the control-character names, and
#     the plain name next to them is listed and opens the right image;
#   - asking for such a name fails at negotiation, the server lives on,
#     and the log shows the name escaped.
. "${RBDX_TESTS:-$(dirname "$0")/..}/lib.sh"
requires_cluster
requires nbdinfo nbdsh

prefix="t-c28-$$-"
good="${prefix}plain"
bad=("${prefix}a"$'\n'"b" "${prefix}cr"$'\r' "${prefix}tab"$'\t'"x"
     "${prefix}esc"$'\e'"[2J" "${prefix}del"$'\x7f')
hexes=()
for nm in "$good" "${bad[@]}"; do
  hexes+=("$(printf '%s' "$nm" | od -An -tx1 -v | tr -d ' \n')")
done
helper=$RBDX_TESTS/lifecycle/c17-names.py
ns="c28-$$"
rbd namespace create "rbd/$ns"
at_exit "rbd namespace remove 'rbd/$ns' >/dev/null 2>&1"
at_exit "'$helper' remove 'rbd/$ns' ${hexes[*]} >/dev/null 2>&1"
"$helper" create "rbd/$ns" $((4 << 20)) "${hexes[@]}"
[ "$(rbd ls "rbd/$ns" | wc -l)" -ge $((${#bad[@]} + 1)) ] ||
  fail "librbd did not create the images: $(rbd ls "rbd/$ns" | od -c | head)"

d=$(tmpdir)
serve "$d/s.sock" -v -- pool="rbd/$ns" 2>"$d/log"
nbdinfo --list --json "nbd+unix:///?socket=$d/s.sock" >"$d/list.json"

# The listed names: exactly the plain one.
python3 - "$d/list.json" "rbd/$ns/$good" <<'PY' || fail "listing: see above"
import json, sys
names = [e["export-name"] for e in json.load(open(sys.argv[1]))["exports"]]
if names != [sys.argv[2]]:
    sys.exit("listed %r, expected only %r" % (names, sys.argv[2]))
PY
got=$(nbdinfo --size "nbd+unix:///rbd/$ns/$good?socket=$d/s.sock") ||
  fail "the listed '$good' does not open"
[ "$got" = $((4 << 20)) ] || fail "'$good' opened an image of $got bytes"

# Asked for by name anyway: refused, the server lives on.
for nm in "${bad[@]}"; do
  for export in "rbd/$ns/$nm" "$nm"; do
    if EXPORT=$export nbdsh -c - >/dev/null 2>&1 <<PY
import os
h.set_export_name(os.environ["EXPORT"])
h.connect_unix("$d/s.sock")
PY
    then
      fail "export $(printf '%q' "$export") opened"
    fi
  done
done
kill -0 "$SERVER_PID" || fail "nbdkit died"
nbdinfo --size "nbd+unix:///rbd/$ns/$good?socket=$d/s.sock" >/dev/null ||
  fail "the server stopped serving after the refused names"

# The log: each name escaped, the raw bytes nowhere in rbdx's lines.
# (nbdkit 1.32.5's own debug lines, "client requested export '...'" and
# "open ... exportname=...", quote the client's name as it came: they
# are left out here.)
grep -av 'client requested export\|: open readonly=' "$d/log" >"$d/ours"
# Newer nbdkit (1.42.3 here; 1.32.5 does not) escapes a backslash in a
# debug message once more
# (rbdx's "\x0a" is logged as "\\x0a"): read the log with that undone.
sed 's/\\\\/\\/g' "$d/log" >"$d/log.plain"
grep -qF "image '${prefix}a\\x0ab' (id " "$d/log.plain" ||
  fail "the log does not name the newline image escaped: $(grep -a c28 "$d/log" | head -5)"
grep -qF "its name contains a control character" "$d/log.plain" ||
  fail "the log does not say why the images are not listed"
grep -qF "export 'rbd/$ns/${prefix}esc\\x1b[2J'" "$d/log.plain" ||
  fail "the refusal does not name the export escaped"
if grep -aq $'\e' "$d/ours" || grep -aq $'\x7f' "$d/ours" || grep -aq $'\r' "$d/ours"; then
  fail "raw control characters in rbdx's log lines: $(grep -an $'\e\\|\x7f\\|\r' "$d/ours" | cat -A | head -3)"
fi
# rbdx's messages go on after the name: "' (id ..." when listing,
# "': the image spec ..." when refusing; a raw newline would start a line so.
if grep -aqE "^b' \(id |^b': " "$d/log"; then
  fail "a name's newline split one of rbdx's log lines: $(grep -anE "^b' \(id |^b': " "$d/log" | head -3)"
fi
say "${#bad[@]} control-character names left out of the list and refused," \
  "logged escaped; '$good' listed and served"

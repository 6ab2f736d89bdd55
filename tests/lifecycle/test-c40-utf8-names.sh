#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C40 (tests/README.md): image names that are not UTF-8 or hold a
# C1 control (U+0080 to U+009F: U+009B is CSI, the one-character ESC [).
# The rbd CLI and librbd accept any byte but NUL and '/'; the NBD
# protocol wants export names and messages in UTF-8, and so does the
# Prometheus text format of metrics_file=.  The images live in a
# namespace of their own (as in test-c28-control-chars.sh, C0 controls).
# Asserts:
#   - image= (and a bare spec) naming such an image: nbdkit exits
#     non-zero before serving, its message names the spec escaped (\xHH);
#   - pool=rbd/NS: `nbdinfo --list` offers none of them (the plain name
#     and a name in valid multibyte UTF-8 are listed and open); asked for
#     anyway, bare or as a full spec, by NBD_OPT_GO with the raw bytes
#     (c40-opt-go.py), each gets an NBD error reply whose message is
#     UTF-8, and the same connection then opens the plain name; the
#     server lives on; the log names them escaped;
#   - the metrics file stays UTF-8 (a strict decode) after all that;
#   - the mapper's argument check refuses such specs and parameter
#     values (exit 2, nothing started; stand-in servers as in
#     tests/mapper/), and so does its rbd-nbd personality (exit 1).
. "${RBDX_TESTS:-$(dirname "$0")/..}/lib.sh"
requires_cluster
requires nbdinfo nbdsh python3

prefix="t-c40-$$-"
good="${prefix}plain"
utf8="${prefix}caf"$'\xc3\xa9\xe4\xb8\xad'        # "café" and a CJK character
bad=("${prefix}bad"$'\xff'"name" "${prefix}u"$'\xc2\x9b'"31mRED"
     "${prefix}over"$'\xc0\xaf' "${prefix}sur"$'\xed\xa0\x80'
     "${prefix}cut"$'\xe4\xb8')
shown=("${prefix}bad\\xffname" "${prefix}u\\xc2\\x9b31mRED"
       "${prefix}over\\xc0\\xaf" "${prefix}sur\\xed\\xa0\\x80"
       "${prefix}cut\\xe4\\xb8")
hex() { printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n'; }
ns="c40-$$"
rbd namespace create "rbd/$ns"
remove_images() {
  local nm
  for nm in "$good" "$utf8" "${bad[@]}"; do
    rbd rm --no-progress "rbd/$ns/$nm" >/dev/null 2>&1
  done
  rbd namespace remove "rbd/$ns" >/dev/null 2>&1
}
at_exit remove_images
for nm in "$good" "$utf8" "${bad[@]}"; do
  rbd create --size 4M "rbd/$ns/$nm" || fail "rbd create $(printf '%q' "$nm")"
done
d=$(tmpdir)

# image=: refused before serving (an nbdkit that served would still run
# when timeout stops it: status 124).
for i in "${!bad[@]}"; do
  for arg in "image=rbd/$ns/${bad[i]}" "rbd/$ns/${bad[i]}"; do
    rc=0
    rm -f "$d/a.sock"
    timeout 20 nbdkit -U "$d/a.sock" -f "$RBDX_PLUGIN" "$arg" \
      conf="$CEPH_CONF" >"$d/a.out" 2>"$d/a.err" || rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] ||
      fail "nbdkit $(printf '%q' "$arg"): exit $rc (served?): $(cat -A "$d/a.err")"
    grep -qF "'rbd/$ns/${shown[i]}': the image spec contains a control character or a byte that is not UTF-8" "$d/a.err" ||
      fail "nbdkit $(printf '%q' "$arg"): the message does not name it escaped: $(cat -A "$d/a.err")"
    python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$d/a.err" ||
      fail "nbdkit $(printf '%q' "$arg"): its message is not UTF-8: $(cat -A "$d/a.err")"
  done
done
say "image= with ${#bad[@]} names not UTF-8 or with a C1 control: refused before serving, named escaped"

# Pool mode.
serve "$d/s.sock" -v -- pool="rbd/$ns" metrics_file="$d/m.prom" \
  metrics_interval=1 2>"$d/log"
nbdinfo --list --json "nbd+unix:///?socket=$d/s.sock" >"$d/list.json"
python3 - "$d/list.json" "rbd/$ns/$good" "rbd/$ns/$utf8" <<'PY' || fail "listing: see above"
import json, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")   # strict
names = sorted(e["export-name"] for e in json.loads(text)["exports"])
want = sorted(a.encode("utf-8", "surrogateescape").decode("utf-8")
              for a in sys.argv[2:])
if names != want:
    sys.exit("listed %r, expected %r" % (names, want))
PY
got=$(EXPORT="rbd/$ns/$utf8" nbdsh -c - <<PY
import os
h.set_export_name(os.environ["EXPORT"])
h.connect_unix("$d/s.sock")
print(h.get_size())
PY
) || fail "the listed UTF-8 name does not open"
[ "$got" = $((4 << 20)) ] || fail "the UTF-8 name opened an image of $got bytes"

names=()
for nm in "${bad[@]}"; do
  names+=("$(hex "$nm")" "$(hex "rbd/$ns/$nm")")
done
"$RBDX_TESTS/lifecycle/c40-opt-go.py" "$d/s.sock" "${names[@]}" \
  "$(hex "rbd/$ns/$good")" >"$d/go.out" ||
  fail "NBD_OPT_GO of the refused names: $(cat "$d/go.out")"
[ "$(grep -c '^err 0x8' "$d/go.out")" -eq ${#names[@]} ] &&
  [ "$(tail -1 "$d/go.out")" = "ok $((4 << 20))" ] &&
  [ "$(wc -l <"$d/go.out")" -eq $((${#names[@]} + 1)) ] ||
  fail "NBD_OPT_GO replies: $(cat "$d/go.out") (wanted ${#names[@]} errors, then ok)"
kill -0 "$SERVER_PID" || fail "nbdkit died"
nbdinfo --size "nbd+unix:///rbd/$ns/$good?socket=$d/s.sock" >/dev/null ||
  fail "the server stopped serving after the refused names"
say "pool mode: none listed, ${#names[@]} NBD_OPT_GO refused with UTF-8 messages, the connection and server live on"

# The metrics file, written after the last open above (its label
# appears once a connection of it has counted): UTF-8 whole.
has_good() { grep -qF "image=\"rbd/$ns/$good\"" "$d/m.prom" 2>/dev/null; }
wait_for 30 has_good || fail "the metrics file never named rbd/$ns/$good"
python3 - "$d/m.prom" <<'PY' || fail "the metrics file is not UTF-8"
import sys
data = open(sys.argv[1], "rb").read()
try:
    data.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit("%s: %s near %r" % (sys.argv[1], e, data[max(0, e.start - 40):e.end + 10]))
if "\u009b".encode() in data:
    sys.exit("a raw C1 control (U+009B) in the metrics file")
PY

# The log: each name escaped, never raw, in rbdx's own lines (nbdkit's
# "client requested export" and ": open readonly=" debug lines quote the
# client's name as it came: left out, as in test-c28-control-chars.sh).
grep -av 'client requested export\|: open readonly=' "$d/log" >"$d/ours"
sed 's/\\\\/\\/g' "$d/log" >"$d/log.plain"
grep -qF "its name contains a control character or a byte that is not UTF-8" "$d/log.plain" ||
  fail "the log does not say why the images are not listed"
for s in "${shown[@]}"; do
  grep -qF "image '$s' (id " "$d/log.plain" ||
    fail "the log does not name '$s' escaped as not listed"
  for e in "rbd/$ns/$s" "$s"; do
    grep -qF "export '$e': the image spec contains a control character or a byte that is not UTF-8" "$d/log.plain" ||
      fail "the log does not name the refused export '$e' escaped"
  done
done
python3 - "$d/ours" <<'PY' || fail "rbdx's log lines are not UTF-8"
import sys
data = open(sys.argv[1], "rb").read()
data.decode("utf-8")
assert "\u009b".encode() not in data, "a raw U+009B"
PY
say "the metrics file and rbdx's log lines are UTF-8; the names logged escaped"

# The mapper: its argument check refuses such specs and values before
# anything starts.
rbdx=$RBDX_BUILD/server/rbdx
if [ -x "$rbdx" ]; then
  . "$RBDX_TESTS/mapper/mapper-lib.sh"
  standin_servers "$d/m"
  export RBDX_RUN_DIR=$d/m/run RBDX_DEV_DIR=$d/m/dev
  ln -s "$rbdx" "$d/m/rbd-nbd"
  # refused WANT-STATUS SHOWN CMD...: CMD exits WANT-STATUS naming SHOWN,
  # its message UTF-8, and starts nothing.
  refused() {
    local want=$1 s=$2 rc=0
    shift 2
    "$@" >"$d/m/out" 2>"$d/m/err" || rc=$?
    [ $rc -eq "$want" ] || fail "$(printf '%q ' "$@")exited $rc, not $want: $(cat -A "$d/m/err")"
    grep -qF -- "$s" "$d/m/err" ||
      fail "$(printf '%q ' "$@"): the message does not name $s: $(cat -A "$d/m/err")"
    python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$d/m/err" ||
      fail "$(printf '%q ' "$@"): the message is not UTF-8: $(cat -A "$d/m/err")"
    [ ! -e "$d/m/started" ] || fail "$(printf '%q ' "$@"): a server was started: $(cat "$d/m/started")"
  }
  for i in "${!bad[@]}"; do
    spec="rbd/${bad[i]}" s="'rbd/${shown[i]}' holds a control character or a byte that is not UTF-8"
    refused 2 "$s" "$rbdx" map --engine nbdkit -- "$spec"
    refused 2 "$s" "$rbdx" map -- "$spec" id=admin
    refused 1 "rbd-nbd: invalid spec 'rbd/${shown[i]}'" "$d/m/rbd-nbd" map "$spec"
    refused 2 "'conf=/tmp/${shown[i]}': the value holds a control character or a byte that is not UTF-8" \
      "$rbdx" map -- rbd/x "conf=/tmp/${bad[i]}"
  done
  # connection_info's name (JSON: the C1 control as \u009b).
  printf '{"driver_volume_type":"rbd","data":{"name":"rbd/u\\u009b31mRED","hosts":["127.0.0.1"],"ports":["6789"]}}' >"$d/m/ci.json"
  refused 2 "'rbd/u\\xc2\\x9b31mRED' holds a control character or a byte that is not UTF-8" \
    "$rbdx" map --connection-info "$d/m/ci.json"
  say "the mapper: ${#bad[@]} specs and parameter values refused (exit 2, rbd-nbd 1), nothing started"
else
  say "the mapper is not built: its checks not run"
fi

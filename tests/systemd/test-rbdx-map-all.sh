#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-rbdx-map-all: rbdx-map-all (run by rbdx-map.service) reads an
# rbdxtab the documented way and drives the mapper correctly, using a
# stand-in `rbdx` that records its arguments:
#  - map: `rbdx map -- SPEC OPT...` per line in order (after "--" the
#    mapper takes them as data, never as its options), comments (whole
#    line or from a word starting with '#'), blank lines and a last line
#    without newline handled; unmap: `rbdx unmap -- SPEC` in reverse order;
#  - the mapper's options in a line (--read-only, --connections=4, each of
#    the 13 a line may give): before the "--", in the order written, the
#    parameters after the spec in theirs, a value that looks like a spec or
#    a parameter staying part of its option's word; any other word
#    starting with '-' (-r, --device=, --conn=4, --read-only=yes,
#    --connections without a value, --, -o, ...) fails its line with a
#    message naming TABLE:LINE and the word, the mapper not run for it,
#    the other lines mapped (exit 3); list shows those lines and exits 1;
#  - one failed line: the others are still mapped, exit 3 (the status
#    rbdx-map.service accepts so the mapped servers keep running); every
#    line failed: exit 1;
#  - unmap of lines that are not mapped (the mapper's exit status 3):
#    reported "not mapped: nothing to unmap", exit 0; a real unmap
#    failure (1 or 2) among them still counts: exit 1;
#  - the mapper missing: exit 1 with a message saying so, without running
#    anything; no table or an empty one: exit 0, nothing to do;
#  - a line that starts with an option: exit 1 naming the line; bad
#    usage: exit 2.
# Covers: systemd/README.md "Mapping images at boot: rbdxtab".  No cluster
# needed.
. "$RBDX_TESTS/lib.sh"
script=$RBDX_BUILD/systemd/rbdx-map-all
[ -x "$script" ] || fail "$script not generated (is subdir('systemd') in meson.build?)"

d=$(tmpdir)
mkdir "$d/bin"
# The stand-in mapper: log "ARG|ARG|..." per call; fail for specs (the
# word after "--") listed in $d/fail; unmap exits 3, as rbdx does, for
# those listed in $d/unmapped.
cat >"$d/bin/rbdx" <<EOF
#!/usr/bin/env bash
(IFS='|'; echo "\$*") >>"$d/calls"
a=("\$@"); spec=
for ((i = 0; i < \$#; i++)); do [ "\${a[i]}" = -- ] && { spec=\${a[i + 1]}; break; }; done
grep -qxF -- "\$spec" "$d/fail" 2>/dev/null && { echo "rbdx: cannot \$1 \$spec" >&2; exit 1; }
[ "\$1" = unmap ] && grep -qxF -- "\$spec" "$d/unmapped" 2>/dev/null &&
  { echo "rbdx: \$spec is not mapped" >&2; exit 3; }
exit 0
EOF
chmod +x "$d/bin/rbdx"
: >"$d/fail"
: >"$d/unmapped"

printf '%s\n' \
  '# SPEC   OPTIONS' \
  '' \
  '   # indented comment' \
  'rbd/vm1  id=nbd keyring=/etc/ceph/ceph.client.nbd.keyring' \
  $'rbd/ns/db\texclusive=true   # trailing comment' \
  'vm2' >"$d/tab"
printf '%s' 'rbd/golden@base id=nbd ceph.rados_osd_op_timeout=30' >>"$d/tab"   # no final newline

run() { # run EXPECTED-STATUS ARGS...: run the script, keep its stderr
  local want=$1 rc=0
  shift
  : >"$d/calls"
  RBDXTAB=$d/tab RBDX=$d/bin/rbdx "$script" "$@" >"$d/out" 2>"$d/err" || rc=$?
  [ $rc -eq "$want" ] ||
    fail "rbdx-map-all $* exited $rc, expected $want; stderr:"$'\n'"$(cat "$d/err")"
}
expect_calls() { # expect_calls LINE...: the mapper calls, in order
  local want
  want=$(printf '%s\n' "$@")
  [ "$(cat "$d/calls")" = "$want" ] ||
    fail "mapper calls:"$'\n'"$(cat "$d/calls")"$'\n'"expected:"$'\n'"$want"
}

run 0 map
expect_calls \
  'map|--|rbd/vm1|id=nbd|keyring=/etc/ceph/ceph.client.nbd.keyring' \
  'map|--|rbd/ns/db|exclusive=true' \
  'map|--|vm2' \
  'map|--|rbd/golden@base|id=nbd|ceph.rados_osd_op_timeout=30'
say "map: 4 lines, in order, comments ignored"

run 0 unmap
expect_calls 'unmap|--|rbd/golden@base' 'unmap|--|vm2' 'unmap|--|rbd/ns/db' 'unmap|--|rbd/vm1'
say "unmap: reverse order"

run 0 list
[ "$(cut -f1 "$d/out" | tr '\n' ' ')" = "rbd/vm1 rbd/ns/db vm2 rbd/golden@base " ] ||
  fail "list printed: $(cat "$d/out")"
[ -s "$d/calls" ] && fail "list ran the mapper"

echo rbd/ns/db >"$d/fail"
run 3 map
expect_calls \
  'map|--|rbd/vm1|id=nbd|keyring=/etc/ceph/ceph.client.nbd.keyring' \
  'map|--|rbd/ns/db|exclusive=true' \
  'map|--|vm2' \
  'map|--|rbd/golden@base|id=nbd|ceph.rados_osd_op_timeout=30'
grep -q 'failed to map rbd/ns/db' "$d/err" || fail "no message for the failed line: $(cat "$d/err")"
grep -q '1 of 4' "$d/err" || fail "no failure count: $(cat "$d/err")"
say "one line failed: the others mapped, exit 3"

printf '%s\n' rbd/vm1 rbd/ns/db vm2 rbd/golden@base >"$d/fail"
run 1 map
say "every line failed: exit 1"
: >"$d/fail"

# No mapper: a clear message, exit 1, nothing run.  First RBDX naming a
# missing file, then (as at boot) RBDX unset, nothing at the configured
# path and no rbdx on PATH, unless this machine has the mapper installed.
rc=0
RBDXTAB=$d/tab RBDX=$d/none/rbdx "$script" map 2>"$d/err" || rc=$?
[ $rc -eq 1 ] || fail "RBDX naming a missing file gave exit $rc"
grep -q "cannot map the 4 image(s) listed in $d/tab: the rbdx mapper RBDX=$d/none/rbdx is not an executable file" "$d/err" ||
  fail "unclear message for a missing RBDX: $(cat "$d/err")"
configured=$(sed -n 's/^  if \[ -x "\(.*\)" \]; then$/\1/p' "$script")
[ -n "$configured" ] || fail "cannot find the configured mapper path in $script"
if [ ! -x "$configured" ] && ! PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v rbdx >/dev/null; then
  rc=0
  env -u RBDX RBDXTAB="$d/tab" PATH=/usr/sbin:/usr/bin:/sbin:/bin "$script" map 2>"$d/err" || rc=$?
  [ $rc -eq 1 ] || fail "a missing mapper gave exit $rc"
  grep -q "cannot map the 4 image(s) listed in $d/tab: the rbdx mapper is not installed (looked for $configured and for rbdx on PATH" "$d/err" ||
    fail "unclear message for a missing mapper: $(cat "$d/err")"
  say "missing mapper: $(cat "$d/err")"

  # The mapper is found on PATH when RBDX is unset.
  : >"$d/calls"
  env -u RBDX RBDXTAB="$d/tab" PATH="$d/bin:/usr/bin:/bin" "$script" map 2>"$d/err" ||
    fail "mapper on PATH not used: $(cat "$d/err")"
  [ "$(wc -l <"$d/calls")" -eq 4 ] || fail "mapper on PATH called $(wc -l <"$d/calls") times"
else
  say "an rbdx mapper is installed here: not checking the not-installed message"
fi

# Nothing to do: no table, an empty table; neither needs the mapper.
for tab in "$d/missing-tab" /dev/null; do
  rc=0
  RBDXTAB=$tab RBDX=$d/none/rbdx "$script" map 2>"$d/err" || rc=$?
  [ $rc -eq 0 ] || fail "table $tab: exit $rc: $(cat "$d/err")"
  grep -q 'nothing to map' "$d/err" || fail "table $tab: $(cat "$d/err")"
done

# The unmap of lines that are not mapped (exit 3 of the mapper) is no
# failure; any other failure still is.
printf '%s\n' rbd/ns/db vm2 >"$d/unmapped"
run 0 unmap
expect_calls 'unmap|--|rbd/golden@base' 'unmap|--|vm2' 'unmap|--|rbd/ns/db' 'unmap|--|rbd/vm1'
for s in rbd/ns/db vm2; do
  grep -qxF "rbdx-map-all: $s not mapped: nothing to unmap" "$d/err" ||
    fail "no 'not mapped' report for $s: $(cat "$d/err")"
done
! grep -q 'failed' "$d/err" || fail "a line not mapped counted as failed: $(cat "$d/err")"
printf '%s\n' rbd/vm1 rbd/ns/db vm2 rbd/golden@base >"$d/unmapped"
run 0 unmap
say "unmap of lines not mapped: reported, exit 0"
printf '%s\n' rbd/ns/db vm2 >"$d/unmapped"
echo rbd/golden@base >"$d/fail"
run 1 unmap
expect_calls 'unmap|--|rbd/golden@base' 'unmap|--|vm2' 'unmap|--|rbd/ns/db' 'unmap|--|rbd/vm1'
grep -q 'failed to unmap rbd/golden@base' "$d/err" || fail "no message for the failed unmap: $(cat "$d/err")"
grep -q '1 of 4 image(s) failed to unmap' "$d/err" || fail "no failure count: $(cat "$d/err")"
# Bad usage of the mapper (2) is a failure as well, never "not mapped".
sed -i 's/exit 1; }$/exit 2; }/' "$d/bin/rbdx"
grep -q 'exit 2; }$' "$d/bin/rbdx" || fail "the stand-in mapper was not changed to exit 2"
run 1 unmap
grep -q 'failed to unmap rbd/golden@base' "$d/err" || fail "exit 2 not a failure: $(cat "$d/err")"
sed -i 's/exit 2; }$/exit 1; }/' "$d/bin/rbdx"
: >"$d/fail"
: >"$d/unmapped"
say "a real unmap failure (exit 1 or 2) beside lines not mapped: counted, exit 1"

# The mapper's options: before "--", in the order written; the plugin
# parameters after the spec in theirs.  A value never becomes a word of
# its own, whatever it looks like.
printf '%s\n' \
  'rbd/ro  --read-only id=nbd --connections=4 ceph.rados_osd_op_timeout=30 --io-timeout=120' \
  'rbd/all --exclusive --notrim --quiesce --quiesce-hook=/usr/local/sbin/hook --reattach-timeout=10 --resize-poll=0 --engine=nbdkit --id=nbd --conf=/etc/ceph/ceph.conf --keyring=/etc/ceph/k writers=shared' \
  'rbd/val --id=rbd/other --conf=a=b --keyring=--filter=/x.so   # values stay in their word' \
  'rbd/plain id=nbd' >"$d/tab"
run 0 map
expect_calls \
  'map|--read-only|--connections=4|--io-timeout=120|--|rbd/ro|id=nbd|ceph.rados_osd_op_timeout=30' \
  'map|--exclusive|--notrim|--quiesce|--quiesce-hook=/usr/local/sbin/hook|--reattach-timeout=10|--resize-poll=0|--engine=nbdkit|--id=nbd|--conf=/etc/ceph/ceph.conf|--keyring=/etc/ceph/k|--|rbd/all|writers=shared' \
  'map|--id=rbd/other|--conf=a=b|--keyring=--filter=/x.so|--|rbd/val' \
  'map|--|rbd/plain|id=nbd'
run 0 unmap
expect_calls 'unmap|--|rbd/plain' 'unmap|--|rbd/val' 'unmap|--|rbd/all' 'unmap|--|rbd/ro'
run 0 list
[ "$(head -1 "$d/out")" = $'rbd/ro\t--read-only id=nbd --connections=4 ceph.rados_osd_op_timeout=30 --io-timeout=120' ] ||
  fail "list printed: $(cat "$d/out")"
say "mapper options: before '--' in order, the 13 a line may give, values kept in their word"

# Any other word starting with '-' fails its line (naming TABLE:LINE and
# the word); the mapper is not run for it, the others are mapped.
bad_words=(-r -c4 --device=/dev/nbd3 --conn=4 --read=only --read-only=yes --quiesce=true
           --connections --connections= --engine --id= -- - -o --option=a=b --format=json
           --force --connection-info=- --help --filter=/x.so -x=1)
{
  echo 'rbd/first id=nbd'
  for w in "${bad_words[@]}"; do printf 'rbd/bad id=nbd %s --read-only\n' "$w"; done
  echo 'rbd/last --read-only'
} >"$d/tab"
run 3 map
expect_calls 'map|--|rbd/first|id=nbd' 'map|--read-only|--|rbd/last'
n=1
for w in "${bad_words[@]}"; do
  n=$((n + 1))
  grep -qF -- "rbdx-map-all: $d/tab:$n: rbd/bad: '$w'" "$d/err" ||
    fail "no message naming $d/tab:$n and '$w': $(cat "$d/err")"
done
grep -qF -- "'--read-only=yes': --read-only takes no value" "$d/err" || fail "flag with a value: $(cat "$d/err")"
grep -qF -- "'--connections': --connections needs a value, written --connections=VALUE" "$d/err" ||
  fail "option without a value: $(cat "$d/err")"
grep -qF -- "'--conn=4' is not one of the mapper options a line may give" "$d/err" ||
  fail "abbreviation: $(cat "$d/err")"
grep -qF -- "(a line may give: --read-only --exclusive --notrim --quiesce --quiesce-hook= --connections=" "$d/err" ||
  fail "the message does not list the options a line may give: $(cat "$d/err")"
[ "$(grep -c 'failed to map rbd/bad: the line is refused' "$d/err")" -eq ${#bad_words[@]} ] ||
  fail "not every refused line reported as failed: $(cat "$d/err")"
grep -q "${#bad_words[@]} of $((${#bad_words[@]} + 2)) image(s) failed to map" "$d/err" ||
  fail "no failure count: $(cat "$d/err")"
run 1 list
[ "$(wc -l <"$d/out")" -eq $((${#bad_words[@]} + 2)) ] || fail "list printed: $(cat "$d/out")"
grep -qF -- "rbdx-map-all: $d/tab:2: rbd/bad: '-r'" "$d/err" || fail "list: $(cat "$d/err")"
[ -s "$d/calls" ] && fail "list ran the mapper"
# Unmap takes only the spec: a refused option does not keep it from
# unmapping what is mapped.
run 0 unmap
[ "$(wc -l <"$d/calls")" -eq $((${#bad_words[@]} + 2)) ] || fail "unmap calls: $(cat "$d/calls")"
say "${#bad_words[@]} words starting with '-' refused, each naming TABLE:LINE and the word; the other lines mapped, exit 3"

printf '%s\n' 'rbd/vm1 id=nbd' 'id=nbd rbd/vm2' >"$d/tab"
run 1 map
grep -q "$d/tab:2: the line must start with the image spec" "$d/err" ||
  fail "bad line not reported: $(cat "$d/err")"
[ -s "$d/calls" ] && fail "a table with a bad line was partly mapped"

run 2 frobnicate
run 2
say "bad line: exit 1 before mapping; bad usage: exit 2"

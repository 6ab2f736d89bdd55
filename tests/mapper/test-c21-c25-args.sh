#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-c21-c25-args: cases C21 and C25 (tests/README.md): an image spec or
# a parameter never becomes an option or a second parameter of the server
# the mapper starts.  Each hostile spec goes through the three ways in:
# `rbdx map` (with --engine nbdkit and the built-in engine), the "name"
# of a --connection-info JSON (map and unmap), and an rbdxtab line run by
# rbdx-map-all with the real mapper; hostile connection_info fields and
# rbdxtab options too.  The servers are stand-ins (RBDX_NBDKIT,
# RBDX_ENGINE and nbdkit on PATH) that record being started.
# Asserts, for --filter=FILE (FILE exists), --run=/bin/true,
# --pidfile=/tmp/p, rbd/a=b, conf=/x/y, keyring=/x/k, rbd/-x and a name
# with a newline:
#   - exit 2 with a message naming the spec (a newline shown as \n);
#   - no server was started, nothing was written in RBDX_RUN_DIR;
# rbdxtab lines: the mapper options a line may give reach the mapper as
# options (--connections=0, --engine=x refused by it), a hostile value in
# one stays its value, another word starting with '-' is refused by
# rbdx-map-all; their unmap: "not mapped", exit 0 (`rbdx unmap` and
# `rbdx status` of an image not mapped exit 3);
# a connection_info name that is an NBD URI and parameters longer than the
# state keeps are refused; C34: connection_info fields read strictly (an
# access_mode other than "rw"/"ro", data after the object, auth_enabled
# true without auth_username, fields of the wrong JSON type: exit 2
# naming the field; unknown qos_specs keys: a warning naming each); and a valid spec passes the check (as user nobody it then stops at
# "needs root").  What a server receives when a spec is accepted
# (image=SPEC after "--") is tests/unit/test-server-args.c and the fuzz
# target tests/fuzz/fuzz-args.c.  No cluster, no kernel.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/mapper/mapper-lib.sh"
mapper_requires
map_all=$RBDX_BUILD/systemd/rbdx-map-all
requires python3

d=$(tmpdir)
mkdir "$d/bin"
# The file of C21, one directory deep as there (/tmp/x.so): the spec
# --filter=/tmp/NAME.so is then pool '--filter=', namespace 'tmp', image
# NAME.so, which the spec grammar accepts.
so=/tmp/rbdx-c21-$$.so
: >"$so"
at_exit "rm -f $so"
standin_servers "$d"
export RBDX_RUN_DIR=$d/run RBDX_DEV_DIR=$d/dev PATH="$d/bin:$PATH"

nothing_started() {
  [ ! -e "$d/started" ] || fail "$1: a server was started: $(cat "$d/started")"
  [ -z "$(ls -A "$d/run" 2>/dev/null | grep -vx lock)" ] ||
    fail "$1: left in RBDX_RUN_DIR: $(ls -AR "$d/run")"
  [ ! -e "$d/dev" ] || fail "$1: a link was made: $(ls -AR "$d/dev")"
}
# refused SHOWN WANT-STATUS CMD...: CMD exits WANT-STATUS with SHOWN in
# its message and starts nothing.
refused() {
  local shown=$1 want=$2 rc=0
  shift 2
  "$@" >"$d/out" 2>"$d/err" || rc=$?
  [ $rc -eq "$want" ] || fail "$* exited $rc, not $want: $(cat "$d/err")"
  grep -qF -- "$shown" "$d/err" || fail "$*: the message does not name $shown: $(cat "$d/err")"
  nothing_started "$*"
}
conninfo() { # conninfo NAME [KEY VALUE...]: a connection_info JSON on stdout
  python3 - "$@" <<'PY'
import json, sys
name, rest = sys.argv[1], sys.argv[2:]
data = {"name": name, "auth_enabled": True, "auth_username": "cinder",
        "keyring": "[client.cinder]\n\tkey = AQBsecretsecretsecretsecretsecret==\n",
        "hosts": ["127.0.0.1"], "ports": ["6789"]}
for k, v in zip(rest[::2], rest[1::2]):
    data[k] = json.loads(v)
print(json.dumps({"driver_volume_type": "rbd", "data": data}))
PY
}

specs=("--filter=$so" --run=/bin/true --pidfile=/tmp/p rbd/a=b conf=/x/y
       keyring=/x/k rbd/-x $'rbd/a\nb')
for spec in "${specs[@]}"; do
  shown="'${spec//$'\n'/\\x0a}'"
  case $spec in -*) shown="$shown: it starts with '-'" ;; *=*) shown="$shown contains '='" ;; esac
  refused "$shown" 2 "$rbdx" map --engine nbdkit -- "$spec"
  refused "$shown" 2 "$rbdx" map -- "$spec" id=admin
  refused "$shown" 2 "$rbdx" map --engine nbdkit -c 2 -- "$spec" id=admin
  conninfo "$spec" >"$d/ci.json"
  refused "$shown" 2 "$rbdx" map --connection-info "$d/ci.json"
  refused "$shown" 2 "$rbdx" map --engine nbdkit --connection-info - <"$d/ci.json"
  refused "$shown" 2 "$rbdx" unmap --connection-info "$d/ci.json"
  say "refused through map, --connection-info map and unmap: $shown"
done
# Without "--" rbdx's own option parser sees the dashed ones first.
refused "unknown option '--filter=$so'" 2 "$rbdx" map --engine nbdkit "--filter=$so"

# connection_info fields that become parameters.
conninfo rbd/vol auth_username '"--run=/bin/sh"' >"$d/ci.json"
refused "'id=--run=/bin/sh': the value starts with '-'" 2 "$rbdx" map --connection-info "$d/ci.json"
conninfo rbd/vol hosts "[\"--filter=$so\"]" ports '[""]' >"$d/ci.json"
refused "'mon_host=--filter=$so'" 2 "$rbdx" map --connection-info "$d/ci.json"
conninfo rbd/vol cluster_name '"a\nb"' >"$d/ci.json"
refused "data.cluster_name 'a\\x0ab'" 2 "$rbdx" map --connection-info "$d/ci.json"
# The cluster name is a path component (/etc/ceph/CLUSTER.conf).
conninfo rbd/vol cluster_name '"../../tmp/x"' >"$d/ci.json"
refused "data.cluster_name '../../tmp/x' is no Ceph cluster name" 2 "$rbdx" map --connection-info "$d/ci.json"
# A mon_host longer than the mapper's 2047 bytes is refused, not cut.
conninfo rbd/vol hosts "[$(printf '"10.0.0.%d",' $(seq 1 200))\"10.0.0.201\"]" ports '[]' >"$d/ci.json"
refused "hosts make a mon_host longer than 2047 bytes" 2 "$rbdx" map --connection-info "$d/ci.json"
say "hostile connection_info fields refused"

# C34: connection_info read strictly.  access_mode is exactly "rw" or
# "ro"; nothing but whitespace after the object; auth_enabled true needs
# auth_username; a field of the wrong JSON type is refused naming it.
for m in RO rx "ro " ""; do
  conninfo rbd/vol access_mode "\"$m\"" >"$d/ci.json"
  refused "data.access_mode '$m' is neither \"rw\" nor \"ro\"" 2 "$rbdx" map --connection-info "$d/ci.json"
done
conninfo rbd/vol access_mode '"r\no"' >"$d/ci.json"
refused "data.access_mode 'r\x0ao'" 2 "$rbdx" map --connection-info "$d/ci.json"
printf '%s x' "$(conninfo rbd/vol)" >"$d/ci.json"
refused "data after the JSON object (at byte" 2 "$rbdx" map --connection-info "$d/ci.json"
printf '%s\n%s\n' "$(conninfo rbd/vol)" "$(conninfo rbd/other)" >"$d/ci.json"
refused "data after the JSON object" 2 "$rbdx" map --engine nbdkit --connection-info - <"$d/ci.json"
refused "data after the JSON object" 2 "$rbdx" unmap --connection-info "$d/ci.json"
conninfo rbd/vol auth_username null >"$d/ci.json"
refused "data.auth_enabled is true but data.auth_username is missing" 2 "$rbdx" map --connection-info "$d/ci.json"
conninfo rbd/vol auth_username '""' >"$d/ci.json"
refused "data.auth_username is empty" 2 "$rbdx" map --connection-info "$d/ci.json"
for kv in 'auth_enabled "true"|data.auth_enabled is a string, not a boolean' \
          'auth_username 5|data.auth_username is a number, not a string' \
          'keyring ["k"]|data.keyring is a list, not a string' \
          'hosts "127.0.0.1"|data.hosts is a string, not a list' \
          'ports 6789|data.ports is a number, not a list' \
          'hosts [5]|data.hosts[0] is a number, not a string' \
          'hosts ["a,b"]|data.hosts[0] '"'a,b'"' is not one host' \
          'qos_specs {"total_iops_sec":" -5"}|data.qos_specs.total_iops_sec '"' -5'"' is not a whole number' \
          'qos_specs {"total_iops_sec":true}|data.qos_specs.total_iops_sec is a boolean' \
          'access_mode 1|data.access_mode is a number, not a string'; do
  kv_=${kv%%|*}
  conninfo rbd/vol "${kv_%% *}" "${kv_#* }" >"$d/ci.json"
  refused "${kv#*|}" 2 "$rbdx" map --connection-info "$d/ci.json"
done
printf '{"data":"rbd/vol"}' >"$d/ci.json"
refused "connection_info: data is a string, not an object" 2 "$rbdx" map --connection-info "$d/ci.json"
# qos_specs keys rbdx does not map: a warning naming each, not a
# refusal (shown by unmap, which reads the same connection_info and
# finds the volume not mapped; as a user other than root it then stops
# at "needs root").
conninfo rbd/vol qos_specs '{"foo": "1", "size_iops_sec": "4096", "total_iops_sec": "9", "total_iops_sec_max_length": "2", "x\nFORGED": 1}' >"$d/ci.json"
rc=0; "$rbdx" unmap --connection-info "$d/ci.json" >"$d/out" 2>"$d/err" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "unmap with unknown qos_specs keys exited $rc: $(cat "$d/err")"
grep -qF "rbdx: warning: --connection-info $d/ci.json: data.qos_specs.foo is not a front-end QoS key rbdx knows: ignored" "$d/err" ||
  fail "no warning naming qos_specs.foo: $(cat "$d/err")"
grep -qF "data.qos_specs.size_iops_sec (the I/O size that counts as one I/O) has no equivalent in rbdx: ignored" "$d/err" ||
  fail "no warning naming qos_specs.size_iops_sec: $(cat "$d/err")"
grep -qF 'data.qos_specs.x\x0aFORGED is not' "$d/err" && ! grep -q '^FORGED' "$d/err" ||
  fail "the key with a newline is not shown escaped: $(cat -A "$d/err")"
! grep -q "total_iops_sec" "$d/err" || fail "a mapped qos_specs key was warned about: $(cat "$d/err")"
[ "$(grep -c warning "$d/err")" -eq 3 ] || fail "not 3 warnings: $(cat "$d/err")"
nothing_started "unmap with unknown qos_specs keys"
say "C34: access_mode, trailing data, auth_enabled and wrong types refused; unknown qos_specs keys warned"

# F3: cluster= and --cluster name files in librados: [A-Za-z0-9_-]+ only,
# refused before any server starts.
for c in ../../tmp/x .. a/b a.b; do
  refused "'cluster=$c': a Ceph cluster name is letters" 2 "$rbdx" map rbd/vm1 "cluster=$c"
  refused "'cluster=$c': a Ceph cluster name is letters" 2 "$rbdx" map --engine nbdkit rbd/vm1 -o "cluster=$c"
done
refused "'ceph.cluster=../x'" 2 "$rbdx" map rbd/vm1 ceph.cluster=../x
# F4: "." and ".." as pool, namespace, image or snapshot: the devlink
# (RBDX_DEV_DIR/SPEC) would leave its directory.
for spec in ../img . .. rbd/.. rbd/./img rbd/ns/.. rbd/img@.. rbd/img@.; do
  refused "bad image spec '$spec'" 2 "$rbdx" map --engine nbdkit -- "$spec"
  refused "bad image spec '$spec'" 2 "$rbdx" map -- "$spec" id=admin
  case $spec in */*)
    conninfo "$spec" >"$d/ci.json"
    refused "bad image spec '$spec'" 2 "$rbdx" map --connection-info "$d/ci.json" ;;
  esac
done
say "cluster names and '.'/'..' names refused"

# Command-line parameters.
refused "'id=--run=/bin/true'" 2 "$rbdx" map rbd/vm1 id=--run=/bin/true
refused "parameter '--filter=$so': '--filter' is not a parameter name" 2 "$rbdx" map -- rbd/vm1 "--filter=$so"
refused "image= refused" 2 "$rbdx" map rbd/vm1 -o image=rbd/other
refused "'id=a\\x0asupervisor=1'" 2 "$rbdx" map rbd/vm1 $'id=a\nsupervisor=1'

# Values with a newline and an escape sequence, in every message that
# names them: the line is not split (no line starts with what followed
# the newline) and no ESC byte reaches the terminal.
v=$'x\nFORGED\e[31m'
unsplit() { # unsplit WHAT: after refused, $d/err holds one whole message
  [ "$(wc -l <"$d/err")" -ge 1 ] || fail "$1: no message"
  ! grep -q $'\e' "$d/err" || fail "$1: a raw ESC byte in: $(cat -A "$d/err")"
  ! grep -q '^FORGED' "$d/err" || fail "$1: the message was split: $(cat -A "$d/err")"
}
for kv in "conf=/x$v" "id=$v" "quiesce_hook=/x$v" "cluster=$v"; do
  refused "'${kv%%=*}=" 2 "$rbdx" map rbd/vm1 "$kv"; unsplit "$kv"
done
refused "--device must name" 2 "$rbdx" map --device "$v" rbd/vm1; unsplit --device
refused "--connections must be" 2 "$rbdx" map -c "$v" rbd/vm1; unsplit -c
refused "-o wants KEY=VALUE, not 'x\x0aFORGED\x1b[31m'" 2 "$rbdx" map rbd/vm1 -o "$v"
unsplit -o
refused "image spec 'rbd/vm1x\x0aFORGED\x1b[31m'" 2 "$rbdx" map "rbd/vm1$v"; unsplit spec
rc=0; "$rbdx" "map$v" 2>"$d/err" || rc=$?
[ $rc -eq 2 ] && grep -qF "unknown command 'mapx\x0aFORGED\x1b[31m'" "$d/err" ||
  fail "an unknown command with a newline: exit $rc: $(cat -A "$d/err")"
unsplit "unknown command"
say "values with a newline and ESC are shown escaped"

# rbdxtab: a spec with '=' is not a spec for rbdx-map-all's parser; the
# rest reach the mapper as data (`rbdx map -- SPEC OPTIONS...`).
if [ -x "$map_all" ]; then
  for spec in "--filter=$so" --run=/bin/true --pidfile=/tmp/p rbd/a=b conf=/x/y keyring=/x/k; do
    printf '%s id=admin\n' "$spec" >"$d/tab"
    refused "the line must start with the image spec, not '$spec'" 1 \
      env RBDXTAB="$d/tab" RBDX="$rbdx" "$map_all" map
  done
  # The mapper options a line may give reach the mapper as options
  # (--connections=0 and --engine=x refused by its own checks, so
  # getopt_long took NAME=VALUE as one option), a hostile value inside one
  # stays that option's value (--id=--run=/bin/true: id=--run=/bin/true,
  # refused); any other word starting with '-' is refused by rbdx-map-all.
  printf '%s\n' 'rbd/-x id=admin' '-x' "rbd/vm1 --filter=$so" 'rbd/vm2 id=--run=/bin/true' \
    'rbd/vm3 ceph.key=AQBsecretsecretsecretsecretsecret==' 'rbd/vm4 --read-only --connections=0' \
    'rbd/vm5 --engine=x' 'rbd/vm6 --id=--run=/bin/true' >"$d/tab"
  refused "8 of 8 image(s) failed to map" 1 env RBDXTAB="$d/tab" RBDX="$rbdx" "$map_all" map
  for m in "image spec 'rbd/-x': a component starts with '-'" "image spec '-x': it starts with '-'" \
           "$d/tab:3: rbd/vm1: '--filter=$so' is not one of the mapper options a line may give" \
           "'id=--run=/bin/true': the value starts with '-'" \
           "parameter ceph.key= refused" "rbdx: --connections must be a number from 1 to" \
           "rbdx: --engine must be builtin or nbdkit, not 'x'"; do
    grep -qF -- "$m" "$d/err" || fail "rbdx-map-all: no '$m' in: $(cat "$d/err")"
  done
  [ "$(grep -c "'id=--run=/bin/true': the value starts with '-'" "$d/err")" -eq 2 ] ||
    fail "--id=--run=/bin/true not refused as id=--run=/bin/true: $(cat "$d/err")"
  ! grep -q AQBsecret "$d/err" || fail "the raw key was printed: $(cat "$d/err")"
  # None of them is mapped: unmap says so per line (the mapper's exit 3)
  # and is no failure.
  refused "rbdx: rbd/-x is not mapped" 0 env RBDXTAB="$d/tab" RBDX="$rbdx" "$map_all" unmap
  for s in rbd/-x -x rbd/vm1 rbd/vm2 rbd/vm3 rbd/vm4 rbd/vm5 rbd/vm6; do
    grep -qxF -- "rbdx-map-all: $s not mapped: nothing to unmap" "$d/err" ||
      fail "rbdx-map-all unmap: no 'not mapped' for $s: $(cat "$d/err")"
  done
  say "rbdxtab lines refused: specs with '=' and unknown options by rbdx-map-all, the rest by the mapper; unmap of them: not mapped, exit 0"
else
  say "rbdx-map-all not generated: rbdxtab part not run"
fi

# unmap and status of what is not mapped: exit 3 (rbdx(8), EXIT STATUS),
# which rbdx-map-all tells from a failure; a bad command line is still 2.
refused "rbdx: rbd/vm1 is not mapped" 3 "$rbdx" unmap -- rbd/vm1
refused "rbdx: rbd/vm1 is not mapped" 3 "$rbdx" status -- rbd/vm1
refused "unmap wants one device, image spec or URI" 2 "$rbdx" unmap -- rbd/vm1 rbd/vm2
say "unmap and status of an image not mapped: exit 3"

# A connection_info "name" that is an NBD URI (its fields would be
# dropped), and parameters longer than a mapping's state keeps (they
# would be missing from every server started later).
conninfo nbd+unix:///x?socket=/tmp/s >"$d/ci.json"
refused "the name 'nbd+unix:///x?socket=/tmp/s' is an NBD URI" 2 "$rbdx" map --connection-info "$d/ci.json"
long=$(printf 'x%.0s' {1..4100})
refused "a mapping keeps at most 4095" 2 "$rbdx" map rbd/vm1 "id=$long"
say "an NBD URI as connection_info name and oversized parameters refused"

# Case C36: only "/dev/nbdN" names a device.  connection_info's "name"
# "/dev/nbd0" is refused by unmap as by map (it is no image spec), never
# taken for /dev/nbd0.  With /dev/nbd0 mapping rbd/other and /dev/nbd1
# the image rbd/nbd-0 (state files in a run directory of its own, pid 1
# standing in for the live supervisor), `rbdx status nbd-0` is the
# mapping of rbd/nbd-0, and nbd0, nbd00, "nbd 0" are images not mapped.
conninfo /dev/nbd0 >"$d/ci.json"
refused "the pool name is empty" 2 "$rbdx" unmap --connection-info "$d/ci.json"
mkdir -p "$d/run36"
start1=$(awk '{ print $22 }' /proc/1/stat)
for m in "0 rbd/other" "1 rbd/nbd-0"; do
  set -- $m
  printf 'index=%s\ntarget=%s\nbackend=rbdx:%s\nsocket=%s/none.sock\nconnections=1\nsupervisor=1\nsupervisor_start=%s\n' \
    "$1" "$2" "$2" "$d" "$start1" >"$d/run36/nbd$1"
done
RBDX_RUN_DIR=$d/run36 "$rbdx" status nbd-0 >"$d/out" 2>"$d/err" ||
  fail "status nbd-0: $(cat "$d/err")"
head -n1 "$d/out" | grep -qx "/dev/nbd1: rbd/nbd-0" ||
  fail "status nbd-0 is not the mapping of rbd/nbd-0: $(cat "$d/out")"
for name in nbd0 nbd00 "nbd 0" nbd+0 /dev/nbd00; do
  rc=0
  RBDX_RUN_DIR=$d/run36 "$rbdx" status "$name" >"$d/out" 2>"$d/err" || rc=$?
  [ $rc -eq 3 ] && grep -qF "is not mapped" "$d/err" ||
    fail "status '$name' (exit $rc) took it for a device: $(cat "$d/out" "$d/err")"
done
rm -rf "$d/run36"
say "only /dev/nbdN names a device: nbd-0, nbd0, nbd00 are image specs"

# A relative RBDX_RUN_DIR or RBDX_DEV_DIR (the supervisor changes to /,
# and would read it against another directory): exit 2 naming it, for
# the rbdx commands and the rbd-nbd personality.
for v in RBDX_RUN_DIR RBDX_DEV_DIR; do
  for cmd in list-mapped "nbd-compat list-mapped"; do
    rc=0
    env "$v=rel/dir" "$rbdx" $cmd >"$d/out" 2>"$d/err" || rc=$?
    [ $rc -eq 2 ] && grep -qF "$v='rel/dir': must be an absolute path" "$d/err" ||
      fail "$v=rel/dir rbdx $cmd: exit $rc: $(cat "$d/err")"
  done
done
say "a relative RBDX_RUN_DIR or RBDX_DEV_DIR is refused"

# A valid spec passes the check: as nobody, it then needs root.
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 &&
   setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups test -x "$rbdx" 2>/dev/null; then
  chmod 0755 "$d"
  refused "mapping a device needs root" 1 setpriv --reuid=nobody --regid="$(id -g nobody)" \
    --clear-groups "$rbdx" map --engine nbdkit -- rbd/ns/vm-1@snap id=admin
  say "a valid spec and parameters pass the check"
fi
say "ok"

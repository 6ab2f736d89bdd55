#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-units-verify: the systemd units meson generates from systemd/
# (rbdx@.service, rbdx@.socket, rbdx-map.service) load without a single
# warning in `systemd-analyze verify`, instantiated with plain and
# escaped image specs (rbd/vm1, rbd/ns/vm-1, rbd/vm1@snap); the service's
# hardening stays rated "OK" by `systemd-analyze security --offline`
# (exposure <= 2.0); and verify really checks here (a broken copy fails).
# Covers: systemd/README.md (every unit it describes).  No cluster needed.
. "$RBDX_TESTS/lib.sh"
requires systemd-analyze systemd-escape

units=$RBDX_BUILD/systemd
for f in rbdx@.service rbdx@.socket rbdx-map.service rbdx-map-all; do
  [ -e "$units/$f" ] || fail "$units/$f not generated (is subdir('systemd') in meson.build?)"
done

d=$(tmpdir)
cp "$units/rbdx@.service" "$units/rbdx@.socket" "$d/"
# rbdx-map.service runs the installed rbdx-map-all, which verify wants to
# exist: point it at the build's copy of the same script.
sed "s|^\(Exec[A-Za-z]*=\)[^ ]*/rbdx-map-all |\1$units/rbdx-map-all |" \
  "$units/rbdx-map.service" >"$d/rbdx-map.service"
grep -q "^ExecStart=$units/rbdx-map-all map\$" "$d/rbdx-map.service" ||
  fail "rbdx-map.service has no ExecStart=.../rbdx-map-all map line"

# verify UNIT...: exit 0 and print nothing at all (a warning is a failure).
verify() {
  local out rc=0
  out=$(cd "$d" && systemd-analyze verify --man=no "$@" 2>&1) || rc=$?
  [ $rc -eq 0 ] && [ -z "$out" ] ||
    fail "systemd-analyze verify $* (exit $rc):"$'\n'"$out"
  say "verify $*: clean"
}

for spec in rbd/vm1 rbd/ns/vm-1 rbd/vm1@snap vm_1.x; do
  inst=$(systemd-escape "$spec")
  [ "$(systemd-escape -u "$inst")" = "$spec" ] || fail "escaping of $spec does not round-trip"
  # The file names: instances of the templates in $d.
  verify "$d/rbdx@$inst.service" "$d/rbdx@$inst.socket"
done
[ "$(systemd-escape --template=rbdx@.service rbd/vm1)" = "rbdx@rbd-vm1.service" ] ||
  fail "rbd/vm1 does not escape to rbdx@rbd-vm1.service"
verify "$d/rbdx-map.service"

# The service gets its socket from rbdx@%i.socket: nbdkit refuses -U, -p,
# -i, -s together with LISTEN_FDS, so the command line must have none.
exec_start=$(sed -n 's/^ExecStart=//p' "$d/rbdx@.service")
[ "$(grep -c '^ExecStart=' "$d/rbdx@.service")" -eq 1 ] || fail "rbdx@.service needs exactly one ExecStart"
for opt in -U --unix -p --port -i --inetd -s --single --run; do
  case " $exec_start " in *" $opt "*|*" $opt="*) fail "ExecStart has $opt: $exec_start" ;; esac
done
grep -q '^Requires=rbdx@%i.socket$' "$d/rbdx@.service" || fail "rbdx@.service does not require its socket"
grep -q '^ListenStream=/run/rbdx/sockets/%I.sock$' "$d/rbdx@.socket" || fail "rbdx@.socket path changed"

# The drop-ins systemd/README.md shows (blocks whose first line is
# "# /etc/systemd/system/UNIT.d/FILE.conf") load cleanly too.
# Limits that match the connection budgets (include/rbdx/budget.h: the
# plugin's default max_connections= is what LimitNOFILE= and TasksMax=
# allow; server/mapper/budget.h: the node budget of rbdx-map.service).
src=$RBDX_TESTS/..
def() { sed -n "s/^#define $1 \"\{0,1\}\([0-9]*\)\"\{0,1\}\$/\1/p" "$src/$2"; }
fds=$(def RBDX_CONN_FDS include/rbdx/budget.h)
rfds=$(def RBDX_BUDGET_RESERVE_FDS include/rbdx/budget.h)
rtasks=$(def RBDX_BUDGET_RESERVE_TASKS include/rbdx/budget.h)
cthreads=$(def RBDX_CONN_THREADS include/rbdx/budget.h)
nthreads=$(def RBDX_NBDKIT_THREADS server/common/limits.h)
node=$(def RBDX_NODE_CONNECTIONS_DEFAULT server/mapper/budget.h)
pthreads=$(def NBDKIT_THREADS_PER_CONN plugin/rbdx.c)
for v in fds rfds rtasks cthreads nthreads node pthreads; do
  [ -n "${!v}" ] || fail "cannot read the constant behind \$$v from the sources"
done
limit() { sed -n "s/^$1=\([0-9]*\)\$/\1/p" "$d/$2"; }
nofile=$(limit LimitNOFILE rbdx@.service)
tasks=$(limit TasksMax rbdx@.service)
[ -n "$nofile" ] && [ -n "$tasks" ] || fail "rbdx@.service sets no LimitNOFILE= or TasksMax="
by_fds=$(( (nofile - rfds) / fds ))
by_tasks=$(( (tasks - rtasks) / (cthreads + pthreads) ))
[ "$by_fds" -ge 64 ] && [ "$by_tasks" -ge 64 ] ||
  fail "rbdx@.service: LimitNOFILE=$nofile and TasksMax=$tasks allow $by_fds and $by_tasks connections (< 64)"
[ "$by_fds" -eq "$by_tasks" ] ||
  fail "rbdx@.service: LimitNOFILE= allows $by_fds connections, TasksMax= $by_tasks: set them together"
grep -q -- "--threads=$nthreads " <<<"$exec_start" ||
  fail "rbdx@.service does not pass --threads=$nthreads (RBDX_NBDKIT_THREADS): $exec_start"
say "rbdx@.service: LimitNOFILE=$nofile TasksMax=$tasks -> max_connections=$by_fds by default"
mnofile=$(limit LimitNOFILE rbdx-map.service)
mtasks=$(limit TasksMax rbdx-map.service)
[ -n "$mnofile" ] && [ -n "$mtasks" ] || fail "rbdx-map.service sets no LimitNOFILE= or TasksMax="
[ $(( (mnofile - rfds) / fds )) -ge 64 ] ||
  fail "rbdx-map.service: LimitNOFILE=$mnofile is short of one server's 64 connections"
need=$(( node * (14 + nthreads + 2) ))
[ "$mtasks" -ge "$need" ] ||
  fail "rbdx-map.service: TasksMax=$mtasks is short of the node budget's $node connections ($need threads)"
say "rbdx-map.service: LimitNOFILE=$mnofile TasksMax=$mtasks for a node budget of $node"

readme=$RBDX_TESTS/../systemd/README.md
[ -r "$readme" ] || fail "$readme missing"
n=$(awk -v d="$d" '
  /^```/ { if (inblock) { inblock = 0; out = "" } else { inblock = 1; first = 1 }; next }
  inblock && first { first = 0
    if (match($0, /^# \/etc\/systemd\/system\/rbdx[^ ]*\.d\/[a-z-]+\.conf$/)) {
      f = substr($0, 23); split(f, parts, "/"); system("mkdir -p \"" d "/" parts[1] "\"")
      out = d "/" f; n++ } }
  inblock && out != "" { print >out }
  END { print n + 0 }' "$readme")
[ "$n" -ge 2 ] || fail "found $n drop-in examples in $readme, expected at least 2"
verify "$d/rbdx@rbd-vm1.service" "$d/rbdx@rbd-vm1.socket"
grep -q '^ListenStream=127.0.0.1:10809$' "$d/rbdx@rbd-vm1.socket.d/tcp.conf" || fail "tcp drop-in not extracted"
grep -q '^LoadCredential=' "$d/rbdx@.service.d/keyring.conf" || fail "keyring drop-in not extracted"
say "the $n drop-ins of README.md verify cleanly"
rm -rf "$d/rbdx@rbd-vm1.socket.d" "$d/rbdx@.service.d"

# Hardening: the offline security analysis rates the service "OK".
if systemd-analyze security --help 2>&1 | grep -q -- '--offline'; then
  out=$(cd "$d" && systemd-analyze security --offline=true --man=no --threshold=20 \
          "$d/rbdx@rbd-vm1.service" 2>&1) ||
    fail "systemd-analyze security rates rbdx@.service above 2.0:"$'\n'"$(grep -e '✗' -e Overall <<<"$out")"
  say "$(grep 'Overall exposure' <<<"$out")"
fi

# Negative control: verify must reject a broken copy in this environment
# (an unknown key and a missing binary), or the checks above prove nothing.
bad=$(tmpdir)
sed 's/^Type=exec/Type=exec\nNoSuchKey=1/; s|^ExecStart=[^ ]*|ExecStart=/nonexistent/nbdkit|' \
  "$d/rbdx@.service" >"$bad/rbdx@.service"
cp "$d/rbdx@.socket" "$bad/"
if out=$(cd "$bad" && systemd-analyze verify --man=no "$bad/rbdx@rbd-x.service" 2>&1) && [ -z "$out" ]; then
  fail "systemd-analyze verify accepted a broken unit: it checks nothing here"
fi
say "a broken copy is rejected"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-restart-policy: a crash-looping export stays up.  rbdx@.service
# restarts nbdkit however often it fails (no start limit a client could
# use up by crashing it), a fixed RestartSec= apart, and every exit's
# cause reaches the journal: nbdkit's messages on stderr, and the
# ExecStopPost= line with systemd's SERVICE_RESULT/EXIT_CODE/EXIT_STATUS.
# rbdx-map.service has no start limit either (its servers are restarted
# by the mapper's supervisor).  There is no systemd as PID 1 here, so the
# restarts themselves are not run; the properties are read from the
# generated units (which test-units-verify.sh verifies), and nbdkit's
# error output is checked by running the unit's own ExecStart.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/systemd/unit-lib.sh"
requires systemd-analyze systemd-escape nbdkit

svc=$RBDX_UNITS/rbdx@.service

# prop FILE SECTION KEY: the last value of KEY in SECTION ("" if unset).
prop() {
  awk -v sec="[$2]" -v key="$3" '
    /^\[/ { in_sec = ($0 == sec); next }
    in_sec && index($0, key "=") == 1 { v = substr($0, length(key) + 2) }
    END { print v }' "$1"
}

# seconds SPAN: a systemd time span in whole seconds (systemd's parser).
seconds() {
  systemd-analyze timespan "$1" |
    awk '/μs:|us:/ { printf "%d\n", $2 / 1000000 }'
}

# Start limit: off (interval 0), or a burst no crash loop can reach.
interval=$(prop "$svc" Unit StartLimitIntervalSec)
burst=$(prop "$svc" Unit StartLimitBurst)
[ -n "$interval" ] || fail "rbdx@.service sets no StartLimitIntervalSec= (systemd's default: 5 starts in 10 s)"
[ "$(seconds "$interval")" = 0 ] ||
  fail "rbdx@.service: StartLimitIntervalSec=$interval (burst ${burst:-5}): a client crashing nbdkit can exhaust it"
[ -z "$(prop "$svc" Unit StartLimitAction)" ] ||
  fail "rbdx@.service sets StartLimitAction="
say "start limit: StartLimitIntervalSec=$interval (off)"

# Restart on every failure, crashes included, a few seconds apart.
restart=$(prop "$svc" Service Restart)
case $restart in
  on-failure|on-abnormal|always) ;;
  *) fail "rbdx@.service: Restart=$restart does not restart after a crash" ;;
esac
[ -z "$(prop "$svc" Service RestartPreventExitStatus)" ] ||
  fail "rbdx@.service exempts exit statuses from restarting"
rsec=$(prop "$svc" Service RestartSec)
[ -n "$rsec" ] || fail "rbdx@.service sets no RestartSec= (default 100 ms: a busy loop)"
s=$(seconds "$rsec")
[ "$s" -ge 1 ] && [ "$s" -le 30 ] || fail "rbdx@.service: RestartSec=$rsec, expected 1-30 s"
say "restart: Restart=$restart, RestartSec=$rsec"

# Whether this systemd could do a growing delay (RestartSteps=, 254+).
d=$(tmpdir)
sed 's/^RestartSec=.*/&\nRestartSteps=5\nRestartMaxDelaySec=60s/' "$svc" >"$d/rbdx@rbd-x.service"
cp "$RBDX_UNITS/rbdx@.socket" "$d/"
if (cd "$d" && systemd-analyze verify --man=no "$d/rbdx@rbd-x.service" 2>&1) |
     grep -q "Unknown key.*RestartSteps"; then
  say "$(systemctl --version | head -1): no RestartSteps= (systemd 254+), so a fixed RestartSec="
else
  say "this systemd knows RestartSteps=: a growing delay could be used"
fi

# Logging: nbdkit in the foreground writes its messages to stderr, which
# goes to the journal; ExecStopPost= logs systemd's view of the exit.
[ "$(prop "$svc" Service StandardError)" = journal ] ||
  fail "rbdx@.service: StandardError=$(prop "$svc" Service StandardError), expected journal"
unit_exec_start rbd/vm1
for w in --foreground --log=stderr; do
  case " ${UNIT_ARGV[*]} " in
    *" $w "*) ;;
    *) fail "ExecStart does not run nbdkit with $w: ${UNIT_ARGV[*]}" ;;
  esac
done
post=$(prop "$svc" Service ExecStopPost)
for v in SERVICE_RESULT EXIT_CODE EXIT_STATUS; do
  [[ $post == *"\${$v}"* ]] || fail "ExecStopPost= does not log \${$v}: $post"
done
prog=${post%% *}
[ -x "${prog#[-@:+!]}" ] || fail "ExecStopPost= program ${prog} does not exist"
say "ExecStopPost: $post"

# nbdkit's own error (a bad parameter: it exits before serving) is on
# stderr when started the unit's way.
export RBDX_OPTS="no_such_parameter=1"
unit_exec_start rbd/vm1
rc=0
err=$(LISTEN_FDS= "${UNIT_ARGV[@]}" 2>&1 </dev/null >/dev/null) || rc=$?
unset RBDX_OPTS
[ $rc -ne 0 ] || fail "nbdkit accepted no_such_parameter=1"
grep -q 'no_such_parameter' <<<"$err" ||
  fail "nbdkit's error (exit $rc) does not name the parameter on stderr: $err"
say "a failing start: exit $rc, stderr: $(head -1 <<<"$err")"

# The mapping service: no start limit that failures could use up.
map=$RBDX_UNITS/rbdx-map.service
[ -z "$(prop "$map" Unit StartLimitBurst)" ] ||
  fail "rbdx-map.service sets StartLimitBurst="
[ "$(prop "$map" Service Type)" = oneshot ] ||
  fail "rbdx-map.service is no longer a oneshot (then it needs its own restart policy)"
say "rbdx-map.service: oneshot, the mapper's supervisor restarts its servers"

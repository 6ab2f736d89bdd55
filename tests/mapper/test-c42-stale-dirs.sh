#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-c42-stale-dirs: case C42 (tests/README.md): the private directory
# RUN_DIR/sup-PID of a supervisor that was killed is removed whole by the
# next `rbdx list-mapped` (or map), whatever its server and supervisor
# left in it.  No cluster, no kernel, no root needed.
# Asserts, in a scratch RBDX_RUN_DIR:
#   - sup-DEAD (a pid no process has) holding what a mapping leaves,
#     nbd.sock, server.log, supervisor.log, size, metrics.prom,
#     quiesce-device, and the temporary names of a server killed while
#     rewriting them (metrics.prom.tmp123, size.77.3, quiesce-device.new),
#     plus a symbolic link to a file outside: gone, the file outside kept;
#   - sup-ALIVE (this shell's pid), sup-0DEAD and sup-DEADx (not names a
#     supervisor makes), and a sup-DEAD2 that is a link to a directory
#     elsewhere: kept, and what that link points to untouched.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/mapper/mapper-lib.sh"
mapper_requires

d=$(tmpdir)
export RBDX_RUN_DIR=$d/run RBDX_DEV_DIR=$d/dev
mkdir -m 0755 "$RBDX_RUN_DIR"
# A pid no process has: past pid_max.
dead=$(( $(cat /proc/sys/kernel/pid_max) + 7 ))
echo precious >"$d/victim"
mkdir -m 0700 "$RBDX_RUN_DIR/sup-$dead"
for f in nbd.sock server.log supervisor.log size metrics.prom quiesce-device \
         metrics.prom.tmp123 size.77.3 quiesce-device.new; do
  echo x >"$RBDX_RUN_DIR/sup-$dead/$f"
done
ln -s "$d/victim" "$RBDX_RUN_DIR/sup-$dead/link"
for name in "sup-$$" "sup-0$dead" "sup-${dead}x"; do
  mkdir -m 0700 "$RBDX_RUN_DIR/$name"
  echo x >"$RBDX_RUN_DIR/$name/metrics.prom"
done
mkdir "$d/elsewhere"
echo keep >"$d/elsewhere/metrics.prom"
ln -s "$d/elsewhere" "$RBDX_RUN_DIR/sup-$((dead + 1))"

"$rbdx" list-mapped >"$d/out" 2>"$d/err" || fail "list-mapped failed: $(cat "$d/err")"
[ ! -e "$RBDX_RUN_DIR/sup-$dead" ] ||
  fail "the dead supervisor's directory stayed: $(ls -A "$RBDX_RUN_DIR/sup-$dead" | tr '\n' ' ')"
[ "$(cat "$d/victim")" = precious ] || fail "the file a link in it named was changed"
for name in "sup-$$" "sup-0$dead" "sup-${dead}x"; do
  [ -e "$RBDX_RUN_DIR/$name/metrics.prom" ] || fail "$name was removed"
done
[ -L "$RBDX_RUN_DIR/sup-$((dead + 1))" ] || fail "a sup-PID link was removed"
[ "$(cat "$d/elsewhere/metrics.prom")" = keep ] ||
  fail "the directory a sup-PID link names was emptied"
say "a dead supervisor's directory removed whole; live, odd and linked ones kept"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-unprivileged-user: rbdx@.service's ExecStart works the way the unit
# runs it, as an unprivileged system user (User=rbdx; here "nobody", as
# this machine has no rbdx user) with no capabilities at all
# (CapabilityBoundingSet=) and NoNewPrivileges, reading a copy of the
# cephx keyring that is only group-readable (root:GROUP 0640, the setup
# systemd/README.md asks for) and a 0644 ceph.conf: a socket-activated
# write and read-back succeed, the process really has uid nobody and an
# empty capability set, and SIGTERM leaves no watcher and no lock.
# Covers: systemd/README.md "User and hardening" (the service user).
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires systemd-socket-activate systemd-escape setpriv qemu-io
. "$RBDX_TESTS/systemd/unit-lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root to switch to user nobody"
id nobody >/dev/null 2>&1 || skip "no user nobody"
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups test -r "$RBDX_PLUGIN" 2>/dev/null ||
  skip "user nobody cannot read $RBDX_PLUGIN (a checkout under a 0700 directory)"
group=$(id -gn nobody)

d=$(tmpdir)
chmod 0755 "$d"
img=$(new_image 16M)

# The keyring and conf the sandbox uses, with the permissions a site
# gives them for rbdx.
keyring=$(sed -n 's/^[[:space:]]*keyring[[:space:]]*=[[:space:]]*//p' "$CEPH_CONF" | head -1)
[ -r "$keyring" ] || skip "cannot find the client keyring in $CEPH_CONF"
install -m 0640 -o root -g "$group" "$keyring" "$d/keyring"
install -m 0644 "$CEPH_CONF" "$d/ceph.conf"
sed -i '/^[[:space:]]*keyring[[:space:]]*=/d' "$d/ceph.conf"

export RBDX_CLUSTER_OPTS="conf=$d/ceph.conf keyring=$d/keyring"
export RBDX_OPTS="exclusive=true"
unit_exec_start "$img"
unset RBDX_CLUSTER_OPTS RBDX_OPTS

# setpriv execs nbdkit in the same process, so LISTEN_PID still matches.
sock=$d/nbd.sock
socket_activate "$d/server.pid" "$sock" -- \
  setpriv --reuid=nobody --regid="$group" --clear-groups --no-new-privs \
          --inh-caps=-all --bounding-set=-all -- "${UNIT_ARGV[@]}" ||
  fail "cannot start systemd-socket-activate"
pid=$SA_PID
u=$(uri "$sock")

qemu-io -f raw -c 'write -P 0x6b 0 1M' -c 'read -P 0x6b 0 1M' "$u" >/dev/null ||
  fail "I/O through the unprivileged server failed"
[ "$(cat /proc/"$pid"/comm)" = nbdkit ] || fail "process $pid is not nbdkit"
[ "$(stat -c %U /proc/"$pid")" = nobody ] || fail "nbdkit does not run as nobody"
grep -q '^CapEff:[[:space:]]*0*$' /proc/"$pid"/status || fail "nbdkit has capabilities: $(grep Cap /proc/"$pid"/status)"
grep -q '^CapBnd:[[:space:]]*0*$' /proc/"$pid"/status || fail "nbdkit's bounding set is not empty"
grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/"$pid"/status || fail "NoNewPrivs is not set"
[ "$(locks "$img")" -eq 1 ] || fail "exclusive=true: no lock held while serving"
say "served as nobody with no capabilities from a group-readable keyring"

kill -TERM "$pid"
wait_exit "$pid" 20
[ "$EXIT_STATUS" -eq 0 ] || fail "nbdkit exited with status $EXIT_STATUS after SIGTERM"
rm -f "$d/server.pid"
[ "$(watchers "$img")" -eq 0 ] || fail "watchers left: $(rbd status "$img")"
[ "$(locks "$img")" -eq 0 ] || fail "lock left: $(rbd lock ls "$img")"
say "SIGTERM: clean exit, no watcher, no lock"

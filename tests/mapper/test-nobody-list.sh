#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-nobody-list: the mapper's read-only commands run by a user other
# than root.  The run directory is root's, mode 0700 or 0755 (state.h),
# its state files 0600: a user
# who cannot read it must be told so, never shown an empty list or told
# that a mapped image "is not mapped" (the personality's unmap and
# detach of a spec look it up there first).  No cluster, no kernel: one
# state file whose supervisor is a live process (pid 1, with its start
# time, so no command takes it for a stale one).
# Asserts, as user nobody (each exit 1, nothing on stdout, a message
# naming the run directory and "run as root"): rbdx list-mapped (plain
# and json), rbdx status, rbd-nbd list-mapped (json), rbd-nbd unmap SPEC,
# rbd-nbd detach SPEC.  As root: list-mapped shows the mapping, and the
# state file is still there at the end.  The same again with the run
# directory 0755 (as rbdx@.socket makes it): the unreadable state file
# gives the same message, and the directory stays 0755.  rbdx's quiesce
# hook given the spec rbd/x fails as root (rbd/x mapped by another
# server) and does nothing, exit 0, as nobody (C43).
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/mapper/mapper-lib.sh"
mapper_requires
nobody_requires

d=$(tmpdir)
chmod 0755 "$d"
mkdir -m 0700 "$d/D"
export RBDX_RUN_DIR=$d/D RBDX_DEV_DIR=$d/dev
start=$(awk '{ print $22 }' /proc/1/stat)
printf 'index=0\ntarget=rbd/x\nbackend=rbdx:rbd/x\nsocket=%s/D/sup-1/nbd.sock\nconnections=2\nsupervisor=1\nsupervisor_start=%s\n' \
  "$d" "$start" >"$d/D/nbd0"
chmod 0600 "$d/D/nbd0"

"$rbdx" list-mapped >"$d/out" 2>"$d/err" || fail "list-mapped as root: $(cat "$d/err")"
grep -q 'rbd/x' "$d/out" || fail "list-mapped as root does not show rbd/x: $(cat "$d/out")"

# unreadable ARGS...: as nobody, ARGS exit 1 naming the run directory.
unreadable() {
  local rc=0
  as_nobody env RBDX_RUN_DIR="$RBDX_RUN_DIR" "$rbdx" "$@" >"$d/out" 2>"$d/err" || rc=$?
  [ $rc -eq 1 ] || fail "as nobody, rbdx $* exited $rc, not 1: $(cat "$d/out" "$d/err")"
  [ ! -s "$d/out" ] || fail "as nobody, rbdx $* printed: $(cat "$d/out")"
  grep -qF "cannot read the run directory $d/D" "$d/err" && grep -qF "run as root" "$d/err" ||
    fail "as nobody, rbdx $* said: $(cat "$d/err")"
  say "as nobody, rbdx $*: $(cat "$d/err")"
}
unreadable list-mapped
unreadable list-mapped --format json
unreadable status
unreadable nbd-compat list-mapped --format json
unreadable nbd-compat unmap rbd/x
unreadable nbd-compat detach rbd/x

# The run directory as rbdx@.socket makes it (DirectoryMode=0755,
# the socket units share it): readable by all, its state files still root's (0600).
# Told the same, never an empty list; and the mapper keeps it 0755.
chmod 0755 "$d/D"
unreadable list-mapped
unreadable list-mapped --format json
unreadable status
unreadable nbd-compat list-mapped --format json
unreadable nbd-compat unmap rbd/x
unreadable nbd-compat detach rbd/x
"$rbdx" list-mapped >"$d/out" 2>"$d/err" || fail "list-mapped as root (0755): $(cat "$d/err")"
grep -q 'rbd/x' "$d/out" || fail "list-mapped as root (0755) does not show rbd/x: $(cat "$d/out")"
[ "$(stat -c %a "$d/D")" = 755 ] || fail "the run directory became $(stat -c %a "$d/D")"

# rbdx's quiesce hook given the image spec (an nbdkit server's, DEVICE
# not a device; C43): as root it finds rbd/x mapped by another server
# than its parent and fails the snapshot; run by a server that is not
# root (rbdx@.service's nbdkit) it does nothing and succeeds, however
# root's unreadable mappings look.
hook=$RBDX_TESTS/../server/mapper/rbdx-quiesce-hook
mkdir -m 0755 "$d/bin"
ln -s "$rbdx" "$d/bin/rbdx"
rc=0
PATH=$d/bin:/usr/bin:/bin "$hook" rbd/x quiesce >"$d/out" 2>"$d/err" || rc=$?
[ $rc -eq 1 ] && grep -q "rbd/x is mapped on /dev/nbd0, not by this server" "$d/err" ||
  fail "the hook as root exited $rc: $(cat "$d/err")"
rc=0
as_nobody env PATH="$d/bin:/usr/bin:/bin" RBDX_RUN_DIR="$RBDX_RUN_DIR" "$hook" rbd/x quiesce \
  >"$d/out" 2>"$d/err" || rc=$?
[ $rc -eq 0 ] || fail "the hook as nobody exited $rc: $(cat "$d/err")"
say "the quiesce hook for rbd/x: fails as root (mapped by another server), does nothing as nobody"

[ -e "$d/D/nbd0" ] || fail "the state file is gone"
say "ok"

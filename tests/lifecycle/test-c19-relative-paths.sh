#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C19 (tests/README.md): relative paths in daemon mode.  Without -f
# nbdkit forks into the background and changes to /, so every path
# parameter must be made absolute when it is configured.
# Asserts: started from the sandbox directory with conf=ceph.conf,
# keyring=ceph.client.admin.keyring and, from a scratch directory,
# size_file=size (no -f), nbdkit serves: a client writes and reads back,
# and the size file appears in the scratch directory with the image size.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires nbdsh

sbdir=$(dirname "$CEPH_CONF")
[ -r "$sbdir/ceph.client.admin.keyring" ] ||
  skip "no ceph.client.admin.keyring beside CEPH_CONF (not a tests/ceph-sandbox cluster)"
img=$(new_image 16M)
d=$(tmpdir)
# The pid file is registered for the cleanup under the name serve() uses.
echo "$d/s.sock.pid" >>"$_state/pidfiles"

say "daemon mode from $sbdir with relative conf=, keyring=, size_file="
ln -s "$d" "$sbdir/c19-$$"
at_exit "rm -f '$sbdir/c19-$$'"
(cd "$sbdir" && env -u CEPH_CONF nbdkit -U "$d/s.sock" -P "$d/s.sock.pid" \
   "$RBDX_PLUGIN" "$img" conf=ceph.conf keyring=ceph.client.admin.keyring \
   size_file="c19-$$/size" advertise_size=max </dev/null) ||
  fail "nbdkit did not start in the background"
wait_for 30 test -s "$d/s.sock.pid" || fail "no pid file from nbdkit"
wait_for 30 test -S "$d/s.sock" || fail "nbdkit is not listening"
[ "$(readlink "/proc/$(cat "$d/s.sock.pid")/cwd")" = / ] ||
  fail "nbdkit did not change to / (not in daemon mode?)"

nbdsh -u "nbd+unix:///?socket=$d/s.sock" -c - <<'PY' || fail "I/O through the daemon failed"
h.pwrite(b"\x19" * 4096, 0)
h.flush()
assert h.pread(4096, 0) == b"\x19" * 4096
PY
wait_for 10 test -s "$d/size" || fail "size_file was not written in $d"
[ "$(cat "$d/size")" = $((16 << 20)) ] || fail "size_file holds '$(cat "$d/size")'"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C77 (tests/README.md): a clone (its parent 16 MiB of 0x11, the
# clone never written) served to a cephx id that may not write (osd
# 'profile rbd-read-only'), so its handle has no header watch and keeps
# the parent link of its open; connection A reads the parent's 0x11.
# Then, through nbdkit -r and rbdx-engine --readonly:
#   - `rbd flatten`, then a writable client discards the first 4 MiB
#     (the image now reads zeros there);
#   - or `rbd resize --allow-shrink --size 8M`, then `--size 16M` (the
#     overlap is now 8 MiB: the image reads zeros past it).
# Asserts: A's reads at 0, 4 MiB and 12 MiB fail with NBD_EIO (never the
# parent's 0x11, which the handle would read for deleted objects of the
# clone), A stays connected, the change of the link is logged.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
requires ceph nbdsh

d=$(tmpdir)
ro="c77ro$$"
readonly_id "$ro" "$d/ro.keyring"
pattern_file "$d/parent" 16M 11
parent=$(new_image 16M)
import_into "$parent" "$d/parent"
rbd snap create --no-progress "$parent@p" >/dev/null 2>&1
rbd snap protect "$parent@p" || fail "rbd snap protect failed"
n=0

# relinked HOW [engine]: HOW is flatten or shrink.
relinked() {
  local clone sock
  n=$((n + 1))
  clone="$parent-c$n"
  at_exit "rbd rm --no-progress $clone >/dev/null 2>&1; rbd snap unprotect $parent@p >/dev/null 2>&1"
  rbd clone "$parent@p" "$clone" >/dev/null 2>&1 || fail "rbd clone failed"
  sock="$d/$1-${2:-nbdkit}.sock"
  say "${2:-nbdkit}, read-only: rbd $1 of a served clone"
  serve_via "${2:-nbdkit}" "$sock" ro -- "$clone" id="$ro" keyring="$d/ro.keyring"
  client_start A "$(uri "$sock")"
  client_do A read 0 4096 11
  client_do A read $((12 << 20)) 4096 11
  if [ "$1" = flatten ]; then
    rbd flatten --no-progress "$clone" >/dev/null 2>&1 || fail "rbd flatten failed"
    nbdkit -U - "$RBDX_PLUGIN" "$clone" --run \
      'nbdsh -u "$uri" -c "h.trim(4 << 20, 0); h.flush()"' ||
      fail "the writable client's discard failed"
  else
    rbd resize --no-progress --allow-shrink --size 8M "$clone" >/dev/null 2>&1 ||
      fail "the shrink failed"
    rbd resize --no-progress --size 16M "$clone" >/dev/null 2>&1 ||
      fail "the grow failed"
  fi
  client_do A readerr 0 4096 EIO
  client_do A readerr $((4 << 20)) 4096 EIO
  client_do A readerr $((12 << 20)) 4096 EIO
  client_do A alive
  client_stop A
  stop_server "$sock"
  grep -q "rbdx: .*the clone's parent link changed" "$sock.log" ||
    fail "the change of the parent link is not logged: $(cat "$sock.log")"
  rbd rm --no-progress "$clone" >/dev/null 2>&1 || fail "cannot remove $clone"
}

relinked flatten
relinked shrink
if [ -x "$RBDX_BUILD/server/rbdx-engine" ]; then
  relinked flatten engine
  relinked shrink engine
fi
say "ok"

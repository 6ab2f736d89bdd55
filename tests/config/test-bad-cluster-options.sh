#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Proves: a bad way to reach the cluster makes nbdkit exit non-zero
# before serving, with one error naming the bad value
# (nbdkit-rbdx-plugin.pod, PARAMETERS conf=, mon_host=, ceph.NAME=):
# conf= naming a missing or non-Ceph file, cluster= or ceph.cluster= that is
# not a cluster name ([A-Za-z0-9_-]+, as it names files), a Ceph option that does not
# exist or rejects its value, and monitors that do not answer (bounded
# by ceph.client_mount_timeout, the error names the monitors).
# Positive controls: conf= with an explicit path; mon_host= given with
# the conf from $CEPH_CONF; mon_host= overriding a conf whose mon_host
# is dead; a conf without mon_host completed by mon_host=; valid ceph.*
# options.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires qemu-io ceph-conf
. "$RBDX_TESTS/config/config-lib.sh"

img=$(new_image 8M)
io='qemu-io -f raw -c "write -P 0x42 0 64k" -c "read -P 0x42 0 64k" "$uri"'
mons=$(ceph-conf -c "$CEPH_CONF" --lookup mon_host)
[ -n "$mons" ] || fail "no mon_host in $CEPH_CONF"

# conf=
refused "conf='$CFG_SCRATCH/none.conf'" "No such file" -- \
  "$img" "conf=$CFG_SCRATCH/none.conf"
{ echo 'this is not [a ceph conf'; head -c 512 /dev/urandom; } \
  >"$CFG_SCRATCH/garbage.conf"
refused "conf='$CFG_SCRATCH/garbage.conf'" "cannot parse" -- \
  "$img" "conf=$CFG_SCRATCH/garbage.conf"
refused "conf='$CFG_SCRATCH'" -- "$img" "conf=$CFG_SCRATCH"

# cluster=: librados makes it a path component (/etc/ceph/CLUSTER.conf),
# so only [A-Za-z0-9_-]+; a file the name would reach is never read.
: >"$CFG_SCRATCH/x.conf"
refused "cluster='../../$CFG_SCRATCH/x'" "letters, digits" -- \
  "$img" "cluster=../../$CFG_SCRATCH/x"
refused "cluster='..'" "letters, digits" -- "$img" cluster=..
refused "cluster='a.b'" "letters, digits" -- "$img" cluster=a.b
refused "ceph.cluster='../x'" "letters, digits" -- "$img" ceph.cluster=../x

# ceph.NAME=VALUE checked against Ceph's own option table.
refused "ceph.no_such_option" "no such Ceph option" -- "$img" ceph.no_such_option=1
refused "ceph.rados_osd_op_timeout='notanumber'" "rejects" -- \
  "$img" ceph.rados_osd_op_timeout=notanumber
refused "ceph.rbd_cache='maybe'" "rejects" -- "$img" ceph.rbd_cache=maybe
refused "ceph.client_mount_timeout='-5'" "rejects" -- \
  "$img" ceph.client_mount_timeout=-5

# Monitors that do not answer: bounded by client_mount_timeout.
t0=$SECONDS
refused "127.0.0.1:1" "no monitor answered" -- \
  "$img" mon_host=127.0.0.1:1 ceph.client_mount_timeout=3
[ $((SECONDS - t0)) -le 10 ] ||
  fail "unreachable monitors took $((SECONDS - t0)) s to report (limit 10)"
refused "notanaddress" -- "$img" mon_host=notanaddress ceph.client_mount_timeout=3

# Positive controls.
served "$io" -- "$img" "conf=$CEPH_CONF"
served "$io" -- "$img" "mon_host=$mons"
served "$io" -- "$img" ceph.rados_osd_op_timeout=30 ceph.rbd_cache=false \
  ceph.client_mount_timeout=10
# A conf whose monitors are dead: mon_host= overrides them.
sed 's/^mon_host = .*/mon_host = 127.0.0.1:1/' "$CEPH_CONF" >"$CFG_SCRATCH/dead.conf"
grep -q '^mon_host = 127.0.0.1:1$' "$CFG_SCRATCH/dead.conf" ||
  fail "could not rewrite mon_host in a copy of $CEPH_CONF"
refused "127.0.0.1:1" -- "$img" "conf=$CFG_SCRATCH/dead.conf" \
  ceph.client_mount_timeout=3
served "$io" -- "$img" "conf=$CFG_SCRATCH/dead.conf" "mon_host=$mons"
# A conf without mon_host at all, completed by mon_host=.
grep -v '^mon_host' "$CEPH_CONF" >"$CFG_SCRATCH/nomon.conf"
served "$io" -- "$img" "conf=$CFG_SCRATCH/nomon.conf" "mon_host=$mons"
say "ok"

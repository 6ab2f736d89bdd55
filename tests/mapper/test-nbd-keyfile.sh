#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-nbd-keyfile: rbd-nbd's --keyfile FILE (ceph-csi's map and attach
# lines) in the mapper's rbd-nbd personality: the key goes into a keyring
# file of the mapping's own (server/mapper/keyring.h), never onto a
# server's command line as ceph.keyfile= (which the mapper's argument
# check refuses).  No cluster, no kernel: the servers are stand-ins
# (RBDX_NBDKIT, RBDX_ENGINE) that record a start; on a host without an
# NBD driver a map stops before any server starts.
# Asserts (each exit 1, rbd-nbd's status for every failure, nothing
# started, nothing left in RBDX_RUN_DIR, the key never in a message):
#   - --keyfile with --keyring: refused, naming both (map and attach);
#   - a key file that is a FIFO, that every user may write, larger than
#     4 KiB, empty, holding a keyring instead of the bare key, or a key
#     followed by a NUL byte and more (/proc/self/environ is one): refused
#     with a message naming the file and what is wrong; one that does
#     not exist: its errno;
#   - a client id that cannot name a keyring section (--id 'a]b', and
#     without --id the id of $CEPH_ARGS);
#   - --log-file with a control character, or naming a FIFO, a
#     directory or a file of /proc: refused, naming it (/dev/null is not);
#   - as user nobody, a good key file: "needs root", nothing written;
#   - as root on a host without an NBD driver: "no NBD driver", no
#     keyring left (skipped where the host has one).
# The positive path (keyring=RUN_DIR/keyrings/... in the server's argv,
# no ceph.keyfile= and no key there, the file 0600 while mapped and
# removed at unmap, a failed map and a detach/attach leaving none
# behind) needs the kernel: tests/kernel/test-kernel-nbd-compat.sh.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/mapper/mapper-lib.sh"
mapper_requires
nobody_requires

key=AQBrZXlmaWxla2V5ZmlsZWtleWZpbGVrZXlmaWxlaw==
d=$(tmpdir)
chmod 0755 "$d"
mkdir "$d/bin" "$d/D"
chown nobody "$d/D"
standin_servers "$d"
export RBDX_RUN_DIR=$d/D RBDX_DEV_DIR=$d/dev
echo "$key" >"$d/keyfile"
chmod 0600 "$d/keyfile"

run() { # run WANT-STATUS CMD...: stderr in $d/err
  local want=$1 rc=0
  shift
  "$@" >"$d/out" 2>"$d/err" || rc=$?
  [ $rc -eq "$want" ] || fail "$* exited $rc, not $want: $(cat "$d/err")"
}
d_empty() {
  [ -z "$(find "$d/D" -mindepth 1 -not -name lock)" ] ||
    fail "$1: left in RBDX_RUN_DIR: $(find "$d/D" -mindepth 1 -printf '%p %m\n')"
  ! grep -qF "$key" "$d/err" "$d/out" || fail "$1: the key is in a message"
  [ ! -e "$d/started" ] || fail "$1: a server was started: $(cat "$d/started")"
}
# refused WHAT MESSAGE ARGS...: the personality with ARGS exits 1 saying
# MESSAGE, nothing started or left.
refused() {
  local what=$1 msg=$2
  shift 2
  run 1 "$rbdx" nbd-compat "$@"
  grep -qF -- "$msg" "$d/err" || fail "$what said: $(cat "$d/err")"
  d_empty "$what"
  say "$what: $(cat "$d/err")"
}

csi=(--id csi-rbd-node -m 127.0.0.1:1)
printf '[client.admin]\n\tkey = %s\n' "$key" >"$d/keyring"
refused "--keyfile with --keyring" "--keyfile and --keyring: give one" \
  "${csi[@]}" --keyfile="$d/keyfile" --keyring "$d/keyring" map rbd/x
refused "attach: --keyfile with --keyring" "--keyfile and --keyring: give one" \
  "${csi[@]}" --keyfile="$d/keyfile" --keyring "$d/keyring" attach rbd/x \
  --device /dev/nbd0 --cookie=c1
mkfifo "$d/fifo"
refused "a FIFO" "--keyfile $d/fifo: not a regular file" "${csi[@]}" --keyfile="$d/fifo" map rbd/x
cp "$d/keyfile" "$d/ww"
chmod 0666 "$d/ww"
refused "a world-writable key file" "--keyfile $d/ww: writable by every user" \
  "${csi[@]}" --keyfile="$d/ww" map rbd/x
head -c 5000 /dev/zero | tr '\0' A >"$d/big"
refused "a 5000-byte key file" "larger than 4 KiB" "${csi[@]}" --keyfile="$d/big" map rbd/x
: >"$d/empty"
refused "an empty key file" "--keyfile $d/empty: does not hold a key" \
  "${csi[@]}" --keyfile="$d/empty" map rbd/x
refused "a keyring as key file" "--keyfile $d/keyring: does not hold a key" \
  --id admin --keyfile="$d/keyring" map rbd/x
printf '%s\0garbage\n' "$key" >"$d/nul"
refused "a key, a NUL and more" "--keyfile $d/nul: does not hold a key" \
  "${csi[@]}" --keyfile="$d/nul" map rbd/x
refused "/proc/self/environ as key file" "--keyfile /proc/self/environ: does not hold a key" \
  --id admin --keyfile=/proc/self/environ map rbd/x
refused "a missing key file" "--keyfile $d/none: No such file or directory" \
  "${csi[@]}" --keyfile="$d/none" map rbd/x
refused "--id 'a]b'" "is not letters, digits" --id 'a]b' --keyfile="$d/keyfile" map rbd/x
# Without --id the keyring is for the id of $CEPH_ARGS, which the server
# connects as (rbdx/cephargs.h), as rbd-nbd does.
CEPH_ARGS="--keyring=/x -n client.a]b" refused "CEPH_ARGS -n client.a]b" \
  "id 'a]b' is not letters, digits" --keyfile="$d/keyfile" map rbd/x
refused "--log-file with a newline" "control character" \
  "${csi[@]}" --keyfile="$d/keyfile" --log-file $'/tmp/a\nb' map rbd/x
refused "--log-file a FIFO" "--log-file $d/fifo: not a regular file" \
  "${csi[@]}" --keyfile="$d/keyfile" --log-file "$d/fifo" map rbd/x
refused "--log-file a directory" "--log-file $d/D: not a regular file" \
  "${csi[@]}" --keyfile="$d/keyfile" --log-file "$d/D" map rbd/x
refused "--log-file in /proc" "--log-file /proc/sys/kernel/hostname: a file of /proc or /sys" \
  "${csi[@]}" --keyfile="$d/keyfile" --log-file /proc/sys/kernel/hostname map rbd/x
run 1 as_nobody "$rbdx" nbd-compat "${csi[@]}" --log-file /dev/null map rbd/x
grep -q "needs root" "$d/err" || fail "--log-file /dev/null as nobody said: $(cat "$d/err")"
say "--log-file /dev/null: taken (the map stops at: $(cat "$d/err"))"

chown nobody "$d/keyfile"
run 1 as_nobody "$rbdx" nbd-compat "${csi[@]}" --keyfile="$d/keyfile" map rbd/x --cookie=c1
grep -q "needs root" "$d/err" || fail "map as nobody said: $(cat "$d/err")"
d_empty "map --keyfile as nobody"
say "as nobody: --keyfile read, map refused (needs root), nothing written"

if [ ! -e /sys/module/nbd ] && ! command -v modprobe >/dev/null 2>&1; then
  run 1 "$rbdx" nbd-compat "${csi[@]}" --keyfile="$d/keyfile" map rbd/x
  grep -q "no NBD driver" "$d/err" || fail "map as root said: $(cat "$d/err")"
  d_empty "map --keyfile as root"
  say "as root without an NBD driver: no keyring left"
else
  say "this host has an NBD driver (or modprobe): not mapping as root here"
fi
say "ok"

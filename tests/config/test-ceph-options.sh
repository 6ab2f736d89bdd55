#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Proves (case C41): the ceph.NAME=VALUE parameters are checked before
# serving, through nbdkit and through rbdx-engine (both exit non-zero,
# nbdkit with one error line, the engine 1 without listening):
#   - ceph.log_file= naming a FIFO is refused at once (it used to hang
#     for ever in librados' open), also spelled ceph.log-file=;
#   - ceph.admin_socket= naming an existing regular file is refused, and
#     the file is still there with its contents (librados used to remove
#     it to bind its socket);
#   - a Ceph option given twice (ceph.rbd_cache= twice, ceph.rbd-cache=
#     after ceph.rbd_cache=) or together with the first-class parameter
#     that sets it (keyring= and ceph.keyring=, mon_host= and
#     ceph.mon_host=) is refused, the message naming both;
#   - ceph.key= is refused pointing to keyring=, the secret in no line
#     rbdx writes (nbdkit -v itself logs every parameter as given);
#   - case C59: the same two options set by $CEPH_ARGS (--log-file=FIFO,
#     --admin_socket FILE) are refused as ceph.NAME= is, and an
#     admin_socket from the conf= file that names an existing regular
#     file is refused, the file kept (librados used to remove it);
#   - ceph.host= that is not a host name (../escaped, a/b) is refused
#     with ceph.log_file=DIR/$host.log, and nothing is written outside
#     DIR (librados used to expand $host to ../escaped after rbdx had
#     checked DIR).
# And the mapper's argument check (`rbdx map`, stand-in servers: nothing
# starts) exits 2 for ceph.log_file=/proc/sys/kernel/core_pattern and
# ceph.admin_socket= naming an existing regular file, which stays.
# Positive control: ceph.log_file= and ceph.admin_socket= in a directory
# of the test's own serve (the log is written, the socket made).
. "$RBDX_TESTS/lib.sh"
requires_cluster
. "$RBDX_TESTS/config/config-lib.sh"

img=$(new_image 8M)
d=$CFG_SCRATCH
secret=AQBsecretsecretsecretsecretsecretsecr==
mkfifo "$d/fifo"
echo keep >"$d/regular"

# still_there: the planted regular file is untouched.
still_there() {
  [ -f "$d/regular" ] && [ "$(cat "$d/regular")" = keep ] ||
    fail "$1: $d/regular was removed or changed"
}

say "nbdkit: FIFO log file refused fast"
t0=$SECONDS
refused "ceph.log_file='$d/fifo'" "not a regular file" -- "$img" "ceph.log_file=$d/fifo"
refused "ceph.log-file='$d/fifo'" "not a regular file" -- "$img" "ceph.log-file=$d/fifo"
[ $((SECONDS - t0)) -lt 20 ] || fail "the FIFO refusals took $((SECONDS - t0)) s"
refused "ceph.log_file='/proc/sys/kernel/core_pattern'" "/proc or /sys" -- \
  "$img" ceph.log_file=/proc/sys/kernel/core_pattern

say "nbdkit: admin socket on a regular file refused, the file kept"
refused "ceph.admin_socket='$d/regular'" "not a socket" -- "$img" "ceph.admin_socket=$d/regular"
still_there "nbdkit ceph.admin_socket="
refused "ceph.admin-socket='$d/regular'" "not a socket" -- "$img" "ceph.admin-socket=$d/regular"
still_there "nbdkit ceph.admin-socket="
refused "ceph.admin_socket='$d/\$pid/x.asok'" "directory" -- "$img" "ceph.admin_socket=$d/\$pid/x.asok"

say "nbdkit: duplicates refused naming both"
refused "ceph.rbd_cache= given twice" -- "$img" ceph.rbd_cache=false ceph.rbd_cache=true
refused "ceph.rbd_cache=" "ceph.rbd-cache=" -- "$img" ceph.rbd_cache=false ceph.rbd-cache=true
refused "keyring=" "ceph.keyring=" "both" -- "$img" "keyring=$d/regular" ceph.keyring=/nonexistent
refused "mon_host=" "ceph.mon_host=" "both" -- "$img" ceph.mon_host=127.0.0.1 mon_host=127.0.0.2

say "nbdkit: ceph.key refused, the secret not repeated"
for v in "" -v; do
  refused "ceph.key= refused" "keyring=" -- $v "$img" "ceph.key=$secret"
  ! grep -v 'config key=ceph.key, value=' "$d/stderr" | grep -qF "$secret" ||
    fail "nbdkit $v: rbdx showed the key: $(cat "$d/stderr")"
done
refused "ceph.keyfile= refused" "keyring=" -- "$img" "ceph.keyfile=$d/regular"

say "nbdkit: the same paths from \$CEPH_ARGS and from the conf file"
t0=$SECONDS
CEPH_ARGS="--log-file=$d/fifo" refused "\$CEPH_ARGS sets log_file" "not a regular file" -- "$img"
[ $((SECONDS - t0)) -lt 20 ] || fail "the \$CEPH_ARGS FIFO refusal took $((SECONDS - t0)) s"
CEPH_ARGS="--id admin --admin_socket $d/regular" refused "\$CEPH_ARGS sets admin_socket" "not a socket" -- "$img"
still_there "\$CEPH_ARGS --admin_socket"
cp "$CEPH_CONF" "$d/asok.conf"
printf '[client]\nadmin_socket = %s\n' "$d/regular" >>"$d/asok.conf"
refused "admin_socket" "'$d/regular'" "exists and is not a socket" -- "$img" "conf=$d/asok.conf"
still_there "admin_socket in conf="
served true -- "$img" "conf=$d/asok.conf" "ceph.admin_socket=$d/own-\$pid.asok"

say "nbdkit: ceph.host= that would lead out of the log's directory refused"
mkdir "$d/logs"
for h in ../escaped a/b; do
  refused "ceph.host='$h'" "a host name is" -- "$img" "ceph.log_file=$d/logs/\$host.log" "ceph.host=$h"
done
[ ! -e "$d/escaped.log" ] && [ -z "$(ls -A "$d/logs")" ] ||
  fail "a log file was made: $(ls -A "$d" "$d/logs")"
served true -- "$img" "ceph.log_file=$d/logs/\$host.log" ceph.host=node-1
[ -f "$d/logs/node-1.log" ] || fail "no log file $d/logs/node-1.log: $(ls -A "$d/logs")"

say "nbdkit: log file and admin socket of our own serve"
served true -- "$img" "ceph.log_file=$d/client.log" "ceph.admin_socket=$d/c-\$pid.asok"
[ -f "$d/client.log" ] || fail "librados made no log file $d/client.log"

engine=$RBDX_BUILD/server/rbdx-engine
if [ -x "$engine" ]; then
  # engine_refused WORD... -- PARAMS...: exit 1 before listening, every
  # WORD in its messages.
  engine_refused() {
    local -a words=()
    local rc=0 w t0=$SECONDS
    while [ "$1" != "--" ]; do words+=("$1"); shift; done
    shift
    rm -f "$d/e.sock"
    timeout 60 "$engine" --oldstyle "$d/e.sock" "$img" "$@" 2>"$d/e.log" </dev/null || rc=$?
    say "rbdx-engine $* -> exit $rc after $((SECONDS - t0)) s: $(tr '\n' ' ' <"$d/e.log")"
    [ "$rc" -eq 1 ] || fail "engine $*: exit $rc, not 1"
    [ $((SECONDS - t0)) -lt 20 ] || fail "engine $*: took $((SECONDS - t0)) s"
    [ ! -e "$d/e.sock" ] || fail "engine $*: it listened"
    for w in "${words[@]}"; do
      grep -qF -- "$w" "$d/e.log" || fail "engine $*: no '$w' in: $(cat -A "$d/e.log")"
    done
  }
  say "engine: the same refusals"
  engine_refused "ceph.log_file='$d/fifo'" "not a regular file" -- "ceph.log_file=$d/fifo"
  engine_refused "ceph.admin_socket='$d/regular'" "not a socket" -- "ceph.admin_socket=$d/regular"
  still_there "engine ceph.admin_socket="
  engine_refused "ceph.rbd_cache= given twice" -- ceph.rbd_cache=false ceph.rbd_cache=true
  engine_refused "keyring=" "ceph.keyring=" "both" -- "keyring=$d/regular" ceph.keyring=/nonexistent
  engine_refused "mon_host=" "ceph.mon_host=" -- mon_host=127.0.0.2 ceph.mon_host=127.0.0.1
  engine_refused "ceph.key= refused" "keyring=" -- "ceph.key=$secret"
  ! grep -qF "$secret" "$d/e.log" || fail "engine: the key shown: $(cat "$d/e.log")"
else
  say "no engine built (-Dmapper=disabled): plugin only"
fi

rbdx=$RBDX_BUILD/server/rbdx
if [ -x "$rbdx" ]; then
  . "$RBDX_TESTS/mapper/mapper-lib.sh"
  standin_servers "$d/m"
  export RBDX_RUN_DIR=$d/m/run
  # mapper_refused PARAM WORD...: `rbdx map` exits 2, starting nothing.
  mapper_refused() {
    local p=$1 rc=0 w
    shift
    timeout 60 "$rbdx" map rbd/a "$p" >"$d/m/out" 2>"$d/m/err" </dev/null || rc=$?
    say "rbdx map rbd/a $p -> exit $rc: $(tr '\n' ' ' <"$d/m/err")"
    [ "$rc" -eq 2 ] || fail "rbdx map $p: exit $rc, not 2"
    [ ! -e "$d/m/started" ] || fail "rbdx map $p: a server was started"
    for w in "$@"; do
      grep -qF -- "$w" "$d/m/err" || fail "rbdx map $p: no '$w' in: $(cat "$d/m/err")"
    done
  }
  say "mapper: the argument check"
  mapper_refused ceph.log_file=/proc/sys/kernel/core_pattern \
    "ceph.log_file='/proc/sys/kernel/core_pattern'" "/proc or /sys"
  mapper_refused "ceph.admin_socket=$d/regular" "ceph.admin_socket='$d/regular'" "not a socket"
  still_there "rbdx map ceph.admin_socket="
  mapper_refused "ceph.log_file=$d/fifo" "not a regular file"
else
  say "no mapper built: plugin and engine only"
fi
say "ok"

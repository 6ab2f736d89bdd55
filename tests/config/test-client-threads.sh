#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rbdx's client thread defaults (include/rbdx/cluster.h): each Ceph client
# gets ms_async_op_threads=1 (one "msgr-worker-N" thread) unless the user
# set it: a ceph.ms_async_op_threads= parameter wins, and so does a value
# in the conf file.  Counted on nbdkit rbdx with one connection, which
# has two clients (its context and the shared writer's): with
# ceph_context=connection each has a Ceph context of its own and
# msgr-worker threads = 2 x the option's value.  Where Ceph allows
# ceph_context=shared (include/rbdx/cct.h) the two clients' one context
# has RBDX_SHARED_MS_ASYNC_OP_THREADS (2) unless the user set it.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires_python_nbd

img=$(new_image 16M)
dir=$(tmpdir)

# workers SOCK PID: msgr-worker threads of PID while one connection is open.
workers() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import nbd, sys, time
from rbdxtest import threads_named
sock, pid = sys.argv[1], int(sys.argv[2])
h = nbd.NBD()
h.connect_unix(sock)
h.pwrite(b"w" * 4096, 0)   # the shared writer's client too
h.flush()
time.sleep(0.5)
print(threads_named(pid, "msgr-worker", prefix=True))
h.shutdown()
PY
}

# expect NAME WANT [PLUGIN-ARGS...]
expect() {
  local name=$1 want=$2 got
  shift 2
  serve "$dir/$name.sock" -- "$img" "$@"
  got=$(workers "$dir/$name.sock" "$SERVER_PID") || fail "$name: no count"
  stop_server "$dir/$name.sock"
  [ "$got" = "$want" ] || fail "$name: $got msgr-worker threads, expected $want"
  say "$name: $got msgr-worker threads"
}

expect default 2 ceph_context=connection
expect parameter 6 ceph_context=connection ceph.ms_async_op_threads=3
cp "$CEPH_CONF" "$dir/ceph.conf"
printf '\n[client]\nms_async_op_threads = 2\n' >>"$dir/ceph.conf"
expect conf-file 4 ceph_context=connection conf="$dir/ceph.conf"
expect parameter-over-file 6 ceph_context=connection conf="$dir/ceph.conf" \
  ceph.ms_async_op_threads=3
if [ "$(nbdkit "$RBDX_PLUGIN" --dump-plugin | sed -n 's/^rbdx_ceph_context_auto=//p')" = shared ]; then
  expect shared-default 2
  expect shared-parameter 3 ceph.ms_async_op_threads=3
  cp "$CEPH_CONF" "$dir/ceph1.conf"
  printf '\n[client]\nms_async_op_threads = 1\n' >>"$dir/ceph1.conf"
  expect shared-conf-file 1 conf="$dir/ceph1.conf"
fi
say "the user's ms_async_op_threads wins over rbdx's default"

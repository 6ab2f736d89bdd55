#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rbdx's log_max_recent default (include/rbdx/cluster.h): each Ceph
# client keeps 1 recent log entry in memory instead of Ceph's 500 unless
# the user set it: a ceph.log_max_recent= parameter wins, and so does a
# value in the conf file.  Read back from the clients themselves, through
# an admin socket per client (ceph.admin_socket with Ceph's $cctid
# metavariable), on nbdkit rbdx with one open connection.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires_python_nbd

img=$(new_image 16M)
dir=$(tmpdir)

# values SOCK ASOKDIR: log_max_recent of every client with a socket in
# ASOKDIR while one connection is open, one per line.
values() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import glob, json, nbd, socket, struct, sys
sock, asok = sys.argv[1:]

def config_get(path, var):
    # Ceph's admin socket: a JSON command ended by NUL; the answer is a
    # 32-bit big-endian length and that many bytes of JSON (Ceph
    # src/common/admin_socket.cc).  Spoken here so that the test does not
    # need the ceph CLI (which needs python3-rados).
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(30)
        s.connect(path)
        s.sendall(json.dumps({"prefix": "config get", "var": var}).encode()
                  + b"\0")
        buf = b""
        while len(buf) < 4 or len(buf) < 4 + struct.unpack(">I", buf[:4])[0]:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    return json.loads(buf[4:])[var]

h = nbd.NBD()
h.connect_unix(sock)
h.pread(4096, 0)
socks = sorted(glob.glob(f"{asok}/*.asok"))
if not socks:
    sys.exit("no admin socket appeared")
for s in socks:
    print(config_get(s, "log_max_recent"))
h.shutdown()
PY
}

# expect NAME WANT [PLUGIN-ARGS...]
expect() {
  local name=$1 want=$2 got
  shift 2
  mkdir "$dir/$name"
  serve "$dir/$name.sock" -- "$img" "ceph.admin_socket=$dir/$name/\$cctid.asok" "$@"
  got=$(values "$dir/$name.sock" "$dir/$name" | sort -u) || fail "$name: no values"
  stop_server "$dir/$name.sock"
  [ "$got" = "$want" ] || fail "$name: log_max_recent '$got', expected $want"
  say "$name: log_max_recent $got"
}

expect default 1
expect parameter 50 ceph.log_max_recent=50
cp "$CEPH_CONF" "$dir/ceph.conf"
printf '\n[client]\nlog_max_recent = 20\n' >>"$dir/ceph.conf"
expect conf-file 20 conf="$dir/ceph.conf"
expect parameter-over-file 50 conf="$dir/ceph.conf" ceph.log_max_recent=50
say "the user's log_max_recent wins over rbdx's default"

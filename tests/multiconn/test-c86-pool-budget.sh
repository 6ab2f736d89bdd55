#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C86 (tests/README.md): in pool mode every image a connection
# writes to gets a shared writer, a Ceph client of its own, so a
# connection per image costs two clients.  nbdkit rbdx pool=rbd under a
# soft RLIMIT_NOFILE of 704 (default max_connections=: (704 - 64) / 32 =
# 20), 44 images with the default features; one client connects to each
# image in turn and writes 4 KiB, holding every connection.
# Asserts: exactly 20 connections are served and the later ones are
# refused (never a server that dies: nbdkit aborted at the 37th of a
# budget of 40 before); the server still runs; every connection served
# reads back what it wrote; the log names max_connections=20.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires_python_nbd

dir=$(tmpdir)
imgs=()
for i in $(seq 44); do
  imgs+=("$(new_image 16M)")
done
sock="$dir/s.sock"
soft=$(ulimit -Sn)
ulimit -Sn 704 || skip "cannot set a soft RLIMIT_NOFILE of 704 here"
serve "$sock" -- pool=rbd 2>"$dir/log"
ulimit -Sn "$soft"
say "nbdkit pool=rbd under a soft RLIMIT_NOFILE of 704, 44 images"
/usr/bin/python3 - "$sock" "${imgs[@]#rbd/}" <<'PY' || fail "see above"
import sys
import nbd

sock, names = sys.argv[1], sys.argv[2:]
held, refused = [], 0
for i, name in enumerate(names):
    h = nbd.NBD()
    h.set_export_name(name)
    try:
        h.connect_unix(sock)
    except nbd.Error as e:
        refused += 1
        continue
    if refused:
        sys.exit("%s was served after %d refusals" % (name, refused))
    h.pwrite(bytes([i + 1]) * 4096, 0)
    held.append((i, h))
print("served %d, refused %d" % (len(held), refused))
if len(held) != 20 or refused != len(names) - 20:
    sys.exit("expected 20 served and %d refused" % (len(names) - 20))
for i, h in held:
    if h.pread(4096, 0) != bytes([i + 1]) * 4096:
        sys.exit("connection %d does not read back its write" % i)
PY
kill -0 "$SERVER_PID" 2>/dev/null || fail "nbdkit died: $(tail -5 "$dir/log")"
grep -q "max_connections=20 reached" "$dir/log" ||
  fail "the refusals do not name max_connections=20: $(grep -i refused "$dir/log" | head -3)"
say "ok"

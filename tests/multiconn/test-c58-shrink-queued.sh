#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# C58 (tests/README.md): writes that straddle the end a shrink is about
# to make, queued behind a QoS limit (qos.write_iops_limit=1), while
# `rbd resize --allow-shrink` cuts the image to that end.  The range was
# checked when each write came; librbd cuts a write at the image's end
# and completes it with 0, so a write sent after the shrink used to be
# acknowledged whole while only its first half was stored.
# Asserts, through nbdkit and through the mapper's built-in engine, on a
# default-feature image (writes through the shared writer):
#   - every write answered after `rbd resize` returned fails with
#     NBD_ENOSPC, the ones straddling the new end and the one wholly past
#     it; none is acknowledged;
#   - at least two such writes were still queued (the case happened);
#   - the connection lives on: a write and read below the new end work.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires python3

d=$(tmpdir)
check() {
  local fe=$1 img sock
  img=$(new_image 64M)
  sock="$d/$fe.sock"
  say "$fe: 5 writes queued at 1 write/s across the end of a shrink to 32 MiB"
  if [ "$fe" = engine ]; then
    serve_engine "$sock" -- "$img" qos.write_iops_limit=1
  else
    serve "$sock" -- "$img" qos.write_iops_limit=1
  fi
  /usr/bin/python3 - "$(uri "$sock")" "$img" <<'PY' || fail "$fe: a write past the shrunk end was acknowledged"
import errno, subprocess, sys, time
import nbd

uri, img = sys.argv[1], sys.argv[2]
M = 1 << 20
h = nbd.NBD()
h.connect_uri(uri)
# Four 64 KiB writes across 32 MiB, one 4 KiB write wholly past it.
reqs = [(32 * M - 32768, 65536, 0xE0 + i) for i in range(4)]
reqs.append((32 * M + 8192, 4096, 0xEE))
cookies = {}
for off, n, pat in reqs:
    buf = nbd.Buffer.from_bytearray(bytearray([pat]) * n)
    cookies[h.aio_pwrite(buf, off)] = (off, n)
results, resized = {}, None

def reap():
    for c in list(cookies):
        if c in results:
            continue
        try:
            done = h.aio_command_completed(c)
            err = 0
        except nbd.Error as e:
            done, err = True, e.errnum
        if done:
            results[c] = (err, resized is not None)

while not results:
    h.poll(1)
    reap()
subprocess.run(["rbd", "resize", "--no-progress", "--allow-shrink",
                "--size", "32M", img], check=True,
               stdout=subprocess.DEVNULL)
resized = time.monotonic()
while len(results) < len(cookies):
    h.poll(1)
    reap()
after = [(cookies[c], err) for c, (err, late) in results.items() if late]
print("answered after the shrink: %s" % after)
if len(after) < 2:
    sys.exit("only %d writes were still queued after the shrink" % len(after))
bad = [(req, err) for req, err in after if err != errno.ENOSPC]
if bad:
    sys.exit("answered after the shrink other than ENOSPC (0 = acknowledged): %s" % bad)
h.pwrite(b"\x5a" * 4096, 0)
if h.pread(4096, 0) != b"\x5a" * 4096:
    sys.exit("the connection does not work below the new end")
h.shutdown()
PY
  stop_server "$sock"
  say "$fe: every write answered after the shrink got ENOSPC; the connection lives on"
}

check nbdkit
check engine
say "ok"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# NBD extended headers (NBD_OPT_EXTENDED_HEADERS: 64-bit request lengths
# and 64-bit block status extents; NBD doc/proto.md) asked for by a client
# that speaks them (libnbd >= 1.20, the Debian 13 root's 1.22), against an
# 8 GiB image with 1 MiB of data at 5 GiB.  nbdkit 1.42 does not offer
# them (its handshake answers the option as unsupported), so the client
# falls back to structured replies; the plugin's callbacks take 32-bit
# lengths in either case (NBDKIT_API_VERSION 2) and nbdkit splits or
# caps what a client asks for.  The test prints which was negotiated.
# Asserts, whichever it was:
#   - block status from 0 to the end, request after request, tiles
#     exactly [0, 8 GiB), reports the 1 MiB at 5 GiB as data and the
#     rest as a hole (fast-diff);
#   - a 32 MiB read (the export's maximum block size) at 5 GiB returns
#     the data, and a 32 MiB write there reads back;
#   - the connection still works after a request over the maximum
#     (NBD_EINVAL, strict mode off).
# Skipped where libnbd cannot ask for extended headers (Debian 12's 1.14).
. "${RBDX_TESTS:-$(dirname "$0")/..}/lib.sh"
requires_cluster
requires nbdsh
/usr/bin/python3 -c 'import nbd, sys; sys.exit(0 if hasattr(nbd.NBD, "get_extended_headers_negotiated") else 1)' ||
  skip "libnbd $(nbdsh --version 2>/dev/null | awk 'NR == 1 { print $2 }') cannot ask for extended headers (needs >= 1.20)"

d=$(tmpdir)
img=$(new_image 8G)
head -c 1048576 /dev/urandom >"$d/data"
serve "$d/s" -v -- "$img" 2>"$d/nbdkit.log"
nbdsh -c - <<PY || fail "extended-header client against $img (see above)"
import errno, nbd
G = 1 << 30
h.set_request_extended_headers(True)
h.add_meta_context(nbd.CONTEXT_BASE_ALLOCATION)
h.connect_unix("$d/s")
ext = h.get_extended_headers_negotiated()
print("== extended headers negotiated: %s (structured replies: %s)"
      % (ext, h.get_structured_replies_negotiated()))
size = h.get_size()
assert size == 8 * G, size
data = open("$d/data", "rb").read()
h.pwrite(data, 5 * G)
h.flush()

extents = []
def got(metacontext, offset, entries, err):
    if metacontext == nbd.CONTEXT_BASE_ALLOCATION:
        for i in range(0, len(entries), 2):
            extents.append((entries[i], entries[i + 1]))
    return 0
pos = 0
while pos < size:
    before = len(extents)
    h.block_status(min(size - pos, 0xffffffff if not ext else size - pos),
                   pos, got)
    assert len(extents) > before, "no extents at %d" % pos
    pos += sum(l for l, f in extents[before:])
assert pos == size, "extents end at %d, not at %d" % (pos, size)
print("== %d extents" % len(extents))
off = 0
for length, flags in extents:
    end = off + length
    overlaps = off < 5 * G + len(data) and end > 5 * G
    if overlaps:
        assert flags & nbd.STATE_HOLE == 0, "data at %d reported as a hole" % off
    elif end <= 4 * G or off >= 6 * G:
        # fast-diff: the objects never written are holes.
        assert flags & nbd.STATE_HOLE, "[%d, %d) not a hole: %d" % (off, end, flags)
    off = end

max_block = h.get_block_size(nbd.SIZE_MAXIMUM)
assert max_block == 32 << 20, max_block
buf = h.pread(max_block, 5 * G)
assert buf[:len(data)] == data and buf[len(data):] == bytes(max_block - len(data))
pattern = bytes([0x6b]) * max_block
h.pwrite(pattern, 5 * G + max_block)
assert h.pread(max_block, 5 * G + max_block) == pattern
h.set_strict_mode(0)
try:
    h.pread(max_block + 4096, 0)
    raise AssertionError("a read over the maximum block size succeeded")
except nbd.Error as e:
    assert e.errnum == errno.EINVAL, e
assert h.pread(4096, 5 * G) == data[:4096]
h.shutdown()
PY
say "ok ($(grep -c 'client unix socket' "$d/nbdkit.log") connection)"

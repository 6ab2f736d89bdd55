# SPDX-License-Identifier: BSD-3-Clause
# Helpers for the client tests in this directory (sourced after lib.sh).
#
# nbdinfo_map, nbdinfo_totals and qemu_map turn what real clients print
# about allocation into a normal form the tests compare with an expected
# string, and check on the way that the extents cover exactly [0, SIZE)
# without gaps or overlaps.
#
# All print one extent per line, "START LENGTH TYPE", neighbours of the
# same TYPE merged (a server may split extents wherever it likes), and
# exit non-zero with a message on stderr if the extents do not tile
# [0, SIZE).

_maps_py='
import json, sys

def tile(kind, exts, size):
    pos = 0
    out = []
    for start, length, typ in exts:
        if length <= 0:
            sys.exit("%s: empty extent at %d" % (kind, start))
        if start != pos:
            sys.exit("%s: extent starts at %d, expected %d (gap or overlap)"
                     % (kind, start, pos))
        pos = start + length
        if out and out[-1][2] == typ and out[-1][0] + out[-1][1] == start:
            out[-1][1] += length
        else:
            out.append([start, length, typ])
    if pos != size:
        sys.exit("%s: extents end at %d, expected %d" % (kind, pos, size))
    for e in out:
        print("%d %d %s" % tuple(e))

def rows(kind, path):
    """The 4-field lines of nbdinfo output, split."""
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if len(f) != 4:
            sys.exit("%s: unexpected line: %r" % (kind, line))
        yield f

mode, path, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
exts = []
if mode == "nbdinfo":
    # nbdinfo --map: "START LENGTH TYPE DESCRIPTION"
    for f in rows("nbdinfo", path):
        exts.append((int(f[0]), int(f[1]), f[3]))
    tile("nbdinfo --map", exts, size)
elif mode == "totals":
    # nbdinfo --map --totals: "BYTES PERCENT% TYPE DESCRIPTION"
    total = 0
    for f in rows("nbdinfo --totals", path):
        total += int(f[0])
        print("%d %s" % (int(f[0]), f[3]))
    if total != size:
        sys.exit("nbdinfo --totals: sizes add up to %d, expected %d"
                 % (total, size))
elif mode == "qemu":
    # qemu-img map --output=json: a JSON array of
    # {start, length, depth, present, zero, data[, offset]}
    for e in json.load(open(path)):
        if e.get("depth", 0) != 0 or not e.get("present", True):
            sys.exit("qemu-img map: unexpected extent %r" % e)
        typ = "data" if e["data"] else ("zero" if e["zero"] else "nonzero-hole")
        exts.append((e["start"], e["length"], typ))
    tile("qemu-img map", exts, size)
else:
    sys.exit("maps.sh: unknown mode " + mode)
'

# nbdinfo_map FILE SIZE: normal form of `nbdinfo --map` output in FILE
# (TYPE is nbdinfo's description: "data", "hole,zero", ...).
nbdinfo_map() { python3 -c "$_maps_py" nbdinfo "$1" "$2"; }

# nbdinfo_totals FILE SIZE: "BYTES DESCRIPTION" lines of
# `nbdinfo --map --totals` output in FILE; the bytes must add up to SIZE.
nbdinfo_totals() { python3 -c "$_maps_py" totals "$1" "$2"; }

# qemu_map FILE SIZE: normal form of `qemu-img map --output=json` output
# in FILE (TYPE is "data" or "zero").
qemu_map() { python3 -c "$_maps_py" qemu "$1" "$2"; }

# expect_same WHAT EXPECTED GOT: fail unless the two strings are equal.
expect_same() {
  if [ "$2" != "$3" ]; then
    printf '%s: expected:\n%s\ngot:\n%s\n' "$1" "$2" "$3" >&2
    fail "$1 differs from the expected result"
  fi
}

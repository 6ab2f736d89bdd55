#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# tests/lifecycle: NBD clients for test-c23-maintenance.sh (case C23).
#
#   c23-clients.py write URI CONNS BLOCKS DIR TAG
#       CONNS connections (threads, one libnbd handle each) write stamped
#       4 KiB blocks 0..BLOCKS-1 (connection i the blocks b with
#       b % CONNS == i) round and round until DIR/stop exists, then flush.
#       DIR/ready appears after the first round; DIR/acked.json holds the
#       stamp of every block's last acknowledged write (null when a later
#       write of that block failed: its content is then not known), and
#       the number of writes and of failed requests.
#   c23-clients.py check URI DIR [FILE]
#       read every block through a new connection (and from FILE, an
#       `rbd export` of the image, if given) and compare with acked.json.
#   c23-clients.py allocated URI BLOCKS
#       base:allocation: blocks 0..BLOCKS-1 must be data, the rest of the
#       export a hole (after `rbd object-map rebuild`).
import json
import os
import sys
import threading
import time

import nbd

BS = 4096


def stamp(tag, block, seq):
    s = ("%s:%d:%d:" % (tag, block, seq)).encode()
    return s + b"." * (BS - len(s))


def write(uri, conns, blocks, d, tag):
    conns, blocks = int(conns), int(blocks)
    acked = {}
    stats = {"writes": 0, "errors": 0, "messages": []}
    lock = threading.Lock()
    rounds = [0] * conns

    def run(i):
        h = nbd.NBD()
        h.connect_uri(uri)
        seq = 0
        mine = list(range(i, blocks, conns))
        while not os.path.exists(os.path.join(d, "stop")):
            for b in mine:
                seq += 1
                try:
                    h.pwrite(stamp(tag, b, seq), b * BS)
                    with lock:
                        acked[b] = "%s:%d:%d:" % (tag, b, seq)
                        stats["writes"] += 1
                except nbd.Error as e:
                    with lock:
                        acked[b] = None
                        stats["errors"] += 1
                        if len(stats["messages"]) < 5:
                            stats["messages"].append(str(e))
            rounds[i] += 1
        try:
            h.flush()
        except nbd.Error as e:
            with lock:
                stats["errors"] += 1
                stats["messages"].append("flush: %s" % e)
                for b in mine:
                    acked[b] = None
        h.shutdown()

    ts = [threading.Thread(target=run, args=(i,)) for i in range(conns)]
    for t in ts:
        t.start()
    while min(rounds) == 0 and any(t.is_alive() for t in ts):
        time.sleep(0.05)
    open(os.path.join(d, "ready"), "w").close()
    for t in ts:
        t.join()
    with open(os.path.join(d, "acked.json"), "w") as f:
        json.dump({"acked": acked, **stats}, f)


def check(uri, d, export=None):
    with open(os.path.join(d, "acked.json")) as f:
        st = json.load(f)
    h = nbd.NBD()
    h.connect_uri(uri)
    data = open(export, "rb").read() if export else None
    bad = 0
    n = 0
    for b, s in st["acked"].items():
        if s is None:
            continue
        b = int(b)
        n += 1
        got = h.pread(BS, b * BS)
        want = s.encode() + b"." * (BS - len(s))
        if got != want:
            bad += 1
            print("block %d: read %r, last acknowledged %r" %
                  (b, got[:40], s), file=sys.stderr)
        if data is not None and data[b * BS:(b + 1) * BS] != want:
            bad += 1
            print("block %d in the rbd export: %r, last acknowledged %r" %
                  (b, data[b * BS:b * BS + 40], s), file=sys.stderr)
    h.shutdown()
    print("%d blocks checked, %d writes, %d failed requests, %d wrong"
          % (n, st["writes"], st["errors"], bad))
    if st["messages"]:
        print("errors: %s" % "; ".join(st["messages"]), file=sys.stderr)
    sys.exit(1 if bad else 0)


def allocated(uri, blocks):
    blocks = int(blocks)
    h = nbd.NBD()
    h.add_meta_context(nbd.CONTEXT_BASE_ALLOCATION)
    h.connect_uri(uri)
    size = h.get_size()
    ext = []

    def cb(meta, off, entries, err):
        if meta == nbd.CONTEXT_BASE_ALLOCATION:
            for i in range(0, len(entries), 2):
                ext.append(entries[i:i + 2])
        return 0

    off = 0
    while off < size:
        ext.clear()
        h.block_status(min(size - off, 1 << 30), off, cb)
        for ln, flags in ext:
            hole = bool(flags & nbd.STATE_HOLE)
            end = off + ln
            if off < blocks * BS and hole:
                sys.exit("written bytes %d-%d reported as a hole" % (off, end))
            if end > blocks * BS and not hole:
                # Allocation is per object: the object of the last block
                # is data as a whole.
                obj = 4 << 20
                lim = -(-blocks * BS // obj) * obj
                if end > lim:
                    sys.exit("never written bytes %d-%d reported as data"
                             % (max(off, lim), end))
            off = end
    h.shutdown()
    print("block status: %d written blocks data, the rest a hole" % blocks)


if __name__ == "__main__":
    {"write": write, "check": check, "allocated": allocated}[sys.argv[1]](
        *sys.argv[2:])

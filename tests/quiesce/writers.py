#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# writers.py URI CONNS SLOTS STOPFILE PROGRESSFILE OUT
#
# CONNS libnbd connections to URI, one thread each, write 4 KiB blocks
# one after another: connection c writes slot k (k = 0, 1, ...) at
# offset (c * SLOTS + k) * 4096, each block filled with the 16-byte
# record "RBDXQ c k" repeated, so that any block read back names the
# write that put it there.  Each write is timed on CLOCK_REALTIME (as
# `date +%s.%N` in a hook) when sent and when its reply arrived.  They
# stop once STOPFILE exists; PROGRESSFILE holds the number of writes
# acknowledged so far (rewritten every 4 writes).  OUT gets one line
# per write: "c k t_send t_ack ok|ERROR".  Exit 0 unless a write failed
# or a connection ran out of slots before STOPFILE appeared.
import os
import sys
import threading
import time

import nbd

uri, conns, slots, stopfile, progress, out = sys.argv[1:7]
conns = int(conns)
slots = int(slots)
BS = 4096
lock = threading.Lock()
acked = [0]
records = []
failed = []


def block(c, k):
    rec = b"RBDXQ %3d %6d\n" % (c, k)
    return (rec * (BS // len(rec) + 1))[:BS]


def writer(c):
    h = nbd.NBD()
    h.connect_uri(uri)
    k = 0
    mine = []
    while not os.path.exists(stopfile):
        if k == slots:
            failed.append("connection %d ran out of slots" % c)
            break
        t0 = time.time()
        try:
            h.pwrite(block(c, k), (c * slots + k) * BS)
            ok = "ok"
        except nbd.Error as e:
            ok = "ERROR"
            failed.append("write %d/%d: %s" % (c, k, e))
        t1 = time.time()
        mine.append("%d %d %.6f %.6f %s" % (c, k, t0, t1, ok))
        k += 1
        with lock:
            acked[0] += 1
            if acked[0] % 4 == 0:
                with open(progress + ".tmp", "w") as f:
                    f.write("%d\n" % acked[0])
                os.rename(progress + ".tmp", progress)
    h.shutdown()
    with lock:
        records.extend(mine)


threads = [threading.Thread(target=writer, args=(c,)) for c in range(conns)]
for t in threads:
    t.start()
for t in threads:
    t.join()
with open(out, "w") as f:
    f.write("\n".join(records) + "\n")
for m in failed:
    print("writers.py: " + m, file=sys.stderr)
sys.exit(1 if failed else 0)

# SPDX-License-Identifier: BSD-3-Clause
# Case C74's reader (test-c74-removal-reads.sh): reads 4096 bytes at a
# time, all over an image of SIZE bytes of BYTE, until its reads have
# failed with EIO 50 times in a row or DEADLINE seconds passed.  Writes
# READY once a first read returned the image's data.  Prints one line:
#   good=N bad=N other=N eio=N last=ERRNO|ok
# bad counts reads that succeeded with any byte other than BYTE (the
# fault: zeros for data already deleted, or a clone's parent's data);
# other counts failures that are not EIO.
import sys
import time

import nbd

uri, size, byte, ready, deadline = (sys.argv[1], int(sys.argv[2]),
                                    int(sys.argv[3], 16), sys.argv[4],
                                    float(sys.argv[5]))
want = bytes([byte]) * 4096
h = nbd.NBD()
h.connect_uri(uri)
good = bad = other = eio = 0
last = "ok"
i = 0
end = time.monotonic() + deadline
while time.monotonic() < end and eio < 50:
    off = (i * 1040384) % (size - 4096) // 4096 * 4096   # all objects
    i += 1
    try:
        data = h.pread(4096, off)
    except nbd.Error as e:
        last = e.errno or str(e)
        if e.errno == "EIO":
            eio += 1
        else:
            other += 1
            eio = 0
        continue
    eio = 0
    last = "ok"
    if data == want:
        good += 1
        if good == 1:
            open(ready, "w").close()
    else:
        bad += 1
print("good=%d bad=%d other=%d eio=%d last=%s" % (good, bad, other, eio, last))
h.shutdown()

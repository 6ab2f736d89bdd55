#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# c22-reset.py: the resetting client of case C22 in tests/README.md.
#
# Usage: c22-reset.py HOST PORT OFFSET
#   One try: connects over TCP, negotiates by hand (fixed newstyle,
#   NBD_OPT_GO for the default export), queues 64 NBD_CMD_READ of 1 MiB
#   at OFFSET, OFFSET + 1 MiB, ..., waits until the first reply header
#   has arrived (so the server is answering them) and then until the
#   unread replies stop piling up in the socket (the server's threads are
#   blocked sending the rest), then closes the socket with SO_LINGER
#   {on, 0}: the kernel sends a TCP reset instead
#   of a FIN, and the server's pending sends fail with EPIPE/ECONNRESET.
#   libnbd offers no way to set SO_LINGER on its socket, hence this.
#   Exit status: 0 done, 3 the server refused the connection (gone),
#   1 anything else (a protocol error, named).
#
# Protocol facts from the NBD protocol (NetworkBlockDevice/nbd
# doc/proto.md): the "fixed newstyle" handshake, NBD_OPT_GO (7) with
# NBD_REP_INFO (3) replies ended by NBD_REP_ACK (1), option reply magic
# 0x3e889045565a9, request magic 0x25609513, simple reply magic
# 0x67446698; all integers big-endian.
import fcntl
import socket
import struct
import sys
import termios
import time

NBD_FLAG_FIXED_NEWSTYLE = 1 << 0
NBD_FLAG_C_FIXED_NEWSTYLE = 1 << 0
NBD_OPT_GO = 7
NBD_REP_ACK = 1
NBD_REP_INFO = 3
NBD_INFO_EXPORT = 0
OPT_REPLY_MAGIC = 0x3E889045565A9
REQUEST_MAGIC = 0x25609513
SIMPLE_REPLY_MAGIC = 0x67446698
NBD_CMD_READ = 0
MiB = 1 << 20
NREADS = 64


def die(msg):
    print("c22-reset: " + msg, file=sys.stderr)
    sys.exit(1)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            die("the server closed the connection during the handshake")
        buf += chunk
    return buf


def handshake(s):
    """Negotiate the default export; return its size in bytes."""
    magic, ihaveopt, hflags = struct.unpack(">8s8sH", recv_exact(s, 18))
    if magic != b"NBDMAGIC" or ihaveopt != b"IHAVEOPT":
        die("not a newstyle NBD server (greeting %r %r)" % (magic, ihaveopt))
    if not hflags & NBD_FLAG_FIXED_NEWSTYLE:
        die("the server does not offer fixed newstyle")
    s.sendall(struct.pack(">I", NBD_FLAG_C_FIXED_NEWSTYLE))
    # NBD_OPT_GO: export name length, name (empty), number of info requests.
    data = struct.pack(">IH", 0, 0)
    s.sendall(struct.pack(">8sII", b"IHAVEOPT", NBD_OPT_GO, len(data)) + data)
    size = None
    while True:
        magic, opt, rtype, length = struct.unpack(">QIII", recv_exact(s, 20))
        if magic != OPT_REPLY_MAGIC or opt != NBD_OPT_GO:
            die("bad option reply (magic %#x option %d)" % (magic, opt))
        payload = recv_exact(s, length) if length else b""
        if rtype == NBD_REP_ACK:
            break
        if rtype & (1 << 31):
            die("NBD_OPT_GO refused: reply type %#x %r" % (rtype, payload))
        if rtype == NBD_REP_INFO and len(payload) >= 12:
            (info,) = struct.unpack(">H", payload[:2])
            if info == NBD_INFO_EXPORT:
                size, _flags = struct.unpack(">QH", payload[2:12])
    if size is None:
        die("no NBD_INFO_EXPORT before NBD_REP_ACK")
    return size


def main():
    if len(sys.argv) != 4:
        print("usage: c22-reset.py HOST PORT OFFSET", file=sys.stderr)
        sys.exit(2)
    host, port, offset = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    try:
        s = socket.create_connection((host, port), timeout=30)
    except ConnectionRefusedError:
        print("c22-reset: connection refused: the server is gone",
              file=sys.stderr)
        sys.exit(3)
    size = handshake(s)
    if offset + NREADS * MiB > size:
        die("OFFSET + 64 MiB is past the export's end (%d bytes)" % size)
    reqs = b"".join(
        struct.pack(">IHHQQI", REQUEST_MAGIC, 0, NBD_CMD_READ, i + 1,
                    offset + i * MiB, MiB)
        for i in range(NREADS))
    s.sendall(reqs)
    # The first reply header: the server is sending replies now.
    magic, error, handle = struct.unpack(">IIQ", recv_exact(s, 16))
    if magic != SIMPLE_REPLY_MAGIC or error != 0:
        die("bad first reply (magic %#x error %d)" % (magic, error))
    # Read no more, and wait until the socket's receive queue stops
    # growing (at most 2 s): the server's worker threads are then blocked
    # sending, or waiting to send, the other replies.
    last, still, end = -1, 0, time.monotonic() + 2
    while still < 3 and time.monotonic() < end:
        time.sleep(0.01)
        queued = struct.unpack("i", fcntl.ioctl(
            s, termios.FIONREAD, struct.pack("i", 0)))[0]
        still = still + 1 if queued == last else 0
        last = queued
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


if __name__ == "__main__":
    main()

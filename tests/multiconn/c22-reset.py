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
# doc/proto.md): the handshake is tests/py/rbdxtest.py's; request magic
# 0x25609513, simple reply magic 0x67446698; all integers big-endian.
import fcntl
import socket
import struct
import sys
import termios
import time

from rbdxtest import ProtocolError, fixed_newstyle, opt_go, recvn

REQUEST_MAGIC = 0x25609513
SIMPLE_REPLY_MAGIC = 0x67446698
NBD_CMD_READ = 0
MiB = 1 << 20
NREADS = 64


def die(msg):
    print("c22-reset: " + msg, file=sys.stderr)
    sys.exit(1)


def recv_exact(s, n):
    try:
        return recvn(s, n)
    except EOFError as e:
        die("the server closed the connection: %s" % e)


def handshake(s):
    """Negotiate the default export; return its size in bytes."""
    try:
        fixed_newstyle(s)
        size, err = opt_go(s)
    except (ProtocolError, EOFError) as e:
        die("handshake: %s" % e)
    if err:
        die("NBD_OPT_GO refused: reply type %#x %r" % err)
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

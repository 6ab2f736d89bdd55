#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# c40-opt-go.py: the client of case C40 in tests/README.md.
#
# Usage: c40-opt-go.py SOCKET NAME...   (NAME: hex-encoded bytes)
#   One connection to the Unix socket SOCKET, negotiated by hand (fixed
#   newstyle), then NBD_OPT_GO for each NAME in turn, as raw bytes (libnbd
#   and nbdsh take export names as text, so cannot send a byte that is
#   not UTF-8).  Prints one line per NAME: "ok SIZE" (the export was
#   opened: the last NAME only, since the transmission phase follows) or
#   "err TYPE" (the NBD_REP_ERR_* reply type, in hex), and exits 1 when
#   the connection ends early or an error reply's message is not UTF-8
#   (the protocol wants UTF-8 there), naming it.
#
# Protocol facts from the NBD protocol (NetworkBlockDevice/nbd
# doc/proto.md): the "fixed newstyle" handshake, NBD_OPT_GO (7) with
# NBD_REP_INFO (3) replies ended by NBD_REP_ACK (1), error replies with
# bit 31 set, option reply magic 0x3e889045565a9; integers big-endian.
import binascii
import socket
import struct
import sys

from rbdxtest import recvn

NBD_OPT_GO = 7
NBD_REP_ACK = 1
NBD_REP_INFO = 3
NBD_INFO_EXPORT = 0
OPT_REPLY_MAGIC = 0x3E889045565A9


def die(msg):
    print("c40-opt-go: " + msg, file=sys.stderr)
    sys.exit(1)


def recv_exact(s, n):
    try:
        return recvn(s, n)
    except EOFError as e:
        die("the server closed the connection: %s" % e)


def go(s, name):
    """NBD_OPT_GO for @name (bytes): "ok SIZE" or "err TYPE"."""
    data = struct.pack(">I", len(name)) + name + struct.pack(">H", 0)
    s.sendall(struct.pack(">8sII", b"IHAVEOPT", NBD_OPT_GO, len(data)) + data)
    size = None
    while True:
        magic, opt, rtype, length = struct.unpack(">QIII", recv_exact(s, 20))
        if magic != OPT_REPLY_MAGIC or opt != NBD_OPT_GO:
            die("bad option reply (magic %#x option %d)" % (magic, opt))
        payload = recv_exact(s, length) if length else b""
        if rtype & (1 << 31):
            try:
                payload.decode("utf-8")
            except UnicodeDecodeError:
                die("the error message is not UTF-8: %r" % payload)
            return "err %#x" % rtype
        if rtype == NBD_REP_INFO and len(payload) >= 12:
            (info,) = struct.unpack(">H", payload[:2])
            if info == NBD_INFO_EXPORT:
                size, _flags = struct.unpack(">QH", payload[2:12])
        if rtype == NBD_REP_ACK:
            return "ok %d" % size


def main():
    if len(sys.argv) < 3:
        print("usage: c40-opt-go.py SOCKET NAME...", file=sys.stderr)
        sys.exit(2)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(60)
    s.connect(sys.argv[1])
    magic, ihaveopt, hflags = struct.unpack(">8s8sH", recv_exact(s, 18))
    if magic != b"NBDMAGIC" or ihaveopt != b"IHAVEOPT" or not hflags & 1:
        die("not a fixed newstyle NBD server")
    s.sendall(struct.pack(">I", 1))
    for h in sys.argv[2:]:
        print(go(s, binascii.unhexlify(h)), flush=True)
    s.close()


main()

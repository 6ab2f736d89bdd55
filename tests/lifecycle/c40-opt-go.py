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
# The handshake and NBD_OPT_GO are tests/py/rbdxtest.py's (from the NBD
# protocol, NetworkBlockDevice/nbd doc/proto.md).
import binascii
import socket
import sys

from rbdxtest import ProtocolError, fixed_newstyle, opt_go


def die(msg):
    print("c40-opt-go: " + msg, file=sys.stderr)
    sys.exit(1)


def go(s, name):
    """NBD_OPT_GO for @name (bytes): "ok SIZE" or "err TYPE"."""
    try:
        size, err = opt_go(s, name)
    except ProtocolError as e:
        die(str(e))
    except EOFError as e:
        die("the server closed the connection: %s" % e)
    if err:
        try:
            err[1].decode("utf-8")
        except UnicodeDecodeError:
            die("the error message is not UTF-8: %r" % err[1])
        return "err %#x" % err[0]
    return "ok %d" % size


def main():
    if len(sys.argv) < 3:
        print("usage: c40-opt-go.py SOCKET NAME...", file=sys.stderr)
        sys.exit(2)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(60)
    s.connect(sys.argv[1])
    try:
        fixed_newstyle(s)
    except (ProtocolError, EOFError) as e:
        die(str(e))
    for h in sys.argv[2:]:
        print(go(s, binascii.unhexlify(h)), flush=True)
    s.close()


main()

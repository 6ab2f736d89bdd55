# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the Python parts of rbdx's shell tests.

tests/lib.sh puts this folder on PYTHONPATH, so a test's heredoc can say
``from rbdxtest import recvn``.  Only what two or more tests use lives here.
(tests/bench/ keeps its own few lines of the same kind: its scripts run
without lib.sh.)
"""
import os
import re
import struct

# From the NBD protocol (NetworkBlockDevice/nbd doc/proto.md): the fixed
# newstyle handshake, NBD_OPT_GO (7) answered by NBD_REP_INFO (3) replies
# and NBD_REP_ACK (1), error replies with bit 31 of their type set, the
# option reply magic; every integer big-endian.
NBD_FLAG_FIXED_NEWSTYLE = 1 << 0
NBD_FLAG_C_FIXED_NEWSTYLE = 1 << 0
NBD_OPT_GO = 7
NBD_REP_ACK = 1
NBD_REP_INFO = 3
NBD_INFO_EXPORT = 0
OPT_REPLY_MAGIC = 0x3E889045565A9


class ProtocolError(Exception):
    """The server said something the NBD protocol does not allow here."""


def recvn(sock, n):
    """Read exactly n bytes from the stream socket sock.

    Raises EOFError, naming how many bytes came, if the peer closes first.
    """
    b = bytearray()
    while len(b) < n:
        c = sock.recv(n - len(b))
        if not c:
            raise EOFError("connection closed after %d of %d bytes" % (len(b), n))
        b += c
    return bytes(b)


def fixed_newstyle(sock):
    """Read a fixed newstyle greeting from sock and answer it.

    Raises ProtocolError for any other greeting, EOFError (recvn) if the
    server closes first.
    """
    magic, ihaveopt, hflags = struct.unpack(">8s8sH", recvn(sock, 18))
    if magic != b"NBDMAGIC" or ihaveopt != b"IHAVEOPT":
        raise ProtocolError("not a newstyle NBD server (greeting %r %r)"
                            % (magic, ihaveopt))
    if not hflags & NBD_FLAG_FIXED_NEWSTYLE:
        raise ProtocolError("the server does not offer fixed newstyle")
    sock.sendall(struct.pack(">I", NBD_FLAG_C_FIXED_NEWSTYLE))


def opt_go(sock, name=b""):
    """Send NBD_OPT_GO for the export name (bytes, sent as they are).

    Returns (size, None) when the server answers NBD_REP_ACK (size in
    bytes from its NBD_INFO_EXPORT, None if it sent none), or (None,
    (rtype, message)) for an error reply: its NBD_REP_ERR_* type and its
    message as the bytes that came.  Raises ProtocolError for a reply
    that is not to this option, EOFError if the server closes first.
    """
    data = struct.pack(">I", len(name)) + name + struct.pack(">H", 0)
    sock.sendall(struct.pack(">8sII", b"IHAVEOPT", NBD_OPT_GO, len(data))
                 + data)
    size = None
    while True:
        magic, opt, rtype, length = struct.unpack(">QIII", recvn(sock, 20))
        if magic != OPT_REPLY_MAGIC or opt != NBD_OPT_GO:
            raise ProtocolError("bad option reply (magic %#x option %d)"
                                % (magic, opt))
        payload = recvn(sock, length) if length else b""
        if rtype & (1 << 31):
            return None, (rtype, payload)
        if rtype == NBD_REP_INFO and len(payload) >= 12:
            (info,) = struct.unpack(">H", payload[:2])
            if info == NBD_INFO_EXPORT:
                size, _flags = struct.unpack(">QH", payload[2:12])
        if rtype == NBD_REP_ACK:
            return size, None


def qos_waited(metrics):
    """The seconds of QoS wait a server counted so far.

    Reads rbdx_qos_wait_seconds_total from the Prometheus text file the
    server writes (metrics_file=); 0.0 while the file or the line is not
    there yet.
    """
    try:
        with open(metrics) as f:
            text = f.read()
    except OSError:
        return 0.0
    m = re.search(r"^rbdx_qos_wait_seconds_total\{[^}]*\} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def threads_named(pid, name, prefix=False):
    """How many threads of process pid have the name name (their comm,
    /proc/PID/task/TID/comm; with prefix, a name that starts with it).

    A thread that exits while it is counted is left out.
    """
    n = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        n += comm.startswith(name) if prefix else comm == name
    return n

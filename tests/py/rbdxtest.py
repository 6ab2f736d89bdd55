# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the Python parts of rbdx's shell tests.

tests/lib.sh puts this folder on PYTHONPATH, so a test's heredoc can say
``from rbdxtest import recvn``.  Only what two or more tests use lives here.
(tests/bench/ keeps its own few lines of the same kind: its scripts run
without lib.sh.)
"""
import os
import re


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

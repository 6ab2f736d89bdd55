#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Helper of test-c17-odd-names.sh: create or remove images through
# librbd's API (python3-rbd), which accepts names the rbd CLI refuses.
#   c17-names.py create POOL/NAMESPACE SIZE NAME...   (NAME: hex-encoded UTF-8)
#   c17-names.py remove POOL/NAMESPACE NAME...
import binascii
import sys

import rados
import rbd

cmd, (pool, ns) = sys.argv[1], sys.argv[2].split('/', 1)
with rados.Rados(conffile='') as cluster:
    with cluster.open_ioctx(pool) as io:
        io.set_namespace(ns)
        if cmd == 'create':
            size = int(sys.argv[3])
            for i, h in enumerate(sys.argv[4:]):
                # Each image a different size, so a test can tell them apart.
                rbd.RBD().create(io, binascii.unhexlify(h).decode(),
                                 size + i * 1048576, old_format=False)
        else:
            for h in sys.argv[3:]:
                try:
                    rbd.RBD().remove(io, binascii.unhexlify(h).decode())
                except rbd.ImageNotFound:
                    pass

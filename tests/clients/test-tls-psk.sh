#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# TLS for remote exports is nbdkit's (--tls=require with a PSK file or
# X.509 certificates): rbdx adds nothing of its own.  Over TCP on loopback
# with a pre-shared key.
# Asserts:
#   - a libnbd client with the key (nbds:// URI, tls-psk-file=) writes,
#     flushes and reads back;
#   - a client without TLS is refused, and so is one with a wrong key;
#   - the data is in the image (rbd export).
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires nbdsh nbdinfo

d=$(tmpdir)
img=$(new_image 16M)
printf 'alice:%s\n' "$(head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n')" >"$d/keys.psk"
printf 'alice:%s\n' "$(head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n')" >"$d/wrong.psk"
chmod 600 "$d/keys.psk" "$d/wrong.psk"

# A free loopback port (the kernel picks it; nbdkit binds it right after).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "$d/nbdkit.pid" >>"$_state/pidfiles"
nbdkit -i 127.0.0.1 -p "$port" -P "$d/nbdkit.pid" --exit-with-parent \
  --tls=require --tls-psk="$d/keys.psk" "$RBDX_PLUGIN" "$img" &
wait_for 30 test -s "$d/nbdkit.pid" || fail "nbdkit did not start on port $port"

say "TLS-PSK client on 127.0.0.1:$port"
# tls_client PSKFILE [TLS-MODE]: nbdsh connected as alice with PSKFILE.
tls_client() {
  nbdsh -c "h.set_tls(${2:-2})" -c "h.set_tls_username('alice')" \
    -c "h.set_tls_psk_file('$1')" -c "h.connect_tcp('127.0.0.1', '$port')" -c -
}
tls_client "$d/keys.psk" <<'PY' ||
assert h.get_tls_negotiated()
h.pwrite(b"\x7e" * 65536, 0)
h.flush()
assert h.pread(65536, 0) == b"\x7e" * 65536
PY
  fail "the TLS client could not use the export"
if tls_client "$d/keys.psk" 0 </dev/null >/dev/null 2>&1; then
  fail "a client without TLS was served"
fi
if tls_client "$d/wrong.psk" </dev/null >/dev/null 2>&1; then
  fail "a client with a wrong key was served"
fi
rbd export --no-progress "$img" "$d/img" >/dev/null 2>&1
cmp -n 65536 "$d/img" <(head -c 65536 /dev/zero | tr '\0' '\176') ||
  fail "the TLS client's write is not in $img"

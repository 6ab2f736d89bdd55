#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Who opened an image: on every connection the plugin logs (nbdkit -v)
# the client's address and, over TLS with X.509 certificates that nbdkit
# verified (--tls-verify-peer), the Distinguished Names of the client's
# certificate and of its issuer (nbdkit_peer_tls_dn, nbdkit >= 1.40).
# A CA, a server and a client certificate are made with certtool.
# Asserts:
#   - a libnbd client with its certificate writes, flushes and reads
#     back over TLS, and the data is in the image (rbd export);
#   - the server's log names the image with that client's DN and the
#     CA's DN;
#   - a client without a certificate is refused (nbdkit's check);
#   - the log names the client's loopback address;
#   - with nbdkit's ip filter allowing one DN, that client is served and
#     another certificate of the same CA is refused before rbdx opens the
#     image for it (no log line of rbdx for it);
#   - without TLS, the log names the Unix socket client's pid and uid,
#     those of the client process.
. "${RBDX_TESTS:-$(dirname "$0")/..}/lib.sh"
requires_cluster
requires nbdsh certtool

d=$(tmpdir)
img=$(new_image 16M)
mkdir "$d/server" "$d/client" "$d/bob" "$d/nocert"
# cert NAME TEMPLATE-LINES...: NAME-key.pem and NAME-cert.pem in $d,
# signed by the CA (the CA itself when NAME is ca).
cert() {
  local name=$1
  shift
  printf '%s\n' "$@" >"$d/$name.info"
  certtool --generate-privkey --outfile "$d/$name-key.pem" >/dev/null 2>&1
  if [ "$name" = ca ]; then
    certtool --generate-self-signed --load-privkey "$d/ca-key.pem" \
      --template "$d/ca.info" --outfile "$d/ca-cert.pem" >/dev/null 2>&1
  else
    certtool --generate-certificate --load-privkey "$d/$name-key.pem" \
      --load-ca-certificate "$d/ca-cert.pem" --load-ca-privkey "$d/ca-key.pem" \
      --template "$d/$name.info" --outfile "$d/$name-cert.pem" >/dev/null 2>&1
  fi || fail "certtool could not make the $name certificate"
}
cert ca 'cn = rbdx test CA' 'organization = rbdx-test' ca cert_signing_key \
  'expiration_days = 2'
cert server 'cn = localhost' 'organization = rbdx-test' 'ip_address = 127.0.0.1' \
  tls_www_server encryption_key signing_key 'expiration_days = 2'
cert client 'cn = alice.rbdx.test' 'organization = rbdx-test' tls_www_client \
  encryption_key signing_key 'expiration_days = 2'
cert bob 'cn = bob.rbdx.test' 'organization = rbdx-test' tls_www_client \
  encryption_key signing_key 'expiration_days = 2'
# The file names nbdkit and libnbd look for in a certificates directory.
cp "$d/ca-cert.pem" "$d/server/ca-cert.pem"
cp "$d/server-cert.pem" "$d/server/server-cert.pem"
cp "$d/server-key.pem" "$d/server/server-key.pem"
cp "$d/ca-cert.pem" "$d/client/ca-cert.pem"
cp "$d/client-cert.pem" "$d/client/client-cert.pem"
cp "$d/client-key.pem" "$d/client/client-key.pem"
cp "$d/ca-cert.pem" "$d/bob/ca-cert.pem"
cp "$d/bob-cert.pem" "$d/bob/client-cert.pem"
cp "$d/bob-key.pem" "$d/bob/client-key.pem"
cp "$d/ca-cert.pem" "$d/nocert/ca-cert.pem"
chmod 600 "$d"/*-key.pem "$d"/*/*-key.pem

# tls_serve NAME [NBDKIT-OPTIONS...] [-- PARAMETERS...]: nbdkit with rbdx over TLS on a free
# loopback TCP port (libnbd checks the server's certificate against the
# host it connects to, 127.0.0.1, the certificate's IP address); its log
# is $d/NAME.log.  Sets port.
tls_serve() {
  local name=$1
  local -a opts=()
  shift
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  echo "$d/$name.pid" >>"$_state/pidfiles"
  nbdkit -v -i 127.0.0.1 -p "$port" -P "$d/$name.pid" --exit-with-parent \
    --tls=require --tls-certificates="$d/server" --tls-verify-peer "${opts[@]}" \
    "$RBDX_PLUGIN" "$img" "$@" 2>"$d/$name.log" &
  wait_for 30 test -s "$d/$name.pid" || fail "nbdkit did not start on port $port"
}
# tls_client DIR: nbdsh over TLS with the certificates directory DIR.
tls_client() {
  nbdsh -c "h.set_tls(2)" -c "h.set_tls_certificates('$1')" \
    -c "h.connect_tcp('127.0.0.1', '$port')" -c -
}
tls_serve tls
say "TLS client with the certificate of alice.rbdx.test"
tls_client "$d/client" <<'PY' || fail "the TLS client could not use the export"
assert h.get_tls_negotiated()
h.pwrite(b"\x5a" * 65536, 0)
h.flush()
assert h.pread(65536, 0) == b"\x5a" * 65536
PY
if tls_client "$d/nocert" </dev/null >/dev/null 2>&1; then
  fail "a client without a certificate was served (--tls-verify-peer)"
fi
rbd export --no-progress "$img" "$d/img" >/dev/null 2>&1
cmp -n 65536 "$d/img" <(head -c 65536 /dev/zero | tr '\0' '\132') ||
  fail "the TLS client's write is not in $img"

if ! grep -q "rbdx: $img: client 127\.0\.0\.1:[0-9]* TLS dn 'CN=alice.rbdx.test,O=rbdx-test' issuer 'CN=rbdx test CA,O=rbdx-test'" "$d/tls.log"; then
  grep 'client ' "$d/tls.log" >&2 || true
  if ! nm -D "$RBDX_PLUGIN" | grep -q ' U nbdkit_peer_tls_dn$'; then
    skip "the plugin was built against nbdkit headers without nbdkit_peer_tls_dn (< 1.40)"
  fi
  fail "the server's log does not name the client's certificate DN and issuer"
fi
say "logged: $(grep -o "rbdx: $img: client .*" "$d/tls.log" | head -1)"

# Policy by certificate is nbdkit's ip filter (dn: rules, nbdkit >= 1.40):
# it refuses in its .open, before rbdx opens anything for the client.
say "ip filter allowing only alice's DN"
tls_serve dnpolicy --filter=ip -- allow="dn:CN=alice.rbdx.test,*" deny=all
tls_client "$d/client" <<<'assert h.pread(4096, 0) == b"\x5a" * 4096' ||
  fail "the ip filter refused the allowed DN"
if tls_client "$d/bob" </dev/null >/dev/null 2>&1; then
  fail "the ip filter let bob.rbdx.test in"
fi
grep -q "not permitted to connect" "$d/dnpolicy.log" ||
  fail "bob was refused, but not by the ip filter"
grep -q "rbdx: $img: client .*CN=bob" "$d/dnpolicy.log" &&
  fail "rbdx opened the image for the refused client"
grep -q "rbdx: $img: client .*CN=alice" "$d/dnpolicy.log" ||
  fail "the allowed client's open is not logged"

serve "$d/plain.sock" -v -- "$img" 2>"$d/plain.log"
who=$(nbdsh -u "$(uri "$d/plain.sock")" -c 'import os; print(os.getpid(), os.getuid())')
read -r pid uid <<<"$who"
grep -q "rbdx: $img: client unix socket pid $pid uid $uid\$" "$d/plain.log" || {
  grep 'client ' "$d/plain.log" >&2 || true
  fail "the log does not name the Unix socket client (pid $pid, uid $uid)"
}
grep -q "rbdx: $img: client .* TLS" "$d/plain.log" &&
  fail "a connection without TLS is logged as TLS"
say "logged: $(grep -o "rbdx: $img: client .*" "$d/plain.log" | head -1)"
exit 0

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What a client is told when its connection cannot be opened.  nbdkit
# 1.42 sends the text of the plugin's last nbdkit_error of a failed .open
# to the client with NBD_REP_ERR_UNKNOWN, before TLS too when TLS is not
# required; the reason of a cluster error names the cephx id, the
# monitors' addresses and file paths.  So the server's log keeps the
# whole reason and the client gets only the export and the errno's text.
# Here: a server for client.ID starts, then ID's key is deleted
# (`ceph auth del`), so the next connection's Ceph client cannot connect:
#   - the client is refused, and whatever text it is told (libnbd 1.14
#     logs it to the debug callback, 1.22 puts it in the error) names the
#     export and says "cannot be served now", and holds neither the id,
#     nor a monitor address, nor the keyring's path;
#   - the server's log has the whole reason (client.ID, the monitors);
#   - the server still runs.
# With an nbdkit that sends no message (older than 1.42) the client is
# told nothing, which leaks nothing either; the test says which it saw.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires nbdinfo

dir=$(tmpdir)
img=$(new_image 8M)
id="t-open-msg-$$"
ceph auth get-or-create "client.$id" mon 'profile rbd' osd 'profile rbd' \
  -o "$dir/keyring" >/dev/null
chmod 600 "$dir/keyring"
at_exit "ceph auth del client.$id >/dev/null 2>&1"

sock=$dir/s.sock
serve "$sock" -- "$img" "id=$id" "keyring=$dir/keyring" 2>"$dir/server.log"
pid=$SERVER_PID
[ "$(nbdinfo --size "$(uri "$sock")")" = $((8 << 20)) ] ||
  fail "the export was not served before the key was deleted"
ceph auth del "client.$id"

rc=0
LIBNBD_DEBUG=1 timeout 120 nbdinfo --size "$(uri "$sock")" >"$dir/client.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "the export was served with the id's key deleted"
told=$(grep -E "server error message:|nbdinfo:" "$dir/client.out" || true)
say "client saw: $told"
mons=$(sed -n 's/^[[:space:]]*mon[ _]host[[:space:]]*=[[:space:]]*//p' "$CEPH_CONF" | head -1)
for secret in "$id" "$dir/keyring" "127.0.0.1:" $mons; do
  grep -qF -- "$secret" "$dir/client.out" &&
    fail "the client was told '$secret': $(grep -F -- "$secret" "$dir/client.out" | head -2)"
done
if grep -q "server error message:" "$dir/client.out"; then
  grep -q "server error message: rbdx: export '$img' cannot be served now" "$dir/client.out" ||
    fail "the client's message does not name the export: $told"
  say "the client was told which export failed, and no more"
else
  say "this nbdkit ($(nbdkit --version)) sends no message: nothing leaks"
fi
wait_for 10 grep -q "as client.$id" "$dir/server.log" ||
  fail "the server's log lacks the reason: $(tail -3 "$dir/server.log")"
kill -0 "$pid" || fail "the server died"
say "ok"

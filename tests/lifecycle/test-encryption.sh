#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# LUKS encryption through librbd (encryption_format=, man page ENCRYPTION):
# encryption is per librbd handle, so every connection's context (and the
# shared writer) must load it.
# Asserts, for an image made with `rbd encryption format ... luks2`:
#   - the export is the decrypted image (64 MiB less the 16 MiB LUKS2
#     header) with a minimum block size of 4096 (the crypto sector);
#   - A writes (through the shared writer), B reads the same plaintext
#     after A's flush (multi-conn), and WRITE_ZEROES reads back as zeros;
#   - with strict mode off, 512-byte reads and writes get NBD_EINVAL and
#     the connection lives on;
#   - qemu-io through QEMU's own rbd driver with the same passphrase reads
#     what rbdx wrote; no data object on the OSDs holds the plaintext;
#   - a wrong passphrase, and encryption_format= on an image without it,
#     make nbdkit exit non-zero before serving, naming the problem;
#   - LUKS1: minimum block size 512, data round-trips.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
requires nbdinfo nbdsh qemu-io rados

d=$MC_DIR
printf 'correct horse battery staple\n' >"$d/pass"
printf 'not-it-xyzzy\n' >"$d/other"
chmod 600 "$d/pass" "$d/other"
img=$(new_image 64M)
rbd encryption format "$img" luks2 "$d/pass"
enc=(encryption_format=luks2 encryption_passphrase_file="$d/pass")

say "LUKS2: size, block size, two connections"
serve "$d/s.sock" -- "$img" "${enc[@]}"
u=$(uri "$d/s.sock")
nbdinfo --json "$u" >"$d/info.json"
python3 - "$d/info.json" <<'PY' || fail "export properties: $(cat "$d/info.json")"
import json, sys
e = json.load(open(sys.argv[1]))["exports"][0]
assert e["export-size"] == 48 << 20, e["export-size"]
assert e["block_size_minimum"] == 4096, e["block_size_minimum"]
PY
client_start A "$u"
client_start B "$u"
[ "$(client_do A mc)" = 1 ] || fail "multi-conn is not advertised"
client_do A write 0 4096 5a
client_do A flush
client_do B read 0 4096 5a
client_do A strict 0
client_do A readerr 512 512 EINVAL
client_do A writeerr 512 512 6b EINVAL
client_do A readerr 4096 512 EINVAL
client_do A alive
client_do A read 0 4096 5a
client_stop A
client_stop B
nbdsh -u "$u" -c - <<'PY' || fail "zeroes or the marker write failed"
h.pwrite(b"\xee" * 8192, 8192)
h.zero(8192, 8192)
assert h.pread(8192, 8192) == bytes(8192)
marker = b"RBDX-PLAINTEXT-MARKER-" * 186 + b"0123"
h.pwrite(marker, 1 << 20)
h.flush()
PY
stop_server "$d/s.sock"

say "QEMU's rbd driver reads rbdx's plaintext; the OSDs hold none"
# QEMU's secret object takes the file byte for byte.  Ceph 16's `rbd
# encryption format` stored the passphrase without the file's final
# newline, Ceph 18's with it: one of the two forms opens the image.
printf 'correct horse battery staple' >"$d/pass.qemu"
qemu_read() {
  qemu-io --object secret,id=sec0,file="$1" --image-opts \
    "driver=rbd,pool=rbd,image=${img#rbd/},conf=$CEPH_CONF,encrypt.format=luks2,encrypt.key-secret=sec0" \
    -c "read -P 0x5a 0 4096" -c "read -P 0 8192 8192" >"$d/qemu.out" 2>&1
}
qemu_read "$d/pass.qemu" || qemu_read "$d/pass" ||
  fail "qemu-io could not read rbdx's data: $(cat "$d/qemu.out")"
prefix=$(rbd info --format json "$img" | python3 -c 'import json, sys; print(json.load(sys.stdin)["block_name_prefix"])')
n=0
for o in $(rados -p rbd ls | grep -F "$prefix."); do
  rados -p rbd get "$o" "$d/obj"
  ! grep -q RBDX-PLAINTEXT-MARKER "$d/obj" || fail "object $o holds the plaintext"
  n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no data objects of $img found"

say "a wrong passphrase and a plain image are refused before serving"
if nbdkit -U - "$RBDX_PLUGIN" "$img" encryption_format=luks2 \
     encryption_passphrase_file="$d/other" --run true 2>"$d/err"; then
  fail "served with a wrong passphrase"
fi
grep -q "does not open its LUKS2 header" "$d/err" || fail "wrong passphrase: $(cat "$d/err")"
! grep -q "xyzzy" "$d/err" || fail "the passphrase appears in a message: $(cat "$d/err")"
plain=$(new_image 16M)
if nbdkit -U - "$RBDX_PLUGIN" "$plain" "${enc[@]}" --run true 2>"$d/err"; then
  fail "served a plain image as LUKS2"
fi
grep -q "is not LUKS2-formatted" "$d/err" || fail "plain image: $(cat "$d/err")"

say "LUKS1: 512-byte sectors"
img1=$(new_image 32M)
rbd encryption format "$img1" luks1 "$d/pass"
serve "$d/l.sock" -- "$img1" encryption_format=luks1 encryption_passphrase_file="$d/pass"
nbdinfo --json "$(uri "$d/l.sock")" | python3 -c '
import json, sys
e = json.load(sys.stdin)["exports"][0]
assert e["block_size_minimum"] == 512, e' || fail "LUKS1 minimum block size is not 512"
nbdsh -u "$(uri "$d/l.sock")" -c 'h.pwrite(b"\x11" * 512, 512); assert h.pread(512, 512) == b"\x11" * 512' ||
  fail "LUKS1 round trip failed"
stop_server "$d/l.sock"

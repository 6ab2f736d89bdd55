#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# encryption_format=luks: rbdx reads the LUKS version from the image's
# header and loads that format (man page ENCRYPTION); the crypto sector,
# and so the advertised minimum block size, is the detected format's.
# Asserts, through the plugin (two connections) and through the mapper's
# built-in engine (rbdx-engine --oldstyle), for a LUKS1 and a LUKS2 image
# made with `rbd encryption format`:
#   - the export has the decrypted size (the image less its LUKS header:
#     16 MiB for LUKS2, 4 MiB for LUKS1 as librbd 16.2 and 18.2 lay
#     them out in a 64 MiB image of 4 MiB objects) and the format's crypto sector
#     as minimum block size (512 LUKS1, 4096 LUKS2);
#   - data written through one server reads back through the other and
#     through a server given the explicit format;
#   - a plain image with encryption_format=luks is refused before serving
#     ("has no LUKS header"), and so is a wrong passphrase;
#   - without encryption_format= a LUKS image is served raw (the whole
#     64 MiB), and rbdx says at error level that it starts with a LUKS1 or
#     LUKS2 header; of a plain image it says nothing (C44);
#   - on a librbd without rbd_encryption_load2 (RBDX_HAVE_LOAD2=0, from
#     meson), two specs are refused before serving, by the plugin and the
#     engine, naming rbd_encryption_load2 (the layered case itself is
#     test-encryption-layered.sh).
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires nbdinfo nbdsh

d=$(tmpdir)
printf 'detect me please' >"$d/pass"
printf 'not-it-xyzzy' >"$d/other"
chmod 600 "$d/pass" "$d/other"
det=(encryption_format=luks encryption_passphrase_file="$d/pass")

# props URI SIZE MINBLOCK: the export's size and minimum block size.
props() {
  nbdinfo --json "$1" | /usr/bin/python3 -c '
import json, sys
e = json.load(sys.stdin)["exports"][0]
size, minb = int(sys.argv[1]), int(sys.argv[2])
assert e["export-size"] == size, ("size", e["export-size"], size)
assert e["block_size_minimum"] == minb, ("block_size_minimum", e["block_size_minimum"], minb)
' "$2" "$3"
}

# check FORMAT SECTOR HEADER: one image in FORMAT through both servers.
check() {
  local fmt=$1 sector=$2 header=$3 img u e
  img=$(new_image 64M)
  rbd encryption format "$img" "$fmt" "$d/pass"
  say "$fmt: detected through the plugin"
  serve "$d/p-$fmt.sock" -v -- "$img" "${det[@]}"
  u=$(uri "$d/p-$fmt.sock")
  props "$u" $(((64 << 20) - header)) "$sector" || fail "$fmt: plugin export properties"
  # With strict mode off a write smaller than the crypto sector reaches
  # rbdx: a 512-byte write gets EINVAL with LUKS2's 4096-byte sectors.
  nbdsh -u "$u" -c - <<PY || fail "$fmt: plugin write/read"
h.pwrite(b"\x5a" * 8192, 0)
h.flush()
assert h.pread(8192, 0) == b"\x5a" * 8192
h.set_strict_mode(0)
if $sector == 4096:
    try:
        h.pwrite(b"\x01" * 512, 512)
        raise SystemExit("a 512-byte write succeeded with 4096-byte sectors")
    except nbd.Error as ex:
        assert ex.errno == "EINVAL", ex.errno
    assert h.pread(4096, 0) == b"\x5a" * 4096
PY
  # A second connection (its own context, its own load) reads it.
  nbdsh -u "$u" -c 'assert h.pread(8192, 0) == b"\x5a" * 8192' ||
    fail "$fmt: a second connection does not read the data"
  stop_server "$d/p-$fmt.sock"

  say "$fmt: detected through the engine"
  serve_engine "$d/e-$fmt.sock" -- "$img" "${det[@]}"
  e=$(uri "$d/e-$fmt.sock")
  nbdsh -u "$e" -c - <<PY || fail "$fmt: engine read/write"
assert h.get_size() == $(((64 << 20) - header)), h.get_size()
assert h.pread(8192, 0) == b"\x5a" * 8192
h.pwrite(b"\xc3" * 4096, 65536)
h.flush()
PY
  stop_server "$d/e-$fmt.sock"

  say "$fmt: the explicit format reads what the engine wrote"
  serve "$d/x-$fmt.sock" -- "$img" encryption_format="$fmt" encryption_passphrase_file="$d/pass"
  nbdsh -u "$(uri "$d/x-$fmt.sock")" -c 'assert h.pread(4096, 65536) == b"\xc3" * 4096' ||
    fail "$fmt: the engine's write does not read back with encryption_format=$fmt"
  stop_server "$d/x-$fmt.sock"

  if nbdkit -U - "$RBDX_PLUGIN" "$img" encryption_format=luks \
       encryption_passphrase_file="$d/other" --run true 2>"$d/err"; then
    fail "$fmt: served with a wrong passphrase"
  fi
  grep -q "does not open its ${fmt^^} header" "$d/err" ||
    fail "$fmt: wrong passphrase: $(cat "$d/err")"
  ! grep -q xyzzy "$d/err" || fail "the passphrase appears in a message"

  # Without encryption_format=: served raw, as asked, and said (C44).
  nbdkit -U - "$RBDX_PLUGIN" "$img" --run 'nbdinfo --size "$uri"' \
    >"$d/raw.out" 2>"$d/err" || fail "$fmt: not served raw: $(cat "$d/err")"
  [ "$(cat "$d/raw.out")" = $((64 << 20)) ] || fail "$fmt raw: size $(cat "$d/raw.out")"
  grep -q "image '$img' starts with a ${fmt^^} header and no encryption_format= was given" \
    "$d/err" || fail "$fmt: served raw without a word: $(cat "$d/err")"
}

check luks1 512 $((4 << 20))
check luks2 4096 $((16 << 20))

say "a plain image is refused with encryption_format=luks"
plain=$(new_image 16M)
if nbdkit -U - "$RBDX_PLUGIN" "$plain" "${det[@]}" --run true 2>"$d/err"; then
  fail "served a plain image with encryption_format=luks"
fi
grep -q "has no LUKS header" "$d/err" || fail "plain image: $(cat "$d/err")"
nbdkit -U - "$RBDX_PLUGIN" "$plain" --run true 2>"$d/err" || fail "plain image: $(cat "$d/err")"
! grep -q "header and no encryption_format=" "$d/err" ||
  fail "a plain image was said to start with a LUKS header: $(cat "$d/err")"

if [ "${RBDX_HAVE_LOAD2:-}" = 0 ]; then
  say "no rbd_encryption_load2 here: two specs are refused before serving"
  two=(encryption_format=luks2 encryption_passphrase_file="$d/pass"
       encryption_format=luks1 encryption_passphrase_file="$d/pass")
  if nbdkit -U - "$RBDX_PLUGIN" "$plain" "${two[@]}" --run true 2>"$d/err"; then
    fail "nbdkit served two encryption specs without rbd_encryption_load2"
  fi
  grep -q "needs rbd_encryption_load2, which this librbd" "$d/err" ||
    fail "two specs: $(cat "$d/err")"
  engine=$RBDX_BUILD/server/rbdx-engine
  if [ -x "$engine" ]; then
    # It must exit before listening; timeout only bounds a failure.
    if timeout 60 "$engine" --oldstyle "$d/two.sock" "$plain" "${two[@]}" \
         2>"$d/err"; then
      fail "the engine served two encryption specs"
    fi
    grep -q "needs rbd_encryption_load2" "$d/err" ||
      fail "the engine did not refuse two specs: $(cat "$d/err")"
    [ ! -S "$d/two.sock" ] || fail "the engine listened with two specs"
  fi
fi
say "ok"

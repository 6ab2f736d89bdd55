#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Layered encryption (man page ENCRYPTION): a clone with a LUKS2 format of
# its own over a LUKS1- and over a LUKS2-encrypted parent, served with
# both passphrases (encryption_format= and encryption_passphrase_file=
# twice, the clone's first), which rbdx loads with rbd_encryption_load2.
# Asserts, for each parent format:
#   - data written into the parent (through rbdx) before the snapshot
#     reads back through the clone, through the plugin and the engine;
#   - data written to the clone reads back on a new connection, and the
#     parent's snapshot still holds the old data;
#   - the export's minimum block size is the clone's crypto sector (4096);
#   - encryption_format=luks for both specs (detection) serves the same;
#   - a wrong parent passphrase makes nbdkit exit non-zero before
#     serving, naming that passphrase file (never the passphrase).
# Skipped where librbd has no rbd_encryption_load2 (Ceph 16: Debian 12),
# where test-encryption-detect.sh proves two specs are refused.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires nbdinfo nbdsh
[ "${RBDX_HAVE_LOAD2:-}" = 1 ] ||
  skip "this build's librbd has no rbd_encryption_load2 (librbd 1.17, Ceph 17): layered encryption cannot be loaded"

d=$(tmpdir)
printf 'parent secret' >"$d/parent"
# A final newline: Ceph 18's `rbd encryption format` keeps it (rbdx
# tries both forms).
printf 'clone secret\n' >"$d/clone"
printf 'wrong-xyzzy' >"$d/wrong"
chmod 600 "$d/parent" "$d/clone" "$d/wrong"

layered() {
  local pfmt=$1 parent clone u
  local -a two
  parent=$(new_image 64M)
  rbd encryption format "$parent" "$pfmt" "$d/parent"
  say "parent $pfmt: data into the parent, then snapshot and clone"
  serve "$d/p-$pfmt.sock" -- "$parent" encryption_format="$pfmt" \
    encryption_passphrase_file="$d/parent"
  nbdsh -u "$(uri "$d/p-$pfmt.sock")" -c - <<'PY' || fail "$pfmt: writing the parent"
h.pwrite(b"\xa1" * 65536, 0)
h.pwrite(b"\xa2" * 65536, 8 << 20)
h.flush()
PY
  stop_server "$d/p-$pfmt.sock"
  rbd snap create "$parent@s"
  rbd snap protect "$parent@s"
  clone=$parent-clone
  own_image "$clone"
  rbd clone "$parent@s" "$clone"
  rbd encryption format "$clone" luks2 "$d/clone"
  two=(encryption_format=luks2 encryption_passphrase_file="$d/clone"
       encryption_format="$pfmt" encryption_passphrase_file="$d/parent")

  say "parent $pfmt: the clone through the plugin"
  serve "$d/c-$pfmt.sock" -v -- "$clone" "${two[@]}"
  u=$(uri "$d/c-$pfmt.sock")
  nbdinfo --json "$u" | /usr/bin/python3 -c '
import json, sys
e = json.load(sys.stdin)["exports"][0]
assert e["block_size_minimum"] == 4096, e["block_size_minimum"]' ||
    fail "$pfmt: the clone's minimum block size is not 4096"
  nbdsh -u "$u" -c - <<'PY' || fail "$pfmt: the parent's data through the clone, or a clone write"
assert h.pread(65536, 0) == b"\xa1" * 65536, "parent data at 0"
assert h.pread(65536, 8 << 20) == b"\xa2" * 65536, "parent data at 8 MiB"
h.pwrite(b"\xc1" * 4096, 8 << 20)
h.pwrite(b"\xc2" * 65536, 16 << 20)
h.flush()
PY
  nbdsh -u "$u" -c - <<'PY' || fail "$pfmt: the clone's writes do not read back on a new connection"
assert h.pread(4096, 8 << 20) == b"\xc1" * 4096
assert h.pread(61440, (8 << 20) + 4096) == b"\xa2" * 61440
assert h.pread(65536, 16 << 20) == b"\xc2" * 65536
assert h.pread(65536, 0) == b"\xa1" * 65536
PY
  stop_server "$d/c-$pfmt.sock"

  say "parent $pfmt: the clone through the engine, both specs detected"
  serve_engine "$d/e-$pfmt.sock" -- "$clone" encryption_format=luks \
    encryption_passphrase_file="$d/clone" encryption_format=luks \
    encryption_passphrase_file="$d/parent"
  nbdsh -u "$(uri "$d/e-$pfmt.sock")" -c - <<'PY' || fail "$pfmt: the clone through the engine"
assert h.pread(65536, 0) == b"\xa1" * 65536
assert h.pread(4096, 8 << 20) == b"\xc1" * 4096
assert h.pread(65536, 16 << 20) == b"\xc2" * 65536
PY
  stop_server "$d/e-$pfmt.sock"

  say "parent $pfmt: the snapshot keeps the parent's data"
  serve "$d/s-$pfmt.sock" -- "$parent@s" encryption_format=luks \
    encryption_passphrase_file="$d/parent"
  nbdsh -u "$(uri "$d/s-$pfmt.sock")" -c 'assert h.pread(65536, 8 << 20) == b"\xa2" * 65536' ||
    fail "$pfmt: the parent's snapshot changed"
  stop_server "$d/s-$pfmt.sock"

  say "parent $pfmt: a wrong parent passphrase is refused before serving"
  if nbdkit -U - "$RBDX_PLUGIN" "$clone" encryption_format=luks2 \
       encryption_passphrase_file="$d/clone" encryption_format="$pfmt" \
       encryption_passphrase_file="$d/wrong" --run true 2>"$d/err"; then
    fail "$pfmt: served with a wrong parent passphrase"
  fi
  grep -q "encryption_passphrase_file='$d/wrong'" "$d/err" &&
    grep -q "does not open" "$d/err" ||
    fail "$pfmt: wrong parent passphrase: $(cat "$d/err")"
  ! grep -q xyzzy "$d/err" || fail "a passphrase appears in a message"
}

layered luks1
layered luks2
say "ok"

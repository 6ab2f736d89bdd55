#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Proves: a snapshot export (IMG@SNAP) serves exactly the snapshot's data
# to four concurrent read-only connections (multi-conn), and refuses
# writes.  fio's nbd engine writes a verifiable pattern (4 jobs, each its
# own 32 MiB region, sequential 4-64 KiB writes, verify=crc32c,
# do_verify=0) through a writable export; rbd snap create IMG@s1; the
# head is then overwritten in every region; IMG@s1 is served and 4 jobs
# with verify_only=1 verify every block, while the same verify against
# the head fails (so the snapshot export really reads the snapshot).  A
# fio write job against the snapshot export fails with EPERM.
# Cases: C13 (snapshot export is read-only), multi-conn on read-only.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires fio qemu-io nbdinfo
. "$RBDX_TESTS/fio/fio-lib.sh"

img=$(new_image 128M --image-feature layering)
fio_job 32m write 4242

# snap_verify LABEL WHY: 4 connections verify all 128 MiB of the
# snapshot; WHY says what a failed verify means.
snap_verify() {
  fio_serve "$1" "$img@s1" --verify_only || fail "$2: $(fio_out "$1")"
  fio_did "$1" READ 128MiB ||
    fail "fio $1 did not read the 128 MiB back: $(fio_out "$1")"
}

# 1. Write the pattern through a writable export.
fio_serve write "$img" --do_verify=0 ||
  fail "fio pattern write failed: $(fio_out write)"
fio_did write WRITE 128MiB || fail "fio did not write 128 MiB: $(fio_out write)"

# 2. Snapshot, then change the head in every region.
rbd snap create --no-progress "$img@s1"
timeout 60 nbdkit -U "$(new_socket)" "$RBDX_PLUGIN" "$img" --run 'qemu-io -f raw \
  -c "write -P 0xee 0 1m" -c "write -P 0xee 32m 1m" \
  -c "write -P 0xee 64m 1m" -c "write -P 0xee 96m 1m" "$uri"' >/dev/null ||
  fail "could not overwrite the head"

# 3. The snapshot export: read-only, multi-conn, verifies.
with_export "$img@s1" 'nbdinfo "$uri"' >"$FIO_DIR/info" ||
  fail "nbdinfo on the snapshot failed"
grep -q 'is_read_only: true' "$FIO_DIR/info" ||
  fail "the snapshot export is not read-only: $(cat "$FIO_DIR/info")"
grep -q 'can_multi_conn: true' "$FIO_DIR/info" ||
  fail "the snapshot export does not advertise multi-conn"
snap_verify snapverify "verify of the snapshot failed"
say "4 connections verified $img@s1"

# 4. Control: the head no longer verifies.
if fio_serve headverify -r "$img" --verify_only; then
  fail "the overwritten head verified too: the check proves nothing"
fi
fio_bad_verify headverify ||
  fail "head verify failed for another reason: $(fio_out headverify)"

# 5. Writes to the snapshot export fail with EPERM.  (libnbd refuses a
# write to a read-only export on the client side with EPERM; the
# server-side NBD_EPERM is case C13's test.)
if FIO_TIMEOUT=60 fio_serve snapwrite "$img@s1"; then
  fail "a fio write job against $img@s1 succeeded"
fi
grep -q 'err= *1 .*Operation not permitted' "$FIO_DIR/snapwrite.out" ||
  fail "the write failed without EPERM: $(fio_out snapwrite)"
# ... and the snapshot is unchanged.
snap_verify snapverify2 "the snapshot changed"
say "ok"

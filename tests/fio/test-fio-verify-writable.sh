#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Proves: a writable export of an image WITHOUT exclusive-lock (so
# multi-conn is advertised and every connection writes through its own
# librbd context) keeps every byte that four concurrent connections
# write: fio's nbd engine, 4 jobs = 4 connections, each on its own 64 MiB
# region, random writes of 4-64 KiB with 8 in flight, verify=crc32c
# after the writes; then a second, read-only server verifies the same
# data again (verify_only).  A control corrupts one block and checks that
# the verify pass notices, so a passing verify means something.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires fio qemu-io nbdinfo
. "$RBDX_TESTS/fio/fio-lib.sh"

img=$(new_image 256M --image-feature layering)
fio_job 64m randwrite 20240417

with_export "$img" 'nbdinfo "$uri"' >"$FIO_DIR/info" || fail "nbdinfo failed"
grep -q 'can_multi_conn: true' "$FIO_DIR/info" ||
  fail "multi-conn not advertised for an image without exclusive-lock"

t0=$SECONDS
fio_serve write "$img" || fail "fio write+verify failed: $(fio_out write)"
fio_did write READ 256MiB ||
  fail "fio did not read back the 256 MiB it wrote: $(fio_out write)"
say "4 connections wrote and verified 256 MiB in $((SECONDS - t0)) s"
grep -E '^ *(READ|WRITE):' "$FIO_DIR/write.out" >&2 || true

# Second pass: a fresh read-only server, fresh connections.
fio_serve reverify -r "$img" --verify_only ||
  fail "read-only verify pass failed: $(fio_out reverify)"
fio_did reverify READ 256MiB ||
  fail "the verify pass did not read 256 MiB: $(fio_out reverify)"
say "read-only verify pass ok"

# Control: one corrupted block inside region 2 must be detected.
timeout 60 nbdkit -U "$(new_socket)" "$RBDX_PLUGIN" "$img" \
  --run 'qemu-io -f raw -c "write -P 0x5a 100m 4k" "$uri"' >/dev/null ||
  fail "could not corrupt a block"
if fio_serve control -r "$img" --verify_only; then
  fail "verify did not notice a corrupted block: $(fio_out control)"
fi
fio_bad_verify control ||
  fail "the control failed for another reason: $(fio_out control)"
say "ok"

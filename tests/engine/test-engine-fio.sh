#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-engine-fio: the built-in engine keeps every byte four concurrent
# connections write, on a default-feature image (exclusive-lock: the
# connections share one writer) and on a layering-only image (each
# connection writes through its own context), and its verify pass
# notices a corrupted block.  fio's nbd engine, 4 jobs = 4 connections,
# each on its own 32 MiB region, random writes of 4-64 KiB with 8 in
# flight, verify=crc32c; then a --readonly engine verifies again.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires fio qemu-io
. "$RBDX_TESTS/fio/fio-lib.sh"

# run LABEL SOCK [FIO-OPTIONS]: the job against the engine on SOCK.
run() {
  local label=$1 sock=$2
  shift 2
  timeout 180 "$FIO_DIR/run-fio.sh" "$label" "nbd+unix:///?socket=$sock" "$@"
}

fio_job 32m randwrite 20261130
for features in default layering; do
  if [ "$features" = default ]; then img=$(new_image 128M); else
    img=$(new_image 128M --image-feature layering); fi
  sock="$FIO_DIR/$features.sock"
  serve_engine "$sock" -- "$img"
  run "$features" "$sock" || fail "$features: fio write+verify failed: $(fio_out "$features")"
  fio_did "$features" READ 128MiB || fail "$features: no 128 MiB verified: $(fio_out "$features")"
  grep -E '^ *(READ|WRITE):' "$FIO_DIR/$features.out" >&2 || true
  stop_server "$sock"
  serve_engine "$sock.ro" --readonly -- "$img"
  run "$features-ro" "$sock.ro" --verify_only ||
    fail "$features: read-only verify failed: $(fio_out "$features-ro")"
  stop_server "$sock.ro"
  say "$features: 4 connections wrote and verified 128 MiB"
done

# Control: a corrupted block in region 2 is noticed.
qemu-io -f raw -c "write -P 0x5a 40m 4k" "rbd:$img:conf=$CEPH_CONF" >/dev/null ||
  fail "could not corrupt a block"
serve_engine "$FIO_DIR/c.sock" --readonly -- "$img"
if run control "$FIO_DIR/c.sock" --verify_only; then
  fail "verify did not notice a corrupted block"
fi
fio_bad_verify control || fail "the control failed for another reason: $(fio_out control)"
say "ok"

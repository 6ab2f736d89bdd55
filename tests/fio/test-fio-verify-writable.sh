#!/usr/bin/env bash
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
. "$RBDX_TESTS/config/config-lib.sh"

img=$(new_image 256M --image-feature layering)
job=$CFG_SCRATCH/writable.fio
cat >"$job" <<'EOF'
[global]
ioengine=nbd
uri=${NBD_URI}
numjobs=4
size=64m
offset_increment=64m
rw=randwrite
bsrange=4k-64k
iodepth=8
verify=crc32c
verify_fatal=1
randseed=20240417
verify_state_save=0
[region]
EOF

# run-fio.sh LABEL URI [FIO-OPTIONS...]: run the job on URI; succeeds
# only with exit 0 and err=0 on all four jobs.
cat >"$CFG_SCRATCH/run-fio.sh" <<EOF
#!/bin/sh
out="$CFG_SCRATCH/\$1.out"
NBD_URI=\$2
export NBD_URI
shift 2
cd "$CFG_SCRATCH" && fio "\$@" "$job" >"\$out" 2>&1 || exit 1
[ "\$(grep -c 'err= 0' "\$out")" -eq 4 ] && ! grep -qE 'err= *[1-9]|verify(: bad| failed)' "\$out"
EOF
chmod +x "$CFG_SCRATCH/run-fio.sh"
fio_out() { cat "$CFG_SCRATCH/$1.out"; }

nbdkit -U - "$RBDX_PLUGIN" "$img" --run 'nbdinfo "$uri"' >"$CFG_SCRATCH/info" ||
  fail "nbdinfo failed"
grep -q 'can_multi_conn: true' "$CFG_SCRATCH/info" ||
  fail "multi-conn not advertised for an image without exclusive-lock"

t0=$SECONDS
timeout 120 nbdkit -U - "$RBDX_PLUGIN" "$img" \
  --run "$CFG_SCRATCH/run-fio.sh write \"\$uri\"" </dev/null ||
  fail "fio write+verify failed: $(fio_out write)"
grep -qE '^ *READ: .*io=256MiB' "$CFG_SCRATCH/write.out" ||
  fail "fio did not read back the 256 MiB it wrote: $(fio_out write)"
say "4 connections wrote and verified 256 MiB in $((SECONDS - t0)) s"
grep -E '^ *(READ|WRITE):' "$CFG_SCRATCH/write.out" >&2 || true

# Second pass: a fresh read-only server, fresh connections.
timeout 120 nbdkit -r -U - "$RBDX_PLUGIN" "$img" \
  --run "$CFG_SCRATCH/run-fio.sh reverify \"\$uri\" --verify_only" </dev/null ||
  fail "read-only verify pass failed: $(fio_out reverify)"
grep -qE '^ *READ: .*io=256MiB' "$CFG_SCRATCH/reverify.out" ||
  fail "the verify pass did not read 256 MiB: $(fio_out reverify)"
say "read-only verify pass ok"

# Control: one corrupted block inside region 2 must be detected.
timeout 60 nbdkit -U - "$RBDX_PLUGIN" "$img" \
  --run 'qemu-io -f raw -c "write -P 0x5a 100m 4k" "$uri"' >/dev/null ||
  fail "could not corrupt a block"
if timeout 120 nbdkit -r -U - "$RBDX_PLUGIN" "$img" \
     --run "$CFG_SCRATCH/run-fio.sh control \"\$uri\" --verify_only" </dev/null; then
  fail "verify did not notice a corrupted block: $(fio_out control)"
fi
grep -qE 'verify(: bad| failed)' "$CFG_SCRATCH/control.out" ||
  fail "the control failed for another reason: $(fio_out control)"
say "ok"

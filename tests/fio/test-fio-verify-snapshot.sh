#!/usr/bin/env bash
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
. "$RBDX_TESTS/config/config-lib.sh"

img=$(new_image 128M --image-feature layering)
job=$CFG_SCRATCH/snap.fio
cat >"$job" <<'EOF'
[global]
ioengine=nbd
uri=${NBD_URI}
numjobs=4
size=32m
offset_increment=32m
rw=write
bsrange=4k-64k
iodepth=8
verify=crc32c
verify_fatal=1
randseed=4242
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
# verified LABEL: the run really read (and so verified) all 128 MiB.
verified() {
  grep -qE '^ *READ: .*io=128MiB' "$CFG_SCRATCH/$1.out" ||
    fail "fio $1 did not read the 128 MiB back: $(fio_out "$1")"
}

# 1. Write the pattern through a writable export.
timeout 120 nbdkit -U - "$RBDX_PLUGIN" "$img" \
  --run "$CFG_SCRATCH/run-fio.sh write \"\$uri\" --do_verify=0" </dev/null ||
  fail "fio pattern write failed: $(fio_out write)"
grep -qE '^ *WRITE: .*io=128MiB' "$CFG_SCRATCH/write.out" ||
  fail "fio did not write 128 MiB: $(fio_out write)"

# 2. Snapshot, then change the head in every region.
rbd snap create --no-progress "$img@s1"
timeout 60 nbdkit -U - "$RBDX_PLUGIN" "$img" --run 'qemu-io -f raw \
  -c "write -P 0xee 0 1m" -c "write -P 0xee 32m 1m" \
  -c "write -P 0xee 64m 1m" -c "write -P 0xee 96m 1m" "$uri"' >/dev/null ||
  fail "could not overwrite the head"

# 3. The snapshot export: read-only, multi-conn, verifies.
nbdkit -U - "$RBDX_PLUGIN" "$img@s1" --run 'nbdinfo "$uri"' \
  >"$CFG_SCRATCH/info" || fail "nbdinfo on the snapshot failed"
grep -q 'is_read_only: true' "$CFG_SCRATCH/info" ||
  fail "the snapshot export is not read-only: $(cat "$CFG_SCRATCH/info")"
grep -q 'can_multi_conn: true' "$CFG_SCRATCH/info" ||
  fail "the snapshot export does not advertise multi-conn"
timeout 120 nbdkit -U - "$RBDX_PLUGIN" "$img@s1" \
  --run "$CFG_SCRATCH/run-fio.sh snapverify \"\$uri\" --verify_only" </dev/null ||
  fail "verify of the snapshot failed: $(fio_out snapverify)"
verified snapverify
say "4 connections verified $img@s1"

# 4. Control: the head no longer verifies.
if timeout 120 nbdkit -r -U - "$RBDX_PLUGIN" "$img" \
     --run "$CFG_SCRATCH/run-fio.sh headverify \"\$uri\" --verify_only" </dev/null; then
  fail "the overwritten head verified too: the check proves nothing"
fi
grep -qE 'verify(: bad| failed)' "$CFG_SCRATCH/headverify.out" ||
  fail "head verify failed for another reason: $(fio_out headverify)"

# 5. Writes to the snapshot export fail with EPERM.  (libnbd refuses a
# write to a read-only export on the client side with EPERM; the
# server-side NBD_EPERM is case C13's test.)
if timeout 60 nbdkit -U - "$RBDX_PLUGIN" "$img@s1" \
     --run "$CFG_SCRATCH/run-fio.sh snapwrite \"\$uri\"" \
     </dev/null; then
  fail "a fio write job against $img@s1 succeeded"
fi
grep -q 'err= *1 .*Operation not permitted' "$CFG_SCRATCH/snapwrite.out" ||
  fail "the write failed without EPERM: $(fio_out snapwrite)"
# ... and the snapshot is unchanged.
timeout 120 nbdkit -U - "$RBDX_PLUGIN" "$img@s1" \
  --run "$CFG_SCRATCH/run-fio.sh snapverify2 \"\$uri\" --verify_only" </dev/null ||
  fail "the snapshot changed: $(fio_out snapverify2)"
verified snapverify2
say "ok"

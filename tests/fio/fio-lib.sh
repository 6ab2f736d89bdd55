# SPDX-License-Identifier: BSD-3-Clause
# Helpers for the fio tests in tests/fio (source after lib.sh).
#
#   FIO_DIR               a scratch directory, removed at exit.
#   fio_job SIZE RW SEED  write the fio job: 4 jobs (= 4 NBD connections
#                         through fio's nbd engine), job i on
#                         [i*SIZE, (i+1)*SIZE), RW (write, randwrite) of
#                         4-64 KiB blocks with 8 in flight, verify=crc32c,
#                         random seed SEED.
#   fio_serve LABEL [-r] SPEC [FIO-OPTIONS...]
#                         run the job on an rbdx export of SPEC (nbdkit
#                         --run, bounded by $FIO_TIMEOUT seconds,
#                         default 120); succeeds only if fio exits 0 with
#                         err=0 on all four jobs.  fio's output goes to
#                         $FIO_DIR/LABEL.out.
#   fio_out LABEL         print that output.
#   fio_did LABEL READ|WRITE IO
#                         fio's summary says it read / wrote IO ("128MiB").
#   fio_bad_verify LABEL  fio reported a verify failure.

FIO_DIR=$(tmpdir)

fio_job() {
  cat >"$FIO_DIR/job.fio" <<EOJ
[global]
ioengine=nbd
uri=\${NBD_URI}
numjobs=4
size=$1
offset_increment=$1
rw=$2
bsrange=4k-64k
iodepth=8
verify=crc32c
verify_fatal=1
randseed=$3
verify_state_save=0
[region]
EOJ
  # run-fio.sh LABEL URI [FIO-OPTIONS...]: what nbdkit --run runs.
  cat >"$FIO_DIR/run-fio.sh" <<EOS
#!/bin/sh
out="$FIO_DIR/\$1.out"
NBD_URI=\$2
export NBD_URI
shift 2
cd "$FIO_DIR" && fio "\$@" "$FIO_DIR/job.fio" >"\$out" 2>&1 || exit 1
[ "\$(grep -c 'err= 0' "\$out")" -eq 4 ] && ! grep -qE 'err= *[1-9]|verify(: bad| failed)' "\$out"
EOS
  chmod +x "$FIO_DIR/run-fio.sh"
}

fio_serve() {
  local label=$1 spec
  local -a ro=()
  shift
  if [ "$1" = -r ]; then ro=(-r); shift; fi
  spec=$1
  shift
  timeout "${FIO_TIMEOUT:-120}" nbdkit -U "$(new_socket)" "${ro[@]}" "$RBDX_PLUGIN" "$spec" \
    --run "$FIO_DIR/run-fio.sh $label \"\$uri\" $*" </dev/null
}

fio_out() { cat "$FIO_DIR/$1.out"; }

fio_did() { grep -qE "^ *$2: .*io=$3" "$FIO_DIR/$1.out"; }

fio_bad_verify() { grep -qE 'verify(: bad| failed)' "$FIO_DIR/$1.out"; }

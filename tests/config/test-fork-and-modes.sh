#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Proves: (1) nbdkit started without -f/--run forks to the background
# after .get_ready and the daemon serves correct I/O over several
# connections (per-connection writers, the shared writer of an
# exclusive-lock image, and exclusive=true), then stops on SIGTERM (the probe connection made before
# the fork must leave no librados state behind, or the child hangs in
# its first librados call: server/core/DESIGN.md "Process model: nbdkit's
# fork and librados' threads"); a bad image in daemon mode fails in the
# foreground with a non-zero exit and no daemon.  (2) the default
# (no completion=), completion=callback, poll, io_uring and auto each
# serve correct I/O with 16 requests in flight per connection (fio, 2
# connections, verify=crc32c), and nbdkit -v says which mechanism each
# connection uses ("completions via io_uring" for the default and auto
# where the kernel allows io_uring, else "poll(2)" with the reason;
# "librbd callbacks" for callback); nbdkit-rbdx-plugin.pod, completion=.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires qemu-io fio
. "$RBDX_TESTS/config/config-lib.sh"

img=$(new_image 96M --image-feature layering)

# $fio URI REGION-OFFSET: 2 jobs (= 2 connections), each writing its
# own 8 MiB region with 16 requests in flight, then verifying it.
fio=$CFG_SCRATCH/fio-verify.sh
cat >"$fio" <<EOF
#!/bin/sh
cd "$CFG_SCRATCH" || exit 1
fio --name=modes --ioengine=nbd --uri="\$1" --offset="\$2" --size=8m \\
  --offset_increment=8m --numjobs=2 --rw=randwrite --bsrange=4k-64k \\
  --iodepth=16 --verify=crc32c --verify_fatal=1 --verify_state_save=0 \\
  --output="$CFG_SCRATCH/fio.out" || exit 1
grep -q 'err= 0' "$CFG_SCRATCH/fio.out" &&
  ! grep -qE 'err= *[1-9]|verify(: bad| failed)' "$CFG_SCRATCH/fio.out" &&
  grep -qE '^ *READ: .*io=16(\.0)?MiB' "$CFG_SCRATCH/fio.out"
EOF
chmod +x "$fio"

# ---- (1) background (forking) mode ------------------------------------
# daemon_run LABEL IMAGE [PLUGIN-ARGS...]: start nbdkit without -f or
# --run, do I/O through the daemon, stop it with SIGTERM.
daemon_run() {
  local label=$1 image=$2 sock pidf dpid u
  shift 2
  sock=$CFG_SCRATCH/$label.sock
  pidf=$CFG_SCRATCH/$label.pid
  at_exit "[ -s $pidf ] && kill \$(cat $pidf) 2>/dev/null"
  timeout 60 nbdkit -P "$pidf" -U "$sock" "$RBDX_PLUGIN" "$image" "$@" \
    </dev/null || fail "$label: nbdkit (background mode) exited with status $?"
  wait_for 10 test -s "$pidf" || fail "$label: the daemon wrote no PID file"
  dpid=$(cat "$pidf")
  kill -0 "$dpid" 2>/dev/null || fail "$label: the daemon (pid $dpid) is not running"
  [ -S "$sock" ] || fail "$label: the daemon's socket $sock is missing"

  u=$(uri "$sock")
  # Several writes in flight on one connection, then read back.
  timeout 60 qemu-io -f raw \
    -c "aio_write -P 0x11 0 64k" -c "aio_write -P 0x22 64k 64k" \
    -c "aio_write -P 0x33 128k 64k" -c "aio_write -P 0x44 192k 64k" \
    -c aio_flush \
    -c "read -P 0x11 0 64k" -c "read -P 0x22 64k 64k" \
    -c "read -P 0x33 128k 64k" -c "read -P 0x44 192k 64k" "$u" \
    >"$CFG_SCRATCH/qemu-io.out" 2>&1 ||
    fail "$label: I/O through the daemon failed: $(cat "$CFG_SCRATCH/qemu-io.out")"
  grep -q 'Pattern verification failed' "$CFG_SCRATCH/qemu-io.out" &&
    fail "$label: the daemon returned wrong data: $(cat "$CFG_SCRATCH/qemu-io.out")"
  # Two connections at once with 16 requests in flight each.
  timeout 60 "$fio" "$u" 1m ||
    fail "$label: fio through the daemon failed: $(cat "$CFG_SCRATCH/fio.out")"
  # A new connection after the others closed sees the first writes.
  timeout 60 qemu-io -r -f raw -c "read -P 0x33 128k 64k" "$u" \
    >"$CFG_SCRATCH/qemu-io.out" 2>&1 ||
    fail "$label: a later connection failed: $(cat "$CFG_SCRATCH/qemu-io.out")"
  grep -q 'Pattern verification failed' "$CFG_SCRATCH/qemu-io.out" &&
    fail "$label: a later connection read wrong data"
  kill -0 "$dpid" 2>/dev/null || fail "$label: the daemon died during I/O"

  kill "$dpid"
  wait_for 10 exited "$dpid" ||
    fail "$label: the daemon did not exit on SIGTERM"
  say "$label: daemon pid $dpid served and stopped"
}

# Per-connection writers (no exclusive-lock), the shared writer
# (exclusive-lock, writers=auto) and exclusive=true: whatever each sets
# up must happen after the fork.
img_lock=$(new_image 64M)
daemon_run per-connection "$img"
daemon_run shared "$img_lock"
daemon_run exclusive "$img_lock" exclusive=true

# A bad image in background mode: error in the foreground, no daemon.
set +e
timeout 60 nbdkit -P "$CFG_SCRATCH/bad.pid" -U "$CFG_SCRATCH/bad.sock" \
  "$RBDX_PLUGIN" rbd/missing </dev/null 2>"$CFG_SCRATCH/bad.err"
rc=$?
set -e
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] ||
  fail "background mode with a missing image exited $rc"
grep -qF "image 'rbd/missing' does not exist" "$CFG_SCRATCH/bad.err" ||
  fail "no error naming rbd/missing: $(cat "$CFG_SCRATCH/bad.err")"
[ ! -e "$CFG_SCRATCH/bad.pid" ] || fail "a daemon started for a missing image"

# ---- (2) completion modes ---------------------------------------------
# Does this kernel let us use io_uring?  completion=auto decides.
uring=yes
off=16
for mode in auto default callback io_uring poll; do
  log="$CFG_SCRATCH/$mode.log"
  param="completion=$mode"
  [ "$mode" = default ] && param="writers=auto"   # completion= not given
  if ! timeout 90 nbdkit -v -U "$(new_socket)" "$RBDX_PLUGIN" "$img" "$param" \
         --run "$fio \"\$uri\" ${off}m" \
         </dev/null 2>"$log"; then
    if [ "$mode" = io_uring ] && [ "$uring" = no ]; then
      grep -qF "completion=io_uring: cannot set up io_uring" "$log" ||
        fail "completion=io_uring without io_uring: no clear error"
      say "completion=io_uring refused (io_uring unavailable here)"
      continue
    fi
    fail "completion=$mode: fio failed: $(cat "$CFG_SCRATCH/fio.out"; grep -E 'error|rbdx: opened' "$log")"
  fi
  opened=$(grep -c 'rbdx: opened .* completions via ' "$log" || true)
  [ "$opened" -ge 2 ] || fail "completion=$mode: $opened connections logged (expected >= 2)"
  case $mode in
    auto|default)
      if grep -q 'completions via poll(2)' "$log"; then
        uring=no
        grep -q 'io_uring unavailable' "$log" ||
          fail "completion=auto fell back to poll(2) without saying why"
      fi
      want=$([ "$uring" = yes ] && echo io_uring || echo 'poll(2)') ;;
    io_uring) want=io_uring ;;
    poll) want='poll(2)' ;;
    callback) want='librbd callbacks' ;;
  esac
  n=$(grep -cF "completions via $want" "$log" || true)
  [ "$n" -eq "$opened" ] ||
    fail "completion=$mode: $n of $opened connections use $want: $(grep 'rbdx: opened' "$log")"
  say "completion=$mode: $opened connections, completions via $want, fio verified"
  off=$((off + 16))   # two 8m jobs a mode: five modes fit the 96M image
done
say "ok"

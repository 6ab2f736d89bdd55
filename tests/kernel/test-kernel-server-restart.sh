#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-kernel-server-restart: the rbdx server (nbdkit) dies and is started
# again on the same socket while the kernel NBD client has the image mapped
# with 4 connections, ext4 mounted and writes in flight; I/O resumes and the
# file system sees no error.
#
# The server is stopped with SIGKILL (a crash, as in case C06), or with the
# signal named by RBDX_RESTART_SIGNAL (e.g. TERM, a planned restart).  Known
# with nbdkit 1.32.5: after SIGTERM nbdkit answers the requests it still
# reads with NBD_ESHUTDOWN, which the kernel driver turns into I/O errors
# (ext4 "Buffer I/O error", fsync EIO), so the TERM variant fails whatever
# the mapper does; and it exits only once the kernel's I/O timeout closes
# the sockets its worker threads are blocked reading.  After SIGKILL the
# dead server's exclusive lock stays until its watch expires
# (osd_client_watch_timeout, 30 s), so the first writes after the restart
# wait about that long before librbd breaks the lock.
#
# The kernel NBD driver never reconnects by itself.  A device configured
# over netlink with a dead-connection timeout (NBD_ATTR_DEAD_CONN_TIMEOUT)
# holds its requests when every connection is gone, multicasts
# NBD_CMD_LINK_DEAD, and resumes when someone hands it new, negotiated
# sockets with NBD_CMD_RECONFIGURE (NBD_ATTR_SOCKETS).  nbd-client 3.24
# cannot: it sets no dead-connection timeout and exits after configuring
# the device, and its -persist works only in ioctl mode, where the kernel
# fails the queued I/O and drops the device's size when the connection
# goes, so a mounted file system gets I/O errors.  Reattaching is the
# mapper's job, so the test needs it (same contract as test-kernel-resize):
#     MAPPER map --device /dev/nbd0 --connections 4 --io-timeout 60 \
#                --reattach-timeout 120 nbd://HOST:PORT/EXPORT
#     MAPPER unmap /dev/nbd0
# and skips with "needs the rbdx mapper's reattach support" without it.
#
# The mapping is made with --resize-poll 0.  For an NBD URI the
# supervisor otherwise opens a short-lived extra connection every 5 s to
# ask the server for its size (test-kernel-resize covers that), so the
# relay would see 4 or 5 connections depending on the moment it is asked.
# With the poll off the kernel's 4 connections are, by design, the only
# ones to the server, and the counts below are exact.
#
# Asserts:
#   - the relay sees the kernel's 4 connections close when nbdkit stops, and
#     the guest has 4 connections again after it restarts (the mapper
#     reattached);
#   - a writer doing 256 KiB writes with fsync, running across the outage,
#     makes progress after the restart and never gets an error;
#   - the guest kernel logs no I/O or ext4 error; after umount e2fsck -fn is
#     clean and every file written before and during the outage keeps its
#     sha256 across dropped caches and a new mount;
#   - on the host, `rbd export` is a clean ext4.
# Covers: case C06's "the mapper re-attach[es]" requirement, kernel side.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/kernel/lib-uml.sh"
uml_requires
requires_cluster
requires e2fsck
mapper=$(uml_mapper reattach)
sig=${RBDX_RESTART_SIGNAL:-KILL}

img=$(new_image 256M)
uml_setup
sock="$UML_DIR/nbd.sock"
uml_serve "$sock" "$img"
uml_bridge "$sock"
uml_guest_mount "$(dirname "$mapper")"
uml_guest_env NBD_EXPORT="$img" MAPPER="$mapper"

cat >"$UML_DIR/guest-restart.sh" <<'EOF'
load_nbd
"$MAPPER" map --device /dev/nbd0 --connections 4 --io-timeout 60 \
  --reattach-timeout 120 --resize-poll 0 "nbd://$NBD_HOST:$NBD_PORT/$NBD_EXPORT"
four_conns() { [ "$(tcp_conns "$NBD_PORT")" -eq 4 ]; }
wait_until 10 four_conns || fail "$(tcp_conns "$NBD_PORT") connections, expected 4"
mkfs.ext4 -q -F -b 4096 /dev/nbd0
mkdir -p /mnt/fs
mount /dev/nbd0 /mnt/fs
mkdir /mnt/fs/w
head -c $((4 << 20)) /dev/urandom >/mnt/fs/before
(cd /mnt/fs && sha256sum before) >/share/sums
sync

# Writer: 256 KiB files, each fsynced, until told to stop (at most 400).
writer() {
  set +x
  local i=0
  while [ ! -e /tmp/stop-writer ] && [ "$i" -lt 400 ]; do
    i=$((i + 1))
    head -c 262144 /dev/urandom >/tmp/chunk
    if ! dd if=/tmp/chunk of="/mnt/fs/w/$i" bs=256k conv=fsync status=none; then
      echo "$i" >/tmp/writer-failed
      return 1
    fi
    echo "$(sha256sum </tmp/chunk | cut -d' ' -f1)  w/$i" >>/tmp/wsums
    echo "$i" >/tmp/writer-count
  done
}
echo 0 >/tmp/writer-count
writer &
wpid=$!
count() { cat /tmp/writer-count; }
# True once the writer wrote 3 more files than $1, or failed.
progressed() { [ -e /tmp/writer-failed ] || [ "$(count)" -ge $(( $1 + 3 )) ]; }
writer_ok() {
  [ ! -e /tmp/writer-failed ] ||
    fail "the writer got an error at file $(cat /tmp/writer-failed): $(dmesg | grep -E 'error' | tail -n 3)"
}
wait_until 30 progressed 0 || fail "the writer does not progress"
writer_ok
step writing
wait_host restarted 120
at_restart=$(count)
say "the writer had written $at_restart files when the server came back"
wait_until 150 progressed "$at_restart" || fail "no write completed within 150 s of the restart (at $(count))"
writer_ok
wait_until 30 four_conns || fail "$(tcp_conns "$NBD_PORT") connections after the restart, expected 4"
touch /tmp/stop-writer
wait "$wpid" || fail "the writer failed at file $(cat /tmp/writer-failed 2>/dev/null)"
say "the writer wrote $(count) files in all"
cat /tmp/wsums >>/share/sums
sync
if dmesg | grep -E 'I/O error|EXT4-fs error|EXT4-fs warning|Buffer I/O|Aborting journal'; then
  fail "the kernel logged I/O or file system errors"
fi
umount /mnt/fs
e2fsck -fn /dev/nbd0 || fail "e2fsck found errors"
blockdev --flushbufs /dev/nbd0
echo 3 >/proc/sys/vm/drop_caches
mount /dev/nbd0 /mnt/fs
(cd /mnt/fs && sha256sum -c --quiet /share/sums) || fail "checksums differ after remount"
umount /mnt/fs
"$MAPPER" unmap /dev/nbd0
dev_gone() { [ "$(dev_bytes nbd0)" -eq 0 ]; }
wait_until 10 dev_gone || fail "nbd0 still has a size after unmap"
EOF

uml_boot "$UML_DIR/guest-restart.sh"
uml_wait_step writing 120
n=$(uml_host_conns)
[ "$n" -eq 4 ] || fail "the relay sees $n connections before the restart," \
  "expected 4: $(uml_host_peers | tr '\n' ' ')"
old_peers=$(uml_host_peers)
old_pid=$SERVER_PID
say "stopping nbdkit (pid $old_pid) with SIG$sig"
t=$SECONDS
disown "$old_pid" 2>/dev/null || true   # no "Killed" job notice from bash
kill -s "$sig" "$old_pid"
for i in $(seq 300); do kill -0 "$old_pid" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$old_pid" 2>/dev/null ||
  fail "nbdkit (pid $old_pid) still runs $((SECONDS - t)) s after SIG$sig"
say "nbdkit exited $((SECONDS - t)) s after SIG$sig"
# The kernel's 4 connections must go (the mapper may already be retrying).
old_left() { comm -12 <(echo "$old_peers") <(uml_host_peers) | grep -c . || true; }
for i in $(seq 100); do [ "$(old_left)" -eq 0 ] && break; sleep 0.1; done
[ "$(old_left)" -eq 0 ] || fail "$(old_left) of the kernel's connections still open after nbdkit exited"
rm -f "$sock" "$sock.pid"
# Stay down until the mapper has tried to reconnect and been refused (the
# relay logs the failed connect), at most 10 s.
refused0=$(grep -c 'E connect' "$UML_DIR/socat.log" || true)
for i in $(seq 100); do
  [ "$(grep -c 'E connect' "$UML_DIR/socat.log" || true)" -gt "$refused0" ] && break
  sleep 0.1
done
say "server down for $((SECONDS - t)) s"
uml_serve "$sock" "$img"
say "nbdkit restarted (pid $SERVER_PID)"
uml_signal restarted
uml_finish 300

raw="$UML_DIR/image.raw"
rbd export --no-progress "$img" "$raw" >/dev/null
e2fsck -fn "$raw" >"$UML_DIR/e2fsck.log" 2>&1 || { cat "$UML_DIR/e2fsck.log" >&2; fail "e2fsck found errors in the exported image"; }
# The killed server's watches outlive it by osd_client_watch_timeout, and
# `rbd rm` (at exit) refuses an image with watchers: wait for them to go.
stop_server "$sock"
for i in $(seq 120); do [ "$(watchers "$img")" -eq 0 ] && break; sleep 0.5; done
say "ok: I/O resumed after the server restart without errors"

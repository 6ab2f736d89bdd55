#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Proves: when nbdkit exits, rbdx leaves no watcher and no exclusive
# lock on the image, so the next user of the image neither stalls
# (~30 s, until the OSD expires the dead watch and librbd may break the
# lock) nor fails (`rbd rm`: "image still has watchers").  Two ways out:
# (1) nbdkit --run ends right after its client disconnects (5 times);
# (2) SIGTERM to a server while a client is still connected (a service
# stop), the client disconnecting afterwards.  nbdkit skips .close for connections that end after it has
# started to quit, so the plugin must release what is left in
# .cleanup/.unload.  Then a fresh server writes to the image at once.
# Case C03 (second half: nothing left after nbdkit exits).
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires qemu-io nbdsh
. "$RBDX_TESTS/config/config-lib.sh"

img=$(new_image 16M)          # default features: exclusive-lock on

# (1) --run: the client disconnects, the command ends, nbdkit quits.
for i in 1 2 3 4 5; do
  timeout 60 nbdkit -U "$(new_socket)" "$RBDX_PLUGIN" "$img" \
    --run "qemu-io -f raw -c 'write -P $i 0 4k' \"\$uri\"" >/dev/null ||
    fail "write $i failed"
  released "$img" "after nbdkit --run exit #$i" 3
done
say "nbdkit --run left nothing behind (5 runs)"

# (2) SIGTERM with a client connected and holding the lock.
sock=$CFG_SCRATCH/s.sock
serve "$sock" -- "$img"
nbdsh -u "$(uri "$sock")" -c '
import time
h.pwrite(b"\x07" * 4096, 0)
h.flush()
open("'"$CFG_SCRATCH"'/wrote", "w").close()
time.sleep(120)
' >/dev/null 2>&1 &
client=$!
at_exit "kill $client 2>/dev/null"
wait_for 10 test -e "$CFG_SCRATCH/wrote" || fail "the client could not write"
[ "$(rbd lock ls "$img" --format json)" != "[]" ] ||
  fail "no exclusive lock while a client writes (test premise)"
# nbdkit 1.32 keeps serving a connected client after SIGTERM and quits
# when the client goes; that connection's .close is then skipped.
kill "$SERVER_PID"
sleep 0.5    # let the signal land before the client goes (no observable event)
kill "$client" 2>/dev/null || true
wait "$client" 2>/dev/null || true
wait_for 10 exited "$SERVER_PID" ||
  fail "nbdkit did not exit after SIGTERM and the client's disconnect"
released "$img" "after SIGTERM with a connected client" 3

# The next writer gets the image at once.
t0=$EPOCHREALTIME
timeout 60 nbdkit -U "$(new_socket)" "$RBDX_PLUGIN" "$img" \
  --run 'qemu-io -f raw -c "write -P 9 0 4k" "$uri"' >/dev/null ||
  fail "the next writer failed"
dt=$(_cfg_since "$t0")
say "next writer done in $dt s"
[ "${dt%%.*}" -lt 5 ] || fail "the next writer took $dt s (stale lock?)"
say "ok"

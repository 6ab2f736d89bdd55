#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C07 (tests/README.md), second half: 50 bare TCP
# connects that never negotiate open no image: while they are held,
# `rbd status` shows no watcher (rbdx opens its librbd context in .open,
# after NBD_OPT_GO, never at accept); a normal client is served
# meanwhile and afterwards.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires nbdsh nbdinfo
img=$(new_image 24M)
d=$(tmpdir)

# nbdkit on a free 127.0.0.1 port: try random ones until one binds.
port=
for try in $(seq 20); do
  p=$((20000 + RANDOM % 30000))
  rm -f "$d/tcp.pid"
  nbdkit -f -v -i 127.0.0.1 -p "$p" -P "$d/tcp.pid" --exit-with-parent \
    "$RBDX_PLUGIN" "$img" 2>"$d/log" &
  bg=$!
  for i in $(seq 300); do
    [ -s "$d/tcp.pid" ] && break
    kill -0 "$bg" 2>/dev/null || break
    sleep 0.05
  done
  if [ -s "$d/tcp.pid" ]; then port=$p; break; fi
  wait "$bg" || true
  grep -q 'Address already in use' "$d/log" ||
    fail "nbdkit did not start on port $p: $(tail -5 "$d/log")"
done
[ -n "$port" ] || fail "no free TCP port found in 20 tries"
say "nbdkit pid $(cat "$d/tcp.pid") on 127.0.0.1:$port"
opens() { grep -c 'debug: rbdx: open readonly=' "$d/log" || true; }

[ "$(watchers "$img")" = 0 ] || fail "watchers before any connection"

# 50 bare connects.  Each must get the server's greeting (NBDMAGIC), so
# nbdkit has accepted all of them before rbd status is asked.
fds=()
for i in $(seq 50); do
  exec {fd}<>"/dev/tcp/127.0.0.1/$port" || fail "connect $i refused"
  fds+=("$fd")
done
for fd in "${fds[@]}"; do
  IFS= read -r -N 8 -t 10 -u "$fd" magic || fail "no greeting on fd $fd"
  [ "$magic" = NBDMAGIC ] || fail "greeting is '$magic'"
done
n=$(watchers "$img")
[ "$n" = 0 ] || fail "50 bare connects: rbd status shows $n watchers"
[ "$(opens)" = 0 ] || fail "nbdkit called rbdx's .open for a bare connect"
say "50 bare connects held: no watcher, no .open"

# A normal client is served while they are held; its connection does
# show up in rbd status (so the check above can see an open image).
nbdsh -u "nbd://127.0.0.1:$port" -c "
import json, subprocess
assert h.get_size() == 24 * 1024 * 1024
assert h.pread(4096, 0) == bytes(4096)
st = json.loads(subprocess.check_output(
    ['rbd', 'status', '--format', 'json', '$img']))
assert len(st.get('watchers', [])) >= 1, st
h.shutdown()
" || fail "a normal client failed while 50 bare connects were held"
[ "$(opens)" = 1 ] || fail "expected exactly one .open, log has $(opens)"

for fd in "${fds[@]}"; do exec {fd}>&-; done

# Afterwards: the server is alive and still serves.
kill -0 "$(cat "$d/tcp.pid")" || fail "nbdkit died"
[ "$(nbdinfo --size "nbd://127.0.0.1:$port")" = 25165824 ] ||
  fail "a normal client failed after the bare connects"
# Both normal clients have gone: their watches go too.
wait_for 10 unwatched "$img" ||
  fail "watchers left after every client disconnected: $(rbd status "$img")"
stop_server "$d/tcp"

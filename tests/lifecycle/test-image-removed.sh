#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The image is moved to the trash, or removed, while rbdx serves it.
# librbd's handle follows its image by id into the trash, and Ceph refuses
# to remove an image that has watchers (every rbdx context watches the
# header), so rbdx's policy is: open connections keep their image until
# they close; new connections by name fail as for a missing image.
# Asserts:
#   - `rbd rm` of a served image fails and the image is still there;
#   - after `rbd trash mv`, A still reads and writes its image; a new
#     connection to the name fails (NBD_OPT_GO error) and the server lives;
#   - `rbd trash rm` fails while A is connected;
#   - once the server stopped, `rbd trash restore` gives back the image
#     with A's write after the move.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/multiconn/mc-lib.sh"
requires_cluster
requires nbdinfo

img=$(new_image 16M)
sock="$MC_DIR/s.sock"
serve "$sock" -- "$img"
u=$(uri "$sock")
client_start A "$u"
client_do A write 0 4096 aa
client_do A flush

say "rbd rm of a served image"
if rbd rm --no-progress "$img" >"$MC_DIR/rm.out" 2>&1; then
  fail "rbd rm removed an image rbdx serves"
fi
grep -q watchers "$MC_DIR/rm.out" || fail "rbd rm failed for another reason: $(cat "$MC_DIR/rm.out")"
client_do A read 0 4096 aa

say "rbd trash mv of a served image"
rbd trash mv "$img"
id=$(rbd trash ls --format json rbd | python3 -c '
import json, sys
print(*[e["id"] for e in json.load(sys.stdin) if e["name"] == sys.argv[1]])' "${img#rbd/}")
[ -n "$id" ] || fail "$img is not in the trash"
at_exit "rbd trash rm --no-progress --force rbd/$id >/dev/null 2>&1"
client_do A read 0 4096 aa
client_do A write 4096 4096 bb
client_do A flush
client_do A read 4096 4096 bb
if nbdinfo --size "$u" >"$MC_DIR/new.out" 2>&1; then
  fail "a new connection opened the trashed image by name: $(cat "$MC_DIR/new.out")"
fi
kill -0 "$SERVER_PID" || fail "the server died"
client_do A alive
if rbd trash rm --no-progress "rbd/$id" >"$MC_DIR/trm.out" 2>&1; then
  fail "rbd trash rm removed an image rbdx serves"
fi
client_do A read 0 4096 aa
client_stop A
stop_server "$sock"

say "restore after the server stopped"
rbd trash restore "rbd/$id"
pattern_file "$MC_DIR/bb" 4096 bb
rbd export --no-progress "$img" "$MC_DIR/img" >/dev/null 2>&1
cmp -n 4096 -i 4096:0 "$MC_DIR/img" "$MC_DIR/bb" ||
  fail "A's write after the move is not in the restored image"

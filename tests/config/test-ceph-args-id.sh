#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Proves: without id=, the cephx id in $CEPH_ARGS is the one rbdx
# connects as, through nbdkit and through the engine (rbdx-engine), as
# the rbd CLI and rbd-nbd do (nbdkit-rbdx-plugin.pod, id=; Ceph's rules:
# include/rbdx/cephargs.h).  A user made here with its key alone in a
# keyring of its own: CEPH_ARGS="--id U --keyring=K" serves and a read
# returns the data (also --user=U and -n client.U).  That keyring holds
# no admin key, so the client.admin rbdx used to connect as is refused:
# this is the reported failure.  An id= given wins over $CEPH_ARGS.  A
# user that does not exist is named with "$CEPH_ARGS" in the error; an
# id refused as id= would be, a name of another type than client, a
# trailing --id, -i, and a value with a newline and an ESC sequence
# make nbdkit exit non-zero (the engine 1) before serving, with one
# error naming $CEPH_ARGS (the hostile value escaped).
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires qemu-io ceph nbdsh rbd
. "$RBDX_TESTS/config/config-lib.sh"

img=$(new_image 16M --image-feature layering)
u="cargs$$"
sandbox_user "$u"
kr="$CFG_SCRATCH/$u.keyring"
cp "$USER_KEYRING" "$kr"
rd='qemu-io -r -f raw -c "read -P 0x5c 0 64k" "$uri"'
served 'qemu-io -f raw -c "write -P 0x5c 0 64k" "$uri"' -- "$img"  # as admin

say "the reference: the rbd CLI with this CEPH_ARGS"
CEPH_ARGS="--id $u --keyring=$kr" timeout 60 rbd info "$img" >/dev/null ||
  fail "rbd info as $u through CEPH_ARGS failed: the test's user is not usable"
CEPH_ARGS="--keyring=$kr" timeout 60 rbd info "$img" >/dev/null 2>&1 &&
  fail "client.admin connected with $u's keyring: the test proves nothing"

say "nbdkit: the id of CEPH_ARGS"
CEPH_ARGS="--id $u --keyring=$kr" served "$rd" -- "$img"
CEPH_ARGS="--keyring=$kr  --user=$u" served "$rd" -- "$img"
CEPH_ARGS="-n client.$u --keyring=$kr" served "$rd" -- "$img"
CEPH_ARGS="--id nosuch$$ --keyring=$kr" \
  refused "client.nosuch$$ (the id of \$CEPH_ARGS)" "refused the key" -- "$img"
say "nbdkit: id= wins over CEPH_ARGS"
CEPH_ARGS="--id nosuch$$ --keyring=$kr" served "$rd" -- "$img" "id=$u"
CEPH_ARGS="--name osd.0" served "$rd" -- "$img" "id=$u" "keyring=$kr"

say "nbdkit: bad ids in CEPH_ARGS, refused before serving"
CEPH_ARGS="--id client.$u --keyring=$kr" \
  refused "\$CEPH_ARGS: the cephx id 'client.$u'" "'client.' prefix" -- "$img"
CEPH_ARGS="--name osd.0" refused "\$CEPH_ARGS: the name 'osd.0'" -- "$img"
CEPH_ARGS="--keyring=$kr --id" refused "\$CEPH_ARGS: '--id' is the last" -- "$img"
CEPH_ARGS="-i $u" refused "\$CEPH_ARGS: '-i'" "give --id" -- "$img"
CEPH_ARGS="--id ../$u" refused "\$CEPH_ARGS" "'../$u'" "'/'" -- "$img"
CEPH_ARGS="--id $HOSTILE" refused_unsplit "\$CEPH_ARGS: the cephx id" -- "$img"

engine=$RBDX_BUILD/server/rbdx-engine
[ -x "$engine" ] || { say "no engine built (-Dmapper=disabled): plugin only"; say "ok"; exit 0; }
e=$CFG_SCRATCH
check='assert h.pread(65536, 0) == b"\x5c" * 65536'

say "engine: the id of CEPH_ARGS"
CEPH_ARGS="--id $u --keyring=$kr" serve_engine "$e/a.sock" -- "$img"
nbdsh -u "nbd+unix:///?socket=$e/a.sock" -c "$check" ||
  fail "engine: the read as $u failed: $(tail -3 "$e/a.sock.log")"
stop_server "$e/a.sock"
say "engine: id= wins over CEPH_ARGS"
CEPH_ARGS="--id nosuch$$ --keyring=$kr" serve_engine "$e/b.sock" -- "$img" "id=$u"
nbdsh -u "nbd+unix:///?socket=$e/b.sock" -c "$check" ||
  fail "engine: the read with id=$u failed: $(tail -3 "$e/b.sock.log")"
stop_server "$e/b.sock"

# engine_refused CEPH_ARGS WORD...: the engine exits 1 before serving,
# with a message holding every WORD.
engine_refused() {
  local args=$1 rc=0 w
  shift
  CEPH_ARGS=$args timeout 120 "$engine" --oldstyle "$e/r.sock" "$img" \
    2>"$e/r.log" || rc=$?
  say "rbdx-engine with CEPH_ARGS=${args@Q} -> exit $rc: $(tr '\n' ' ' <"$e/r.log")"
  [ "$rc" -eq 1 ] || fail "engine, CEPH_ARGS='$args': exit $rc, not 1"
  [ ! -e "$e/r.sock" ] || fail "engine, CEPH_ARGS='$args': it listened"
  for w in "$@"; do
    grep -qF -- "$w" "$e/r.log" ||
      fail "engine, CEPH_ARGS='$args': no '$w' in: $(cat -A "$e/r.log")"
  done
}
say "engine: bad ids in CEPH_ARGS, refused before serving"
engine_refused "--id nosuch$$ --keyring=$kr" "client.nosuch$$ (the id of \$CEPH_ARGS)"
engine_refused "--id client.$u" "\$CEPH_ARGS: the cephx id 'client.$u'"
engine_refused "--name osd.0" "\$CEPH_ARGS: the name 'osd.0'"
engine_refused "--id" "\$CEPH_ARGS: '--id' is the last"
engine_refused "--id $HOSTILE" "\$CEPH_ARGS" 'x\x0aFORGED\x1b[31m'
! grep -q $'\e' "$e/r.log" && ! grep -q '^FORGED' "$e/r.log" ||
  fail "engine: the hostile id is not escaped on one line: $(cat -A "$e/r.log")"
say "ok"

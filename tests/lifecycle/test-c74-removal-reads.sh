#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Case C74 (tests/README.md): a cephx id that may not write (osd 'profile
# rbd-read-only') serves an image (16 MiB of 0x5a) with nbdkit -r (and
# rbdx-engine --readonly), so the handle has no header watch; three
# clients each read 4096 bytes at a time all over the image, without a
# pause, while `rbd rm` deletes it (and, for nbdkit, `rbd trash mv` then
# `rbd trash rm`); and a snapshot served so (its head rewritten since,
# so that its data lives in the OSDs' clones) while `rbd snap rm` runs;
# and a clone (of a parent of 0x11), all written, while `rbd rm` runs.
# Asserts: every read that succeeds returns 0x5a (never the zeros librbd
# makes up for deleted objects, nor the parent's data a deleted object of
# a clone reads as, which the header poll alone let through for up to a
# second); the reads end failing with NBD_EIO, none fails
# with another error; the clients stay connected.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/lifecycle/readers.sh"
requires_cluster
requires ceph
requires_python_nbd

d=$(tmpdir)
ro="c74ro$$"
readonly_id "$ro" "$d/ro.keyring"
pattern_file "$d/img" 16M 5a

# removed HOW [engine]: serve, read, remove by HOW (rm, trash).
removed() {
  local img sock id spec
  img=$(new_image 16M)
  import_into "$img" "$d/img"
  spec=$img
  if [ "$1" = snap ]; then
    # The head rewritten: the snapshot's data lives in the OSDs' clones,
    # which go once librbd releases the snapshot id.
    rbd snap create --no-progress "$img@s1" >/dev/null 2>&1
    rbd bench --io-type write --io-size 4M --io-threads 1 --io-total 16M \
      --io-pattern seq "$img" >/dev/null 2>&1 || fail "rbd bench failed"
    spec=$img@s1
  elif [ "$1" = clone ]; then
    # A clone of a parent of 0x11, every byte of it written (0x5a).
    pattern_file "$d/parent" 16M 11
    import_into "$img" "$d/parent"
    rbd snap create --no-progress "$img@p" >/dev/null 2>&1
    rbd snap protect "$img@p" || fail "rbd snap protect failed"
    spec=$img-clone
    # Hooks run before the images are removed: the clone goes first.
    at_exit "rbd rm --no-progress $spec >/dev/null 2>&1; rbd snap unprotect $img@p"
    rbd clone "$img@p" "$spec" >/dev/null 2>&1 || fail "rbd clone failed"
    nbdkit -U - "$RBDX_PLUGIN" "$spec" --run \
      'nbdsh -u "$uri" -c "h.pwrite(b\"\\x5a\" * (16 << 20), 0); h.flush()"' ||
      fail "cannot write the clone"
  fi
  sock="$d/$1-${2:-nbdkit}.sock"
  say "${2:-nbdkit}, read-only: reads of $spec while rbd ${1/clone/rm} deletes it"
  serve_via "${2:-nbdkit}" "$sock" ro -- "$spec" id="$ro" keyring="$d/ro.keyring"
  readers_start "$d" "$(uri "$sock")" 5a
  id=$(rbd info --format json "$img" | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p')
  if [ "$1" = rm ] || [ "$1" = clone ]; then
    rbd rm --no-progress "$spec" >/dev/null 2>&1 || fail "rbd rm of $spec failed"
  elif [ "$1" = snap ]; then
    rbd snap rm --no-progress "$spec" >/dev/null 2>&1 ||
      fail "rbd snap rm of $spec failed"
  else
    rbd trash mv "$img" >/dev/null 2>&1 || fail "rbd trash mv of $img failed"
    rbd trash rm --no-progress "${img%%/*}/$id" >/dev/null 2>&1 ||
      fail "rbd trash rm of $id failed"
  fi
  readers_end "$d" "rbd $1"
  stop_server "$sock"
}

removed rm
removed trash
removed snap
removed clone
if [ -x "$RBDX_BUILD/server/rbdx-engine" ]; then
  removed rm engine
  removed snap engine
  removed clone engine
fi
say "ok"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Proves: a wrong image spec makes nbdkit exit non-zero before serving,
# with one error naming the bad part (nbdkit-rbdx-plugin.pod, PARAMETERS
# image=, pool=, exclusive= and ERRORS): no image, malformed specs (a
# "." or ".." name among them, also in pool=), a
# pool, namespace, image or snapshot that does not exist (also through
# pool=), and exclusive=true on an image without the exclusive-lock
# feature.  Positive controls: the same image, an existing snapshot, an
# image inside a namespace (rbd/NS/IMG) are served and do I/O; pool=rbd
# and pool=rbd/NS serve and list their images.  pool=rbd is shared with
# the tests running beside this one, whose images come and go: there
# only the export names are listed (an image removed between the list
# and nbdinfo's per-export open would fail a whole `nbdinfo --list`);
# the private namespace gets the full `nbdinfo --list`.
. "$RBDX_TESTS/lib.sh"
requires_cluster
requires qemu-io nbdinfo nbdsh
. "$RBDX_TESTS/config/config-lib.sh"

img=$(new_image 16M --image-feature layering)
name=${img#rbd/}
ns="cfgns$$"

# Missing / malformed specs (rejected while parsing the parameters).
refused "no image given" -- 
refused "a/b/c/d" "too many '/'" -- a/b/c/d
refused "img@" "snapshot name is empty" -- img@
refused "/img" "pool name is empty" -- /img
refused "rbd//img" "namespace name is empty" -- rbd//img
refused "rbd/" "image name is empty" -- image=rbd/
# "." and ".." are no names (a spec becomes a path under the mapper's
# link directory): as pool, namespace, image or snapshot, and in pool=.
refused "image='../img'" "pool name is '.' or '..'" -- image=../img
refused "image='rbd/./img'" "namespace name is '.' or '..'" -- image=rbd/./img
refused "image='rbd/..'" "image name is '.' or '..'" -- image=rbd/..
refused "image='..'" "image name is '.' or '..'" -- image=..
refused "image='rbd/img@.'" "snapshot name is '.' or '..'" -- image=rbd/img@.
refused "pool='..'" "are no pool or namespace names" -- pool=..
refused "pool='rbd/.'" "are no pool or namespace names" -- pool=rbd/.

# Well-formed specs naming things that do not exist (probed in .get_ready).
refused "pool 'nosuchpool$$'" "does not exist" -- "nosuchpool$$/$name"
refused "namespace 'rbd/nosuchns$$'" "does not exist" -- "rbd/nosuchns$$/$name"
refused "image 'rbd/missing'" "does not exist" -- rbd/missing
refused "image 'rbd/missing'" "does not exist" -- missing   # default pool
refused "snapshot 'nosnap'" "rbd/$name" "does not exist" -- "$img@nosnap"
refused "pool 'nosuchpool$$'" "does not exist" -- "pool=nosuchpool$$"
refused "namespace 'rbd/nosuchns$$'" "does not exist" -- "pool=rbd/nosuchns$$"
refused "image 'rbd/missing'" "does not exist" -- pool=rbd missing
refused "exclusive=true" "'$img' has no exclusive-lock feature" -- \
  "$img" exclusive=true

# Positive controls.
served 'qemu-io -f raw -c "write -P 0x3c 0 64k" -c "read -P 0x3c 0 64k" "$uri"' \
  -- "$img"
served 'qemu-io -f raw -c "read -P 0x3c 0 64k" "$uri"' -- "image=$name"
rbd snap create --no-progress "$img@s1"
served 'qemu-io -r -f raw -c "read -P 0x3c 0 64k" "$uri"' -- "$img@s1"
served 'nbdsh --opt-mode -u "$uri" -c "h.opt_list(lambda name, desc: print(name) or 0)" -c "h.opt_abort()"' \
  -- pool=rbd
grep -qx "$img" "$CFG_SCRATCH/stdout" ||
  fail "pool=rbd does not list $img: $(cat "$CFG_SCRATCH/stdout")"

# An image inside a namespace, served as pool/namespace/image.
rbd namespace create "rbd/$ns"
nsimg="rbd/$ns/img"
at_exit "rbd namespace rm rbd/$ns >/dev/null 2>&1"
at_exit "rbd rm --no-progress $nsimg >/dev/null 2>&1"
rbd create --no-progress --size 8M "$nsimg"
refused "image 'rbd/$ns/nosuch'" "does not exist" -- "rbd/$ns/nosuch"
served 'qemu-io -f raw -c "write -P 0x5e 4096 64k" -c "read -P 0x5e 4096 64k" "$uri"' \
  -- "$nsimg"
served 'nbdinfo --list "$uri"' -- "pool=rbd/$ns"
grep -qF 'export="rbd/'"$ns"'/img"' "$CFG_SCRATCH/stdout" ||
  fail "pool=rbd/$ns does not list $nsimg: $(cat "$CFG_SCRATCH/stdout")"
# The data really went to the namespaced image.
rbd export --no-progress "$nsimg" "$CFG_SCRATCH/ns.raw" >/dev/null 2>&1
pattern_file "$CFG_SCRATCH/want" 65536 5e
cmp <(dd if="$CFG_SCRATCH/ns.raw" bs=4096 skip=1 count=16 status=none) \
  "$CFG_SCRATCH/want" || fail "rbd export of $nsimg lacks the written data"
say "ok"

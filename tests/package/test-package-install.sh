#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-package-install: rbdx's Debian packages install into a fresh Debian
# root with `apt-get install ./*.deb`, which pulls their dependencies from
# Debian's archive; there `nbdkit rbdx --help`, `rbdx --version`,
# rbdx-engine and rbdx-map-all run, the man pages, conffiles and the rbdx
# user are in place, and `systemd-analyze verify` loads the installed units
# without a warning; `apt-get purge` then leaves no file of theirs behind
# (every path `dpkg -L` listed is gone but the directories other packages
# own, the conffiles too, and the unit enablement links); rbdx's prerm
# stops rbdx-map.service on removal (only then).
# Covers: scripts/package, debian/, README.md "Install from packages".
#
# Environment:
#   RELEASE      the Debian release of the root (default: the host's own,
#                e.g. bookworm; RELEASE=trixie on Debian 12 tests Debian 13)
#   RBDX_DEBS    a directory with nbdkit-plugin-rbdx_*.deb and rbdx_*.deb
#                built on RELEASE (default: build them now with
#                scripts/package, for another release with --release, in a
#                root of it: about 5 more minutes)
#   RBDX_EXTRA_DEBS  a directory with the nbdkit_*.deb to install with them
#                when RELEASE's archive has no nbdkit as new as the one the
#                plugin was built against (default then: the cache of
#                scripts/nbdkit-backport --build-only, if the tree has it)
#   RBDX_PACKAGE_CACHE  the root's cache (tests/package/pkg-root)
# Needs root, debootstrap and chroot (skips otherwise).  The first run
# builds the root (about 2 minutes), later runs unpack the cached one.
. "${RBDX_TESTS:-$(dirname "$0")/..}/lib.sh"
requires debootstrap chroot dpkg-deb findmnt
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, chroot, mounts)"

top=$(cd "$RBDX_TESTS/.." && pwd)
host_release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
release=${RELEASE:-$host_release}
[ -n "$release" ] || skip "no VERSION_CODENAME in /etc/os-release"
t0=$SECONDS
timing=()
lap() { timing+=("$1 $((SECONDS - t0)) s"); t0=$SECONDS; }

work=$(tmpdir)

# 1. The packages.
if [ -n "${RBDX_DEBS:-}" ]; then
  debs=$RBDX_DEBS
else
  # Another release's packages are built in a root of that release.
  debs=$work/debs
  args=(-o "$debs")
  [ "$release" = "$host_release" ] || args+=(--release "$release")
  say "building the packages (scripts/package ${args[*]:2})"
  nice "$top/scripts/package" "${args[@]}" >"$work/package.log" 2>&1 ||
    fail "scripts/package ${args[*]:2} failed:"$'\n'"$(tail -n 40 "$work/package.log")"
  lap build
fi
plugin_deb=$(ls "$debs"/nbdkit-plugin-rbdx_*.deb 2>/dev/null | head -n1)
rbdx_deb=$(ls "$debs"/rbdx_*.deb 2>/dev/null | head -n1)
[ -n "$plugin_deb" ] && [ -n "$rbdx_deb" ] ||
  fail "no nbdkit-plugin-rbdx_*.deb and rbdx_*.deb in $debs"
version=$(dpkg-deb -f "$rbdx_deb" Version)
# Removing rbdx stops rbdx-map.service (its ExecStop needs the binaries
# that are going), an upgrade does not.
dpkg-deb -e "$rbdx_deb" "$work/rbdx-control"
[ -x "$work/rbdx-control/prerm" ] || fail "rbdx has no prerm"
grep -q '"$1" = remove' "$work/rbdx-control/prerm" &&
  grep -q 'deb-systemd-invoke stop rbdx-map.service' "$work/rbdx-control/prerm" ||
  fail "rbdx's prerm does not stop rbdx-map.service on removal: $(cat "$work/rbdx-control/prerm")"
sh -n "$work/rbdx-control/prerm" || fail "rbdx's prerm is not valid sh"
upstream=${version%%-*}

# 2. A fresh root of RELEASE.  Everything mounted under it is unmounted
# at exit (whatever the exit path), before it is removed; if a mount
# cannot be undone the tree is left, never removed through it.
root=$(mktemp -d /var/tmp/rbdx-package-root.XXXXXX)
at_exit '"$top/tests/package/pkg-root" --remove "$root"'

say "unpacking a fresh $release root"
rc=0
"$top/tests/package/pkg-root" "$release" "$root" >"$work/root.log" 2>&1 || rc=$?
[ $rc -eq 77 ] && skip "cannot build a $release root here: $(tail -n 1 "$work/root.log")"
[ $rc -eq 0 ] || fail "pkg-root $release failed:"$'\n'"$(tail -n 30 "$work/root.log")"
lap root

# The root's apt uses the host's Debian mirror; /proc, /dev and the
# download cache are mounted (all undone at exit, see pkg-root).
"$top/tests/package/pkg-root" --setup "$release" "$root" ||
  fail "pkg-root --setup $release $root failed"

# in_root CMD...: run CMD in the root, with a plain environment.
in_root() {
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 HOME=/root "$@"
}

for p in librbd1 librados2 libnbd0 nbdkit; do
  ! in_root dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' ||
    fail "$p is already in the fresh root: apt would not have to pull it"
done

# 3. Install, pulling the dependencies from Debian.
in_root apt-get update -q >"$work/apt.log" 2>&1 ||
  fail "apt-get update in the root failed:"$'\n'"$(tail -n 20 "$work/apt.log")"
mkdir -p "$root/tmp/debs"
cp "$plugin_deb" "$rbdx_deb" "$root/tmp/debs/"
# The plugin needs the nbdkit it was built against or newer.  If the
# release's archive has none (packages built where scripts/nbdkit-backport
# installed a backport), that nbdkit must come along: RBDX_EXTRA_DEBS, or
# the backport's own cache.
need=$(dpkg-deb -f "$plugin_deb" Depends | tr ',' '\n' |
       sed -n 's/^ *nbdkit (>= \([^)]*\)).*/\1/p')
[ -n "$need" ] || fail "nbdkit-plugin-rbdx does not depend on a versioned nbdkit"
have=$(in_root apt-cache policy nbdkit | awk '/Candidate:/ { print $2 }')
extra=${RBDX_EXTRA_DEBS:-}
if [ -z "$extra" ] && ! dpkg --compare-versions "${have:-0}" ge "$need"; then
  [ -x "$top/scripts/nbdkit-backport" ] ||
    fail "the plugin needs nbdkit >= $need, $release's archive has ${have:-none}: set RBDX_EXTRA_DEBS to a directory with nbdkit_*.deb"
  extra=$("$top/scripts/nbdkit-backport" --build-only 2>"$work/backport.log" | tail -n 1) ||
    fail "scripts/nbdkit-backport --build-only failed:"$'\n'"$(tail -n 20 "$work/backport.log")"
  say "$release's archive has nbdkit ${have:-none}, the plugin needs >= $need: adding the backport from $extra"
fi
if [ -n "$extra" ]; then
  ls "$extra"/nbdkit_*.deb >/dev/null 2>&1 || fail "no nbdkit_*.deb in $extra"
  cp "$extra"/nbdkit_*.deb "$root/tmp/debs/"
fi
say "apt-get install ./*.deb in the $release root"
in_root sh -c 'cd /tmp/debs && apt-get install -y -q ./*.deb' \
  >>"$work/apt.log" 2>&1 ||
  fail "apt-get install ./*.deb failed:"$'\n'"$(tail -n 30 "$work/apt.log")"
for p in nbdkit-plugin-rbdx rbdx nbdkit librbd1 librados2 libnbd0; do
  in_root dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
    fail "$p is not installed after apt-get install"
done
pulled=$(grep -c '^Setting up ' "$work/apt.log" || true)
say "installed $version with $pulled packages set up ($(in_root dpkg-query -W -f='${Version}' nbdkit) of nbdkit)"
lap install

# 4. What was installed works.
out=$(in_root nbdkit rbdx --help 2>&1) || fail "nbdkit rbdx --help failed:"$'\n'"$out"
grep -q '^plugin: rbdx ' <<<"$out" || fail "nbdkit rbdx --help does not describe the plugin:"$'\n'"$out"
grep -q 'image=' <<<"$out" || fail "nbdkit rbdx --help lists no image= parameter"
plugin_path=$(dpkg-deb -c "$plugin_deb" | awk '$NF ~ /\/nbdkit-rbdx-plugin\.so$/ { print substr($NF, 2) }')
[ -n "$plugin_path" ] || fail "no nbdkit-rbdx-plugin.so in $plugin_deb"
in_root nbdkit rbdx --dump-plugin 2>&1 | grep -qx "path=$plugin_path" ||
  fail "nbdkit does not load rbdx from $plugin_path"
say "nbdkit rbdx --help: ok ($plugin_path)"

out=$(in_root rbdx --version 2>&1) || fail "rbdx --version failed: $out"
[ "$out" = "rbdx $upstream" ] || fail "rbdx --version says '$out', expected 'rbdx $upstream'"
# The mapper's default engine is the installed one (RBDX_LIBEXECDIR).
engine=$(dpkg-deb -c "$rbdx_deb" | awk '$NF ~ /\/rbdx-engine$/ { print substr($NF, 2) }')
[ -n "$engine" ] || fail "no rbdx-engine in $rbdx_deb"
grep -qa "$engine" "$root/usr/bin/rbdx" || fail "the mapper does not look for its engine at $engine"
out=$(in_root "$engine" --version 2>&1) || fail "$engine --version failed: $out"
[ "$out" = "rbdx-engine $upstream" ] || fail "$engine --version says '$out'"
out=$(in_root /usr/libexec/rbdx-map-all list 2>&1) || fail "rbdx-map-all list failed: $out"
[ -z "$out" ] || fail "rbdx-map-all list of the shipped rbdxtab is not empty: $out"
# The rbd-nbd personality: a link of its own, never Ceph's /usr/bin/rbd-nbd;
# ceph-csi probes its --help for --cookie with stderr empty.
in_root test -L /usr/libexec/rbdx/compat/rbd-nbd ||
  fail "no /usr/libexec/rbdx/compat/rbd-nbd link"
in_root test ! -e /usr/bin/rbd-nbd -o ! -L /usr/bin/rbd-nbd ||
  fail "the package made /usr/bin/rbd-nbd a link"
out=$(in_root /usr/libexec/rbdx/compat/rbd-nbd --help 2>"$work/compat.err") ||
  fail "rbd-nbd --help (the personality) failed: $(cat "$work/compat.err")"
grep -q -- '--cookie' <<<"$out" || fail "the personality's --help lists no --cookie"
[ ! -s "$work/compat.err" ] || fail "the personality's --help wrote to stderr: $(cat "$work/compat.err")"
say "rbdx --version, $engine --version, rbdx-map-all list, rbd-nbd --help: ok"

for f in /usr/share/man/man1/nbdkit-rbdx-plugin.1.gz /usr/share/man/man8/rbdx.8.gz \
         /etc/default/rbdx /etc/ceph/rbdxtab; do
  [ -s "$root$f" ] || fail "$f is not installed"
done
for f in /etc/default/rbdx /etc/ceph/rbdxtab; do
  in_root dpkg-query -W -f='${Conffiles}\n' nbdkit-plugin-rbdx rbdx | grep -q "^ $f " ||
    fail "$f is not a conffile"
done
in_root getent passwd rbdx >/dev/null || fail "the postinst did not create the user rbdx"
# rbdx-map.service is enabled (nothing to map yet); nothing was started.
[ -L "$root/etc/systemd/system/multi-user.target.wants/rbdx-map.service" ] ||
  fail "rbdx-map.service is not enabled"

# The installed units, instantiated, load without a warning.
unitdir=$(dpkg-deb -c "$plugin_deb" | awk '$NF ~ /\/rbdx@\.service$/ { print substr($NF, 2) }')
unitdir=${unitdir%/*}
[ -n "$unitdir" ] || fail "no rbdx@.service in $plugin_deb"
inst=$(in_root systemd-escape rbd/vm-1)
out=$(in_root systemd-analyze verify --man=no "$unitdir/rbdx@$inst.service" \
        "$unitdir/rbdx@$inst.socket" "$unitdir/rbdx-map.service" 2>&1) ||
  fail "systemd-analyze verify failed:"$'\n'"$out"
[ -z "$out" ] || fail "systemd-analyze verify warns:"$'\n'"$out"
say "systemd-analyze verify rbdx@$inst.service rbdx@$inst.socket rbdx-map.service: clean"
lap checks

# 5. Purge, and nothing of the packages is left.
in_root dpkg -L nbdkit-plugin-rbdx rbdx | grep -v "^$" | sort -u >"$work/files"
[ "$(wc -l <"$work/files")" -ge 20 ] || fail "dpkg -L lists only $(wc -l <"$work/files") paths"
in_root sh -c 'find /etc/systemd /var/lib/systemd -name "*rbdx*"' >"$work/links.before" 2>/dev/null || true
[ -s "$work/links.before" ] || fail "no enablement state for rbdx-map.service before purge"
say "apt-get purge of $(wc -l <"$work/files") paths"
in_root apt-get purge -y -q nbdkit-plugin-rbdx rbdx >"$work/purge.log" 2>&1 ||
  fail "apt-get purge failed:"$'\n'"$(tail -n 30 "$work/purge.log")"
for p in nbdkit-plugin-rbdx rbdx; do
  st=$(in_root dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
  case "$st" in ""|"un "*|"pn "*) ;; *) fail "$p is still known to dpkg after purge: '$st'" ;; esac
done
# The packages' directories, as the .debs list them (in a merged-/usr
# root /lib is a link to usr/lib, which base-files owns).
{ dpkg-deb -c "$plugin_deb" && dpkg-deb -c "$rbdx_deb"; } |
  awk '$1 ~ /^d/ { p = substr($NF, 2); sub(/\/$/, "", p); print (p == "" ? "/." : p) }' |
  sort -u >"$work/dirs"
[ -s "$work/dirs" ] || fail "dpkg-deb -c lists no directories"
# leftovers: print each path of the packages that is still in the root.
leftovers() {
  local f
  while IFS= read -r f; do
    case "$f" in ""|/.) continue ;; esac
    if grep -qxF -- "$f" "$work/dirs"; then
      [ -e "$root$f" ] || continue
      # A directory may stay if another package owns it or it holds
      # another package's files; an empty orphan is a leftover.
      [ -L "$root$f" ] && continue
      [ -n "$(ls -A "$root$f")" ] && continue
      in_root dpkg-query -S "$f" >/dev/null 2>&1 && continue
      echo "$f/"
    elif [ -e "$root$f" ] || [ -L "$root$f" ]; then
      echo "$f"
    fi
  done <"$work/files"
  in_root sh -c 'find /etc/systemd /var/lib/systemd /var/lib/dpkg/info -name "*rbdx*"' 2>/dev/null || true
}
out=$(leftovers)
[ -z "$out" ] || fail "left after purge:"$'\n'"$out"
# The check sees a leftover: a file and an empty directory of the
# packages put back are both reported.
mkdir "$root/etc/ceph"
: >"$root/usr/bin/rbdx"
out=$(leftovers | tr '\n' ' ')
[ "$out" = "/etc/ceph/ /usr/bin/rbdx " ] || fail "the leftover check missed a planted file or directory: '$out'"
say "nothing left; the check finds a planted /usr/bin/rbdx and /etc/ceph/"
lap purge

say "timings: ${timing[*]}"
say "ok: $release: installed, ran, verified and purged $version"

# SPDX-License-Identifier: BSD-3-Clause
# tests/kernel/lib-uml.sh: run a Linux kernel NBD client against rbdx inside
# a User-mode Linux guest.  Source it after lib.sh:
#   . "$RBDX_TESTS/lib.sh"
#   . "$RBDX_TESTS/kernel/lib-uml.sh"
#
# The host kernel may have no NBD driver, but Debian's user-mode-linux ships
# one as a module (nbd.ko).  A guest boots in a few seconds with:
#   - root: a minbase Debian tree (tests/kernel/uml-root, cached, unpacked
#     into a scratch directory per test) used as a hostfs root;
#   - /lib/modules: the host's /usr/lib/uml/modules over hostfs (read-only);
#   - /share: a scratch host directory over hostfs, where the test puts the
#     guest script and the guest leaves its log, exit status and step marks;
#   - network: a vector (tap) interface in a network namespace that the test
#     creates and destroys.  The guest is 10.200.0.2/24, the namespace's tap
#     10.200.0.1/24; nothing routes out of the namespace.
# The NBD server (nbdkit + rbdx) runs in the root namespace on a Unix socket,
# because the sandbox Ceph cluster listens on 127.0.0.1 there; uml_bridge
# relays TCP connections from 10.200.0.1:10809 in the namespace to it.
#
# Host-side API:
#   uml_requires             skip (77) unless root, /dev/net/tun, ip netns,
#                            user-mode-linux with nbd.ko, socat, the xstate shim
#   uml_setup                scratch dir, guest root, namespace, tap
#   uml_serve SOCKET IMAGE [PARAM...]  lib.sh's serve, nbdkit's messages in
#                            $UML_DIR/nbdkit.log (-v with RBDX_UML_NBDKIT_VERBOSE=1)
#   uml_bridge SOCKET        relay 10.200.0.1:10809 (in the namespace) to SOCKET
#   uml_guest_env VAR=VALUE...  variables the guest script sees
#   uml_guest_mount DIR      make host directory DIR visible read-only at the
#                            same path in the guest (before uml_boot)
#   uml_mapper WHAT          print the rbdx mapper's path, or skip with
#                            "needs the rbdx mapper's WHAT support"
#   uml_rbd_compat MAPPER    a guest-visible copy of rbd beside a link
#                            rbd-nbd -> MAPPER; prints its directory
#   uml_boot SCRIPT          start a guest running SCRIPT (a host file) as root
#   uml_wait_step NAME SECS  wait until the guest calls `step NAME`
#   uml_signal NAME          let a guest blocked in `wait_host NAME` go on
#   uml_finish SECS          wait for the guest to power off; fail if its script
#                            failed, skip if the guest could not boot at all
#   uml_run SCRIPT SECS      uml_boot + uml_finish
#   uml_host_conns           established TCP connections to the relay now
#   uml_host_peers           their guest-side addr:port, one a line
# Variables: UML_DIR (scratch dir), UML_SHARE (host side of /share), UML_NS,
# UML_HOST (10.200.0.1), UML_GUEST (10.200.0.2), UML_PORT (10809), UML_PID.
#
# Guest-side API (guest scripts run under bash with set -euo pipefail and
# xtrace into /share/guest.log; /share/guest-lib.sh is sourced first):
#   say MSG / fail MSG / skip MSG   (skip: exit 77, the host test skips too)
#   step NAME                 tell the host a point was reached
#   wait_host NAME SECS       wait for the host's uml_signal NAME
#   load_nbd                  modprobe nbd (insmod fallback)
#   wait_until SECS CMD...    run CMD every 0.2 s until it succeeds (status of
#                             the last try after SECS)
#   tcp_conns PORT            established connections to NBD_HOST:PORT
#   dev_bytes DEV             size of a block device in bytes
#   $NBD_HOST $NBD_PORT and whatever uml_guest_env set.
#
# RBDX_UML_KEEP=DIR keeps each test's /share and logs (console, nbdkit,
# socat) in DIR/TEST.
#
# Everything started here is stopped by PID at exit (UML and its children,
# socat and its children), then the namespace is deleted; lib.sh's own exit
# handler runs afterwards.

# test_name, skip, fail, say, tmpdir, serve, _cleanup: from lib.sh.
# shellcheck shell=bash disable=SC2154
UML_HOST=10.200.0.1
UML_GUEST=10.200.0.2
UML_PORT=10809
UML_MEM=${RBDX_UML_MEM:-384M}
UML_NS=""
UML_PID=""
UML_DIR=""
UML_SHARE=""
_uml_socat_pid=""
_uml_t0=$SECONDS

_uml_kernel_version() { linux.uml --version 2>/dev/null | head -n1; }

uml_requires() {
  local v
  [ "$(id -u)" -eq 0 ] || skip "needs root (network namespace, tap device)"
  [ -c /dev/net/tun ] || skip "no /dev/net/tun"
  requires ip socat linux.uml
  ip netns list >/dev/null 2>&1 || skip "ip netns does not work here"
  v=$(_uml_kernel_version)
  [ -n "$v" ] || skip "user-mode-linux (linux.uml) does not run"
  [ -f "/usr/lib/uml/modules/$v/kernel/drivers/block/nbd.ko" ] ||
    skip "user-mode-linux $v has no nbd.ko in /usr/lib/uml/modules/$v"
  UML_MODULES=/usr/lib/uml/modules
  UML_SHIM="$RBDX_BUILD/tests/kernel/uml-xstate-shim.so"
  [ -r "$UML_SHIM" ] || fail "not built: $UML_SHIM"
  compgen -G "${RBDX_UML_CACHE:-/var/cache/rbdx-uml}/root-*.tar" >/dev/null ||
    command -v debootstrap >/dev/null 2>&1 ||
    skip "no cached guest root and debootstrap is not installed"
}

_uml_descendants() {
  local c
  for c in $(pgrep -P "$1" 2>/dev/null); do
    _uml_descendants "$c"
    echo "$c"
  done
}

# _uml_stop PID: TERM, wait up to 5 s, then KILL PID and what it forked.
_uml_stop() {
  local pid=$1 kids
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kids=$(_uml_descendants "$pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  # shellcheck disable=SC2086
  kill -9 "$pid" $kids 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  return 0
}

_uml_cleanup() {
  set +e
  if [ "$1" -ne 0 ] && [ "$1" -ne 77 ] && [ -s "$UML_DIR/nbdkit.log" ]; then
    echo "--- nbdkit.log (tail) ---" >&2
    tail -n 20 "$UML_DIR/nbdkit.log" >&2
  fi
  _uml_stop "$UML_PID"
  _uml_stop "$_uml_socat_pid"
  if [ -n "${RBDX_UML_KEEP:-}" ] && [ -n "$UML_DIR" ]; then
    mkdir -p "$RBDX_UML_KEEP/$test_name"
    cp -r "$UML_SHARE/." "$UML_DIR/"*.log "$RBDX_UML_KEEP/$test_name/" 2>/dev/null
  fi
  [ -n "$UML_NS" ] && ip netns delete "$UML_NS" 2>/dev/null
  UML_PID="" _uml_socat_pid="" UML_NS=""
}
# Run ours first, then lib.sh's handler with the original exit status.
trap '_uml_rc=$?; _uml_cleanup "$_uml_rc"; (exit $_uml_rc); _cleanup' EXIT

uml_setup() {
  local t
  UML_DIR=$(tmpdir)
  UML_SHARE="$UML_DIR/share"
  mkdir -p "$UML_SHARE" "$UML_DIR/uml"
  t=$SECONDS
  "$RBDX_TESTS/kernel/uml-root" "$UML_DIR/root" || {
    local rc=$?
    [ "$rc" -eq 77 ] && skip "no guest root (see uml-root's message)"
    fail "uml-root failed"
  }
  say "guest root ready in $((SECONDS - t)) s"
  _uml_write_init
  _uml_write_guest_lib
  : >"$UML_SHARE/env"
  : >"$UML_SHARE/mounts"
  # The mapper keeps its state and logs in /share/run, so they outlive the
  # guest (RBDX_UML_KEEP keeps them).
  uml_guest_env NBD_HOST="$UML_HOST" NBD_PORT="$UML_PORT" RBDX_RUN_DIR=/share/run

  UML_NS="rbdx-kt-$$"
  ip netns add "$UML_NS" || skip "cannot create a network namespace"
  ip -n "$UML_NS" link set lo up
  ip -n "$UML_NS" tuntap add dev tap0 mode tap || skip "cannot create a tap device"
  ip -n "$UML_NS" addr add "$UML_HOST/24" dev tap0
  ip -n "$UML_NS" link set tap0 up
}

uml_guest_env() {
  local kv
  for kv in "$@"; do
    printf 'export %q\n' "$kv" >>"$UML_SHARE/env"
  done
}

uml_serve() {
  local sock=$1
  local -a v=()
  shift
  [ "${RBDX_UML_NBDKIT_VERBOSE:-0}" = 1 ] && v=(-v)
  serve "$sock" "${v[@]}" -- "$@" 2>>"$UML_DIR/nbdkit.log"
}

uml_guest_mount() {
  local d
  for d in "$@"; do
    d=$(cd "$d" && pwd -P) || fail "no directory $d"
    printf '%s\n' "$d" >>"$UML_SHARE/mounts"
  done
}

# uml_rbd_compat MAPPER: a copy of the host's rbd beside a link rbd-nbd
# -> MAPPER (the rbd CLI runs the rbd-nbd beside its own executable,
# Ceph src/tools/rbd/action/Nbd.cc), with the two libraries of rbd's the
# guest root lacks, in a directory the guest sees; prints its path (run
# the copy with LD_LIBRARY_PATH=DIR).
uml_rbd_compat() {
  local compat="$UML_DIR/compat" lib
  mkdir "$compat"
  cp /usr/bin/rbd "$compat/rbd"
  ln -s "$(cd "$(dirname "$1")" && pwd -P)/$(basename "$1")" "$compat/rbd-nbd"
  for lib in $(ldd /usr/bin/rbd | awk '/libncurses|libboost_program_options/ {print $3}'); do
    cp "$lib" "$compat/"
  done
  uml_guest_mount "$compat"
  (cd "$compat" && pwd -P)
}

# The mapper: $RBDX_MAPPER, else the build's server/rbdx.  The guest runs the
# host binary (the guest root is the host's Debian release).
uml_mapper() {
  local m=${RBDX_MAPPER:-$RBDX_BUILD/server/rbdx}
  [ -x "$m" ] || skip "needs the rbdx mapper's $1 support (no mapper at $m; set RBDX_MAPPER)"
  echo "$m"
}

uml_bridge() {
  local sock=$1
  ip netns exec "$UML_NS" socat \
    "TCP-LISTEN:$UML_PORT,bind=$UML_HOST,fork,reuseaddr" \
    "UNIX-CONNECT:$sock" </dev/null 2>>"$UML_DIR/socat.log" &
  _uml_socat_pid=$!
  for _ in $(seq 100); do
    ip netns exec "$UML_NS" ss -Hltn "sport = :$UML_PORT" | grep -q . && return 0
    kill -0 "$_uml_socat_pid" 2>/dev/null || fail "socat exited: $(cat "$UML_DIR/socat.log")"
    sleep 0.05
  done
  fail "socat does not listen on $UML_HOST:$UML_PORT"
}

uml_host_conns() {
  ip netns exec "$UML_NS" ss -Htn state established "( sport = :$UML_PORT )" | wc -l
}

# uml_host_peers: the guest ends (addr:port) of those connections, one a line.
uml_host_peers() {
  ip netns exec "$UML_NS" ss -Htn state established "( sport = :$UML_PORT )" |
    awk '{print $NF}' | sort
}

# The guest's PID 1.  It must never exit: it powers the guest off instead.
_uml_write_init() {
  local v
  v=$(_uml_kernel_version)
  cat >"$UML_DIR/root/rbdx-init" <<EOF
#!/bin/bash
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
ln -sfn /proc/self/fd /dev/fd
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t hostfs -o ro,$UML_MODULES hostfs /lib/modules
mount -t hostfs -o $UML_SHARE hostfs /share
echo "\$(cut -d' ' -f1 /proc/uptime) $v" >/share/booted
if [ -d /proc/sys/net/ipv6 ]; then
  echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
  echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
fi
ip link set lo up
ip addr add $UML_GUEST/24 dev vec0
ip link set vec0 up
. /share/env
if [ -s /share/mounts ]; then
  while read -r d; do mkdir -p "\$d"; mount -t hostfs -o "ro,\$d" hostfs "\$d"; done </share/mounts
fi
cd /share
bash -c '. /share/guest-lib.sh; . /share/guest.sh' >/share/guest.log 2>&1
echo \$? >/share/guest.rc.tmp
dmesg >/share/dmesg.txt 2>&1
sync
mv /share/guest.rc.tmp /share/guest.rc
sync
echo o >/proc/sysrq-trigger
sleep 60
EOF
  chmod +x "$UML_DIR/root/rbdx-init"
}

_uml_write_guest_lib() {
  cat >"$UML_SHARE/guest-lib.sh" <<'EOF'
set -euo pipefail
PS4='+ ${SECONDS}s '
set -x
say() { echo "== guest: $*" >&2; }
fail() { echo "FAIL (guest): $*" >&2; exit 1; }
skip() { echo "SKIP (guest): $*" >&2; exit 77; }
step() { : >"/share/step.$1"; }
# standin_nbdkit PATH: write the mapper's stand-in server to PATH (use it
# as RBDX_NBDKIT).  The guest cannot reach the cluster, so the stand-in
# records the command line the mapper built in /share/nbdkit-args, links
# the private size_file to /share/size (which the host's real plugin
# writes) and runs the guest's nbdkit with the same options (--unix
# SOCKET, --readonly, ...) but the nbd plugin, forwarding to the host's
# rbdx server.
standin_nbdkit() {
  cat >"$1" <<'F'
#!/bin/bash
printf '%s\n' "$@" >/share/nbdkit-args
for a in "$@"; do
  case $a in size_file=*) ln -sf /share/size "${a#size_file=}" ;; esac
done
opts=()
while [ $# -gt 0 ]; do
  case $1 in
    --unix) opts+=("$1" "$2"); shift 2 ;;
    -*) opts+=("$1"); shift ;;
    *) break ;;
  esac
done
exec nbdkit "${opts[@]}" nbd hostname="$NBD_HOST" port="$NBD_PORT"
F
  chmod +x "$1"
}
wait_host() {
  { set +x; } 2>/dev/null
  local i
  say "waiting for the host: $1"
  for i in $(seq $(( $2 * 10 ))); do
    [ -e "/share/host.$1" ] && { set -x; return 0; }
    sleep 0.1
  done
  fail "the host did not signal '$1' within $2 s"
}
load_nbd() {
  modprobe nbd 2>/dev/null ||
    insmod "/lib/modules/$(uname -r)/kernel/drivers/block/nbd.ko" ||
    fail "cannot load nbd.ko"
  local i
  for i in $(seq 50); do [ -b /dev/nbd0 ] && return 0; sleep 0.1; done
  fail "no /dev/nbd0 after loading nbd"
}
wait_until() {
  { set +x; } 2>/dev/null
  local secs=$1 i
  shift
  for i in $(seq $(( secs * 5 ))); do
    if "$@"; then set -x; return 0; fi
    sleep 0.2
  done
  set -x
  "$@"
}
tcp_conns() {
  ss -Htn state established "( dport = :$1 )" | wc -l
}
dev_bytes() { echo $(( $(cat "/sys/class/block/${1#/dev/}/size") * 512 )); }
EOF
}

uml_boot() {
  local script=$1
  cp "$script" "$UML_SHARE/guest.sh"
  rm -f "$UML_SHARE"/step.* "$UML_SHARE"/host.* "$UML_SHARE/booted" "$UML_SHARE/guest.rc"
  _uml_t0=$SECONDS
  # ip netns exec and env exec: $! is linux.uml itself.
  env LD_PRELOAD="$UML_SHIM" TMPDIR="$UML_DIR/uml" \
    ip netns exec "$UML_NS" linux.uml \
      mem="$UML_MEM" rootfstype=hostfs rootflags="$UML_DIR/root" rw \
      init=/rbdx-init con=null con0=null,fd:1 \
      uml_dir="$UML_DIR/uml" umid=guest \
      "vec0:transport=tap,ifname=tap0,depth=128,gro=1" \
      </dev/null >"$UML_DIR/console.log" 2>&1 &
  UML_PID=$!
}

_uml_show_logs() {
  echo "--- guest.log (tail) ---" >&2
  tail -n 40 "$UML_SHARE/guest.log" >&2 2>/dev/null || true
  echo "--- console (tail) ---" >&2
  tail -n 25 "$UML_DIR/console.log" >&2 2>/dev/null || true
}

# _uml_not_booted: the guest never reached its init; no fault of rbdx.
_uml_not_booted() {
  echo "--- console (tail, without stack frames) ---" >&2
  grep -v '^ *\[<' "$UML_DIR/console.log" 2>/dev/null | tail -n 12 >&2 || true
  skip "user-mode-linux cannot boot a guest here (see the console above)"
}

uml_wait_step() {
  local name=$1 secs=$2
  for _ in $(seq $(( secs * 10 ))); do
    [ -e "$UML_SHARE/step.$name" ] && return 0
    if ! kill -0 "$UML_PID" 2>/dev/null; then
      wait "$UML_PID" 2>/dev/null || true
      [ -e "$UML_SHARE/booted" ] || _uml_not_booted
      _uml_show_logs
      fail "the guest stopped before step '$name'"
    fi
    sleep 0.1
  done
  _uml_show_logs
  fail "the guest did not reach step '$name' within $secs s"
}

uml_signal() { : >"$UML_SHARE/host.$1"; }

uml_finish() {
  local secs=$1 rc
  for _ in $(seq $(( secs * 10 ))); do
    kill -0 "$UML_PID" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$UML_PID" 2>/dev/null; then
    _uml_show_logs
    _uml_stop "$UML_PID"
    UML_PID=""
    fail "the guest did not finish within $secs s"
  fi
  wait "$UML_PID" 2>/dev/null || true
  UML_PID=""
  [ -e "$UML_SHARE/booted" ] || _uml_not_booted
  say "guest booted at $(cut -d' ' -f1 "$UML_SHARE/booted") s (guest clock), ran $((SECONDS - _uml_t0)) s in all"
  [ -e "$UML_SHARE/guest.rc" ] || { _uml_show_logs; fail "the guest stopped without finishing its script"; }
  rc=$(cat "$UML_SHARE/guest.rc")
  case $rc in
    0) return 0 ;;
    77) skip "$(grep '^SKIP (guest)' "$UML_SHARE/guest.log" | tail -n1)" ;;
    *) _uml_show_logs; fail "the guest script failed (exit $rc)" ;;
  esac
}

uml_run() { uml_boot "$1"; uml_finish "$2"; }

# uml_serve_for_mapper SOCKET IMAGE MAPPER: serve IMAGE on SOCKET as the
# mapper starts its own server (size_file= in the share, advertise_size=max),
# bridge it into the guest, and let the guest see MAPPER's directory and
# the stand-in engine's (tests/kernel in the build).
uml_serve_for_mapper() {
  uml_serve "$1" "$2" size_file="$UML_SHARE/size" advertise_size=max
  uml_bridge "$1"
  uml_guest_mount "$(dirname "$3")"
  uml_guest_mount "$RBDX_BUILD/tests/kernel"
}

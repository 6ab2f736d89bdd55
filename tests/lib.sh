# Shared helpers for rbdx's shell tests.  Source it first:
#   . "${RBDX_TESTS:-$(dirname "$0")/..}/lib.sh"
#
# Environment (set by tests/meson.build, or by hand):
#   RBDX_PLUGIN   path of nbdkit-rbdx-plugin.so (the build's)
#   RBDX_TESTS    the tests/ source directory
#   RBDX_BUILD    the build directory (for C test programs)
#   CEPH_CONF     the sandbox cluster's ceph.conf (scripts/test starts one)
# A test whose requirement is missing exits 77: meson counts it skipped.
set -euo pipefail

: "${RBDX_TESTS:=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"
: "${RBDX_BUILD:=$RBDX_TESTS/../build}"
: "${RBDX_PLUGIN:=$RBDX_BUILD/plugin/nbdkit-rbdx-plugin.so}"
export RBDX_TESTS RBDX_BUILD RBDX_PLUGIN

# nbdsh and friends must use Debian's python3 (which has the nbd module),
# not one earlier on PATH.
export PATH="/usr/bin:/usr/sbin:$PATH"

test_name=$(basename "$0" .sh)
# What to clean up is kept in files, so helpers called in a subshell
# (img=$(new_image ...)) still register what they made.
_state=$(mktemp -d "/tmp/rbdx-$test_name-state.XXXXXX")
: >"$_state/images"
: >"$_state/pidfiles"
: >"$_state/dirs"

skip() { echo "SKIP: $test_name: $*" >&2; exit 77; }
fail() { echo "FAIL: $test_name: $*" >&2; exit 1; }
say() { echo "== $test_name: $*" >&2; }

# requires CMD...: skip unless every command exists.
requires() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 || skip "$c is not installed"
  done
}

# requires_cluster: skip unless CEPH_CONF names a running cluster.
requires_cluster() {
  requires rbd nbdkit
  [ -n "${CEPH_CONF:-}" ] && [ -r "$CEPH_CONF" ] ||
    skip "no test cluster (run via scripts/test, or set CEPH_CONF)"
  [ -r "$RBDX_PLUGIN" ] || fail "plugin not built: $RBDX_PLUGIN"
  timeout 20 rbd ls rbd >/dev/null || skip "the cluster at $CEPH_CONF does not answer"
}

_cleanup() {
  local rc=$? p i
  set +e
  while read -r p; do
    if [ -s "$p" ]; then
      kill "$(cat "$p")" 2>/dev/null
      for i in $(seq 50); do kill -0 "$(cat "$p")" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$(cat "$p")" 2>/dev/null
    fi
  done <"$_state/pidfiles"
  while read -r i; do
    for p in $(rbd snap ls --format json "$i" 2>/dev/null |
               python3 -c 'import json,sys
for s in json.load(sys.stdin): print(s["name"])' 2>/dev/null); do
      rbd snap unprotect "$i@$p" >/dev/null 2>&1
    done
    rbd snap purge "$i" >/dev/null 2>&1
    rbd rm --no-progress "$i" >/dev/null 2>&1
  done < <(tac "$_state/images")
  while read -r p; do rm -rf "$p"; done <"$_state/dirs"
  rm -rf "$_state"
  exit $rc
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

# tmpdir: a scratch directory removed at exit (printed).
tmpdir() {
  local d
  d=$(mktemp -d "/tmp/rbdx-$test_name.XXXXXX")
  echo "$d" >>"$_state/dirs"
  echo "$d"
}

# new_image SIZE [rbd create options...]: create a uniquely named image in
# pool rbd, removed (with its snapshots) at exit; prints "rbd/NAME".
new_image() {
  local size=$1 name
  shift
  name="rbd/t-${test_name//[^a-zA-Z0-9]/-}-$$-$(wc -l <"$_state/images")"
  echo "$name" >>"$_state/images"
  rbd create --no-progress --size "$size" "$@" "$name" >&2
  echo "$name"
}

# own_image SPEC: register an image made another way (rbd clone,
# rbd import) for removal at exit.
own_image() { echo "$1" >>"$_state/images"; }

# serve SOCKET [NBDKIT-OPTIONS...] -- PLUGIN-ARGS...: start nbdkit with rbdx
# on a Unix socket in the background (not in a subshell: --exit-with-parent
# ties it to this shell).  Sets SERVER_PID; stopped at exit by PID file.
serve() {
  local sock=$1 pidfile i
  local -a nbdkit_opts=()
  shift
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do nbdkit_opts+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  pidfile="$sock.pid"
  echo "$pidfile" >>"$_state/pidfiles"
  nbdkit -U "$sock" -P "$pidfile" --exit-with-parent "${nbdkit_opts[@]}" \
    "$RBDX_PLUGIN" "$@" &
  for i in $(seq 200); do
    [ -S "$sock" ] && [ -s "$pidfile" ] && break
    kill -0 $! 2>/dev/null || fail "nbdkit exited at start: $*"
    sleep 0.05
  done
  [ -s "$pidfile" ] || fail "nbdkit did not start: $*"
  SERVER_PID=$(cat "$pidfile")
}

# stop_server SOCKET: stop a server started by serve and wait for it.
stop_server() {
  local pidfile="$1.pid" pid i
  [ -s "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || true
  for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$pidfile"
}

# uri SOCKET [EXPORT]: the nbd+unix URI of a socket.
uri() { echo "nbd+unix:///${2:-}?socket=$1"; }

# watchers IMAGE: number of watchers rbd status shows.
watchers() { rbd status "$1" --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin).get("watchers",[])))'; }

# pattern_file PATH SIZE BYTE: a file of SIZE bytes all equal to BYTE (hex).
pattern_file() {
  head -c "$2" /dev/zero | tr '\0' "\\$(printf '%03o' "0x$3")" >"$1"
}

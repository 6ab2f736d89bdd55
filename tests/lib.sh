# SPDX-License-Identifier: BSD-3-Clause
# Shared helpers for rbdx's shell tests.  Source it first:
#   . "${RBDX_TESTS:-$(dirname "$0")/..}/lib.sh"
#
# Environment (set by tests/meson.build, or by hand):
#   RBDX_PLUGIN   path of nbdkit-rbdx-plugin.so (the build's)
#   RBDX_TESTS    the tests/ source directory
#   RBDX_BUILD    the build directory (for C test programs)
#   CEPH_CONF     the sandbox cluster's ceph.conf (scripts/test starts one)
#   RBDX_PRELOAD  set in sanitized builds: the runtime nbdkit needs
#                 preloaded (with RBDX_SANITIZER_BIN, see below)
# A test whose requirement is missing exits 77: meson counts it skipped.
set -euo pipefail

: "${RBDX_TESTS:=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"
: "${RBDX_BUILD:=$RBDX_TESTS/../build}"
: "${RBDX_PLUGIN:=$RBDX_BUILD/plugin/nbdkit-rbdx-plugin.so}"
export RBDX_TESTS RBDX_BUILD RBDX_PLUGIN

# nbdsh and friends must use Debian's python3 (which has the nbd module),
# not one earlier on PATH.
export PATH="/usr/bin:/usr/sbin:$PATH"
# The tests' Python helpers (tests/py/rbdxtest.py).
export PYTHONPATH="$RBDX_TESTS/py${PYTHONPATH:+:$PYTHONPATH}"
# A sanitized build (scripts/test --sanitize=...; tests/sanitizers/):
# nbdkit is not instrumented, so every test starts it through the
# generated wrapper that preloads the sanitizer runtime, RBDX_PRELOAD.
if [ -n "${RBDX_PRELOAD:-}" ]; then
  export PATH="$RBDX_SANITIZER_BIN:$PATH"
fi

test_name=$(basename "$0" .sh)
# What to clean up is kept in files, so helpers called in a subshell
# (img=$(new_image ...)) still register what they made.
_state=$(mktemp -d "/tmp/rbdx-$test_name-state.XXXXXX")
: >"$_state/images"
: >"$_state/pidfiles"
: >"$_state/dirs"
: >"$_state/atexit"

# new_socket: print a fresh socket path in this test's own directory
# (removed at exit), for `nbdkit -U "$(new_socket)"`.
new_socket() { mktemp -u "$_state/nbdkit-XXXXXX.sock"; }

# nbdkit with `-U -` gets a socket from new_socket instead: for `-U -`
# nbdkit 1.42.3 makes /tmp/nbdkitXXXXXX (it ignores TMPDIR) and leaves
# it behind when the plugin refuses to start, so the tests that expect
# a refusal left empty directories in /tmp (141 after one day's runs).
# Only the word "-" right after "-U" changes.  `timeout nbdkit`, `env
# nbdkit` and Python's subprocess run the binary itself, not this
# function: give them `-U "$(new_socket)"`, never `-U -`.
nbdkit() {
  local -a a=()
  local x

  for x in "$@"; do
    if [ "$x" = - ] && [ ${#a[@]} -gt 0 ] && [ "${a[${#a[@]}-1]}" = -U ]; then
      a+=("$(new_socket)")
    else
      a+=("$x")
    fi
  done
  command nbdkit "${a[@]}"
}

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

# requires_python_nbd: skip unless /usr/bin/python3 has libnbd's nbd module.
requires_python_nbd() {
  [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import nbd' 2>/dev/null ||
    skip "no python3-libnbd (the nbd module of /usr/bin/python3)"
}

# requires_cluster: skip unless CEPH_CONF is set; fail if its cluster is down
# (SANDBOX/down, written by `ceph-sandbox watch`) or does not answer.
requires_cluster() {
  requires rbd nbdkit
  [ -n "${CEPH_CONF:-}" ] && [ -r "$CEPH_CONF" ] ||
    skip "no test cluster (run via scripts/test, or set CEPH_CONF)"
  [ -r "$RBDX_PLUGIN" ] || fail "plugin not built: $RBDX_PLUGIN"
  # Written by `ceph-sandbox watch` (scripts/test) when the cluster died.
  local down
  down=$(dirname "$CEPH_CONF")/down
  [ ! -s "$down" ] || fail "$(head -n 1 "$down") (more in $down)"
  timeout 20 rbd ls rbd >/dev/null || fail "the cluster at $CEPH_CONF does not answer 'rbd ls' within 20 s"
}

_cleanup() {
  local rc=$? p i
  local -a hooks=()
  set +e
  mapfile -d '' -t hooks <"$_state/atexit"
  for ((i = ${#hooks[@]} - 1; i >= 0; i--)); do eval "${hooks[i]}"; done
  while read -r p; do
    if [ -s "$p" ]; then
      kill "$(cat "$p")" 2>/dev/null
      wait_for 5 exited "$(cat "$p")"
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

# at_exit CMD: run the shell command CMD (with eval) at exit, before the
# servers and images are removed; the last registered runs first.
at_exit() { printf '%s\0' "$1" >>"$_state/atexit"; }

# wait_for SECONDS CMD...: run CMD every 0.1 s until it succeeds; return
# 1 if it still fails after SECONDS (it runs at least once).
wait_for() {
  local end=$((${EPOCHREALTIME/[.,]/} + $1 * 1000000))
  shift
  until "$@"; do
    [ "${EPOCHREALTIME/[.,]/}" -lt "$end" ] || return 1
    sleep 0.1
  done
}

# exited PID: the process has gone.
exited() { ! kill -0 "$1" 2>/dev/null; }

# hang_evidence PID: print why PID may be stuck, for a test that gives up
# waiting on it: each thread's name, state and kernel wait channel, the
# user-space stacks (gdb, when installed: each distinct stack once, with
# the number of threads in it, at most 20; gdb's own error when it cannot
# attach), and the cluster's view (health, and the
# OSD's oldest ops in flight, which show a request the cluster itself
# never answered).  Never fails; PID is left running.
hang_evidence() {
  local t f
  say "threads of pid $1 (count name state wchan):"
  for t in /proc/"$1"/task/*; do
    # The state follows the last ')' of stat (a name may hold spaces).
    f=$(cat "$t/stat" 2>/dev/null) || continue
    f=${f##*) }
    printf '  %s %s %s\n' "$(cat "$t/comm" 2>/dev/null)" "${f%% *}" \
      "$(cat "$t/wchan" 2>/dev/null)"
  done | sort | uniq -c | sort -rn | head -n 20 >&2 || true
  if command -v gdb >/dev/null; then
    say "stacks of pid $1 (threads, then the frames innermost first):"
    f=$(mktemp) || return 0
    timeout -k 5 30 gdb -q -batch -p "$1" -ex 'thread apply all bt 12' \
      >"$f" 2>&1 || true
    kill -CONT "$1" 2>/dev/null || true
    # One line per distinct stack: the count of threads, then the
    # function of each frame, innermost first ("??" without symbols).
    awk '/ptrace|Operation not permitted|Could not attach/{print; next}
         /^Thread /{if (st != "") print st; st = "-"; next}
         /^#[0-9]/{fn = $0; sub(/ \(.*/, "", fn); sub(/.* in /, "", fn);
                   sub(/^#[0-9]+ +(0x[0-9a-f]+ )?/, "", fn); st = st " " fn}
         END{if (st != "") print st}' "$f" |
      sort | uniq -c | sort -rn | head -n 20 >&2 || true
    rm -f "$f"
  fi
  say "the cluster's view:"
  timeout 20 ceph health detail 2>&1 | head -n 8 >&2 || true
  timeout 20 ceph daemon osd.0 dump_ops_in_flight 2>&1 |
    grep -E '"(description|flag_point|age)"' | head -n 24 >&2 || true
}

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
# RBDX_TEST_COMPLETION=MODE, or a test script's first argument
# completion=MODE (meson's second run of a lifecycle test), adds
# completion=MODE to the plugin's arguments.
case "${1:-}" in
  completion=*) RBDX_TEST_COMPLETION=${1#completion=} ;;
esac
serve() {
  local sock=$1 pidfile i
  local -a nbdkit_opts=()
  shift
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do nbdkit_opts+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  [ -z "${RBDX_TEST_COMPLETION:-}" ] || set -- "$@" "completion=$RBDX_TEST_COMPLETION"
  pidfile="$sock.pid"
  echo "$pidfile" >>"$_state/pidfiles"
  nbdkit -U "$sock" -P "$pidfile" --exit-with-parent "${nbdkit_opts[@]}" \
    "$RBDX_PLUGIN" "$@" &
  # Up to 60 s: the start-up probe of a LUKS image derives its key
  # (PBKDF2/Argon2, seconds on a loaded 2-core machine) before nbdkit
  # listens.  An nbdkit that exits ends the wait at once.
  for i in $(seq 1200); do
    [ -S "$sock" ] && [ -s "$pidfile" ] && break
    kill -0 $! 2>/dev/null || fail "nbdkit exited at start: $*"
    sleep 0.05
  done
  [ -s "$pidfile" ] || fail "nbdkit did not start: $*"
  SERVER_PID=$(cat "$pidfile")
}

# serve_engine SOCKET [ENGINE-OPTIONS...] [--] SPEC [KEY=VALUE...]: start
# the mapper's built-in engine (server/rbdx-engine) with its --oldstyle
# test hook on SOCKET (libnbd, nbdsh and fio's nbd engine accept the
# oldstyle greeting); its messages go to SOCKET.log.  Sets SERVER_PID;
# stop_server SOCKET stops it.
serve_engine() {
  local sock=$1 i
  local -a eopts=()
  local engine=$RBDX_BUILD/server/rbdx-engine
  shift
  [ -x "$engine" ] || skip "no engine built at $engine (-Dmapper=disabled?)"
  while [ $# -gt 0 ] && [ "$1" != "--" ] && [[ $1 == -* ]]; do eopts+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  echo "$sock.pid" >>"$_state/pidfiles"
  "$engine" "${eopts[@]}" --oldstyle "$sock" "$@" 2>>"$sock.log" &
  SERVER_PID=$!
  echo "$SERVER_PID" >"$sock.pid"
  for i in $(seq 400); do
    [ -S "$sock" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null ||
      fail "rbdx-engine exited at start: $* ($(tail -3 "$sock.log"))"
    sleep 0.05
  done
  fail "rbdx-engine did not listen on $sock within 20 s"
}

# readonly_id NAME KEYRING: the cephx id client.NAME with mon 'profile
# rbd' and osd 'profile rbd-read-only pool=rbd' (librbd opens images
# read-only for it, without a header watch), its keyring written to
# KEYRING; removed at exit.
readonly_id() {
  at_exit "ceph auth rm client.$1 >/dev/null 2>&1"
  ceph auth get-or-create "client.$1" mon 'profile rbd' \
    osd 'profile rbd-read-only pool=rbd' -o "$2" >/dev/null 2>&1 ||
    fail "cannot create client.$1"
}

# serve_via FRONT SOCKET rw|ro [--] SPEC [KEY=VALUE...]: serve through
# FRONT, nbdkit (serve) or engine (serve_engine), read-write or read-only
# (nbdkit -r, rbdx-engine --readonly); the server's messages go to
# SOCKET.log either way.  Sets SERVER_PID.
serve_via() {
  local front=$1 sock=$2 mode=$3
  shift 3
  [ "${1:-}" = "--" ] && shift
  case $front:$mode in
    engine:ro) serve_engine "$sock" --readonly -- "$@" ;;
    engine:rw) serve_engine "$sock" -- "$@" ;;
    nbdkit:ro) serve "$sock" -r -- "$@" 2>"$sock.log" ;;
    nbdkit:rw) serve "$sock" -- "$@" 2>"$sock.log" ;;
    *) fail "serve_via: FRONT is nbdkit or engine, MODE rw or ro: $front $mode" ;;
  esac
}

# stop_server SOCKET: stop a server started by serve and wait for it.
stop_server() {
  local pidfile="$1.pid" pid
  [ -s "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || true
  if ! wait_for 10 exited "$pid"; then
    # Hung on its way out: do not leave it behind (its pid file goes).
    say "nbdkit $pid did not exit 10 s after SIGTERM: SIGKILL"
    kill -9 "$pid" 2>/dev/null || true
    wait_for 5 exited "$pid" || true
  fi
  rm -f "$pidfile"
}

# with_export [NBDKIT-OPTIONS...] PLUGIN-ARGS... COMMAND: run the shell
# command COMMAND under `nbdkit -U - ... --run`, $uri naming an rbdx
# export (PLUGIN-ARGS: the image and key=value parameters; the leading
# arguments that start with '-' are nbdkit's); returns COMMAND's status.
with_export() {
  local -a opts=()
  while [ $# -gt 2 ] && [[ $1 == -* ]]; do opts+=("$1"); shift; done
  nbdkit -U - "${opts[@]}" "$RBDX_PLUGIN" "${@:1:$#-1}" --run "${!#}"
}

# test_prog DIR/NAME: path of the C test program built from tests/DIR.
test_prog() {
  local p=$RBDX_BUILD/tests/$1
  [ -x "$p" ] || fail "test program not built: $p"
  echo "$p"
}

# uri SOCKET [EXPORT]: the nbd+unix URI of a socket.
uri() { echo "nbd+unix:///${2:-}?socket=$1"; }

# metric FILE NAME [LABEL-REGEX]: the sum of the values of NAME's series
# in the metrics file FILE whose labels match LABEL-REGEX (Python re;
# default: all), 0 while FILE does not exist yet.  Fails on a line that
# is not Prometheus text.
metric() {
  python3 - "$1" "$2" "${3:-}" <<'PY'
import os, re, sys
path, name, want = sys.argv[1:4]
total = 0.0
for line in open(path) if os.path.exists(path) else []:
    if line.startswith("#") or not line.strip():
        continue
    m = re.fullmatch(r'([a-z_]+)(?:\{(.*)\})? ([0-9.e+-]+)', line.strip())
    assert m, "not Prometheus text: %r" % line
    if m.group(1) == name and re.search(want, m.group(2) or ""):
        total += float(m.group(3))
print(int(total) if total == int(total) else total)
PY
}

# metrics_settled FILE OP N: the metrics file FILE shows at least N
# requests of OP answered, no connection open and nothing in flight.
metrics_settled() {
  [ "$(metric "$1" rbdx_requests_total "op=\"$2\"")" -ge "$3" ] &&
    [ "$(metric "$1" rbdx_connections)" = 0 ] &&
    [ "$(metric "$1" rbdx_requests_in_flight)" = 0 ]
}

# image_size IMAGE: the image's size in bytes (rbd info).
image_size() {
  rbd info --format json "$1" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["size"])'
}

# import_into IMAGE FILE [RBD-IMPORT-OPTIONS...]: re-create IMAGE (made by
# new_image, so removed at exit) from FILE with `rbd import`: FILE's size
# and bytes, default features unless options say otherwise.
import_into() {
  local img=$1 file=$2
  shift 2
  rbd rm --no-progress "$img" >/dev/null
  rbd import --no-progress "$@" "$file" "$img" >/dev/null
}

# watchers IMAGE: number of watchers rbd status shows.
watchers() { rbd status "$1" --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin).get("watchers",[])))'; }

# lock_owners IMAGE: "N OWNER..." from rbd lock ls (OWNER = locker/cookie).
lock_owners() {
  rbd lock ls --format json "$1" | python3 -c '
import json, sys
ls = json.load(sys.stdin)
print(len(ls), *["%s/%s" % (l["locker"], l["id"].replace(" ", "_")) for l in ls])'
}

# unwatched IMAGE / unlocked IMAGE / unused IMAGE: no watcher / no lock /
# neither on IMAGE.
unwatched() { [ "$(watchers "$1" 2>/dev/null)" = 0 ]; }
unlocked() { [ "$(lock_owners "$1" 2>/dev/null)" = 0 ]; }
unused() { unwatched "$1" && unlocked "$1"; }

# released IMAGE WHAT [SECONDS]: fail unless IMAGE is unused, at once or
# within SECONDS; WHAT says after what.
released() {
  wait_for "${3:-0}" unused "$1" ||
    fail "$2: $(watchers "$1") watcher(s) and lock(s) '$(lock_owners "$1")'" \
      "left on $1: $(rbd status "$1")"
}

# pattern_file PATH SIZE BYTE: a file of SIZE bytes all equal to BYTE (hex).
pattern_file() { _bytes "$2" "$3" >"$1"; }

# put_pattern FILE OFFSET LENGTH BYTE: overwrite LENGTH bytes of FILE at
# OFFSET with BYTE (hex), as `qemu-io -c 'write -P 0xBYTE ...'` does.
put_pattern() {
  _bytes "$3" "$4" |
    dd of="$1" bs=64K seek="$2" oflag=seek_bytes conv=notrunc status=none
}

_bytes() { head -c "$1" /dev/zero | tr '\0' "\\$(printf '%03o' "0x$2")"; }

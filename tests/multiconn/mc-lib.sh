# shellcheck shell=bash
# Helpers for the multi-connection tests in tests/multiconn (source after
# lib.sh).  Call mc_setup, mk_image and client_* in the test's own shell,
# not in $(...): client_start keeps its pipes and PID in this shell.
#
#   mc_setup                   scratch directory in $MC_DIR, clean-up hook
#   mc_at_exit CMD             run the shell command CMD at exit (before
#                              lib.sh's clean-up; last registered first)
#   mk_image VAR SIZE [OPTS..] new_image into VAR (removed at exit)
#   mc_bin NAME                path of a C program built in this directory
#   client_start NAME URI      keep an NBD connection open (nbd-script)
#   client_do NAME CMD...      run one nbd-script command; fail unless "ok";
#                              prints the value after "ok", if any
#   client_try NAME CMD...     same, but print the whole answer, never fail
#   client_stop NAME           NBD_CMD_DISC and wait for the program
#   lock_owners IMAGE          "N OWNER..." from rbd lock ls --format json
#                              (OWNER = locker/cookie)

MC_DIR=
declare -A _mc_w=() _mc_r=() _mc_pid=()
_mc_hooks=()

_mc_cleanup() {
  local n i
  set +e
  for n in "${!_mc_pid[@]}"; do
    kill "${_mc_pid[$n]}" 2>/dev/null
  done
  for ((i = ${#_mc_hooks[@]} - 1; i >= 0; i--)); do
    eval "${_mc_hooks[$i]}"
  done
}

mc_at_exit() { _mc_hooks+=("$1"); }

mc_setup() {
  MC_DIR=$(tmpdir)
  # lib.sh's _cleanup reads the exit status from $?: hand it on.
  trap '_mc_rc=$?; _mc_cleanup; (exit $_mc_rc); _cleanup' EXIT
}

mk_image() {
  local _var=$1 _img
  shift
  _img=$(new_image "$@")
  printf -v "$_var" '%s' "$_img"
}

mc_bin() {
  local p=$RBDX_BUILD/tests/multiconn/$1
  [ -x "$p" ] || fail "test program not built: $p"
  echo "$p"
}

client_start() {
  local name=$1 uri=$2 prog w r line
  prog=$(mc_bin nbd-script)
  rm -f "$MC_DIR/$name.in" "$MC_DIR/$name.out"
  mkfifo "$MC_DIR/$name.in" "$MC_DIR/$name.out"
  "$prog" "$uri" "$name" <"$MC_DIR/$name.in" >"$MC_DIR/$name.out" \
    2>"$MC_DIR/$name.err" &
  _mc_pid[$name]=$!
  exec {w}>"$MC_DIR/$name.in" {r}<"$MC_DIR/$name.out"
  _mc_w[$name]=$w
  _mc_r[$name]=$r
  if ! IFS= read -r -t 60 -u "$r" line || [ "$line" != "ok connected" ]; then
    fail "client $name could not connect to $uri: $(cat "$MC_DIR/$name.err")"
  fi
}

client_try() {
  local name=$1 line
  shift
  [ -n "${_mc_w[$name]:-}" ] || fail "no client $name"
  echo "$*" >&"${_mc_w[$name]}"
  if ! IFS= read -r -t 60 -u "${_mc_r[$name]}" line; then
    line="err no answer within 60 s (program: $(cat "$MC_DIR/$name.err"))"
  fi
  echo "$line"
}

client_do() {
  local name=$1 line
  shift
  line=$(client_try "$name" "$@")
  case $line in
    ok) ;;
    "ok "*) echo "${line#ok }" ;;
    *) fail "client $name: '$*': ${line#err }" ;;
  esac
}

client_stop() {
  local name=$1 pid i w r
  pid=${_mc_pid[$name]:-}
  [ -n "$pid" ] || return 0
  echo quit >&"${_mc_w[$name]}" || true
  w=${_mc_w[$name]} r=${_mc_r[$name]}
  exec {w}>&- {r}<&-
  for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "_mc_pid[$name]" "_mc_w[$name]" "_mc_r[$name]"
}

lock_owners() {
  rbd lock ls --format json "$1" | python3 -c '
import json, sys
ls = json.load(sys.stdin)
print(len(ls), *["%s/%s" % (l["locker"], l["id"].replace(" ", "_")) for l in ls])'
}

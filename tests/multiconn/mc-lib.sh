# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Helpers for the multi-connection tests in tests/multiconn (source after
# lib.sh).  Call client_* in the test's own shell, not in $(...):
# client_start keeps its pipes and PID in this shell.
#
#   MC_DIR                     a scratch directory, removed at exit
#   client_start NAME URI      keep an NBD connection open (nbd-script);
#                              its program is killed at exit if still there
#   client_do NAME CMD...      run one nbd-script command; fail unless "ok";
#                              prints the value after "ok", if any
#   client_try NAME CMD...     same, but print the whole answer, never fail
#   client_stop NAME           NBD_CMD_DISC and wait for the program

MC_DIR=$(tmpdir)
declare -A _mc_w=() _mc_r=() _mc_pid=()
_mc_hooked=

_mc_kill_clients() {
  local n
  for n in "${!_mc_pid[@]}"; do
    kill "${_mc_pid[$n]}" 2>/dev/null
  done
}

client_start() {
  local name=$1 uri=$2 prog w r line
  prog=$(test_prog multiconn/nbd-script)
  [ -n "$_mc_hooked" ] || { at_exit _mc_kill_clients; _mc_hooked=1; }
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
  local name=$1 pid w r
  pid=${_mc_pid[$name]:-}
  [ -n "$pid" ] || return 0
  echo quit >&"${_mc_w[$name]}" || true
  w=${_mc_w[$name]} r=${_mc_r[$name]}
  exec {w}>&- {r}<&-
  wait_for 10 exited "$pid" || true
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "_mc_pid[$name]" "_mc_w[$name]" "_mc_r[$name]"
}

# bytes_at IMAGE OFFSET [LENGTH]: the distinct bytes (hex, in order of
# runs) of LENGTH bytes (4096) at OFFSET of IMAGE, as `rbd export` sees
# it.
bytes_at() {
  rm -f "$MC_DIR/export"
  rbd export --no-progress "$1" "$MC_DIR/export" >/dev/null 2>&1
  od -An -tx1 -v -j "$2" -N "${3:-4096}" "$MC_DIR/export" | tr -d ' \n' |
    sed -E 's/(..)\1*/\1 /g'
}

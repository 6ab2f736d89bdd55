# SPDX-License-Identifier: BSD-3-Clause
# Helpers for the tests of systemd/ (source after lib.sh).  They read the
# units meson generated into $RBDX_BUILD/systemd, so the tests run the
# command line that will be installed, not a copy of it.

RBDX_UNITS=$RBDX_BUILD/systemd
[ -r "$RBDX_UNITS/rbdx@.service" ] ||
  fail "$RBDX_UNITS/rbdx@.service not generated (is subdir('systemd') in meson.build?)"

# unit_exec_start SPEC: set UNIT_ARGV to the ExecStart= command of
# rbdx@INSTANCE.service, INSTANCE being SPEC escaped as systemd does,
# expanded the way systemd expands it: %I is SPEC, %i the escaped
# instance, a word that is $VAR is split into the words of the variable
# (unset: no word), ${VAR} inside a word is replaced without splitting.
# The variables come from this shell's environment (the unit reads them
# from its EnvironmentFile=s).  The plugin name "rbdx" is replaced by
# $RBDX_PLUGIN (the build's plugin), everything else is kept.
unit_exec_start() {
  local spec=$1 inst line w name val plugin_words=0
  local pI='%I' pi='%i'
  inst=$(systemd-escape "$spec")
  [ "$(grep -c '^ExecStart=' "$RBDX_UNITS/rbdx@.service")" -eq 1 ] ||
    fail "rbdx@.service must have exactly one ExecStart="
  line=$(sed -n 's/^ExecStart=//p' "$RBDX_UNITS/rbdx@.service")
  case "$line" in
    *\"*|*\'*|*\\*|*%%*|[-@:+!]*)
      fail "ExecStart uses quoting, escapes or prefixes this test cannot expand: $line" ;;
  esac
  UNIT_ARGV=()
  set -f
  for w in $line; do
    if [[ $w =~ ^\$([A-Za-z_][A-Za-z0-9_]*)$ ]]; then
      name=${BASH_REMATCH[1]}
      val=${!name-}
      for v in $val; do UNIT_ARGV+=("$v"); done
      continue
    fi
    w=${w//"$pI"/$spec}
    w=${w//"$pi"/$inst}
    while [[ $w =~ \$\{([A-Za-z_][A-Za-z0-9_]*)\} ]]; do
      name=${BASH_REMATCH[1]}
      w=${w//"\${$name}"/${!name-}}
    done
    case "$w" in *%*) set +f; fail "unexpanded specifier in ExecStart word '$w'" ;; esac
    if [ "$w" = rbdx ]; then
      w=$RBDX_PLUGIN
      plugin_words=$((plugin_words + 1))
    fi
    UNIT_ARGV+=("$w")
  done
  set +f
  [ $plugin_words -eq 1 ] || fail "ExecStart must name the plugin 'rbdx' exactly once: $line"
  # A sanitized build's plugin needs the runtime preloaded (tests/lib.sh).
  if [ -n "${RBDX_PRELOAD:-}" ] && [ "${UNIT_ARGV[0]##*/}" = nbdkit ]; then
    UNIT_ARGV[0]=$RBDX_SANITIZER_BIN/nbdkit
  fi
  [ -x "${UNIT_ARGV[0]}" ] || fail "ExecStart's program ${UNIT_ARGV[0]} is not executable"
}

# free_tcp_port: print a TCP port on 127.0.0.1 that was free a moment ago.
free_tcp_port() {
  python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# socket_activate PIDFILE LISTEN... -- CMD...: run CMD through
# systemd-socket-activate listening on each LISTEN (a Unix socket path or
# 127.0.0.1:PORT), as systemd does for rbdx@.socket: CMD is exec'd (same
# PID) on the first connection and gets the sockets as LISTEN_FDS, with
# no other environment.  Waits until every listener is up; sets SA_PID
# and writes it to PIDFILE (lib.sh stops it at exit).  Returns 1 (with
# the activator stopped) if it exited or never listened, e.g. because a
# TCP port was taken meanwhile.
socket_activate() {
  local pidfile=$1 i l ok
  local -a listen=() args=()
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do listen+=("$1"); args+=(-l "$1"); shift; done
  shift
  echo "$pidfile" >>"$_state/pidfiles"
  systemd-socket-activate "${args[@]}" "$@" &
  SA_PID=$!
  echo "$SA_PID" >"$pidfile"
  for i in $(seq 200); do
    ok=1
    for l in "${listen[@]}"; do
      case "$l" in
        /*) [ -S "$l" ] || ok=0 ;;
        *:*) ss -Hltn "sport = :${l##*:}" 2>/dev/null | grep -q . || ok=0 ;;
      esac
    done
    [ $ok -eq 1 ] && break
    kill -0 "$SA_PID" 2>/dev/null || break
    sleep 0.05
  done
  if [ $ok -ne 1 ]; then
    kill "$SA_PID" 2>/dev/null
    wait "$SA_PID" 2>/dev/null
    rm -f "$pidfile"
    say "systemd-socket-activate is not listening on ${listen[*]}"
    return 1
  fi
}

# wait_exit PID SECONDS: wait for a child of this shell to exit; sets
# EXIT_STATUS (fails after SECONDS).
wait_exit() {
  local pid=$1 i
  for i in $(seq $(($2 * 10))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && fail "process $pid still running after $2 s"
  EXIT_STATUS=0
  wait "$pid" || EXIT_STATUS=$?
}

# locks IMAGE: number of locks rbd lock ls shows.
locks() { rbd lock ls --format json "$1" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }

# SPDX-License-Identifier: BSD-3-Clause
# Helpers shared by the tests in tests/config/ (sourced after lib.sh).
#
#   refused WORD... -- [NBDKIT-OPTIONS...] PLUGIN-ARGS...
#       nbdkit must exit non-zero before serving: its --run command never
#       runs (a marker file stays absent), stderr holds exactly one
#       "error:" line, and that line contains every WORD (fixed strings).
#   refused_unsplit WORD... -- [NBDKIT-OPTIONS...] PLUGIN-ARGS...
#       as refused, for arguments holding $HOSTILE (a newline and an ESC
#       sequence): stderr has no ESC byte, no line starting with the
#       text after the newline, and the escaped form \x0a.
#   served CMD -- [NBDKIT-OPTIONS...] PLUGIN-ARGS...
#       nbdkit must start and CMD (run by --run, with $uri set) must
#       succeed.
#   NBDKIT-OPTIONS are the leading arguments that start with '-' (as -r);
#   they go before the plugin.
#   sandbox_user NAME [CAPS...]
#       create cephx user client.NAME in the sandbox cluster (via
#       tests/ceph-sandbox add-user) and set USER_KEYRING to its keyring
#       path; the user and the keyring are removed at exit.  Skips the
#       test when CEPH_CONF is not a ceph-sandbox cluster.
#   CFG_SCRATCH: a scratch directory removed at exit.

CFG_SCRATCH=$(tmpdir)

# _cfg_since T0: seconds (2 decimals) since $EPOCHREALTIME was T0.
_cfg_since() {
  local now=${EPOCHREALTIME/[.,]/} then=${1/[.,]/} us
  us=$((now - then))
  printf '%d.%02d' $((us / 1000000)) $((us % 1000000 / 10000))
}

refused() {
  local -a words=() nopts=()
  local marker="$CFG_SCRATCH/served" errf="$CFG_SCRATCH/stderr" rc w n t0

  while [ $# -gt 0 ] && [ "$1" != "--" ]; do words+=("$1"); shift; done
  shift
  while [ $# -gt 0 ] && [[ $1 == -* ]]; do nopts+=("$1"); shift; done
  rm -f "$marker" "$CFG_SCRATCH/sock"
  t0=$EPOCHREALTIME
  set +e
  # An explicit socket: nbdkit 1.32 leaves the directory of `-U -`
  # behind in /tmp when it fails before serving.
  timeout 60 nbdkit -U "$CFG_SCRATCH/sock" "${nopts[@]}" "$RBDX_PLUGIN" "$@" --run "touch $marker" \
    2>"$errf" </dev/null
  rc=$?
  set -e
  say "nbdkit rbdx $* -> exit $rc after $(_cfg_since "$t0") s: $(tr '\n' ' ' <"$errf")"
  [ "$rc" -ne 124 ] || fail "nbdkit rbdx $* did not exit within 60 s"
  [ "$rc" -ne 0 ] || fail "nbdkit rbdx $* exited 0 (expected an error)"
  [ ! -e "$marker" ] || fail "nbdkit rbdx $* served before failing"
  n=$(grep -c 'error:' "$errf" || true)
  [ "$n" -eq 1 ] ||
    fail "nbdkit rbdx $*: expected one error line, got $n: $(cat "$errf")"
  for w in "${words[@]}"; do
    grep 'error:' "$errf" | grep -qF -- "$w" ||
      fail "nbdkit rbdx $*: the error does not say '$w': $(cat "$errf")"
  done
}

HOSTILE=$'x\nFORGED\e[31m'
refused_unsplit() {
  local errf="$CFG_SCRATCH/stderr"

  refused "$@"
  ! grep -q $'\e' "$errf" || fail "a raw ESC byte in: $(cat -A "$errf")"
  ! grep -q '^FORGED' "$errf" || fail "a message was split: $(cat -A "$errf")"
  grep -qF 'x\x0aFORGED\x1b[31m' "$errf" ||
    fail "the value is not shown escaped: $(cat -A "$errf")"
}

served() {
  local cmd=$1 errf="$CFG_SCRATCH/stderr" t0=$EPOCHREALTIME
  local -a nopts=()
  shift 2
  while [ $# -gt 0 ] && [[ $1 == -* ]]; do nopts+=("$1"); shift; done
  timeout 60 nbdkit -U "$(new_socket)" "${nopts[@]}" "$RBDX_PLUGIN" "$@" --run "$cmd" \
    >"$CFG_SCRATCH/stdout" 2>"$errf" </dev/null ||
    fail "nbdkit rbdx $* --run '$cmd' failed: $(cat "$CFG_SCRATCH/stdout" "$errf")"
  say "nbdkit rbdx $* served ($(_cfg_since "$t0") s)"
}

sandbox_user() {
  local name=$1 dir
  shift
  dir=$(dirname "$CEPH_CONF")
  requires ceph
  "$RBDX_TESTS/ceph-sandbox" status "$dir" >/dev/null 2>&1 ||
    skip "CEPH_CONF is not a tests/ceph-sandbox cluster (cannot add users)"
  at_exit "timeout 30 ceph auth rm client.$name >/dev/null 2>&1;
    rm -f $dir/ceph.client.$name.keyring"
  USER_KEYRING=$("$RBDX_TESTS/ceph-sandbox" add-user "$dir" "$name" "$@") ||
    fail "ceph-sandbox add-user $name failed"
}

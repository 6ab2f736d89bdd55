# SPDX-License-Identifier: BSD-3-Clause
# tests/mapper/mapper-lib.sh: what the mapper tests share (source it after
# tests/lib.sh).  They run `rbdx map` up to where it would start a server,
# with stand-in servers that record any start and fail.
#
#   mapper_requires        skip without the mapper; set $rbdx
#   nobody_requires        skip without root and user nobody; define as_nobody
#   standin_servers DIR    DIR/bin/nbdkit and DIR/bin/rbdx-engine append their
#                          argv to DIR/started and exit 1; exports
#                          RBDX_NBDKIT and RBDX_ENGINE to them

mapper_requires() {
  rbdx=$RBDX_BUILD/server/rbdx
  [ -x "$rbdx" ] || skip "the mapper is not built (-Dmapper=disabled)"
}

nobody_requires() {
  [ "$(id -u)" -eq 0 ] || skip "needs root (to run as nobody and as root)"
  id nobody >/dev/null 2>&1 || skip "no user nobody"
  requires setpriv
  as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
  as_nobody test -x "$rbdx" ||
    skip "user nobody cannot run $rbdx (a checkout under a 0700 directory)"
}

standin_servers() {
  local dir=$1 s
  mkdir -p "$dir/bin"
  for s in nbdkit rbdx-engine; do
    printf '#!/bin/sh\nprintf "%%s\\n" "$0" "$@" >>"%s/started"\nexit 1\n' "$dir" >"$dir/bin/$s"
    chmod +x "$dir/bin/$s"
  done
  export RBDX_NBDKIT=$dir/bin/nbdkit RBDX_ENGINE=$dir/bin/rbdx-engine
}

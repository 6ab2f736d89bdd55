# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Three readers of a served 16 MiB image, for the removal cases (C74,
# C79); source after lib.sh.  Each is c74-reader.py (its header says
# what it counts).
#
#   readers_start DIR URI BYTE   start them on URI, expecting BYTE (hex)
#                                everywhere; return once each has read
#                                the image's data (30 s at most)
#   readers_end DIR WHAT         wait for them: each must have read no
#                                other data than BYTE, failed only with
#                                NBD_EIO, and ended with 50 EIOs in a row
#                                (WHAT names the event in messages)

_readers=()

readers_start() {
  local k
  _readers=()
  for k in 1 2 3; do
    rm -f "$1/ready$k"
    /usr/bin/python3 "$RBDX_TESTS/lifecycle/c74-reader.py" "$2" \
      $((16 << 20)) "$3" "$1/ready$k" 60 >"$1/out$k" 2>"$1/err$k" &
    _readers+=($!)
  done
  for k in 1 2 3; do
    wait_for 30 test -e "$1/ready$k" ||
      fail "reader $k read nothing: $(cat "$1/err$k")"
  done
}

readers_end() {
  local k line
  for k in 1 2 3; do
    wait "${_readers[k - 1]}" || fail "reader $k failed: $(cat "$1/err$k")"
    line=$(cat "$1/out$k")
    say "reader $k: $line"
    case $line in
      *" bad=0 other=0 eio=50 last=EIO") ;;
      *) fail "after $2, reader $k: $line (bad: reads that succeeded with other data than the image's)" ;;
    esac
  done
}

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# How many connections QEMU's NBD client opens to an rbdx export that
# advertises multi-conn.  QEMU's nbd block driver has one connection per
# node: QEMU 10.0 (Debian 13) has no option to open more (its
# BlockdevOptionsNbd members, from qemu-storage-daemon's query-qmp-schema:
# server, export, tls-creds, tls-hostname, x-dirty-bitmap, reconnect-delay,
# open-timeout; qemu-io refuses multi-conn=N with "Block protocol 'nbd'
# doesn't support the option"), nor does QEMU 7.2 (Debian 12).  A client
# that wants several connections to one export uses nbdcopy or libnbd.
# Connections are counted from rbdx's own log line of .open (nbdkit -v,
# "rbdx: IMAGE: client ...", one per opened connection).
# Asserts:
#   - nbdinfo sees multi-conn advertised;
#   - qemu-img convert -m 8 -W (8 coroutines, out of order) opens exactly
#     one connection, and its copy equals rbd export;
#   - QEMU asking for an export this server does not serve shows rbdx's
#     reason, which nbdkit >= 1.42 sends with its error reply;
#   - qemu-io with multi-conn=4 on the nbd driver: refused as an unknown
#     option (the finding above, printed with QEMU's version), or, with a
#     QEMU whose nbd driver takes it, more than one connection is opened
#     and four 1 MiB writes through it are in the image.
. "${RBDX_TESTS:-$(dirname "$0")/..}/lib.sh"
requires_cluster
requires qemu-img qemu-io nbdinfo

d=$(tmpdir)
img=$(new_image 64M)
qver=$(qemu-img --version | awk 'NR == 1 { print $3 }')
head -c 8388608 /dev/urandom >"$d/data"
import_into "$img" "$d/data"
serve "$d/s" -v -- "$img" 2>"$d/nbdkit.log"
# opens: how many connections rbdx has opened so far.
opens() { grep -c "rbdx: $img: client " "$d/nbdkit.log" || true; }

nbdinfo --json "$(uri "$d/s")" | /usr/bin/python3 -c '
import json, sys
e = json.load(sys.stdin)["exports"][0]
sys.exit(0 if e["can_multi_conn"] else 1)' || fail "multi-conn is not advertised for $img"

before=$(opens)
qemu-img convert -m 8 -W -O raw "$(uri "$d/s")" "$d/copy.raw" ||
  fail "qemu-img convert from the export failed"
n=$(($(opens) - before))
[ "$n" = 1 ] || fail "qemu-img convert -m 8 -W opened $n connections, expected 1"
rbd export --no-progress "$img" "$d/export.raw" >/dev/null 2>&1
cmp "$d/copy.raw" "$d/export.raw" || fail "qemu-img's copy differs from rbd export"
say "QEMU $qver: qemu-img convert -m 8 -W used 1 connection"

if out=$(qemu-img info "$(uri "$d/s" rbd/not-here)" 2>&1); then
  fail "qemu-img opened an export the server does not serve"
fi
grep -q "rbdx: export 'rbd/not-here' is not served here" <<<"$out" ||
  fail "QEMU does not show rbdx's reason for refusing the export: $out"

opts="driver=nbd,server.type=unix,server.path=$d/s,multi-conn=4"
before=$(opens)
if ! out=$(qemu-io --image-opts "$opts" \
             -c 'aio_write -P 0x61 0 1M' -c 'aio_write -P 0x62 1M 1M' \
             -c 'aio_write -P 0x63 2M 1M' -c 'aio_write -P 0x64 3M 1M' \
             -c 'aio_flush' 2>&1); then
  grep -q "doesn't support the option 'multi-conn'" <<<"$out" ||
    fail "qemu-io with multi-conn=4: $out"
  [ "$(($(opens) - before))" -le 1 ] || fail "a refused qemu-io opened several connections"
  say "QEMU $qver: the nbd driver has no multi-conn option ($out)"
  exit 0
fi
n=$(($(opens) - before))
[ "$n" -gt 1 ] && [ "$n" -le 4 ] ||
  fail "QEMU $qver took multi-conn=4 but opened $n connections"
rbd export --no-progress "$img" "$d/export2.raw" >/dev/null 2>&1
for i in 0 1 2 3; do
  cmp <(dd if="$d/export2.raw" bs=1M skip="$i" count=1 2>/dev/null) \
    <(_bytes 1048576 "6$((i + 1))") ||
    fail "MiB $i is not what qemu-io wrote over $n connections"
done
say "QEMU $qver: multi-conn=4 opened $n connections; the writes are in the image"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-kernel-c26-relative-paths: case C26.  In a UML guest,
#   cd D; rbdx map SPEC encryption_format=luks2 encryption_passphrase_file=vm.pass metrics_file=m.prom
# with both files in D serves the decrypted image and writes D/m.prom: the
# mapper makes every parameter that names a file absolute against the
# directory it was run from (the core's list, rbdx_options_wants_absolute),
# before its supervisor changes to /.
#
# The guest cannot reach the cluster, so the mapper's engine there is the
# stand-in (tests/kernel/standin-engine) with STANDIN_WAIT: it records the
# command line the mapper built and waits.  The host then starts the real
# rbdx-engine, from /, with exactly those parameters (the guest's /share
# is $UML_SHARE here; size_file= is the stand-in's link to /share/size),
# and lets the stand-in relay the kernel's connections to it.  So the
# kernel reads what the real engine serves with the mapper's parameters.
# Asserts:
#   - the engine got encryption_passphrase_file=D/vm.pass and one
#     metrics_file=, D/m.prom (none of the mapper's own beside it);
#   - /dev/nbd0 has the decrypted size (64 MiB less the 16 MiB LUKS2
#     header) and reads the plaintext the host wrote through the plugin;
#     a write through the device reads back on the host through the
#     plugin with the same passphrase;
#   - D/m.prom holds the engine's request counters (reads counted),
#     `rbdx status` names it, and it is still there after unmap (a file
#     given is not the mapper's to remove); unmap leaves no state.
. "$RBDX_TESTS/lib.sh"
. "$RBDX_TESTS/kernel/lib-uml.sh"
uml_requires
requires_cluster
requires nbdsh
mapper=$(uml_mapper map)

img=$(new_image 64M)
uml_setup
d="$UML_SHARE/d"
mkdir "$d"
printf 'correct horse battery staple\n' >"$d/vm.pass"
chmod 600 "$d/vm.pass"
rbd encryption format "$img" luks2 "$d/vm.pass"
enc=(encryption_format=luks2 encryption_passphrase_file="$d/vm.pass")
head -c 1M /dev/urandom >"$UML_DIR/plain"
with_export "$img" "${enc[@]}" \
  "nbdsh -u \"\$uri\" -c 'h.pwrite(open(\"$UML_DIR/plain\", \"rb\").read(), 0); h.flush()'" ||
  fail "cannot write the plaintext through the plugin"
plain_sha=$(sha256sum <"$UML_DIR/plain" | cut -d' ' -f1)

sock="$UML_DIR/engine.sock"
uml_bridge "$sock"
uml_guest_mount "$(dirname "$mapper")"
uml_guest_mount "$RBDX_BUILD/tests/kernel"
uml_guest_env NBD_EXPORT="$img" MAPPER="$mapper" PLAIN_SHA="$plain_sha" \
  STANDIN_ENGINE="$(cd "$RBDX_BUILD/tests/kernel" && pwd -P)/standin-engine"

cat >"$UML_DIR/guest-c26.sh" <<'EOF'
load_nbd
export RBDX_ENGINE=$STANDIN_ENGINE STANDIN_WAIT=engine
cd /share/d
dev=$("$MAPPER" map --connections 2 "$NBD_EXPORT" encryption_format=luks2 \
  encryption_passphrase_file=vm.pass metrics_file=m.prom) || fail "rbdx map failed"
[ "$dev" = /dev/nbd0 ] || fail "map printed $dev"
args=/share/engine-args
grep -qx "encryption_passphrase_file=/share/d/vm.pass" "$args" ||
  fail "the engine did not get the passphrase file as /share/d/vm.pass: $(cat "$args")"
[ "$(grep -c '^metrics_file=' "$args")" -eq 1 ] && grep -qx "metrics_file=/share/d/m.prom" "$args" ||
  fail "the engine did not get one metrics_file=/share/d/m.prom: $(cat "$args")"
[ "$(dev_bytes nbd0)" -eq $((48 << 20)) ] || fail "nbd0 is $(dev_bytes nbd0) bytes, not 48 MiB"
got=$(dd if=/dev/nbd0 bs=1M count=1 iflag=direct status=none | sha256sum | cut -d' ' -f1)
[ "$got" = "$PLAIN_SHA" ] || fail "nbd0 does not read the decrypted image"
head -c 1M /dev/urandom >/tmp/data
dd if=/tmp/data of=/dev/nbd0 bs=1M seek=8 oflag=direct conv=fsync status=none ||
  fail "write to nbd0 failed"
sha256sum </tmp/data | cut -d' ' -f1 >/share/data.sha256
counted() { grep -Eq '^rbdx_requests_total\{.*op="read"\} [1-9]' /share/d/m.prom 2>/dev/null; }
wait_until 20 counted || fail "no request counters in /share/d/m.prom: $(ls -l /share/d)"
"$MAPPER" status --format json /dev/nbd0 >/tmp/status.json || fail "rbdx status failed"
grep -q '"metrics_file":"/share/d/m.prom"' /tmp/status.json ||
  fail "rbdx status does not name /share/d/m.prom: $(cat /tmp/status.json)"
"$MAPPER" unmap /dev/nbd0 || fail "unmap failed"
[ -s /share/d/m.prom ] || fail "unmap removed the metrics file it was given"
[ -z "$(ls /share/run 2>/dev/null | grep -vx lock)" ] || fail "state left in /share/run: $(ls /share/run)"
say "ok"
EOF

uml_boot "$UML_DIR/guest-c26.sh"
uml_wait_step engine-args 180
# The real engine with the parameters the mapper built, started from /.
args=()
skip_next=0
while IFS= read -r a; do
  if [ "$skip_next" = 1 ]; then skip_next=0; continue; fi
  case $a in
    --control) skip_next=1 ;;
    size_file=*) args+=("size_file=$UML_SHARE/size") ;;
    *=/share/*) args+=("${a%%=*}=$UML_SHARE/${a#*=/share/}") ;;
    *) args+=("$a") ;;
  esac
done <"$UML_SHARE/engine-args"
say "the engine's parameters: ${args[*]}"
cd /
serve_engine "$sock" -- "${args[@]}"
uml_signal engine
uml_finish 300

say "checking the image on the host"
with_export "$img" "${enc[@]}" \
  "nbdsh -u \"\$uri\" -c 'import sys; sys.stdout.buffer.write(h.pread(1 << 20, 8 << 20))'" \
  >"$UML_DIR/back" || fail "cannot read back through the plugin"
[ "$(sha256sum <"$UML_DIR/back" | cut -d' ' -f1)" = "$(cat "$UML_SHARE/data.sha256")" ] ||
  fail "the image does not hold (decrypted) what the guest wrote"
grep -q '^rbdx_requests_total{' "$d/m.prom" || fail "no counters in $d/m.prom"
say "ok: relative encryption_passphrase_file= and metrics_file= from the mapper's directory"

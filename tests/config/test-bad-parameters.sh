#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Proves: parameters that are wrong as written (unknown key, empty value,
# a key given twice, a bad completion=, writers=, exclusive= or pool=
# value, an image= outside pool=, a malformed ceph.NAME, a metrics_file=
# that cannot be written, a size_file= or metrics_file= naming a device,
# FIFO, symbolic link or directory, case C57: the node is left as it
# was) make nbdkit
# exit non-zero before serving, with one error that names the key and
# value (nbdkit-rbdx-plugin.pod, PARAMETERS); a value holding a newline
# and an ESC sequence (conf=, keyring=, id=, image=, pool=,
# quiesce_hook=, size_file=, metrics_file=, exclusive=) is shown escaped
# (\x0a, \x1b) on that one line.  Positive controls: every
# accepted completion= and writers= value and exclusive=false serve.  A
# repeated ceph.NAME is refused (test-ceph-options.sh, case C41).
. "$RBDX_TESTS/lib.sh"
requires_cluster
. "$RBDX_TESTS/config/config-lib.sh"

img=$(new_image 8M)

# Unknown keys.
refused "unknown parameter 'foo'" -- "$img" foo=1
refused "unknown parameter 'snap'" -- "$img" snap=s1
refused "unknown parameter 'rbd_cache'" "ceph.NAME=VALUE" -- "$img" rbd_cache=false

# Empty values, for every kind of key.
for key in image pool writers exclusive conf id keyring mon_host cluster \
           completion ceph.rbd_cache foo; do
  refused "$key= needs a value" -- "$img" "$key="
done

# A non-repeatable key given twice.
refused "image= given twice" -- "$img" "image=$img"
refused "conf= given twice" "'$CEPH_CONF'" "'/x'" -- "$img" "conf=$CEPH_CONF" conf=/x
refused "id= given twice" "'admin'" "'other'" -- "$img" id=admin id=other
refused "keyring= given twice" -- "$img" keyring=/a keyring=/b
refused "mon_host= given twice" -- "$img" mon_host=127.0.0.1 mon_host=127.0.0.2
refused "cluster= given twice" -- "$img" cluster=ceph cluster=ceph
refused "completion= given twice" -- "$img" completion=auto completion=auto
refused "pool= given twice" -- "$img" pool=rbd pool=rbd
refused "writers= given twice" -- "$img" writers=auto writers=shared
refused "exclusive= given twice" -- "$img" exclusive=false exclusive=false

# completion= takes four values only (and eventfd, the old name of poll).
refused "completion='bogus'" "callback, auto, io_uring or poll" -- "$img" completion=bogus
refused "completion='IO_URING'" -- "$img" completion=IO_URING

# writers=, exclusive=, pool= take fixed forms.
refused "writers='bogus'" "auto, shared or per-connection" -- "$img" writers=bogus
refused "exclusive='maybe'" "true or false" -- "$img" exclusive=maybe
for p in a/b/c /ns rbd/ rbd@x; do
  refused "pool='$p'" "expected POOL or POOL/NAMESPACE" -- "pool=$p"
done
refused "image='other/img' is not in pool='rbd'" -- pool=rbd image=other/img

# Malformed ceph.NAME keys.
refused "'ceph.' needs an option name" -- "$img" ceph.=1
refused "ceph.a.b" "no spaces or dots" -- "$img" ceph.a.b=1

# A metrics_file= that cannot be written (a directory, a missing one).
refused "metrics_file='$CFG_SCRATCH'" "names a directory" -- "$img" "metrics_file=$CFG_SCRATCH"
refused "metrics_file=" "/nonexistent" "No such file" -- "$img" metrics_file=/nonexistent/m.prom

# Case C57: size_file= and metrics_file= replace their file by renaming
# over it, so nothing but a regular file may be there: a character
# device like /dev/null (a private one here), a FIFO, a symbolic link
# (even to a regular file), a directory, a trailing '/'.
sc=$CFG_SCRATCH
mknod -m 0666 "$sc/null" c 1 3
mkfifo "$sc/fifo"
echo keep >"$sc/regular"
ln -s "$sc/regular" "$sc/link"
for key in size_file metrics_file; do
  for node in null fifo link; do
    refused "$key='$sc/$node'" "exists and is not a regular file" -- "$img" "$key=$sc/$node"
  done
  refused "$key='$sc/'" "names a directory" -- "$img" "$key=$sc/"
done
[ -c "$sc/null" ] && [ -p "$sc/fifo" ] && [ -L "$sc/link" ] && [ "$(cat "$sc/regular")" = keep ] ||
  fail "a refused size_file=/metrics_file= replaced its node: $(ls -l "$sc")"
served 'nbdinfo --size "$uri"' -- "$img" "size_file=$sc/regular" "metrics_file=$sc/m.prom"
[ "$(cat "$sc/regular")" = 8388608 ] && [ -f "$sc/m.prom" ] ||
  fail "size_file= over a regular file: '$(cat "$sc/regular")'"
rm -f "$sc/null" "$sc/fifo" "$sc/link" "$sc/regular" "$sc/m.prom"

# Values with a newline and an escape sequence: the error names the key
# and shows the value escaped, on one line, without the ESC byte.
h=$HOSTILE
refused_unsplit "conf='/nonexistent/x" "cannot read it" -- "$img" "conf=/nonexistent/$h"
refused_unsplit "keyring='/nonexistent/x" -- "$img" "keyring=/nonexistent/$h"
refused_unsplit "id='client.x" "without the 'client.' prefix" -- "$img" "id=client.$h"
refused_unsplit "image='rbd/i" "control character" -- "image=rbd/i$h"
refused_unsplit "pool='rbdx" "control character" -- "pool=rbd$h"
refused_unsplit "quiesce hook '/nonexistent/x" "No such file" -- "$img" quiesce=true \
  "quiesce_hook=/nonexistent/$h"
refused_unsplit "size_file='/nonexistent/x" "cannot write in" -- "$img" "size_file=/nonexistent/$h"
refused_unsplit "metrics_file='/nonexistent/x" "No such file" -- "$img" \
  "metrics_file=/nonexistent/$h/m.prom"
refused_unsplit "exclusive='x" "true or false" -- "$img" "exclusive=$h"

# Positive controls.
for mode in callback auto io_uring poll eventfd; do
  served true -- "$img" "completion=$mode"
done
for w in auto shared per-connection; do
  served true -- "$img" "writers=$w"
done
served true -- "$img" exclusive=false
refused "ceph.rados_osd_op_timeout= given twice" -- "$img" \
  ceph.rados_osd_op_timeout=notanumber ceph.rados_osd_op_timeout=30
say "ok"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Model-checked random test (model.c): random READ, WRITE (+FUA), FLUSH,
# TRIM, WRITE_ZEROES (NO_HOLE, FAST_ZERO, FUA) and BLOCK_STATUS over 1-4
# parallel connections, forbidden requests and dropped connections mixed
# in, every reply checked against a model of the image, and at the end
# `rbd export` compared with it.  Two images: layering only (each
# connection writes through its own handle) and default features
# (exclusive-lock: the shared lock-owning writer).  On each, one run
# with the visibility rbdx documents (an acknowledged write is visible
# on every connection) and one with only what the NBD spec promises
# (FLUSH and FUA replies); how connections are dropped: below.
#
#   test-model.sh short   suite cluster: 8000 requests per run, at most
#                         30 s of requests each
#   test-model.sh soak    suite soak, only with RBDX_SOAK=1: 40000
#                         requests per run, at most 240 s each, depth 16
#
# RBDX_MODEL_SEED=N sets the seed (default: 20261130 short, 1130 soak);
# every run prints it, and a failure names it with the request number.
. "$RBDX_TESTS/lib.sh"

mode=${1:-short}
case $mode in
  short) requests=8000 seconds=30 depth=8 default_seed=20261130 ;;
  soak)
    [ "${RBDX_SOAK:-}" = 1 ] || skip "soak runs only with RBDX_SOAK=1"
    requests=40000 seconds=240 depth=16 default_seed=1130 ;;
  *) fail "usage: $0 short|soak" ;;
esac
requires_cluster
prog=$(test_prog model/model)
seed=${RBDX_MODEL_SEED:-$default_seed}

# nbdkit before 1.34 may abort when a client closes its socket while
# several replies are still to be sent (raw_send_socket: Assertion
# `sock >= 0', fixed upstream in 1.33.10).  There the four runs drop
# connections by half-close (shut down the sending side, drain the
# replies: for the plugin the same hang-up with requests in flight), and
# a fifth run drops them with nbd_close at once against an nbdkit with
# --threads=1, which sends one reply at a time and so cannot hit it.
hangup=close
nbdkit_version=$(nbdkit --version | awk '{print $2}')
old_nbdkit=
if [ "$(printf '%s\n1.34.0\n' "$nbdkit_version" | sort -V | head -1)" != 1.34.0 ]; then
  hangup=half
  old_nbdkit=1
  say "nbdkit $nbdkit_version: connections are dropped by half-close" \
    "(--hangup=half), and by close only with --threads=1"
fi

plain=$(new_image 40M --object-size 1M --image-feature layering)
locked=$(new_image 40M --object-size 1M)
plain2=$(new_image 40M --object-size 1M --image-feature layering)
locked2=$(new_image 40M --object-size 1M)

# run IMAGE VISIBILITY HANGUP [NBDKIT-OPTION]: the model on a new image
# (all zeros).
run() {
  local img=$1 visibility=$2 how=$3 t0
  local -a nbdkit_opts=("${@:4}")
  t0=$SECONDS
  say "$img: seed $seed, $requests requests, visibility $visibility," \
    "hang-up $how ${nbdkit_opts[*]}"
  with_export "${nbdkit_opts[@]}" "$img" "$prog --seed $seed \
      --requests $requests --seconds $seconds --connections 4 \
      --depth $depth --strict-oversized --visibility $visibility --hangup $how \
      --rbd-image $img \$uri" ||
    fail "model check failed on $img (visibility $visibility, hang-up" \
      "$how ${nbdkit_opts[*]}); rerun with RBDX_MODEL_SEED=$seed $0 $mode"
  say "$img: passed in $((SECONDS - t0)) s"
  # nbdkit --run waits for the server: nothing may be left on the image.
  released "$img" "after the model run on $img"
}

run "$plain" rbdx "$hangup"
run "$locked" rbdx "$hangup"
run "$plain2" spec "$hangup"
run "$locked2" spec "$hangup"
if [ -n "$old_nbdkit" ]; then
  run "$(new_image 40M --object-size 1M)" rbdx close --threads=1
fi

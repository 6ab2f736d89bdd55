#!/usr/bin/env bash
# Model-checked random test (model.c): random READ, WRITE (+FUA), FLUSH,
# TRIM, WRITE_ZEROES (NO_HOLE, FAST_ZERO, FUA) and BLOCK_STATUS over 1-4
# parallel connections, forbidden requests and dropped connections mixed
# in, every reply checked against a model of the image, and at the end
# `rbd export` compared with it.  Two images: layering only (each
# connection writes through its own handle) and default features
# (exclusive-lock: the shared lock-owning writer).  On each, one run
# with the visibility rbdx documents (an acknowledged write is visible
# on every connection) and one with only what the NBD spec promises
# (FLUSH and FUA replies).
#
#   test-model.sh short   suite cluster: 8000 requests per run, at most
#                         45 s each
#   test-model.sh soak    suite soak, only with RBDX_SOAK=1: 40000
#                         requests per run, at most 240 s each, depth 16
#
# RBDX_MODEL_SEED=N sets the seed (default: 20261130 short, 1130 soak);
# every run prints it, and a failure names it with the request number.
. "$RBDX_TESTS/lib.sh"

mode=${1:-short}
case $mode in
  short) requests=8000 seconds=45 depth=8 default_seed=20261130 ;;
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
# `sock >= 0', fixed upstream in 1.33.10).  There the dropped
# connections shut down their sending side and drain the replies
# instead: for the plugin the same hang-up with requests in flight.
hangup=close
nbdkit_version=$(nbdkit --version | awk '{print $2}')
if [ "$(printf '%s\n1.34.0\n' "$nbdkit_version" | sort -V | head -1)" != 1.34.0 ]; then
  hangup=half
  say "nbdkit $nbdkit_version: connections are dropped by half-close (--hangup=half)"
fi

plain=$(new_image 40M --object-size 1M --image-feature layering)
locked=$(new_image 40M --object-size 1M)
plain2=$(new_image 40M --object-size 1M --image-feature layering)
locked2=$(new_image 40M --object-size 1M)

# run IMAGE VISIBILITY: the model on a new image (all zeros).
run() {
  local img=$1 visibility=$2 t0
  t0=$SECONDS
  say "$img: seed $seed, $requests requests, visibility $visibility"
  with_export "$img" "$prog --seed $seed --requests $requests \
      --seconds $seconds --connections 4 --depth $depth \
      --visibility $visibility --hangup $hangup --rbd-image $img \$uri" ||
    fail "model check failed on $img (visibility $visibility); rerun with" \
      "RBDX_MODEL_SEED=$seed $0 $mode"
  say "$img: passed in $((SECONDS - t0)) s"
  # nbdkit --run waits for the server: nothing may be left on the image.
  released "$img" "after the model run on $img"
}

run "$plain" rbdx
run "$locked" rbdx
run "$plain2" spec
run "$locked2" spec

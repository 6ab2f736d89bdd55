#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The plugin exports exactly one symbol, plugin_init, the entry point
# nbdkit looks up (nbdkit-plugin(3)); plugin/nbdkit-rbdx-plugin.syms
# hides the rest.  Fails on any other defined dynamic symbol (a
# function of the plugin leaking into nbdkit's namespace) and on a
# missing plugin_init.  No cluster needed.
. "${RBDX_TESTS:-$(dirname "$0")/..}/lib.sh"

requires nm
[ -r "$RBDX_PLUGIN" ] || fail "plugin not built: $RBDX_PLUGIN"

# "ADDRESS TYPE NAME" per line; the name may carry @VERSION.
syms=$(nm -D --defined-only "$RBDX_PLUGIN" | awk '{ print $NF }' | sed 's/@.*//' | sort -u)
[ -n "$syms" ] || fail "nm -D found no defined symbol in $RBDX_PLUGIN"

extra=$(grep -vx 'plugin_init' <<<"$syms" || true)
[ -z "$extra" ] || fail "exported besides plugin_init:" $extra
grep -qx 'plugin_init' <<<"$syms" || fail "plugin_init is not exported"
say "only plugin_init is exported"

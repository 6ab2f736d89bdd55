#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The --help texts and the man pages list the same parameters.
#
#   test-help-vs-man.sh plugin   every key of `nbdkit PLUGIN --help` (the
#                                plugin's config_help) is an =item of
#                                PARAMETERS in plugin/nbdkit-rbdx-plugin.pod
#                                and the other way round; every such key is
#                                also in the page's SYNOPSIS.
#   test-help-vs-man.sh mapper   every option (-x, --xyz) of
#                                `build/server/rbdx --help` is an =item of
#                                OPTIONS in server/mapper/rbdx.pod and the other way
#                                round.
# Compares names only (not value lists or wording).  No cluster needed.
. "${RBDX_TESTS:-$(dirname "$0")/..}/lib.sh"

requires python3
what=${1:?usage: test-help-vs-man.sh plugin|mapper}
scratch=$(tmpdir)

# Options the mapper's usage text (server/mapper/rbdx.c) does not list although
# rbdx accepts them and rbdx.pod documents them.  Each entry is a known
# gap in a file this test cannot fix; remove it once the usage lists it.
mapper_help_gaps=""

case $what in
plugin)
  requires nbdkit
  [ -r "$RBDX_PLUGIN" ] || fail "plugin not built: $RBDX_PLUGIN"
  pod=$RBDX_TESTS/../plugin/nbdkit-rbdx-plugin.pod
  nbdkit "$RBDX_PLUGIN" --help >"$scratch/help" 2>&1 ||
    fail "nbdkit $RBDX_PLUGIN --help failed: $(cat "$scratch/help")"
  ;;
mapper)
  mapper=${RBDX_MAPPER:-$RBDX_BUILD/server/rbdx}
  [ -x "$mapper" ] || skip "the mapper is not built ($mapper)"
  pod=$RBDX_TESTS/../server/mapper/rbdx.pod
  "$mapper" --help >"$scratch/help" 2>&1 ||
    fail "$mapper --help failed: $(cat "$scratch/help")"
  ;;
*) fail "unknown argument '$what' (plugin or mapper)" ;;
esac
[ -r "$pod" ] || fail "no man page source $pod"

python3 - "$what" "$scratch/help" "$pod" "$mapper_help_gaps" <<'PY' ||
import re, sys

what, help_path, pod_path, gaps = sys.argv[1:5]
help_text = open(help_path).read()
pod = open(pod_path).read()

def section(name):
    m = re.search(r"^=head1 %s\n(.*?)(?=^=head1 |\Z)" % name, pod, re.S | re.M)
    if not m:
        sys.exit("%s: no =head1 %s section" % (pod_path, name))
    return m.group(1)

def plain(pod_text):
    """POD text without formatting codes (B<x>, I<x>, C<x>, L<x>...)."""
    prev = None
    while prev != pod_text:
        prev = pod_text
        pod_text = re.sub(r"[A-Z]<([^<>]*)>", r"\1", pod_text)
    return pod_text

def key_of(text):
    """The parameter name of "[image=]...", "pool=POOL", "ceph.OPTION=V"."""
    m = re.match(r"\[?([A-Za-z_][A-Za-z0-9_.]*)=", text.strip())
    return m.group(1) if m else None

errors = []
if what == "plugin":
    # nbdkit prints its own help, then "plugin: NAME (...)", the path,
    # the description, and then the plugin's config_help.
    lines = help_text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("plugin: ")), None)
    if start is None:
        sys.exit("no 'plugin:' line in nbdkit --help output")
    helped = set()
    for l in lines[start + 3:]:
        if l and not l[0].isspace():
            k = key_of(l)
            if k:
                helped.add(k)
    documented = set()
    for item in re.findall(r"^=item (.*)$", section("PARAMETERS"), re.M):
        k = key_of(plain(item))
        if k:
            documented.add(k)
        else:
            errors.append("PARAMETERS item without a key=: %r" % item)
    synopsis = plain(section("SYNOPSIS"))
    synopsis_keys = {k for k in documented
                     if re.search(r"(^|[\s\[])%s=" % re.escape(k), synopsis)}
    for k in sorted(documented - synopsis_keys):
        errors.append("%s= is in PARAMETERS but not in the SYNOPSIS" % k)
else:
    opt = r"(?:(?<=[\s,|\[])|^)(--?[a-z][a-z-]*)"
    helped = set(re.findall(opt, help_text, re.M))
    documented = set()
    for item in re.findall(r"^=item (.*)$", section("OPTIONS"), re.M):
        documented.update(re.findall(r"B<(--?[a-z][a-z-]*)>", item))
    for k in sorted(set(gaps.split()) & (documented - helped)):
        print("note: %s is documented but not in --help (known gap)" % k)
        documented.discard(k)

for k in sorted(helped - documented):
    errors.append("%s: in --help but not in %s" % (k, pod_path))
for k in sorted(documented - helped):
    errors.append("%s: in %s but not in --help" % (k, pod_path))
if errors:
    print("\n".join(errors))
    sys.exit(1)
print("%d names agree: %s" % (len(helped), " ".join(sorted(helped))))
PY
  fail "--help and $(basename "$pod") disagree (see above)"
say "$what: --help and $(basename "$pod") list the same names"

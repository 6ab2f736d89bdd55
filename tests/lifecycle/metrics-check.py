#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# tests/lifecycle/metrics-check.py FILE: a strict check of an rbdx
# metrics file (nbdkit-rbdx-plugin(1), METRICS) against Prometheus' text
# exposition format 0.0.4 (prometheus.io, "Exposition formats"), the
# format node_exporter's textfile collector reads.
#
# Two checks, both must pass (exit 0; else the faults on stderr, exit 1):
#   1. prometheus_client's parser (python3-prometheus-client) reads the
#      whole file, every family has a HELP text and a real TYPE, and no
#      family comes out twice: that parser tolerates a family's samples
#      split by another family's, and returns the family once per run,
#      so a name seen twice means interleaving;
#   2. line by line, since that parser tolerates more than the format
#      allows: each family has exactly one "# HELP" and one "# TYPE"
#      line, HELP then TYPE, before all of its samples; every sample
#      line belongs to the family last declared (a histogram's are
#      NAME_bucket, NAME_sum, NAME_count); no family is declared twice;
#      a histogram's samples of one label set are together, buckets in
#      ascending "le" ending at +Inf, then _sum and _count, and _count
#      equals the +Inf bucket.
# Exit 2: prometheus_client is not installed (the caller skips).
import re
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("python3-prometheus-client is not installed", file=sys.stderr)
    sys.exit(2)

SAMPLE = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)')
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)')


def label_pairs(text):
    pairs, pos = [], 0
    while pos < len(text):
        m = LABEL.match(text, pos)
        if not m:
            raise ValueError("bad labels: {%s}" % text)
        pairs.append((m.group(1), m.group(2)))
        pos = m.end()
    return pairs


def check(text):
    faults = []

    # 1. prometheus_client's parser.
    names = []
    try:
        for fam in text_string_to_metric_families(text):
            names.append(fam.name)
            if fam.type in ("unknown", "untyped"):
                faults.append("family %s has no TYPE" % fam.name)
            if not fam.documentation:
                faults.append("family %s has no HELP" % fam.name)
    except Exception as e:  # the parser raises ValueError and others
        faults.append("prometheus_client cannot parse it: %r" % e)
    for n in sorted(set(x for x in names if names.count(x) > 1)):
        faults.append("family %s comes in %d separate runs (interleaved)"
                      % (n, names.count(n)))

    # 2. Line by line.
    declared = set()
    fam = typ = None
    helped = False
    hist = {}          # label set (without le) -> state of that histogram
    last_key = None
    for no, line in enumerate(text.splitlines(), 1):
        where = "line %d: %r" % (no, line)
        if line.startswith("# HELP "):
            name = line.split(" ", 3)[2]
            if name in declared:
                faults.append("%s: family %s declared again" % (where, name))
            declared.add(name)
            fam, typ, helped, hist, last_key = name, None, True, {}, None
            continue
        if line.startswith("# TYPE "):
            parts = line.split(" ")
            if len(parts) != 4 or parts[2] != fam or not helped or typ:
                faults.append("%s: TYPE not right after its HELP" % where)
            typ = parts[3]
            continue
        if line.startswith("#") or not line.strip():
            continue
        m = SAMPLE.fullmatch(line)
        if not m:
            faults.append("%s: not a sample line" % where)
            continue
        name, labels = m.group(1), label_pairs(m.group(3) or "")
        if typ is None:
            faults.append("%s: sample before any HELP and TYPE" % where)
            continue
        if typ != "histogram":
            if name != fam:
                faults.append("%s: sample of %s inside family %s"
                              % (where, name, fam))
            float(m.group(4))
            continue
        suffix = name[len(fam):] if name.startswith(fam) else None
        if suffix not in ("_bucket", "_sum", "_count"):
            faults.append("%s: sample of %s inside histogram %s"
                          % (where, name, fam))
            continue
        key = tuple(p for p in labels if p[0] != "le")
        if key != last_key and key in hist:
            faults.append("%s: histogram %s%s is split" % (where, fam, key))
        last_key = key
        st = hist.setdefault(key, {"le": -1.0, "inf": None, "sum": False})
        value = float(m.group(4))
        if suffix == "_bucket":
            le = float(dict(labels)["le"])
            if le <= st["le"] or st["inf"] is not None:
                faults.append("%s: bucket out of order" % where)
            st["le"] = le
            if le == float("inf"):
                st["inf"] = value
        elif suffix == "_sum":
            if st["inf"] is None:
                faults.append("%s: _sum before the +Inf bucket" % where)
            st["sum"] = True
        elif not st["sum"] or value != st["inf"]:
            faults.append("%s: _count before _sum or not the +Inf bucket"
                          % where)
    return faults


def main():
    text = open(sys.argv[1]).read()
    faults = check(text)
    for f in faults[:30]:
        print("metrics-check: " + f, file=sys.stderr)
    if len(faults) > 30:
        print("metrics-check: ... and %d more" % (len(faults) - 30),
              file=sys.stderr)
    sys.exit(1 if faults else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-cost-smoke: tests/bench/cost --smoke produces a well-formed report.
#
# Proves that the cost scenario works end to end at a tiny size (1 and 2
# connections over 1 and 2 images, for nbdkit rbdx and, when built, the
# engine, each with a 1 s IOPS sample): every point is measured (status
# ok, more threads, fds and RSS with the connections than without, a
# positive IOPS figure), results.csv has the documented header,
# results.json matches it, report.md has a table per front end, and
# chart.png is a PNG.  Counts only: no assertion on any figure's size.
# Uses the cluster in CEPH_CONF when there is one, else its own sandbox.
. "${RBDX_TESTS:-$(dirname "$0")/..}/lib.sh"

requires nbdkit rbd ceph-mon ceph-osd
requires_python_nbd
[ -r "$RBDX_PLUGIN" ] || fail "plugin not built: $RBDX_PLUGIN"
export RBDX_ENGINE=${RBDX_ENGINE:-$RBDX_BUILD/server/rbdx-engine}

out="$(tmpdir)/cost"
rc=0
"$RBDX_TESTS/bench/cost" --smoke --out "$out" >"$out.stdout" 2>"$out.stderr" || rc=$?
[ "$rc" -eq 77 ] && skip "tests/bench/cost: $(tail -n 1 "$out.stderr")"
if [ "$rc" -ne 0 ]; then
  tail -n 20 "$out.stderr" >&2
  fail "tests/bench/cost --smoke exited with $rc"
fi

HAVE_ENGINE=$([ -x "$RBDX_ENGINE" ] && echo 1 || echo 0) \
HAVE_GNUPLOT=$(command -v gnuplot >/dev/null && echo 1 || echo 0) \
/usr/bin/python3 - "$out" <<'PY' || fail "the cost report is not well-formed (see above)"
import csv, json, os, sys
out = sys.argv[1]
errors = []
def check(c, m):
    if not c:
        errors.append(m)
header = ("frontend,images,connections,status,base_threads,base_fds,"
          "base_rss_kib,threads,fds,rss_kib,threads_per_conn,fds_per_conn,"
          "rss_per_conn_mib,iops,qd,params,note").split(",")
with open(os.path.join(out, "results.csv"), newline="") as f:
    rd = csv.reader(f)
    got = next(rd)
    rows = [dict(zip(got, r)) for r in rd]
check(got == header, f"results.csv: header is {got}")
fes = ["nbdkit"] + (["engine"] if os.environ["HAVE_ENGINE"] == "1" else [])
points = [("1", "1"), ("1", "2"), ("2", "2")]
for fe in fes:
    for im, nc in points:
        r = [x for x in rows if (x["frontend"], x["images"],
                                 x["connections"]) == (fe, im, nc)]
        check(len(r) == 1, f"{fe} {nc} conns/{im} images: {len(r)} rows")
        if len(r) != 1:
            continue
        r = r[0]
        check(r["status"] == "ok", f"{fe} {nc}/{im}: {r['status']} {r['note']}")
        if r["status"] != "ok":
            continue
        for a, b in (("threads", "base_threads"), ("fds", "base_fds"),
                     ("rss_kib", "base_rss_kib")):
            check(int(r[a]) > int(r[b]), f"{fe} {nc}/{im}: {a} {r[a]} not "
                  f"above {b} {r[b]}")
        check(float(r["threads_per_conn"]) > 0, f"{fe} {nc}/{im}: threads/conn")
        check(float(r["iops"] or 0) > 0, f"{fe} {nc}/{im}: no IOPS sample")
data = json.load(open(os.path.join(out, "results.json")))
check(len(data.get("rows", [])) == len(rows), "results.json rows != csv rows")
md = open(os.path.join(out, "report.md")).read()
check(md.startswith("# Cost per connection"), "report.md: no title")
for fe in fes:
    check(f"## {fe}\n\n| images | connections | threads |" in md,
          f"report.md: no table for {fe}")
    check(f"### {fe}: threads per connection by name" in md,
          f"report.md: no thread names for {fe}")
for r in data.get("rows", []):
    if r.get("status") == "ok":
        check(sum(r.get("thread_names", {}).values()) > 0,
              f"{r['frontend']} {r['connections']}/{r['images']}: no "
              f"thread names counted")
if os.environ["HAVE_GNUPLOT"] == "1":
    with open(os.path.join(out, "chart.png"), "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "chart.png is not a PNG")
if errors:
    print("\n".join("  " + e for e in errors), file=sys.stderr)
    sys.exit(1)
print(f"cost report OK: {len(rows)} points", file=sys.stderr)
PY
say "cost report in $out is well-formed"

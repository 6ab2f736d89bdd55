#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-bench-smoke: tests/bench/run --smoke (through tests/bench/both, on
# this host's platform) produces a well-formed report, and tests/bench/combine
# a well-formed combined report.
#
# Proves that the benchmark command works end to end (own sandbox cluster,
# fully written images (default features, and layering only), fio-rbd, rbdx
# over NBD in its two default completion modes (io_uring, callback), the
# built-in engine (rbdx-engine),
# qemu-nbd, rbd-nbd through tests/bench/rbd-nbd-shim.so, report generation)
# and that its outputs have the promised shape: report.md with the machine
# section, one results table per workload, the targets section and the
# built-in engine's section with its targets; results.csv with the documented header and one row per
# run; results.json that parses and matches the CSV; chart.png that really is
# a PNG.  No timing or performance assertion: the figures of a smoke run mean
# nothing.
. "${RBDX_TESTS:-$(dirname "$0")/..}/lib.sh"

requires fio nbdkit rbd ceph-mon ceph-osd gnuplot
[ -r "$RBDX_PLUGIN" ] || fail "plugin not built: $RBDX_PLUGIN"

# Through tests/bench/both, on this host's platform only: the Debian 13
# half (a root, rbdx built in it, a second smoke run) costs minutes and is
# not run here (tests/bench/README.md).  both runs tests/bench/run --smoke
# into $both/$platform and then tests/bench/combine into $both.
both="$(tmpdir)/both"
platform=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-host}")
out=$both/$platform
# The engine systems: measured when the build has rbdx-engine, else they
# must be reported as skipped.
export RBDX_ENGINE=${RBDX_ENGINE:-$RBDX_BUILD/server/rbdx-engine}
start=$SECONDS
rc=0
"$RBDX_TESTS/bench/both" --platforms "$platform" --smoke --out "$both" \
  >"$both.stdout" 2>"$both.stderr" || rc=$?
say "both --platforms $platform --smoke took $((SECONDS - start)) s (exit $rc)"
[ "$rc" -eq 77 ] && skip "tests/bench/run: a requirement is missing: $(tail -n 3 "$out/stderr.txt")"
if [ "$rc" -ne 0 ]; then
  tail -n 30 "$both.stderr" "$out/stderr.txt" >&2
  fail "tests/bench/both --smoke exited with $rc"
fi

for f in report.md results.csv results.json chart.png; do
  [ -s "$out/$f" ] || fail "$f is missing or empty"
done

# PNG magic: 89 50 4E 47 0D 0A 1A 0A.
magic=$(head -c 8 "$out/chart.png" | od -An -tx1 | tr -d ' \n')
[ "$magic" = 89504e470d0a1a0a ] || fail "chart.png is not a PNG (magic $magic)"

HAVE_RBD_NBD=$(command -v rbd-nbd >/dev/null && echo 1 || echo 0) \
HAVE_ENGINE=$([ -x "$RBDX_ENGINE" ] && echo 1 || echo 0) \
/usr/bin/python3 - "$out" <<'PY' || fail "the report is not well-formed (see above)"
import csv, json, os, re, sys

out = sys.argv[1]
errors = []
def check(cond, msg):
    if not cond:
        errors.append(msg)

workloads = ["randread-4k-qd1", "randread-4k-qd32", "randwrite-4k-qd1",
             "randwrite-4k-qd32", "randwrite-4k-qd32-layering", "read-1m-qd8",
             "write-1m-qd8"]
header = ("mode,round,seq,workload,rw,bs,total_qd,system,kind,completion,"
          "connections,jobs,qd_per_job,runtime_s,ramp_s,status,iops,bw_mib_s,"
          "lat_mean_us,lat_p99_us,clat_mean_us,clat_p99_us,ios,server_cpu_s,"
          "server_cpu_us_per_io,client_cpu_us_per_io,osd_cpu_us_per_io,"
          "total_cpu_us_per_io,server_peak_rss_mib,rss_per_conn_mib,loadavg1,"
          "started,note").split(",")

# report.md
md = open(os.path.join(out, "report.md")).read()
for section in ("## Machine", "## Method", "## Results (medians)",
                "## Targets"):
    check(section in md, f"report.md: no '{section}' section")
for item in ("| nproc | ", "| CPU model | ", "| memory (MiB) | ",
             "| kernel | ", "| ceph | ", "| nbdkit | ", "| qemu-nbd | ",
             "| fio | "):
    check(item in md, f"report.md: machine table lacks '{item.strip()}'")
for wl in workloads:
    m = re.search(r"^### " + re.escape(wl) + r"\n\n(\| system \|.*\n"
                  r"\|[-:|]+\|\n(?:\|.*\|\n)+)", md, re.M)
    check(m is not None, f"report.md: no results table for {wl}")
    if m:
        rows = m.group(1).splitlines()[2:]
        check(any(r.startswith("| fio-rbd | 1 |") for r in rows),
              f"report.md: {wl}: no fio-rbd row with figures")
        check(any(r.startswith("| rbdx-c1-") and "skipped" not in r
                  for r in rows), f"report.md: {wl}: no rbdx-c1 row")
        ncols = rows[0].count("|")
        check(all(r.count("|") == ncols for r in rows),
              f"report.md: {wl}: rows with different column counts")
tm = re.search(r"## Targets\n\n(?:\(.*\)\n\n)*(\| target \|.*\n\|[-|]+\|\n"
               r"((?:\|.*\|\n)+))", md)
check(tm is not None, "report.md: no targets table")
if tm:
    trows = tm.group(2).splitlines()
    check(len(trows) >= 10, f"report.md: only {len(trows)} target rows")
    for r in trows:
        check(re.search(r"\*\*(MET|MISSED|N/A)\*\* \|$", r) is not None,
              f"report.md: target row without a verdict: {r}")
    for t in ("4k randread QD32 IOPS", "4k randwrite QD32 IOPS",
              "4k randread QD1 mean latency", "1M seq read QD8 bandwidth",
              "1M seq write QD8 bandwidth", "IOPS vs qemu-nbd",
              "IOPS vs qsd", "server CPU per I/O", "peak RSS per connection"):
        check(t in tm.group(2), f"report.md: target '{t}' is missing")
check(re.search(r"Summary: \d+ MET, \d+ MISSED, \d+ N/A\.", md) is not None,
      "report.md: no targets summary line")

# results.csv
with open(os.path.join(out, "results.csv"), newline="") as f:
    rd = csv.reader(f)
    got = next(rd)
    rows = [dict(zip(got, r)) for r in rd]
check(got == header, f"results.csv: header is {got}")
# 7 systems x 7 workloads x 1 round, skipped runs included
check(len(rows) >= 49, f"results.csv: {len(rows)} rows, expected >= 49")
ok = [r for r in rows if r.get("status") == "ok"]
check(len(ok) >= 15, f"results.csv: only {len(ok)} successful runs")
check(not [r for r in rows if r.get("status") == "failed"],
      "results.csv: failed runs: " +
      "; ".join(r["system"] + " " + r["workload"] + ": " + r["note"]
                for r in rows if r.get("status") == "failed"))
for r in ok:
    for k in ("iops", "bw_mib_s", "lat_mean_us", "lat_p99_us", "ios",
              "server_cpu_us_per_io", "server_peak_rss_mib",
              "rss_per_conn_mib"):
        try:
            check(float(r[k]) > 0, f"results.csv: {k} <= 0 in {r['system']} "
                  f"{r['workload']}")
        except ValueError:
            errors.append(f"results.csv: {k} not a number in {r['system']} "
                          f"{r['workload']}: {r[k]!r}")
for wl in workloads:
    check(any(r["workload"] == wl and r["system"] == "fio-rbd" for r in ok),
          f"results.csv: no fio-rbd run of {wl}")
    check(any(r["workload"] == wl and r["kind"] == "rbdx" for r in ok),
          f"results.csv: no rbdx run of {wl}")
# rbd-nbd: measured wherever it is installed, else reported as skipped.
nbd_rows = [r for r in rows if r["system"] == "rbd-nbd-c1"]
check(len(nbd_rows) == len(workloads),
      f"results.csv: {len(nbd_rows)} rbd-nbd-c1 rows, expected {len(workloads)}")
if os.environ.get("HAVE_RBD_NBD") == "1":
    check(all(r["status"] == "ok" for r in nbd_rows),
          "results.csv: rbd-nbd-c1 runs not ok: " +
          "; ".join(r["note"] for r in nbd_rows if r["status"] != "ok"))
    check("## rbdx vs rbd-nbd" in md, "report.md: no 'rbdx vs rbd-nbd' section")
else:
    check(all(r["status"] == "skipped" for r in nbd_rows),
          "results.csv: rbd-nbd-c1 not skipped without rbd-nbd")
# the built-in engine: measured wherever it is built, else skipped.
eng_rows = [r for r in rows if r["kind"] == "engine"]
check({r["system"] for r in eng_rows} == {"engine-c1", "engine-c2"},
      "results.csv: engine systems run: " +
      str(sorted({r["system"] for r in eng_rows})))
if os.environ.get("HAVE_ENGINE") == "1":
    for wl in workloads:
        check(any(r["workload"] == wl and r["system"] == "engine-c1"
                  for r in ok), f"results.csv: no engine-c1 run of {wl}")
    check(any(r["system"] == "engine-c2" for r in ok),
          "results.csv: no engine-c2 run")
    em = re.search(r"## Built-in engine\n\n.*\n\n(\| workload \|.*\n"
                   r"\|[-:|]+\|\n(?:\|.*\|\n)+)", md)
    check(em is not None, "report.md: no 'Built-in engine' section with "
          "its figures table")
    et = re.search(r"### Engine targets\n\n\| target \|.*\n\|[-|]+\|\n"
                   r"((?:\|.*\|\n)+)", md)
    check(et is not None, "report.md: no engine targets table")
    if et:
        erows = et.group(1).splitlines()
        for r in erows:
            check(re.search(r"\*\*(MET|MISSED|N/A)\*\* \|$", r) is not None,
                  f"report.md: engine target row without a verdict: {r}")
        for t in ("4k randread QD32 IOPS", "4k randwrite QD32 IOPS, layering",
                  "4k randwrite QD32 IOPS, default features",
                  "4k randread QD1 mean latency", "server CPU per I/O",
                  "vs rbd-nbd"):
            check(t in et.group(1), f"report.md: engine target '{t}' is "
                  "missing")
    check(re.search(r"Engine summary: \d+ MET, \d+ MISSED, \d+ N/A\.", md)
          is not None, "report.md: no engine targets summary line")
else:
    check(all(r["status"] == "skipped" for r in eng_rows),
          "results.csv: engine runs not skipped without rbdx-engine")
# the layering image: its workload ran on an image without exclusive-lock
check("--image-feature layering" in md,
      "report.md: the layering image is not described")
modes = {r["completion"] for r in ok if r["kind"] == "rbdx"}
check(modes == {"callback", "io_uring"},
      f"results.csv: rbdx completion modes run: {sorted(modes)}")

# results.json
try:
    data = json.load(open(os.path.join(out, "results.json")))
except ValueError as e:
    errors.append(f"results.json does not parse: {e}")
    data = None
if data is not None:
    for k in ("meta", "config", "runs", "summary", "targets",
              "engine_targets", "skipped_systems"):
        check(k in data, f"results.json: no '{k}'")
    check(len(data.get("runs", [])) == len(rows),
          "results.json: runs differ from results.csv rows")
    check(data.get("meta", {}).get("nproc", 0) >= 1, "results.json: no nproc")
    check(data.get("config", {}).get("smoke") is True,
          "results.json: config.smoke is not true")
    check(all(t.get("result") in ("MET", "MISSED", "N/A")
              for t in data.get("targets", [])) and data.get("targets"),
          "results.json: bad targets")

if errors:
    print("\n".join("  " + e for e in errors), file=sys.stderr)
    sys.exit(1)
print(f"report OK: {len(rows)} runs ({len(ok)} ok)", file=sys.stderr)
PY
say "report in $out is well-formed"

# The combined report of tests/bench/combine, with this one platform.
for f in uptime-before.txt uptime-after.txt exit-status; do
  [ -s "$out/$f" ] || fail "both: $platform/$f is missing or empty"
done
/usr/bin/python3 - "$both" "$platform" <<'PY' || fail "the combined report is not well-formed (see above)"
import json, os, re, sys

top, platform = sys.argv[1:3]
errors = []
def check(cond, msg):
    if not cond:
        errors.append(msg)

md = open(os.path.join(top, "report.md")).read()
for section in ("## Platforms", "## Targets", "## Results (medians)"):
    check(section in md, f"combined report.md: no '{section}' section")
check("| load before (uptime) | " in md and "| load after (uptime) | " in md,
      "combined report.md: no load averages")
tm = re.search(r"## Targets\n\n.*\n\n(\| target \| config \| required \|.*\n"
               r"\|[-|]+\|\n((?:\|.*\|\n)+))", md)
check(tm is not None, "combined report.md: no targets table")
if tm:
    trows = tm.group(2).splitlines()
    for r in trows:
        check(re.search(r"\*\*(MET|MISSED|N/A)\*\* \|$", r) is not None,
              f"combined report.md: target row without a verdict: {r}")
    for t in ("| randread-4k-qd32 IOPS | engine-c1 | >= 0.90x fio-rbd |",
              "| randread-4k-qd32 IOPS | engine-c2 | >= 0.85x fio-rbd |",
              "| randwrite-4k-qd32 IOPS | engine-c1 | >= 0.85x fio-rbd |",
              "| randwrite-4k-qd32 IOPS | engine-c2 | >= 0.80x fio-rbd |",
              "| randread-4k-qd1 mean latency | engine-c1 | <= 1.15x fio-rbd |",
              "vs rbd-nbd | engine-cN (each N) | >= 1.00x rbd-nbd-c1 |",
              "| randread-4k-qd32 IOPS, c2 vs c1 | nbdkit path |"):
        check(t in tm.group(1), f"combined report.md: target '{t}' missing")
check(re.search(r"^- Debian 12: \d+ MET, \d+ MISSED, \d+ N/A; \d+ of the verdicts", md, re.M)
      or platform != "bookworm", "combined report.md: no summary line")
for wl in ("randread-4k-qd32", "write-1m-qd8"):
    m = re.search(r"^### " + wl + r"\n\n(\| system \|.*\n\|[-:|]+\|\n"
                  r"((?:\|.*\|\n)+))", md, re.M)
    check(m is not None, f"combined report.md: no table for {wl}")
    if m:
        check(re.search(r"^\| fio-rbd \| [0-9,.]+ \| 1\.00x \|", m.group(2),
                        re.M) is not None,
              f"combined report.md: {wl}: no fio-rbd row at 1.00x")
data = json.load(open(os.path.join(top, "combined.json")))
check([p["name"] for p in data["platforms"]] == [platform],
      "combined.json: platforms " + str([p["name"] for p in data["platforms"]]))
check(data["platforms"][0]["summary"], "combined.json: no medians")
check(data["targets"] and all(t["result"] in ("MET", "MISSED", "N/A")
                              for t in data["targets"]),
      "combined.json: bad targets")
if errors:
    print("\n".join("  " + e for e in errors), file=sys.stderr)
    sys.exit(1)
print(f"combined report OK: {len(data['targets'])} targets", file=sys.stderr)
PY
say "combined report in $both is well-formed"

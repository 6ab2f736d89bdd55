#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Medians per system of a tests/bench/run results.csv with --variant conn, sh2, sh1
# (the tables in report.md):  medians.py CSV...  (several: pooled rounds)
import csv, statistics, sys, collections
rows = [r for f in sys.argv[1:] for r in csv.DictReader(open(f))]
d = collections.defaultdict(lambda: collections.defaultdict(list))
for r in rows:
    if r["status"] != "ok": continue
    d[r["system"]]["iops"].append(float(r["iops"]))
    d[r["system"]]["cpu"].append(float(r["server_cpu_us_per_io"] or "nan"))
    d[r["system"]]["tot"].append(float(r["total_cpu_us_per_io"] or "nan"))
def med(s, k): return statistics.median(d[s][k]) if d[s][k] else float("nan")
print("| front end | conns | conn IOPS | sh2 IOPS | sh1 IOPS | sh2/conn | sh1/conn | conn CPU us/IO | sh2 CPU | sh1 CPU |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for fe, pat in (("nbdkit", "rbdx-c{}-io_uring-{}"), ("engine", "engine-c{}-{}")):
    for c in (1, 2, 4):
        n = {v: pat.format(c, v) for v in ("conn", "sh2", "sh1")}
        i = {v: med(n[v], "iops") for v in n}
        u = {v: med(n[v], "cpu") for v in n}
        print(f"| {fe} | {c} | {i['conn']:.0f} | {i['sh2']:.0f} | {i['sh1']:.0f} | {i['sh2']/i['conn']:.2f} | {i['sh1']/i['conn']:.2f} | {u['conn']:.1f} | {u['sh2']:.1f} | {u['sh1']:.1f} |")
print(f"\nfio-rbd: {med('fio-rbd','iops'):.0f} IOPS, {med('fio-rbd','cpu'):.1f} us CPU/IO; rounds: {len(d['fio-rbd']['iops'])}")
print("\nper round IOPS:")
for s in sorted(d): print(s, [round(x) for x in d[s]["iops"]])

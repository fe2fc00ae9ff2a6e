#!/usr/bin/env python3
"""ab_compare.py DIR LABEL: the table bench/ab.sh ends with.

Reads DIR/LABEL-A-*.json and DIR/LABEL-B-*.json (deepgemm-bench --json of the same rows under two
builds of the library), and prints per row (shape, dtype, layout, epilogue) the median of our time
over the rounds for A and for B, the kernels each ran, B's speed-up A/B, and cuBLAS's median over
every run of the row; then the geomean of the speed-ups and the count of rows B wins by more than
2 %, loses by more than 2 %, or ties (grouped rows too: --grouped JSON, keyed by layout, N x K,
groups and tokens). Rows missing on one side are listed, not compared. Standard
library only: it runs on the device as is.
"""
import glob
import json
import math
import os
import statistics
import sys


def load(pattern):
    rows = {}
    for path in sorted(glob.glob(pattern)):
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print(f"ab_compare: {path}: {e}", file=sys.stderr)
            continue
        for r in data.get("rows", []):
            if r.get("ours_us") is None or r.get("mismatch"):
                continue
            # Grouped rows (deepgemm-bench --grouped) have no epilogue or dtype field: their groups
            # and tokens per expert stand in the epilogue's place, cuBLAS is the per-expert loop.
            epi = r.get("epilogue") or f"G{r.get('groups')} t{r.get('tokens')}"
            key = (r["m"], r["n"], r["k"], r.get("dtype", "bf16"), r["layout"], epi)
            e = rows.setdefault(key, {"us": [], "kernel": set(), "cublas": []})
            e["us"].append(r["ours_us"])
            e["kernel"].add(r.get("kernel", ""))
            if r.get("cublas_us") or r.get("cublas_loop_us"):
                e["cublas"].append(r.get("cublas_us") or r.get("cublas_loop_us"))
    return rows


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    d, label = sys.argv[1], sys.argv[2]
    a = load(os.path.join(d, f"{label}-A-*.json"))
    b = load(os.path.join(d, f"{label}-B-*.json"))
    print(f"{'shape':>22} {'dt':>4} {'lay':>3} {'A us':>9} {'B us':>9} {'A/B':>6} {'cuBLAS':>9}  kernels (A | B)")
    ratios = []
    for key in sorted(set(a) | set(b)):
        m, n, k, dt, lay, epi = key
        shape = f"{m}x{n}x{k}" + ("" if epi == "plain" else f" {epi}")
        if key not in a or key not in b:
            print(f"{shape:>22} {dt:>4} {lay:>3}  only in {'A' if key in a else 'B'}")
            continue
        ma, mb = statistics.median(a[key]["us"]), statistics.median(b[key]["us"])
        cub = a[key]["cublas"] + b[key]["cublas"]
        ratios.append(ma / mb)
        ka, kb = ",".join(sorted(a[key]["kernel"])), ",".join(sorted(b[key]["kernel"]))
        print(f"{shape:>22} {dt:>4} {lay:>3} {ma:9.2f} {mb:9.2f} {ma / mb:6.3f} "
              f"{statistics.median(cub) if cub else float('nan'):9.2f}  {ka}{'' if ka == kb else ' | ' + kb}")
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        wins = sum(r > 1.02 for r in ratios)
        losses = sum(r < 0.98 for r in ratios)
        print(f"{label}: {len(ratios)} rows, B speed-up geomean {geo:.4f}, "
              f"B faster > 2 %: {wins}, slower > 2 %: {losses}, within 2 %: {len(ratios) - wins - losses}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

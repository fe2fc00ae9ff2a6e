#!/usr/bin/env python3
"""The tensor-pipe cap of a per-expert cuBLAS loop from grouped_loop_cap.sh's ncu CSVs.

    python3 bench/probes/grouped_loop_cap.py G:FILE.csv ...

Each CSV (ncu --csv --page raw) holds one row per profiled cuBLAS launch: its duration and its
tensor pipe's active share of elapsed cycles. Launches are taken in order, G to a loop; the first
loop (the verification run) is dropped. Per later loop: the duration-weighted active share and the
cap 1 / share; the row's cap is the loosest (largest) of them. Our own kernels (dgemm_*) are not
in the CSV (grouped_loop_cap.sh profiles cuBLAS's kernel names only); should any slip in, they
are skipped.
"""
import csv
import sys


def launches(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(line for line in f if not line.startswith("==")))
    # The benchmark's own output comes first: the table starts at the header row ("ID", ...).
    start = next((i for i, r in enumerate(rows) if r[:1] == ["ID"]), None)
    if start is None or len(rows) < start + 3:
        return []
    head = rows[start]
    out = []
    for r in rows[start + 2:]:  # the row after the header holds the units
        d = dict(zip(head, r))
        name = d.get("Kernel Name", "")
        if name.startswith("dgemm"):
            continue
        dur = next((d[c] for c in head if c.startswith("gpu__time_duration")), "")
        act = [d[c] for c in head if c.startswith("sm__pipe_tensor_op")]
        try:
            dur = float(dur.replace(",", ""))
            share = max(float(a.replace(",", "")) for a in act if a) / 100.0
        except ValueError:
            continue
        out.append((name, dur, share))
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("%-44s %5s %9s %8s %6s" % ("row", "loop", "us", "active", "cap"))
    for arg in sys.argv[1:]:
        g, path = arg.split(":", 1)
        g = int(g)
        ls = launches(path)
        row = path.rsplit("/", 1)[-1].replace(".csv", "")
        if len(ls) < 2 * g:
            print("%-44s only %d launches (need %d): see the .log beside it" % (row, len(ls), 2 * g))
            continue
        caps = []
        for i in range(1, len(ls) // g):
            loop = ls[i * g:(i + 1) * g]
            total = sum(d for _, d, _ in loop)
            share = sum(d * s for _, d, s in loop) / total
            caps.append(1.0 / share)
            print("%-44s %5d %9.1f %7.1f%% %6.3f" % (row, i, total / 1e3, 100 * share, 1.0 / share))
        print("%-44s  cap %.3f (the loosest of %d loops); kernels: %s" %
              (row, max(caps), len(caps), ", ".join(sorted({n[:40] for n, _, _ in ls}))))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""forced_compare.py DIR [--json OUT] [--set NAME]: the table bench/forced.sh ends with.

Reads DIR/<problem>/<label>-<round>.json (deepgemm-bench --json, one problem per run; label
"auto" for the planner's choice, else a forced configuration) and prints per problem the median
over the rounds of our time for the planner's choice and for every forced configuration (fastest
first, with its speed-up over the choice), and cuBLAS's median (the faster of cublasGemmEx and
cuBLASLt). With --json, writes one bench JSON whose rows are the planner's runs with every
contender's median under `candidates` and the fastest as `best_kernel` / `best_us`: the form
bench/offline_regret.py replays and bench/report/render.py draws. Runs that failed or whose
result mismatched are left out. Standard library only: it runs on the device as is.
`--self-test` checks the merge on made-up runs and exits.
"""
import argparse
import glob
import json
import os
import statistics
import sys
import tempfile


def load(directory):
    """{problem key: {"auto": [rows], "runs": {kernel: [us]}, "cublas": [us]}} and the first run's header."""
    problems = {}
    header = None
    for path in sorted(glob.glob(os.path.join(directory, "*", "*.json"))):
        label = os.path.basename(path)[: -len(".json")].rsplit("-", 1)[0]
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print(f"forced_compare: {path}: {e}", file=sys.stderr)
            continue
        if header is None:
            header = {k: v for k, v in data.items() if k != "rows"}
        for r in data.get("rows", []):
            if r.get("ours_us") is None or r.get("mismatch") or r.get("error"):
                continue
            key = (r["m"], r["n"], r["k"], r["dtype"], r["layout"], r["epilogue"])
            p = problems.setdefault(key, {"auto": [], "runs": {}, "cublas": []})
            if label == "auto":
                p["auto"].append(r)
            p["runs"].setdefault(r.get("kernel", label), []).append(r["ours_us"])
            ref = [r[x] for x in ("cublas_us", "cublaslt_us") if r.get(x)]
            if ref:
                p["cublas"].append(min(ref))
    return problems, header


def merge(problems, header, set_name):
    rows = []
    for key, p in sorted(problems.items()):
        if not p["auto"]:
            continue
        row = dict(p["auto"][0])
        row["set"] = set_name
        row["ours_us"] = statistics.median(a["ours_us"] for a in p["auto"])
        if p["cublas"]:
            ref = statistics.median(p["cublas"])
            row["ratio"] = ref / row["ours_us"]
        row["candidates"] = [{"kernel": k, "us": statistics.median(v)} for k, v in sorted(p["runs"].items())]
        best = min(row["candidates"], key=lambda c: c["us"])
        row["best_kernel"], row["best_us"] = best["kernel"], best["us"]
        rows.append(row)
    out = dict(header or {})
    out["rows"] = rows
    return out


def table(merged, problems):
    lines = []
    for row in merged["rows"]:
        key = (row["m"], row["n"], row["k"], row["dtype"], row["layout"], row["epilogue"])
        ref = statistics.median(problems[key]["cublas"]) if problems[key]["cublas"] else float("nan")
        auto = row["ours_us"]
        others = sorted((c["us"], c["kernel"]) for c in row["candidates"] if c["kernel"] != row.get("kernel"))
        shape = f"{row['m']}x{row['n']}x{row['k']}"
        text = f"{shape:>18s} {row['dtype']:>4s} {row['layout']}  cuBLAS {ref:8.2f}  auto {auto:8.2f} ({row.get('kernel', '')})"
        for us, kernel in others:
            text += f"  {kernel} {us:.2f} ({auto / us:.3f})"
        lines.append(text)
    return lines


def self_test():
    with tempfile.TemporaryDirectory() as d:
        def run(tag, label, rnd, us, kernel, mismatch=False):
            os.makedirs(os.path.join(d, tag), exist_ok=True)
            row = {"m": 200, "n": 8192, "k": 8192, "dtype": "bf16", "layout": "tn", "epilogue": "plain",
                   "ours_us": us, "kernel": kernel, "cublas_us": 40.0, "mismatch": mismatch}
            with open(os.path.join(d, tag, f"{label}-{rnd}.json"), "w") as f:
                json.dump({"device": "test", "rows": [row]}, f)
        tag = "200.8192.8192.bf16.tn"
        run(tag, "auto", 1, 69.0, "sm90_128x128x64_s6_t384_p")
        run(tag, "auto", 2, 68.0, "sm90_128x128x64_s6_t384_p")
        run(tag, "sm90_64x200x64_s6_t256_swap_p", 1, 44.0, "sm90_64x200x64_s6_t256_swap_p")
        run(tag, "sm90_64x200x64_s6_t256_swap_p", 2, 45.0, "sm90_64x200x64_s6_t256_swap_p")
        run(tag, "sm90_128x200x64_s5_t384_swap_p", 1, 1.0, "sm90_128x200x64_s5_t384_swap_p", mismatch=True)
        problems, header = load(d)
        merged = merge(problems, header, "t")
        assert len(merged["rows"]) == 1, merged
        row = merged["rows"][0]
        assert row["ours_us"] == 68.5 and row["best_kernel"] == "sm90_64x200x64_s6_t256_swap_p", row
        assert row["best_us"] == 44.5 and abs(row["ratio"] - 40.0 / 68.5) < 1e-12, row
        assert {c["kernel"] for c in row["candidates"]} == {"sm90_128x128x64_s6_t384_p", "sm90_64x200x64_s6_t256_swap_p"}
        assert "(1.539)" in table(merged, problems)[0], table(merged, problems)
    print("forced_compare: self-test passed")


def main():
    ap = argparse.ArgumentParser(description="Median times of the planner's choice and forced configurations.")
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--json", help="write the merged rows (with candidates) here")
    ap.add_argument("--set", default="forced", help="the rows' set name in the JSON (default forced)")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return 0
    if not a.dir:
        ap.error("DIR is required")
    problems, header = load(a.dir)
    merged = merge(problems, header, a.set)
    for line in table(merged, problems):
        print(line)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(merged, f, indent=1)
        print(f"forced_compare: {len(merged['rows'])} rows -> {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

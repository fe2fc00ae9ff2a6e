#!/usr/bin/env python3
"""Offline regret of the current planner on the saved grouped (mixture-of-experts) measurements.

deepgemm-bench --grouped times one kernel a process (the planner's choice, or --force-kernel's),
so a grouped row's contenders are the rows of one device call (files named
h200-DATE-callN-* or -runN-*) with the same problem: layout, dtype, N x K, groups and the same
expert counts. For each such row this asks the planner of this build what it would choose now
(`deepgemm plan --json`, with the problem's m and, for masked rows, `--group-expected-m` = the
mean tokens per expert as deepgemm-bench --grouped passes it unless --no-hint) and looks that
kernel up among the call's measurements: the choice, its time, the fastest measured and the
regret (choice / fastest - 1), then the geometric mean per layout over the rows whose choice was
measured, and the rows whose choice was not (to measure next).

    python3 bench/grouped_regret.py [--deepgemm build/src/tools/deepgemm] [--arch h200]
                                    [--no-hint] [--json OUT] [--max-geomean PCT] [FILE.json ...]

With no files, every bench/results/grouped/*.json is read (grouped_torch.py's files are not
deepgemm-bench rows and are skipped). Exit status: 0; 1 when --max-geomean is given and a layout
and dtype's geomean regret over 4 or more measured rows exceeds it (CTest's guard of the grouped
choices; fewer rows are one or two runs' noise); 2 usage (a missing
tool or file) or a row the planner could not plan.
"""
import argparse
import collections
import glob
import json
import math
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CALL = re.compile(r"(\d{4}-\d{2}-\d{2})-((?:[a-z]\d+-)?(?:call|run)[0-9a-z]+)")


def call_of(path):
    m = CALL.search(os.path.basename(path))
    return f"{m.group(1)}-{m.group(2)}" if m else os.path.basename(path)


def load(files):
    """{(call, layout, dtype, n, k, groups, tokens, counts): {kernel: us}} and each row's m."""
    rows, m_of = collections.defaultdict(dict), {}
    for f in files:
        with open(f) as fh:
            doc = json.load(fh)
        if "torch" in doc or not isinstance(doc.get("rows"), list):
            continue
        for r in doc["rows"]:
            if not r.get("ours_us") or not r.get("kernel") or r.get("mismatch") or r.get("error"):
                continue
            key = (call_of(f), r["layout"], r.get("dtype", "bf16"), r["n"], r["k"], len(r["counts"]), r["tokens"],
                   tuple(r["counts"]))
            us = rows[key].get(r["kernel"])
            rows[key][r["kernel"]] = min(us, r["ours_us"]) if us else r["ours_us"]
            m_of[key] = r["m"]
    return rows, m_of


def plan_args(key, m, hint):
    _, layout, dtype, n, k, groups, tokens, _ = key
    args = ["--m", str(m), "--n", str(n), "--k", str(k), "--trans-b", "--groups", str(groups),
            "--group-layout", layout]
    if layout == "contiguous":
        args += ["--group-align", "128" if m % 128 == 0 else "1"]
    elif hint:
        args += ["--group-expected-m", str(min(tokens, m))]
    if dtype in ("fp8t", "fp8b"):
        args += ["--dtype", "e4m3", "--out-dtype", "bf16"]
        args += ["--a-scale", "tensor", "--b-scale", "tensor"] if dtype == "fp8t" else \
                ["--a-scale", "vec128", "--b-scale", "blk128"]
    return args


def choose(tool, arch, args):
    out = subprocess.run([tool, "plan", "--arch", arch, "--json"] + args, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(" ".join(args) + ": " + " ".join((out.stderr or out.stdout).strip().splitlines()[-1:]))
    d = json.loads(out.stdout)
    if not d.get("chosen"):
        raise RuntimeError(" ".join(args) + ": no plan: " + str(d.get("why", "")))
    return d["chosen"]["config"]["name"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--deepgemm", default=os.path.join(HERE, "..", "build", "src", "tools", "deepgemm"))
    ap.add_argument("--arch", default="h200," + os.path.join(HERE, "results", "h200-detected-arch.yaml"))
    ap.add_argument("--no-hint", action="store_true", help="masked rows planned without expected_m")
    ap.add_argument("--json", help="write the per-row results here")
    ap.add_argument("--max-geomean", type=float,
                    help="exit 1 if a layout and dtype's geomean regret over 4+ measured rows exceeds PCT %%")
    o = ap.parse_args()
    if not os.access(o.deepgemm, os.X_OK):
        sys.exit(f"grouped_regret: --deepgemm {o.deepgemm}: not an executable (build the deepgemm tool first)")
    files = o.files or sorted(glob.glob(os.path.join(HERE, "results", "grouped", "*.json")))
    for f in files:
        if not os.path.isfile(f):
            print(f"grouped_regret: {f}: no such file", file=sys.stderr)
            sys.exit(2)
    rows, m_of = load(files)
    results = []
    for key, times in sorted(rows.items()):
        if len(times) < 2:
            continue
        try:
            chosen = choose(o.deepgemm, o.arch, plan_args(key, m_of[key], not o.no_hint))
        except RuntimeError as e:
            print(f"grouped_regret: deepgemm plan failed: {e}", file=sys.stderr)
            return 2
        best = min(times, key=times.get)
        us = times.get(chosen)
        results.append({"call": key[0], "layout": key[1], "dtype": key[2], "n": key[3], "k": key[4], "groups": key[5],
                        "tokens": key[6], "m": m_of[key], "kernel": chosen, "kernel_us": us, "best_kernel": best,
                        "best_us": times[best], "regret": us / times[best] - 1 if us else None, "measured": times})
    print(f"grouped offline regret of {o.deepgemm} (--arch {o.arch}{', no hint' if o.no_hint else ''}): "
          f"{len(results)} rows with 2+ kernels measured in one call")
    print(f'{"call":18} {"layout":10} {"type":5} {"NxK":10} {"G":>2} {"tok":>4} {"choice now":34} {"us":>8} '
          f'{"fastest measured":34} {"us":>8} {"regret":>7}')
    for r in results:
        us = f'{r["kernel_us"]:8.1f}' if r["kernel_us"] else "       -"
        reg = f'{100 * r["regret"]:6.1f}%' if r["regret"] is not None else "  unmeas"
        print(f'{r["call"][:18]:18} {r["layout"]:10} {r["dtype"]:5} {r["n"]}x{r["k"]:<5} {r["groups"]:2} {r["tokens"]:4} '
              f'{str(r["kernel"]):34} {us} {r["best_kernel"]:34} {r["best_us"]:8.1f} {reg}')
    print("\nper layout and dtype: geomean regret over the rows whose choice was measured")
    by = collections.defaultdict(list)
    for r in results:
        by[(r["layout"], r["dtype"])].append(r)
    over = []
    for (layout, dtype), rs in sorted(by.items()):
        meas = [r["regret"] for r in rs if r["regret"] is not None]
        g = math.exp(sum(math.log1p(x) for x in meas) / len(meas)) - 1 if meas else float("nan")
        print(f"  {layout:10} {dtype:5} rows {len(rs):3}  measured {len(meas):3}  geomean {100 * g:6.2f}%  "
              f"worst {100 * max(meas, default=float('nan')):6.1f}%")
        if o.max_geomean is not None and len(meas) >= 4 and 100 * g > o.max_geomean:
            over.append(f"{layout} {dtype} {100 * g:.2f}%")
    if o.json:
        with open(o.json, "w") as fh:
            json.dump({"tool": o.deepgemm, "arch": o.arch, "hint": not o.no_hint, "rows": results}, fh, indent=1)
    if over:
        print(f"grouped_regret: geomean regret above {o.max_geomean} %: {', '.join(over)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

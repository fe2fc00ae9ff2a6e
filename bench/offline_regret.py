#!/usr/bin/env python3
"""Offline regret of the current planner against saved device measurements (no GPU needed).

deepgemm-bench --candidates K times the planner's choice and its next K candidates side by side,
in one process, and saves every time in bench.json (`kernel` + `ours_us`, `candidates`). Those rows
keep their value after the model changes: this script asks the planner of this build what it
would choose now (`deepgemm plan --arch h200 --json`, one call per row) and looks that kernel up
among the row's measurements. Per row: the choice, whether it was measured, its time, the best
measured and the regret (choice / best - 1); per set and dtype: the geometric-mean regret over the
rows whose choice was measured, and the rows whose choice was not (to measure next, with the
bench command that would time them side by side).

    python3 bench/offline_regret.py [--deepgemm build/src/tools/deepgemm] [--arch h200]
                                    [--json OUT] [--changed-from BEFORE.json] [FILE.json ...]

`--arch h200,bench/results/h200-detected-arch.yaml` replays with the description the device
itself detects (boost-clock peaks), which is what the benchmarks' plans used; arch/h200.yaml
(the default) has the datasheet's. With no files, every saved run in bench/results/ is read. A row (set, shape, epilogue, dtype,
layout) that several runs measured is taken from the latest run that timed two kernels or more
for it (the kernels change between runs), else from the latest run: absolute times drift ~8 %
between runs, so times are compared within one row of one run only. Exit status: 0; 2 usage (a missing tool or file).
"""
import argparse
import concurrent.futures
import glob
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def plan_args(row):
    """deepgemm plan flags for a bench row (as bench_main.cpp's make_plan builds the problem)."""
    dtype = row["dtype"]
    args = ["--m", str(row["m"]), "--n", str(row["n"]), "--k", str(row["k"])]
    if dtype in ("bf16", "f16"):
        args += ["--dtype", dtype]
    elif dtype == "i8":
        args += ["--dtype", "i8"]
    elif dtype in ("fp8t", "fp8b", "fp8q"):
        args += ["--dtype", "e4m3"]
        args += ["--a-scale", "tensor", "--b-scale", "tensor"] if dtype == "fp8t" else \
                ["--a-scale", "vec128", "--b-scale", "blk128"]
        # fp8q: fp8b with an e4m3 D quantized in 1 x 128 blocks (its C type stays bf16)
        args += ["--out-dtype", "e4m3", "--c-dtype", "bf16", "--d-scale", "vec128"] if dtype == "fp8q" else \
                ["--out-dtype", "bf16"]
    else:
        return None
    if row["layout"][0] == "t":  # tn, tt: B stored n x k
        args.append("--trans-b")
    if row["layout"][1:] == "t":  # tt, nt: A stored k x m
        args.append("--trans-a")
    if row.get("epilogue") == "bias_gelu":
        args += ["--bias", "col", "--bias-dtype", dtype, "--act", "gelu_tanh"]
    return args


def row_key(row):
    return (row["set"], row["m"], row["n"], row["k"], row.get("epilogue", "plain"), row["dtype"], row["layout"])


def measured(row):
    """Every kernel the row timed in one process: the choice of that day and its candidates."""
    times = {}
    if row.get("kernel") and row.get("ours_us"):
        times[row["kernel"]] = row["ours_us"]
    for c in row.get("candidates") or []:
        if c.get("us"):
            times[c["kernel"]] = c["us"]
    if row.get("runner_up_kernel") and row.get("runner_up_us"):
        times[row["runner_up_kernel"]] = row["runner_up_us"]
    return times


def load_rows(files):
    best = {}
    for f in files:
        with open(f) as fh:
            doc = json.load(fh)
        if doc.get("mode") == "grouped" or "rows" not in doc:
            continue
        run = os.path.basename(f)
        for row in doc["rows"]:
            if not row.get("set") or row.get("error") or row.get("unsupported"):
                continue
            times = measured(row)
            if not times:
                continue
            rank = (len(times) >= 2, doc.get("date", ""))
            k = row_key(row)
            if k not in best or rank > best[k][0]:
                best[k] = (rank, row, times, run)
    return [v[1:] for v in best.values()]


def plan(tool, arch, row):
    args = plan_args(row)
    if args is None:
        return None, "no deepgemm plan flags for dtype " + row["dtype"]
    out = subprocess.run([tool, "plan", "--arch", arch, "--json"] + args, capture_output=True, text=True)
    if out.returncode != 0:
        return None, (out.stderr or out.stdout).strip().splitlines()[-1:]
    d = json.loads(out.stdout)
    if not d.get("chosen"):
        return None, d.get("why", "no plan")
    ranked = [d["chosen"]] + d.get("runners_up", [])
    return {"kernel": d["chosen"]["config"]["name"], "predicted_us": d["chosen"]["predicted_us"],
            "ranked": [(c["config"]["name"], c["predicted_us"]) for c in ranked]}, None


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", help="bench.json files (default: bench/results/*.json)")
    ap.add_argument("--deepgemm", default=os.path.join(HERE, "..", "build", "src", "tools", "deepgemm"))
    ap.add_argument("--arch", default="h200")
    ap.add_argument("--json", help="write the per-row results here")
    ap.add_argument("--changed-from", help="a --json of an earlier build: list the rows whose choice changed")
    ap.add_argument("--all-rows", action="store_true", help="print rows with one measurement too")
    o = ap.parse_args()
    if not os.access(o.deepgemm, os.X_OK):
        sys.exit(f"offline_regret: --deepgemm {o.deepgemm}: not an executable (build the deepgemm tool first)")
    files = o.files or sorted(glob.glob(os.path.join(HERE, "results", "*.json")))
    for f in files:
        if not os.path.isfile(f):
            print(f"offline_regret: {f}: no such file", file=sys.stderr)
            sys.exit(2)
    rows = load_rows(files)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        plans = list(pool.map(lambda r: plan(o.deepgemm, o.arch, r[0]), rows))

    results = []
    for (row, times, run), (p, err) in zip(rows, plans):
        best_k = min(times, key=times.get)
        r = {"set": row["set"], "dtype": row["dtype"], "layout": row["layout"], "epilogue": row.get("epilogue", "plain"),
             "m": row["m"], "n": row["n"], "k": row["k"], "run": run, "measured": times, "then_chosen": row["kernel"],
             "best_kernel": best_k, "best_us": times[best_k], "error": err}
        if p:
            r["kernel"], r["predicted_us"] = p["kernel"], p["predicted_us"]
            r["kernel_us"] = times.get(p["kernel"])
            r["regret"] = r["kernel_us"] / times[best_k] - 1 if r["kernel_us"] else None
        results.append(r)
    results.sort(key=lambda r: (r["set"], r["dtype"], r["layout"], r["m"], r["n"], r["k"], r["epilogue"]))

    def shape(r):
        return f'{r["m"]}x{r["n"]}x{r["k"]}' + ("+bg" if r["epilogue"] != "plain" else "")

    print(f"offline regret of {o.deepgemm} (--arch {o.arch}) over {len(results)} rows of {len(files)} files")
    print(f'{"set":8} {"type":5} {"lay":3} {"shape":20} {"choice now":36} {"us":>8} {"best measured":36} {"best_us":>8} {"regret":>7}')
    for r in results:
        if len(r["measured"]) < 2 and not o.all_rows:
            continue
        us = f'{r["kernel_us"]:8.2f}' if r.get("kernel_us") else "       -"
        reg = f'{100 * r["regret"]:6.1f}%' if r.get("regret") is not None else "  unmeas"
        print(f'{r["set"]:8} {r["dtype"]:5} {r["layout"]:3} {shape(r):20} {r.get("kernel", "ERROR"):36} {us} '
              f'{r["best_kernel"]:36} {r["best_us"]:8.2f} {reg}')

    print("\nper set (rows with >= 2 kernels measured): geomean regret over the rows whose choice was measured")
    print(f'{"set":8} {"type":5} {"rows":>4} {"meas":>4} {"geomean":>8} {"worst":>7}  {"unmeas":>5}  runs')
    groups = {}
    for r in results:
        groups.setdefault((r["set"], r["dtype"]), []).append(r)
    summary = {}
    for (s, d), rs in sorted(groups.items()):
        multi = [r for r in rs if len(r["measured"]) >= 2]
        if not multi:
            continue
        meas = [r for r in multi if r.get("regret") is not None]
        g = geomean([1 + r["regret"] for r in meas]) - 1 if meas else float("nan")
        worst = max((r["regret"] for r in meas), default=float("nan"))
        runs = sorted({r["run"].replace(".json", "") for r in multi})
        summary[f"{s} {d}"] = {"rows": len(multi), "measured": len(meas), "geomean_regret": g, "worst": worst, "runs": runs}
        print(f"{s:8} {d:5} {len(multi):4} {len(meas):4} {100 * g:7.2f}% {100 * worst:6.1f}%  {len(multi) - len(meas):5}"
              f"  {', '.join(runs)}")

    unmeasured = [r for r in results if r.get("kernel") and r.get("kernel_us") is None]
    print(f"\nchoice not measured in its row ({len(unmeasured)} rows; the measured kernels of that row in brackets):")
    for r in unmeasured:
        print(f'  {r["set"]:8} {r["dtype"]:5} {r["layout"]:3} {shape(r):20} {r["kernel"]:36} '
              f'[{r["run"]}: {", ".join(f"{k} {v:.2f}" for k, v in sorted(r["measured"].items(), key=lambda kv: kv[1]))}]')
    errors = [r for r in results if r["error"]]
    for r in errors:
        print(f'  no plan: {r["set"]} {r["dtype"]} {shape(r)}: {r["error"]}')

    if o.changed_from:
        with open(o.changed_from) as fh:
            before = {tuple(x["key"]): x for x in json.load(fh)["rows"]}
        changed = []
        for r in results:
            b = before.get(tuple(row_key(r)))
            if b and b.get("kernel") != r.get("kernel"):
                changed.append((r, b))
        print(f"\nchoice changed against {o.changed_from} ({len(changed)} rows): before -> now (measured us, or -)")
        for r, b in changed:
            def t(k):
                return f'{r["measured"][k]:.2f}' if k in r["measured"] else "-"
            print(f'  {r["set"]:8} {r["dtype"]:5} {r["layout"]:3} {shape(r):20} {b.get("kernel")} ({t(b.get("kernel"))}) -> '
                  f'{r.get("kernel")} ({t(r.get("kernel"))})  best {r["best_kernel"]} {r["best_us"]:.2f}')

    if o.json:
        for r in results:
            r["key"] = list(row_key(r))
        with open(o.json, "w") as fh:
            json.dump({"tool": o.deepgemm, "arch": o.arch, "files": files, "summary": summary, "rows": results}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""forced_jobs.py: the JOBS lines bench/forced.sh takes, from a shape file and a name pattern.

For every shape of --shapes ('M N K [epilogue]' lines, as bench/shapes/*.txt), every --dtype and
--layout, asks the planner of this build (`deepgemm plan --arch ARCH --all`, no GPU needed) for its
candidates, feasible and measuring-only, and keeps the configuration names that match --match (a
regular expression; `{w}` in it stands for M rounded up to wgmma's N step, 8 or 16 for i8, e.g.
'sm90_(64|128)x{w}x'). Prints
'M N K DTYPE LAYOUT NAME ...' per problem; a problem none of whose names match is printed too, so
that the planner's choice is timed anyway. Names depend on the machine description (stage counts
follow shared memory): pass the one the device will plan with, e.g. --arch
h200,bench/results/h200-detected-arch.yaml.

    python3 bench/forced_jobs.py --shapes bench/shapes/odd-m.txt --dtype bf16 --layout tn,nn \\
        --match 'sm90_(64|128)x{w}x64_s[0-9]+_t[0-9]+_swap_p$' > jobs.txt
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# deepgemm-bench's dtype names as `deepgemm plan` flags (bench_main.cpp's quantized rows).
DTYPE_FLAGS = {
    "bf16": ["--dtype", "bf16"],
    "f16": ["--dtype", "f16"],
    "fp8t": ["--dtype", "e4m3", "--out-dtype", "bf16", "--a-scale", "tensor", "--b-scale", "tensor"],
    "fp8b": ["--dtype", "e4m3", "--out-dtype", "bf16", "--a-scale", "vec128", "--b-scale", "blk128"],
    "fp8q": ["--dtype", "e4m3", "--out-dtype", "e4m3", "--a-scale", "vec128", "--b-scale", "blk128", "--d-scale", "vec128"],
    "i8": ["--dtype", "i8"],
}
LAYOUT_FLAGS = {"tn": ["--trans-b"], "nn": [], "tt": ["--trans-a", "--trans-b"], "nt": ["--trans-a"]}


def shapes(path):
    with open(path) as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if len(fields) >= 3:
                yield int(fields[0]), int(fields[1]), int(fields[2])


def names(tool, arch, m, n, k, dtype, layout):
    cmd = [tool, "plan", "--arch", arch, "--m", str(m), "--n", str(n), "--k", str(k), "--all"]
    cmd += DTYPE_FLAGS[dtype] + LAYOUT_FLAGS[layout]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    found = []
    for line in out.splitlines():
        fields = line.split()
        # the ranked table ("  1  NAME  us ...") and the measuring-only list ("  NAME  kept for ...")
        for f in fields[:2]:
            if f.startswith(("sm90_", "sm80_", "small_m_")) and f not in found:
                found.append(f)
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--dtype", default="bf16", help="comma-separated: " + " ".join(DTYPE_FLAGS))
    ap.add_argument("--layout", default="tn", help="comma-separated: tn nn tt nt")
    ap.add_argument("--match", required=True, help="regular expression over configuration names; {w} = M rounded up to 8 (16 for i8)")
    ap.add_argument("--arch", default="h200")
    ap.add_argument("--deepgemm", default=os.path.join(HERE, "..", "build", "src", "tools", "deepgemm"))
    a = ap.parse_args()
    if not os.path.exists(a.deepgemm):
        print(f"forced_jobs: no deepgemm tool at {a.deepgemm} (--deepgemm)", file=sys.stderr)
        return 2
    for dtype in a.dtype.split(","):
        if dtype not in DTYPE_FLAGS:
            print(f"forced_jobs: --dtype {dtype}: not one of {' '.join(DTYPE_FLAGS)}", file=sys.stderr)
            return 2
    for layout in a.layout.split(","):
        if layout not in LAYOUT_FLAGS:
            print(f"forced_jobs: --layout {layout}: not one of tn nn tt nt", file=sys.stderr)
            return 2
    for m, n, k in shapes(a.shapes):
        for dtype in a.dtype.split(","):
            step = 16 if dtype == "i8" else 8
            pattern = re.compile(a.match.replace("{w}", str((m + step - 1) // step * step)))
            for layout in a.layout.split(","):
                picked = [x for x in names(a.deepgemm, a.arch, m, n, k, dtype, layout) if pattern.search(x)]
                print(" ".join([str(m), str(n), str(k), dtype, layout] + picked))
    return 0


if __name__ == "__main__":
    sys.exit(main())

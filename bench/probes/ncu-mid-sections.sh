#!/usr/bin/env bash
# ncu-mid-sections.sh STAGE (on the device: run(command="bash bench/probes/ncu-mid-sections.sh STAGE", carry=[STAGE]))
# ncu's SpeedOfLight, WarpStateStats, ComputeWorkload, MemoryWorkload, LaunchStats and Occupancy
# sections of the kernels matching NCU_KERNELS (default our sm90 GEMM; "nvjet" for cuBLAS's) in
# deepgemm-bench runs of NCU_SHAPES ("M N K;...", default three mid rows; bf16 tn), launches NCU_SKIP
# (default 6) on, four of them; prints a one-line digest per launch, the CSVs land in OUT.
# Session 16 calls 5-6 (H100): ours (the default) and cuBLAS's (NCU_KERNELS=nvjet NCU_SKIP=2) at
# 1024x1536x4096, 1000^3 and 1024x1024x4096.
S=$(cd "${1:?usage: ncu-mid-sections.sh STAGE}" && pwd)
source "$(dirname "$0")/../device_call.sh"
IFS=';' read -ra shapes <<<"${NCU_SHAPES:-1024 1536 4096;1000 1000 1000;1024 1024 4096}"
for shape in "${shapes[@]}"; do
  read -r m n k <<<"$shape"
  (( $(left) < 60 )) && break
  timeout $(lim 110) ncu --clock-control none -k regex:"${NCU_KERNELS:-dgemm_sm90_gemm}" --launch-skip "${NCU_SKIP:-6}" --launch-count 4 \
    --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section LaunchStats --section Occupancy --csv \
    $S/bin/deepgemm-bench --m $m --n $n --k $k --layout tn --dtype bf16 --no-lt --reps 2 > $OUT/ncu-$m-$n-$k.csv 2> $OUT/ncu-$m-$n-$k.err
  echo "ncu $shape rc=$? lines $(wc -l < $OUT/ncu-$m-$n-$k.csv)"
  python3 - $OUT/ncu-$m-$n-$k.csv <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1], errors="replace")) if len(r) > 12]
if not rows: sys.exit(print("no rows"))
h = rows[0]; ki = h.index("Kernel Name"); mi = h.index("Metric Name"); vi = h.index("Metric Value"); ii = h.index("ID")
want = ["Duration", "Compute (SM) Throughput", "Memory Throughput", "L2 Hit Rate", "L1/TEX Hit Rate", "DRAM Throughput",
        "Executed Ipc Active", "Issue Slots Busy", "Warp Cycles Per Issued Instruction", "Achieved Occupancy",
        "Registers Per Thread", "Dynamic Shared Memory Per Block", "Grid Size", "Block Size", "Cluster Size"]
seen = collections.OrderedDict()
for r in rows[1:]:
    key = (r[ii], r[ki][:60])
    seen.setdefault(key, {})[r[mi]] = r[vi]
for (i, k), m in seen.items():
    print(i, k, "|", "; ".join(f"{w}={m[w]}" for w in want if w in m))
PY
done
echo "total $(( $(date +%s) - T0 ))s"

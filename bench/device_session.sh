#!/usr/bin/env bash
# device_session.sh STAGE   (on the device: run(command="bash bench/device_session.sh STAGE", carry=[STAGE]))
#
# The usual first device call of a session in one command, inside BUDGET seconds (default 570):
#   1. the sm90 GPU tests (test_sm90_gemm, test_sm90_8bit_gemm, test_grouped_gemm; SESSION_TESTS="..."
#      names others, "" none) on this build;
#   2. on an H200 only (unless SESSION_REFRESH=0): the ledger rows that move most often, the decode
#      and mid sets (bf16, f16, tn, nn) and bench/grouped_torch.py (issue 14, bf16), as
#      refresh-decode-mid.json / grouped_torch*.json for bench/results (bench/TARGETS.md counts only
#      H200 runs);
#   3. SESSION_AB_BASE=FOLDER (a baseline libdeepgemm.so.1 inside STAGE, e.g. STAGE/lib-base): an A/B
#      of it (A) against this build, STAGE/lib (B), with bench/ab.sh over SESSION_AB_SHAPES (default
#      bench/shapes/fixed-cost.txt), bf16 tn, 2 rounds (SESSION_AB_ROUNDS): > 1 = this build faster;
#   4. SESSION_FORCED=JOBS: bench/forced.sh over a jobs file (2 rounds);
#   5. SESSION_NCU="M N K LAYOUT;...": the kernels cuBLAS runs there (names, median ns under ncu).
# Every step is skipped, saying so, once it would not fit. Everything lands in OUT/logs.tar.gz.
# Prepare here: warm the kernel cache for the tests (DGEMM_TEST_PREFILL=h100 and h200 of each test),
# the sets (`deepgemm warm --arch h200,bench/results/h200-detected-arch.yaml --shapes ...`), the A/B
# shapes and the forced configurations (`deepgemm warm --force NAME`), then bench/stage.sh.
HERE=$(cd "$(dirname "$0")" && pwd)
S=$(cd "${1:?usage: device_session.sh STAGE}" && pwd)
source "$HERE/device_call.sh"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $GPU"
for t in ${SESSION_TESTS-test_sm90_gemm test_sm90_8bit_gemm test_grouped_gemm}; do
  run "$t" 150 "$S/bin/$t"
done
B="$S/bin/deepgemm-bench --quick --seed 1"
if [[ $GPU == *H200* && ${SESSION_REFRESH:-1} != 0 ]]; then
  run decode 150 $B --set decode,mid --dtype bf16,f16 --layout tn,nn --json "$OUT/refresh-decode-mid.json"
  if (( $(left) > 90 )); then
    PYTHONPATH="$HERE/../bindings/python" DEEPGEMM_LIBRARY="$S/lib/libdeepgemm.so.1" \
      timeout "$(lim 170)" python3 "$HERE/grouped_torch.py" --dtype bf16 --out "$OUT" > "$OUT/gtorch.txt" 2>&1
    echo "grouped_torch rc=$?"
    tail -30 "$OUT/gtorch.txt"
  fi
fi
if [[ -n ${SESSION_AB_BASE:-} ]]; then
  AB_DIR=$OUT/ab AB_LABEL=ab AB_TIMEOUT=90 run ab "$(lim 170)" bash "$HERE/ab.sh" "$S" "$SESSION_AB_BASE" "$S/lib" \
    "${SESSION_AB_ROUNDS:-2}" --shapes "${SESSION_AB_SHAPES:-$HERE/shapes/fixed-cost.txt}" --dtype bf16 --layout tn --no-lt
  tail -30 "$OUT/ab.log"
fi
if [[ -n ${SESSION_FORCED:-} ]]; then
  export FORCED_TIMEOUT=${FORCED_TIMEOUT:-40}
  run forced "$(lim 250)" bash "$HERE/forced.sh" "$S" "$OUT/forced" "$SESSION_FORCED" 2
  tail -40 "$OUT/forced.log"
fi
if [[ -n ${SESSION_NCU:-} ]]; then
  IFS=';' read -ra entries <<<"$SESSION_NCU"
  for e in "${entries[@]}"; do
    read -r m n k l <<<"$e"
    (( $(left) < 25 )) && { echo "ncu $e skipped (time)"; break; }
    f="$OUT/ncu-$m-$n-$k-$l.csv"
    timeout "$(lim 40)" ncu --clock-control none --launch-count 300 --csv --metrics gpu__time_duration.sum \
      "$S/bin/deepgemm-bench" --m "$m" --n "$n" --k "$k" --layout "$l" --dtype bf16 --no-lt --reps 3 > "$f" 2>&1
    python3 - "$f" "$e" <<'PY'
import collections, csv, sys
rows = [r for r in csv.reader(open(sys.argv[1], errors="replace")) if len(r) > 10]
if not rows:
    sys.exit(print(sys.argv[2], "| no ncu rows"))
h = rows[0]
ki, vi = h.index("Kernel Name"), h.index("Metric Value")
times = collections.defaultdict(list)
for r in rows[1:]:
    try:
        times[r[ki][:100]].append(float(r[vi].replace(",", "")))
    except ValueError:
        pass
for name, v in times.items():
    print(sys.argv[2], "|", name, "| n", len(v), "| median ns", sorted(v)[len(v) // 2])
PY
  done
fi
echo "total $(( $(date +%s) - T0 ))s; cache entries: staged $N0, now $(ls "$DEEPGEMM_CACHE_DIR" | wc -l)"

#!/usr/bin/env bash
# verify_by_name.sh STAGE   (on the device: run(command="bash bench/verify_by_name.sh STAGE", carry=[STAGE]))
#
# The one device call that decides the gates of the GPU paths offered by name only (force_kernel)
# until a GPU test has passed them (sm90 NOTES, "First device calls"; family_sm90.cpp `unverified`,
# family_sm80.cpp `i8_unverified`), then measures them, in order of what decides most, inside
# BUDGET seconds (default 570, under run's 600): test_grouped_gemm (grouped FP8 per-tensor / outer /
# block-scaled, grouped stream-K), test_sm90_8bit_gemm (the amax-* cases), test_sm80_gemm's
# sm80_i8_* cases, test_sm90_gemm (the regression sweep); the grouped FP8 bench against the
# per-expert cuBLASLt loop for three named tiles; compute-sanitizer memcheck / racecheck on grouped
# stream-K, grouped block-scaled FP8 and amax; the cost of amax at 4096^3 (the same kernel with
# and without, interleaved); bench/grouped_torch.py (bf16 + FP8 against torch) where torch is
# installed; bench/jobs/streamk-whole.jobs. A step that would not fit is skipped and says so.
# Everything lands in OUT/logs.tar.gz (run returns at most 8 files); the summary is on stdout.
#
# Prepare here (NVRTC compiles ~1 kernel a second a core; the four prefills take ~12 min on 2 cores):
#   export DEEPGEMM_CACHE_DIR=/tmp/cacheS
#   for t in test_grouped_gemm test_sm90_8bit_gemm test_sm80_gemm test_sm90_gemm; do
#     DGEMM_TEST_PREFILL=h200 build/tests/$t; done
#   GROUPED_WARM_DTYPES="fp8t fp8b" bash bench/grouped_forced.sh warm build $DEEPGEMM_CACHE_DIR \
#     sm90_128x128x128_s6_t384_p sm90_128x128x128_s6_t384_p_streamk sm90_64x128x128_s7_t256_p_streamk
#   (and `deepgemm warm --arch h200 --runners-up 0 --force CONFIG [--amax-d] ...` for the amax rows below)
#   bash bench/stage.sh build build/stage $DEEPGEMM_CACHE_DIR
HERE=$(cd "$(dirname "$0")" && pwd)
S=$(cd "${1:?usage: verify_by_name.sh STAGE}" && pwd)
# $OUT returns at most 8 files: everything is written to a work folder and packed into one tarball.
source "$HERE/device_call.sh"
run grouped 100 $S/bin/test_grouped_gemm
run sm90_8bit 100 $S/bin/test_sm90_8bit_gemm
run sm80_i8 80 $S/bin/test_sm80_gemm --run_test='sm80_i8_*'
run sm90 120 $S/bin/test_sm90_gemm
grep -hE "error|failed" $OUT/grouped.log $OUT/sm90_8bit.log $OUT/sm80_i8.log $OUT/sm90.log | head -30
# grouped FP8 against the per-expert cuBLASLt loop (one round: auto is refused while by name only)
B="$S/bin/deepgemm-bench --grouped --quick --seed 1 --dtype fp8t,fp8b"
for c in sm90_128x128x128_s6_t384_p sm90_128x128x128_s6_t384_p_streamk sm90_64x128x128_s7_t256_p_streamk; do
  run gfp8_$c 45 $B --force-kernel $c --json $OUT/gfp8-$c.json
done
python3 - $OUT <<'PY'
import glob, json, os, sys
for p in sorted(glob.glob(os.path.join(sys.argv[1], "gfp8-*.json"))):
    try: rows = json.load(open(p))["rows"]
    except Exception as e: print(p, "unreadable", e); continue
    for r in rows:
        loop = r.get("cublaslt_loop_us") or r.get("cublas_loop_us")
        print(os.path.basename(p)[5:-5].replace("sm90_", ""), r["layout"], r.get("dtype"), r["n"], r["k"], r["groups"], r["tokens"],
              "ours", r.get("ours_us"), "loop", loop, "ratio", round(loop / r["ours_us"], 3) if loop and r.get("ours_us") else None,
              "MISMATCH" if r.get("mismatch") else "")
PY
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
TG=$S/bin/test_grouped_gemm
run mc_grouped_sk 70 $CS --error-exitcode 9 --tool memcheck $TG --run_test=grouped_gpu/stream_k_vs_oracle
run mc_grouped_fp8b 60 $CS --error-exitcode 9 --tool memcheck $TG --run_test=grouped_gpu/fp8_block_scaled_vs_oracle
D="$S/bin/deepgemm run --reps 1 --warmup 0 --amax-d --trans-b --m 300 --n 520 --k 384"
run mc_amax_bf16 30 $CS --error-exitcode 9 --tool memcheck $D --force-kernel sm90_128x128x64_s6_t384_p --bias col --act gelu_tanh
run rc_amax_fp8pp 40 $CS --error-exitcode 9 --tool racecheck $D --dtype e4m3 --out-dtype bf16 --a-scale tensor --b-scale tensor --force-kernel sm90_128x128x128_s6_t384_p_v1
run rc_grouped_sk 90 $CS --error-exitcode 9 --tool racecheck $TG --run_test=grouped_gpu/stream_k_vs_oracle
# amax cost: the same kernel with and without, interleaved, 4 rounds, median of 200 reps per process
for r in 1 2 3 4; do
  (( $(left) < 60 )) && break
  for a in "" "--amax-d"; do
    for cfg in "bf16 sm90_128x256x64_s4_t384_p" "fp8t sm90_128x256x128_s4_t384_p"; do
      read -r dt k <<<"$cfg"; f=""; [[ $dt == fp8t ]] && f="--dtype e4m3 --out-dtype bf16 --a-scale tensor --b-scale tensor"
      echo "$r $dt ${a:-plain} $(timeout 20 $S/bin/deepgemm run --m 4096 --n 4096 --k 4096 --trans-b $f $a --force-kernel $k --reps 200 --warmup 20 --check none --json | python3 -c "import json,sys; j=json.load(sys.stdin); print(j['median_us'], j['result'])" 2>&1 | tail -1)"
    done
  done
done | tee $OUT/amax_cost.txt
if (( $(left) > 150 )); then
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda, hasattr(torch, "_grouped_mm"), hasattr(torch, "_scaled_grouped_mm"))'
  PYTHONPATH=$HERE/../bindings/python DEEPGEMM_LIBRARY=$S/lib/libdeepgemm.so.1 timeout $(lim 150) python3 $HERE/grouped_torch.py --quick --dtype bf16,fp8 --out $OUT > $OUT/gtorch.txt 2>&1; echo "grouped_torch rc=$?"; tail -30 $OUT/gtorch.txt
fi
if (( $(left) > 100 )); then
  FORCED_TIMEOUT=40 timeout $(lim 250) bash $HERE/forced.sh $S $OUT/skw $HERE/jobs/streamk-whole.jobs 1 > $OUT/skw.txt 2>&1; tail -25 $OUT/skw.txt
fi
echo "total $(( $(date +%s) - T0 ))s; cache entries: staged $N0, now $(ls $DEEPGEMM_CACHE_DIR | wc -l)"

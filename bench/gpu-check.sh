#!/usr/bin/env bash
# gpu-check.sh STAGE_DIR - everything one device call does, in one command.
#
# STAGE_DIR is a folder made by bench/stage.sh (bin/, lib/, cache/) and carried to the device:
#   run(command="bench/gpu-check.sh build-bench/stage", carry=["build-bench/stage"])
# Each section runs only when its binary is there, writes its log under $OUT (few files: the
# device returns at most 8), and the last thing printed is a short table.
#
# Knobs (environment):
#   GPU_CHECK_AUTOTUNE=1       `deepgemm run` with and without --autotune on a few shapes (autotune.log;
#                              GPU_CHECK_AUTOTUNE_SHAPES="M N K,M N K")
#   GPU_CHECK_TORCH_STAGE=DIR  the Python binding with PyTorch CUDA tensors (tests/packaging/
#                              gpu_torch_check.sh run DIR; DIR made here by its `stage` step) -> torch.log
#   GPU_CHECK_TESTS=0          skip the GPU test executables
#   GPU_CHECK_TEST_ARGS=...    extra Boost.Test arguments for every test executable (e.g. --run_test=...)
#   GPU_CHECK_BENCH_ARGS=...   deepgemm-bench arguments (default: --set all --quick --runner-up)
#   GPU_CHECK_BENCH=0          skip the benchmark
#   GPU_CHECK_WARM_SETS=a,b    first compile those sets' kernels on every core (GPU_CHECK_WARM_ARGS)
#   GPU_CHECK_NCU=1            ncu metrics of our kernel on one shape (GPU_CHECK_NCU_SHAPE="M N K [FORCE]");
#                              GPU_CHECK_NCU_VS_CUBLAS=1: cuBLAS's kernel on the same shape as well
#   GPU_CHECK_SANITIZER=1      compute-sanitizer memcheck + racecheck of our kernel on small shapes
#                              (GPU_CHECK_SANITIZER_SHAPES="M N K [FORCE],..." FORCE: a family or
#                              configuration name for --force-kernel; GPU_CHECK_SANITIZER_TOOLS="memcheck racecheck")
#   GPU_CHECK_TEST_TIMEOUT / GPU_CHECK_BENCH_TIMEOUT   seconds per test binary / for the benchmark
#   GPU_CHECK_SAVE_CACHE=0     do not return the kernel cache as $OUT/kernel-cache.tar.gz (by default
#                              it comes back, so `bench/stage.sh BUILD STAGE kernel-cache.tar.gz` can
#                              carry what this call compiled and the next call compiles nothing)
set -uo pipefail

stage=${1:-build-bench/stage}
if [[ ! -d $stage/bin || ! -d $stage/lib ]]; then
  echo "gpu-check: $stage is not a stage folder (expected bin/ and lib/; make one with bench/stage.sh)" >&2
  exit 2
fi
stage=$(cd "$stage" && pwd)
OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT"

cuda_home=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH="$stage/lib:$cuda_home/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$cuda_home/bin:$PATH"
# The carried cache may be read-only or shared between calls: work on a copy so the library may
# add entries, and so that a corrupt entry it rebuilds does not change what travels.
export DEEPGEMM_CACHE_DIR=$(mktemp -d /tmp/dgemm-cache.XXXXXX)
if [[ -f $stage/cache.tar.gz ]]; then tar -xzf "$stage/cache.tar.gz" -C "$DEEPGEMM_CACHE_DIR"; fi
if [[ -d $stage/cache ]]; then cp -a "$stage/cache/." "$DEEPGEMM_CACHE_DIR/" 2>/dev/null; fi
chmod 700 "$DEEPGEMM_CACHE_DIR"  # cp -a copied the carried folder's mode; the library uses only a private one

summary=()  # lines of the final table

# ---- device -----------------------------------------------------------------------------------
{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,utilization.gpu --format=csv 2>&1
  echo "cache entries carried: $(ls "$DEEPGEMM_CACHE_DIR" | wc -l)"
} > "$OUT/device.txt" 2>&1
summary+=("device: $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1)")

# ---- GPU tests (label gpu: every staged test_* executable) -------------------------------------
if [[ ${GPU_CHECK_TESTS:-1} != 0 ]]; then
  : > "$OUT/tests.log"
  for t in "$stage"/bin/test_*; do
    [[ -x $t ]] || continue
    name=$(basename "$t")
    echo "===== $name" >> "$OUT/tests.log"
    start=$SECONDS
    # shellcheck disable=SC2086
    timeout "${GPU_CHECK_TEST_TIMEOUT:-240}" "$t" --log_level=test_suite --report_level=short ${GPU_CHECK_TEST_ARGS:-} \
      >> "$OUT/tests.log" 2>&1
    rc=$?
    case $rc in
      0) verdict=PASS ;; 77) verdict=SKIP ;; 124) verdict="TIMEOUT" ;; *) verdict="FAIL(rc=$rc)" ;;
    esac
    echo "===== $name: $verdict in $((SECONDS - start)) s" | tee -a "$OUT/tests.log"
    summary+=("$(printf 'test  %-32s %s (%d s)' "$name" "$verdict" $((SECONDS - start)))")
  done
fi

# ---- benchmark ------------------------------------------------------------------------------------
bench=$stage/bin/deepgemm-bench
# GPU_CHECK_WARM_SETS=set,set (with GPU_CHECK_WARM_ARGS, the benchmark's dtype/layout/candidate
# flags): compile the kernels of those rows on every core first (bench/warm-parallel.sh).
# Several groups: sets and arguments separated by ';' in both variables, pairwise.
if [[ -n ${GPU_CHECK_WARM_SETS:-} && -x $bench ]]; then
  IFS=';' read -r -a warm_sets <<< "$GPU_CHECK_WARM_SETS"
  IFS=';' read -r -a warm_arg_lists <<< "${GPU_CHECK_WARM_ARGS:-}"
  for i in "${!warm_sets[@]}"; do
    start=$SECONDS
    read -r -a warm_args <<< "${warm_arg_lists[$i]:-}"
    "$(dirname "$0")/warm-parallel.sh" "$bench" "$(nproc)" "${warm_sets[$i]}" "${warm_args[@]}" 2>&1 | tail -n 1
    summary+=("$(printf 'warm  %-32s %d s, %d cache entries' "${warm_sets[$i]}" $((SECONDS - start)) "$(ls "$DEEPGEMM_CACHE_DIR" | wc -l)")")
  done
fi
if [[ ${GPU_CHECK_BENCH:-1} != 0 && -x $bench ]]; then
  # Several runs: GPU_CHECK_BENCH_ARGS may hold argument lists separated by ';' (bench.json,
  # bench2.json, ...; one summary each).
  IFS=';' read -r -a bench_runs <<< "${GPU_CHECK_BENCH_ARGS:---set all --quick --runner-up}"
  run=0
  : > "$OUT/bench.log"
  for args in "${bench_runs[@]}"; do
    read -r -a bench_args <<< "$args"
    run=$((run + 1))
    suffix=$([[ $run -gt 1 ]] && echo "$run")
    start=$SECONDS
    # The benchmark stops starting new shapes a minute before the hard timeout, so that its table,
    # JSON and summary are always written.
    bench_timeout=${GPU_CHECK_BENCH_TIMEOUT:-300}
    timeout "$bench_timeout" "$bench" --time-limit $((bench_timeout > 90 ? bench_timeout - 60 : 30)) \
      "${bench_args[@]}" --json "$OUT/bench$suffix.json" --summary "$DEEPGEMM_CACHE_DIR.summary$suffix" 2>&1 \
      | tee -a "$OUT/bench.log"
    rc=${PIPESTATUS[0]}
    summary+=("$(printf 'bench %-32s rc=%d (%d s), table in bench.log / bench%s.json' "${bench_args[*]}" $rc $((SECONDS - start)) "$suffix")")
  done
fi

# ---- autotuning (issue 5): never slower than the planner's default by more than noise ----------
tool=$stage/bin/deepgemm
if [[ ${GPU_CHECK_AUTOTUNE:-0} != 0 && -x $tool ]]; then
  IFS=, read -r -a tune_shapes <<< "${GPU_CHECK_AUTOTUNE_SHAPES:-4096 4096 4096,1024 1024 4096,16 8192 8192}"
  for shape in "${tune_shapes[@]}"; do
    read -r m n k <<< "$shape"
    for mode in default autotune; do
      flag=""; [[ $mode == autotune ]] && flag=--autotune
      line=$(timeout 120 "$tool" run --m "$m" --n "$n" --k "$k" --dtype bf16 --trans-b --reps 50 --check none --explain \
        $flag 2>&1 | tee -a "$OUT/autotune.log" | grep -E '^time ' )
      echo "$m x $n x $k $mode: $line" >> "$OUT/autotune.log"
      summary+=("$(printf 'tune  %-16s %-8s %s' "${m}x${n}x${k}" "$mode" "$(echo "$line" | sed -E 's/^time +([0-9.]+ us).*  ([0-9.]+ TFLOP\/s)/\1 \2/')")")
    done
  done
fi

# ---- the Python binding with PyTorch CUDA tensors (issue 6) ---------------------------------------
if [[ -n ${GPU_CHECK_TORCH_STAGE:-} && -d ${GPU_CHECK_TORCH_STAGE} ]]; then
  start=$SECONDS
  timeout 240 bash "$(dirname "$0")/../tests/packaging/gpu_torch_check.sh" run "$GPU_CHECK_TORCH_STAGE" /tmp/dgemm-py \
    > "$OUT/torch.log" 2>&1
  rc=$?
  summary+=("$(printf 'torch gpu_torch_check rc=%d (%d s), torch.log' $rc $((SECONDS - start)))")
  while IFS= read -r line; do summary+=("torch $line"); done < <(tail -n 14 "$OUT/torch.log")
fi

# ---- profiling and sanitizers (opt-in; our kernel alone through `deepgemm-bench --profile`) ------
if [[ -x $bench && ( ${GPU_CHECK_NCU:-0} != 0 || ${GPU_CHECK_SANITIZER:-0} != 0 ) ]]; then
  : > "$OUT/profile.log"
fi
if [[ -x $bench && ${GPU_CHECK_NCU:-0} != 0 ]]; then
  read -r m n k force <<< "${GPU_CHECK_NCU_SHAPE:-4096 4096 4096}"
  # --profile-from-start off: only the launches between cudaProfilerStart/Stop (ours) are profiled.
  # Sections have stable names across ncu versions (a metric name unknown to this ncu would fail the
  # whole command): speed of light (SM, tensor pipe, DRAM throughput), pipe utilisation, warp stall
  # reasons, launch statistics; plus the two shared-memory bank-conflict counters.
  metrics=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  # L2 traffic (what separated our 128x64 main loop from cuBLAS's, RESULTS.md run X), each only
  # where this ncu knows the metric.
  known=$(ncu --query-metrics 2>/dev/null)
  for x in lts__t_sectors_srcunit_tex_op_read.sum lts__t_requests_srcunit_tex_op_read.sum \
           l1tex__m_xbar2l1tex_read_bytes.sum lts__t_sector_hit_rate.pct smsp__inst_executed.sum; do
    grep -q "^${x%%.*} " <<< "$known" && metrics+=",$x"
  done
  sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
            --section WarpStateStats --section LaunchStats)
  echo "===== ncu $m x $n x $k ${force:-}" >> "$OUT/profile.log"
  timeout 180 ncu --clock-control none --profile-from-start off "${sections[@]}" --metrics "$metrics" \
    "$bench" --profile --m "$m" --n "$n" --k "$k" --dtype bf16 --layout tn ${force:+--force-kernel "$force"} \
    >> "$OUT/profile.log" 2>&1
  summary+=("ncu   $m x $n x $k ${force:-} rc=$? (profile.log)")
  if [[ ${GPU_CHECK_NCU_VS_CUBLAS:-0} != 0 ]]; then
    # cuBLAS's own kernel (nvjet / xmma / cutlass names on Hopper), one launch after the warm-ups,
    # from a plain run of the row (separate launches: --no-graph).
    echo "===== ncu cuBLAS $m x $n x $k" >> "$OUT/profile.log"
    timeout 180 ncu --clock-control none --kernel-name regex:'nvjet|xmma|cutlass' --launch-skip 5 --launch-count 1 \
      "${sections[@]}" --metrics "$metrics" "$bench" --m "$m" --n "$n" --k "$k" --dtype bf16 --layout tn \
      --quick --reps 1 --no-graph >> "$OUT/profile.log" 2>&1
    summary+=("ncu   cuBLAS $m x $n x $k rc=$? (profile.log)")
  fi
  # The few numbers a reader wants first, from the last ncu report.
  while IFS= read -r line; do summary+=("ncu   ${line}"); done < <(grep -E \
    "bank_conflicts|Compute \(SM\) Throughput|DRAM Throughput|Duration|Registers Per Thread" "$OUT/profile.log" \
    | sed -E 's/ +/ /g' | tail -n 8)
fi
if [[ -x $bench && ${GPU_CHECK_SANITIZER:-0} != 0 ]]; then
  IFS=, read -r -a san_shapes <<< "${GPU_CHECK_SANITIZER_SHAPES:-256 256 256,129 65 127}"
  read -r -a san_tools <<< "${GPU_CHECK_SANITIZER_TOOLS:-memcheck racecheck}"
  for tool in "${san_tools[@]}"; do
    for shape in "${san_shapes[@]}"; do
      read -r m n k force <<< "$shape"
      echo "===== compute-sanitizer --tool $tool $m x $n x $k ${force:-}" >> "$OUT/profile.log"
      timeout 180 compute-sanitizer --tool "$tool" --error-exitcode 3 \
        "$bench" --profile --m "$m" --n "$n" --k "$k" --dtype bf16 --layout tn ${force:+--force-kernel "$force"} \
        >> "$OUT/profile.log" 2>&1
      summary+=("$(printf 'san   %-9s %-14s %-40s rc=%d' "$tool" "${m}x${n}x${k}" "${force:-}" $?)")
    done
  done
fi

# What this call compiled comes back, for the next stage to carry (one file: $OUT returns at most 8).
if [[ ${GPU_CHECK_SAVE_CACHE:-1} != 0 && -n $(ls -A "$DEEPGEMM_CACHE_DIR" 2>/dev/null) ]]; then
  tar -czf "$OUT/kernel-cache.tar.gz" -C "$DEEPGEMM_CACHE_DIR" .
  size=$(stat -c %s "$OUT/kernel-cache.tar.gz")
  if (( size > 15 * 1024 * 1024 )); then
    rm -f "$OUT/kernel-cache.tar.gz"
    summary+=("cache $(ls "$DEEPGEMM_CACHE_DIR" | wc -l) entries: too big to return ($((size >> 20)) MiB)")
  else
    summary+=("cache $(ls "$DEEPGEMM_CACHE_DIR" | wc -l) entries returned as kernel-cache.tar.gz ($((size >> 10)) KiB)")
  fi
fi
summary_file=$DEEPGEMM_CACHE_DIR.summary

# ---- short table, last (the bench summary first: the device reply keeps only the end) ----------
echo
for f in "$summary_file" "$summary_file"[0-9]*; do
  [[ -f $f ]] || continue
  cat "$f"
  echo
done
echo "==================== gpu-check summary ($(date -u +%H:%M:%SZ)) ===================="
printf '%s\n' "${summary[@]}"
rm -rf "$DEEPGEMM_CACHE_DIR" "$summary_file" "$summary_file"[0-9]*

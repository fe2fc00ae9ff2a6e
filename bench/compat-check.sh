#!/usr/bin/env bash
# compat-check.sh STAGE_DIR - the cuBLAS drop-in (libdeepgemm_cublas, issue 13) on a GPU, in one
# command. STAGE_DIR is made by bench/stage.sh (it copies the library and the two test programs):
#   run(command="bench/compat-check.sh build/stage", carry=["build/stage"])
#
# One plain cuBLAS program (tests/compat/cublas_gpu_check.cpp), every run compared with a host
# reference within per-type thresholds:
#   preload  linked to the real cuBLAS, libdeepgemm_cublas.so.1 LD_PRELOADed; each call must also go
#            where it should (--expect-routed); DEEPGEMM_CUBLAS_LOG=1 lines in the log
#   linked   the same program linked to libdeepgemm_cublas instead of cuBLAS (link-time replacement)
#   plain    the program as built, on the real cuBLAS alone
#   off      preloaded with DEEPGEMM_CUBLAS=off: every call forwarded, results unchanged
#   bench    preloaded, --bench: the library's cost per call over the same plan called directly
#            (host issue time with the stream held, and CUDA graph; must be <= 2 us) and cublasGemmEx
#            through it vs the plan vs cuBLAS on a few shapes
# Logs go to $OUT (compat-*.log, compat-cases.txt: every case's error in each run side by side:
# at most 8 files, as the device returns);
# the kernels compiled come back as $OUT/kernel-cache.tar.gz (for bench/stage.sh's CACHE_DIR); a
# short table is printed last.
# Knobs: COMPAT_CHECK_BUDGET (seconds for everything, default 540: sections that would not fit are
# skipped, and said so), COMPAT_CHECK_WARM_THREADS (parallel plan making in the checks, default 8),
# COMPAT_CHECK_SANITIZER=1 (also compute-sanitizer memcheck of the preloaded checks).
set -uo pipefail

stage=${1:-build/stage}
if [[ ! -x $stage/bin/cublas_gpu_check || ! -f $stage/lib/libdeepgemm_cublas.so.1 ]]; then
  echo "compat-check: $stage lacks bin/cublas_gpu_check or lib/libdeepgemm_cublas.so.1 (make it with bench/stage.sh)" >&2
  exit 2
fi
stage=$(cd "$stage" && pwd)
OUT=${OUT:-$PWD/compat-check-out}
mkdir -p "$OUT"
cuda_home=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH="$stage/lib:$cuda_home/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$cuda_home/bin:$PATH"
export DEEPGEMM_CACHE_DIR=$(mktemp -d /tmp/dgemm-cache.XXXXXX)
if [[ -f $stage/cache.tar.gz ]]; then tar -xzf "$stage/cache.tar.gz" -C "$DEEPGEMM_CACHE_DIR"; fi
if [[ -d $stage/cache ]]; then cp -a "$stage/cache/." "$DEEPGEMM_CACHE_DIR/" 2>/dev/null; fi
chmod 700 "$DEEPGEMM_CACHE_DIR"  # cp -a copied the carried folder's mode; the library uses only a private one

lib=$stage/lib/libdeepgemm_cublas.so.1
check=$stage/bin/cublas_gpu_check
linked=$stage/bin/cublas_gpu_check_linked
budget=${COMPAT_CHECK_BUDGET:-540}
warm=${COMPAT_CHECK_WARM_THREADS:-8}
# The device returns at most 8 files from $OUT: the failure lines go into the printed table only.
failures=$(mktemp /tmp/compat-failures.XXXXXX)
summary=("device: $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1)")

# section NAME LIMIT_S ENV... -- COMMAND...: runs one section into $OUT/compat-NAME.log within
# what is left of the budget, and adds its verdict to the table.
section() {
  local name=$1 limit=$2
  shift 2
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local left=$((budget - SECONDS - 15))
  if ((left < 20)); then
    summary+=("$(printf '%-8s SKIPPED (budget of %d s spent)' "$name" "$budget")")
    return
  fi
  ((limit > left)) && limit=$left
  local start=$SECONDS
  env ${envs[@]+"${envs[@]}"} timeout "$limit" "$@" > "$OUT/compat-$name.log" 2>&1
  local rc=$?
  local verdict
  case $rc in 0) verdict=PASS ;; 77) verdict=SKIP ;; 124) verdict="TIMEOUT(${limit}s)" ;; *) verdict="FAIL(rc=$rc)" ;; esac
  local last
  last=$(grep -E '^cublas_gpu_check:|^library:' "$OUT/compat-$name.log" | tr '\n' ' ')
  summary+=("$(printf '%-8s %-14s %4d s  %s' "$name" "$verdict" $((SECONDS - start)) "$last")")
  grep -E '^FAIL' "$OUT/compat-$name.log" | head -n 5 | sed "s/^/         $name: /" >> "$failures"
}

: > "$failures"
# The preloaded run first: it makes the plans (NVRTC) into the kernel cache the others reuse.
section preload 300 LD_PRELOAD="$lib" DEEPGEMM_CUBLAS_LOG=1 -- "$check" --expect-routed --warm-threads "$warm"
section bench 200 LD_PRELOAD="$lib" -- "$check" --bench
if [[ -x $linked ]]; then
  section linked 120 DEEPGEMM_CUBLAS_LOG=1 -- "$linked" --expect-routed --warm-threads "$warm"
else
  summary+=("linked   SKIPPED (no bin/cublas_gpu_check_linked in the stage)")
fi
section plain 120 -- "$check" --warm-threads 0
section off 120 LD_PRELOAD="$lib" DEEPGEMM_CUBLAS=off -- "$check" --warm-threads 0
if [[ ${COMPAT_CHECK_SANITIZER:-0} != 0 ]] && command -v compute-sanitizer > /dev/null; then
  section memcheck 240 -- compute-sanitizer --tool memcheck --error-exitcode 3 \
    --target-processes all env LD_PRELOAD="$lib" "$check" --expect-routed --warm-threads 0
fi

# Every case's error in each run, side by side (the runs must agree within the thresholds).
{
  printf '%-62s %10s %10s %10s %10s  %s\n' case preload linked plain off "route (preload)"
  awk '
    FNR == 1 { run = FILENAME; sub(/.*compat-/, "", run); sub(/\.log$/, "", run) }
    / err +[-0-9.e+nai]+ \(<= / {
      name = substr($0, 1, 62); sub(/ +$/, "", name)
      for (i = 1; i <= NF; ++i) if ($i == "err") { e = $(i + 1); r = $NF }
      if (!(name in seen)) { seen[name] = 1; order[++n] = name }
      err[name, run] = e
      if (run == "preload") route[name] = r
    }
    END {
      for (i = 1; i <= n; ++i) {
        c = order[i]
        printf "%-62s %10s %10s %10s %10s  %s\n", c, err[c, "preload"], err[c, "linked"], err[c, "plain"], err[c, "off"], route[c]
      }
    }' "$OUT"/compat-preload.log "$OUT"/compat-linked.log "$OUT"/compat-plain.log "$OUT"/compat-off.log 2>/dev/null
} > "$OUT/compat-cases.txt"

if [[ ${COMPAT_CHECK_SAVE_CACHE:-1} != 0 && -n $(ls -A "$DEEPGEMM_CACHE_DIR" 2>/dev/null) ]]; then
  tar -czf "$OUT/kernel-cache.tar.gz" -C "$DEEPGEMM_CACHE_DIR" .
  summary+=("cache    $(ls "$DEEPGEMM_CACHE_DIR" | wc -l) entries returned as kernel-cache.tar.gz")
fi
rm -rf "$DEEPGEMM_CACHE_DIR"

echo
echo "every case, error per run: compat-cases.txt; the log lines of the preloaded run: compat-preload.log"
grep -E '^bench ' "$OUT/compat-bench.log" 2>/dev/null
echo "==================== compat-check summary ($(date -u +%H:%M:%SZ)) ===================="
printf '%s\n' "${summary[@]}"
cat "$failures"
rm -f "$failures"

#!/usr/bin/env bash
# forced.sh STAGE OUT JOBS [ROUNDS]
#
# Times the planner's choice ("auto") and named configurations of the same problems side by side
# on the device, in separate processes alternated over ROUNDS rounds (default 2), so that clock
# drift falls on every contender alike: how a candidate is measured before a rule chooses it
# (bench/RESULTS.md, 2026-12-04 session 3). STAGE is a folder from bench/stage.sh (bin/, lib/,
# cache.tar.gz); JOBS has one problem per line,
#     M N K DTYPE LAYOUT [CONFIG ...]
# DTYPE as deepgemm-bench takes it (bf16 f16 fp8t fp8b fp8q i8), LAYOUT tn nn tt nt, CONFIG the
# configuration names to force (`deepgemm plan --all` names; bench/forced_jobs.py writes such
# lines from a shape file); '#' starts a comment. Each run's JSON lands in OUT/<M.N.K.DTYPE.LAYOUT>/
# <CONFIG or auto>-<round>.json; the last thing printed is bench/forced_compare.py's table, and
# OUT/forced.json holds the merged rows (each with every contender under `candidates`), which
# bench/offline_regret.py replays and bench/report/render.py draws.
#   FORCED_TIMEOUT=S   seconds per benchmark process (default 60)
#   FORCED_ARGS="..."  more deepgemm-bench flags for every run (default --reps 20, the benchmark's
#                      own default of 2 ms samples: each process times one problem, and with
#                      `--quick`'s 5 samples of 1 ms 1536^3's choice timed 19.9 us against 14.7
#                      with 20 reps (15.9 in a 22-shape process), so a 128x128 stream-K twin
#                      ranked 3 % ahead of it instead of 23 % behind; why only that contender
#                      moved is not known; H100, 2026-12-06 session 15)
set -uo pipefail
if [[ $# -lt 3 || $# -gt 4 ]]; then
  echo "usage: $0 STAGE OUT JOBS [ROUNDS]" >&2
  exit 2
fi
stage=$(cd "$1" && pwd) out=$2 jobs=$3 rounds=${4:-2}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export LD_LIBRARY_PATH="$stage/lib:${CUDA_HOME:-/usr/local/cuda}/lib64"
if [[ -z ${DEEPGEMM_CACHE_DIR:-} ]]; then
  DEEPGEMM_CACHE_DIR=$(mktemp -d /tmp/dgemm-cache.XXXXXX)
  export DEEPGEMM_CACHE_DIR
  [[ -f $stage/cache.tar.gz ]] && tar -xzf "$stage/cache.tar.gz" -C "$DEEPGEMM_CACHE_DIR"
fi
start=$(date +%s)
for ((r = 1; r <= rounds; ++r)); do
  while read -r m n k dtype layout names; do
    [[ -z ${m:-} || $m == \#* ]] && continue
    tag="$m.$n.$k.$dtype.$layout"
    mkdir -p "$out/$tag"
    extra=()
    # 16-bit rows: cublasGemmEx is the reference; cuBLASLt only for the 8-bit ones.
    [[ $dtype == bf16 || $dtype == f16 ]] && extra=(--no-lt)
    for label in auto ${names%%#*}; do
      force=()
      [[ $label != auto ]] && force=(--force-kernel "$label")
      # shellcheck disable=SC2086
      timeout "${FORCED_TIMEOUT:-60}" "$stage/bin/deepgemm-bench" --m "$m" --n "$n" --k "$k" --dtype "$dtype" \
        --layout "$layout" ${FORCED_ARGS:---reps 20} "${extra[@]}" "${force[@]}" --json "$out/$tag/$label-$r.json" \
        > "$out/$tag/$label-$r.log" 2>&1 || echo "forced: $tag $label round $r: exit $?"
    done
  done < "$jobs"
  echo "forced: round $r done, $(( $(date +%s) - start )) s"
done
python3 "$here/forced_compare.py" "$out" --json "$out/forced.json"

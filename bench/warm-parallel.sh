#!/usr/bin/env bash
# warm-parallel.sh BENCH JOBS SETS [BENCH_ARGS...]
#
# On the device, before a timed benchmark: plans every row of the shape sets SETS (comma list of
# bench/shapes/<set>.txt) with the benchmark's own arguments, one `deepgemm-bench --verify-only`
# process per shape, JOBS at a time, so that the kernels the timed run will use (with
# --candidates, the runners-up too) compile on every core at once into $DEEPGEMM_CACHE_DIR
# instead of one by one inside the timed run. Verification failures are reported by the timed run.
# SETS = grouped: the same for `deepgemm-bench --grouped`'s default shapes.
set -uo pipefail
bench=$1 jobs=$2 sets=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
commands=$(mktemp)
IFS=, read -r -a names <<< "$sets"
if [[ $sets == grouped ]]; then
  # `deepgemm-bench --grouped`'s default grid, one process per layout, group count and weight.
  for layout in contiguous masked; do
    for groups in 8 32; do
      for nk in 4096x7168 7168x2048; do
        printf '%q ' "$bench" --grouped --layout "$layout" --groups "$groups" --nk "$nk" --verify-only "$@"
        echo
      done
    done
  done > "$commands"
else
  for s in "${names[@]}"; do
    grep -vE '^[[:space:]]*(#|$)' "$here/shapes/$s.txt"
  done | awk '{print $1, $2, $3, ($4 == "" ? "plain" : $4)}' | sort -u | while read -r m n k e; do
    printf '%q ' "$bench" --m "$m" --n "$n" --k "$k" --epilogue "$e" --verify-only "$@"
    echo
  done > "$commands"
fi
count=$(wc -l < "$commands")
xargs -P "$jobs" -d '\n' -I{} bash -c '{} > /dev/null 2>&1' < "$commands"
rm -f "$commands"
echo "warm-parallel: planned the $count shapes of $sets with $jobs processes"

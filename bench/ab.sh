#!/usr/bin/env bash
# ab.sh STAGE LIB_A LIB_B ROUNDS [BENCH_ARGS...]
#
# A/B of two builds of the library on the device, in alternating processes: deepgemm-bench from
# STAGE/bin runs BENCH_ARGS with LD_LIBRARY_PATH=LIB_A, then LIB_B, ROUNDS times (A B A B ...), so
# that clock and thermal drift over the call fall on both sides alike. LIB_A / LIB_B are folders
# holding a libdeepgemm.so.1 (e.g. STAGE/lib and a baseline copied into STAGE/lib-base). Kernels
# come from $DEEPGEMM_CACHE_DIR (a stage cache can hold both builds' kernels: the cache key covers
# the kernel source). Each run's JSON goes to $AB_DIR (default $OUT/ab) as
# <label>-<A|B>-<round>.json; the last thing printed is, per row, the median of our time over the
# rounds for A and B and B's speed-up (A / B), then the geomean (bench/ab_compare.py).
#   AB_LABEL=name   file-name prefix (default ab), so several A/Bs can share $AB_DIR
#   AB_TIMEOUT=S    seconds per benchmark process (default 300)
set -uo pipefail
if [[ $# -lt 4 ]]; then
  echo "usage: $0 STAGE LIB_A LIB_B ROUNDS [BENCH_ARGS...]" >&2
  exit 2
fi
stage=$(cd "$1" && pwd) lib_a=$(cd "$2" && pwd) lib_b=$(cd "$3" && pwd) rounds=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
label=${AB_LABEL:-ab}
dir=${AB_DIR:-${OUT:-$PWD}/ab}
mkdir -p "$dir"
cuda_lib=${CUDA_HOME:-/usr/local/cuda}/lib64
for ((r = 1; r <= rounds; ++r)); do
  for side in A B; do
    lib=$lib_a
    [[ $side == B ]] && lib=$lib_b
    json="$dir/$label-$side-$r.json"
    LD_LIBRARY_PATH="$lib:$cuda_lib" timeout "${AB_TIMEOUT:-300}" "$stage/bin/deepgemm-bench" "$@" --json "$json" \
      > "$dir/$label-$side-$r.log" 2>&1
    echo "ab: $label $side round $r: exit $? ($(grep -c '"ours_us"' "$json" 2>/dev/null || echo 0) rows)"
  done
done
python3 "$here/ab_compare.py" "$dir" "$label"

#!/usr/bin/env bash
# grouped_forced.sh warm BUILD CACHE [CONFIG ...]
# grouped_forced.sh run STAGE OUT [CONFIG ...]
#
# The grouped (MoE) benchmark with the planner's choice ("auto") and named configurations side by
# side: how a grouped candidate (e.g. the stream-K twins, `_streamk`) is measured before a rule
# chooses it. CONFIG defaults to the grouped stream-K twins and the plain tiles they twin.
#   warm: compiles, here and without a GPU, the kernels every run will use (both layouts, the
#         DeepSeek-V3 expert shapes of `deepgemm-bench --grouped`, the built-in H200 description
#         and the device-detected one) and test_grouped_gemm's (DGEMM_TEST_PREFILL) into CACHE,
#         for bench/stage.sh BUILD STAGE CACHE.
#   run:  on the device: test_grouped_gemm, then `deepgemm-bench --grouped --quick --seed 1` for
#         auto and each CONFIG in separate processes, alternated over GROUPED_ROUNDS rounds
#         (default 2), JSON in OUT/<config>-<round>.json; prints per row (layout, dtype, N x K,
#         G, tokens) each contender's median time and its ratio to the row's loop of vendor GEMMs
#         (cublasGemmEx for bf16, cuBLASLt FP8 for fp8t / fp8b).
#   GROUPED_ARGS="..."   more deepgemm-bench flags (e.g. --tokens 64,256, or --dtype fp8t,fp8b with
#                        FP8 configurations such as sm90_128x128x128_s6_t384_p)
#   GROUPED_WARM_DTYPES="bf16 fp8t fp8b"   warm: the dtypes whose kernels it compiles (default
#                        bf16; the scale modes of the bench's fp8t / fp8b rows, f32 scales), each
#                        with the CONFIGs of its BLOCK_K (x64_ 16-bit, x128_ 8-bit)
#   GROUPED_TIMEOUT=S    seconds per benchmark process (default 90)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:-}
if [[ $# -lt 3 || ( $mode != warm && $mode != run ) ]]; then
  echo "usage: $0 warm BUILD CACHE [CONFIG ...] | $0 run STAGE OUT [CONFIG ...]" >&2
  exit 2
fi
configs=("${@:4}")
if [[ ${#configs[@]} -eq 0 ]]; then
  configs=(sm90_128x256x64_s4_t384_p_streamk sm90_128x192x64_s5_t384_p_streamk sm90_128x128x64_s6_t384_p_streamk
           sm90_64x128x64_s7_t256_p_streamk sm90_128x64x64_s8_t384_p_streamk sm90_128x128x64_s6_t384_p
           sm90_64x128x64_s7_t256_p)
fi

if [[ $mode == warm ]]; then
  build=$(cd "$2" && pwd)
  mkdir -p "$3"
  export DEEPGEMM_CACHE_DIR=$(cd "$3" && pwd)
  for arch in h200 "$here/results/h200-detected-arch.yaml"; do
    DGEMM_TEST_PREFILL=$arch "$build/tests/test_grouped_gemm" | grep prefill
    for dtype in ${GROUPED_WARM_DTYPES:-bf16}; do
      case $dtype in
        bf16) flags="" block_k=x64_ ;;
        fp8t) flags="--dtype e4m3 --out-dtype bf16 --a-scale tensor --b-scale tensor" block_k=x128_ ;;
        fp8b) flags="--dtype e4m3 --out-dtype bf16 --a-scale vec128 --b-scale blk128" block_k=x128_ ;;
        *) echo "GROUPED_WARM_DTYPES: bf16, fp8t or fp8b, got '$dtype'" >&2; exit 2 ;;
      esac
      for nk in "4096 7168" "7168 2048"; do
        read -r n k <<<"$nk"
        for layout in "--m 1152 --group-align 128" "--m 256 --group-layout masked"; do
          for f in "" "${configs[@]}"; do
            # A configuration names its BLOCK_K: 64 for 16-bit operands, 128 for 8-bit ones.
            [[ -n $f && $f != *$block_k* ]] && continue
            # shellcheck disable=SC2086
            "$build/src/tools/deepgemm" warm --quiet --arch "$arch" --runners-up 0 --n "$n" --k "$k" --trans-b \
              --groups 8 $layout $flags ${f:+--force "$f"} >/dev/null 2>&1 ||
              # (The planner's own FP8 grouped choice does not exist while they are by name only.)
              [[ -z $f && $dtype != bf16 ]] || echo "warm failed: $arch $dtype $nk $layout $f" >&2
          done
        done
      done
    done
  done
  echo "grouped_forced.sh: $(ls "$DEEPGEMM_CACHE_DIR" | wc -l) cache entries in $DEEPGEMM_CACHE_DIR"
  exit 0
fi

stage=$(cd "$2" && pwd) out=$3 rounds=${GROUPED_ROUNDS:-2}
mkdir -p "$out"
export LD_LIBRARY_PATH="$stage/lib:${CUDA_HOME:-/usr/local/cuda}/lib64"
if [[ -z ${DEEPGEMM_CACHE_DIR:-} ]]; then
  DEEPGEMM_CACHE_DIR=$(mktemp -d /tmp/dgemm-cache.XXXXXX)
  export DEEPGEMM_CACHE_DIR
  [[ -f $stage/cache.tar.gz ]] && tar -xzf "$stage/cache.tar.gz" -C "$DEEPGEMM_CACHE_DIR"
fi
if [[ -x $stage/bin/test_grouped_gemm ]]; then
  timeout 300 "$stage/bin/test_grouped_gemm" >"$out/test_grouped_gemm.log" 2>&1
  echo "test_grouped_gemm: rc=$? (log: $out/test_grouped_gemm.log)"
fi
for ((r = 1; r <= rounds; ++r)); do
  for c in auto "${configs[@]}"; do
    force=()
    [[ $c != auto ]] && force=(--force-kernel "$c")
    # shellcheck disable=SC2086
    timeout "${GROUPED_TIMEOUT:-90}" "$stage/bin/deepgemm-bench" --grouped --quick --seed 1 "${force[@]}" \
      ${GROUPED_ARGS:-} --json "$out/$c-$r.json" >"$out/$c-$r.log" 2>&1 || echo "$c round $r: rc=$? (log: $out/$c-$r.log)"
  done
done
python3 - "$out" <<'EOF'
import glob, json, os, statistics, sys
out = sys.argv[1]
times = {}  # row key -> config -> [ours us], and the cuBLAS loop
for path in sorted(glob.glob(os.path.join(out, "*-*.json"))):
    config = os.path.basename(path).rsplit("-", 1)[0]
    try:
        rows = json.load(open(path))["rows"]
    except (OSError, ValueError, KeyError):
        continue
    for r in rows:
        key = (r["layout"], r.get("dtype", "bf16"), f'{r["n"]}x{r["k"]}', r["groups"], r["tokens"])
        entry = times.setdefault(key, {"loop": [], "configs": {}})
        loop = r.get("cublas_loop_us") or r.get("cublaslt_loop_us")  # bf16 / FP8 rows
        if loop:
            entry["loop"].append(loop)
        if r.get("ours_us") and not r.get("mismatch"):
            entry["configs"].setdefault(config, []).append(r["ours_us"])
        elif r.get("mismatch"):
            print(f"MISMATCH: {config} {key}")
names = sorted({c for e in times.values() for c in e["configs"]})
print("median us (ratio = vendor loop / ours: cublasGemmEx bf16, cuBLASLt FP8); rows: layout dtype NxK G tokens")
for key in sorted(times):
    e = times[key]
    loop = statistics.median(e["loop"]) if e["loop"] else float("nan")
    cells = []
    for c in names:
        v = e["configs"].get(c)
        cells.append(f"{c.replace('sm90_', '')}: {statistics.median(v):.1f} ({loop / statistics.median(v):.3f})" if v else f"{c}: -")
    print(f"{key[0]:10s} {key[1]:5s} {key[2]:9s} G={key[3]:<3d} t={key[4]:<5d} loop {loop:.1f} | " + " | ".join(cells))
EOF

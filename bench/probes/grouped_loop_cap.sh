#!/usr/bin/env bash
# grouped_loop_cap.sh STAGE OUT "LAYOUT NxK G TOKENS" ...
#
# How close the per-expert cuBLAS loop of a grouped row (deepgemm-bench --grouped's cublas_loop)
# runs to the tensor pipe's limit: each cuBLAS launch of the row under ncu (`--clock-control none`,
# one launch at a time), its duration and tensor-pipe activity as a share of elapsed cycles; then
# (grouped_loop_cap.py) the duration-weighted share over each whole loop of G launches after the
# first (the verification run), and the cap 1 / share: at equal clocks no kernel doing the same
# MMAs beats that loop by more than the cap (the loop's launch gaps only loosen it). Issue 14 asks
# >= 1.3x the loop; a row whose cap is below 1.3 shows the target cannot be met there, as
# bench/targets.py's CAPS do for dense rows (enter the result in GROUPED_CAPS there).
# Example, on the device:
#   bash bench/probes/grouped_loop_cap.sh build/stage $OUT/cap "contiguous 4096x7168 8 1024" \
#        "contiguous 7168x2048 8 1024" "contiguous 4096x7168 8 256"
# First run 2026-12-05 session 9 call E (H200; bench/RESULTS.md): 4096x7168 G = 8 t = 1024 cap 1.127.
NCU_ENTRY_FORMAT="LAYOUT NxK G TOKENS"
source "$(dirname "$0")/ncu_entries.sh"  # stage, out, here, the cache; "$@" = the entries
# The tensor pipe's activity: the wgmma (gmma) pipe on Hopper, else the mma (hmma) one; whichever
# this ncu knows.
known=$(ncu --query-metrics 2>/dev/null)
metrics=gpu__time_duration.sum
for x in sm__pipe_tensor_op_gmma_cycles_active sm__pipe_tensor_op_hmma_cycles_active; do
  grep -q "^$x " <<<"$known" && metrics+=",$x.avg.pct_of_peak_sustained_elapsed"
done
csvs=()
for entry in "$@"; do
  read -r layout nk groups tokens <<<"$entry"
  name="$layout-$nk-g$groups-t$tokens"
  # Separate launches (no graph), one repetition: the verification loop, the warm-up and the
  # timed loops are all cuBLAS launches of this row; 4 x G of them cover three loops after it.
  timeout 300 ncu --clock-control none --kernel-name regex:'nvjet|xmma|cutlass|gemm' --launch-count $((4 * groups)) \
    --metrics "$metrics" --csv --page raw "$stage/bin/deepgemm-bench" --grouped --layout "$layout" --nk "$nk" \
    --groups "$groups" --tokens "$tokens" --dtype bf16 --quick --reps 1 --no-graph > "$out/$name.csv" 2> "$out/$name.log"
  echo "grouped_loop_cap: $name: ncu exit $?"
  csvs+=("$groups:$out/$name.csv")
done
python3 "$here/grouped_loop_cap.py" "${csvs[@]}"

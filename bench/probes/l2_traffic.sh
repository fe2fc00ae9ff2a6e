#!/usr/bin/env bash
# l2_traffic.sh STAGE OUT "M N K KERNEL [bench flags...]" ...
#
# Where a kernel's operand bytes come from, one isolated launch per entry under ncu (`--set full`
# plus the L2 request / hit / miss counters by source, `--clock-control none`), for questions like
# the one open since 2026-12-04 (bench/RESULTS.md, calls 1-2): our 2-CTA clusters' TMA multicast
# *raises* the L2 sector reads (64x128 s8 -> c2 at 1024x1024x8192: 5.95 -> 8.20 M) where cuBLAS's
# 1x2 clusters cut them. STAGE is a folder from bench/stage.sh (bin/, lib/, cache.tar.gz); each
# entry is a shape and a configuration name (`deepgemm plan --all` names; "auto" for the planner's
# choice) and optional deepgemm-bench flags (e.g. --dtype fp8t --layout nn). Reports land in OUT
# (NAME.ncu-rep, NAME-raw.csv); the last thing printed is one table of the chosen counters per
# entry (bench/probes/l2_table.py). Example, on the device:
#   bash bench/probes/l2_traffic.sh build/stage $OUT/l2 "1024 1024 8192 sm90_64x128x64_s8_t256_p" \
#        "1024 1024 8192 sm90_64x128x64_s8_t256_c2_p" "256 4096 4096 sm90_64x128x64_s8_t256_c2_p"
source "$(dirname "$0")/ncu_entries.sh"  # stage, out, here, the cache; "$@" = the entries
metrics=lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_op_read.sum,lts__t_requests_op_read.sum
names=()
for entry in "$@"; do
  read -r m n k kernel flags <<<"$entry"
  name=$(entry_name "$m" "$n" "$k" "$kernel" "${flags:-}")
  force=()
  [[ $kernel != auto ]] && force=(--force-kernel "$kernel")
  # shellcheck disable=SC2086
  timeout 120 ncu --profile-from-start off --clock-control none --set full --metrics "$metrics" \
    -o "$out/$name" -f "$stage/bin/deepgemm-bench" --m "$m" --n "$n" --k "$k" --dtype bf16 --layout tn \
    ${flags:-} "${force[@]}" --profile > "$out/$name.log" 2>&1
  echo "l2_traffic: $name: ncu exit $?"
  ncu --import "$out/$name.ncu-rep" --page raw --csv > "$out/$name-raw.csv" 2>/dev/null
  names+=("$out/$name-raw.csv")
done
python3 "$here/l2_table.py" "${names[@]}"

#!/usr/bin/env bash
# stall_regions.sh STAGE OUT "M N K KERNEL [bench flags...]" ...
#
# Where each kernel's warps wait, by region of its SASS (K loop, epilogue, producer, other): one
# isolated launch per entry under ncu (`--set full`, PC sampling, `--clock-control none`), its
# source page exported per SASS instruction, summed by bench/probes/stall_regions.py. Asked by sm90
# NOTES -3: the stream-K twins run whole tiles ~7 % slower than the same kernel without stream-K,
# and the static SASS does not say why; compare the pair region by region, e.g. on the device:
#   bash bench/probes/stall_regions.sh build/stage $OUT/stalls \
#     "4096 4096 4096 sm90_128x128x128_s6_t384_p_v1 --dtype i8" \
#     "4096 4096 4096 sm90_128x128x128_s6_t384_p_v1_streamk --dtype i8" \
#     "4096 4096 4096 sm90_128x256x64_s4_t384_p" "4096 4096 4096 sm90_128x256x64_s4_t384_p_streamk"
# (names as `deepgemm plan --all` prints them; "auto" for the planner's choice; "--dtype fp8q" and
# the other bench dtypes as flags: the last --dtype wins). STAGE is a folder
# from bench/stage.sh. Reports land in OUT (NAME.ncu-rep, NAME-sass.csv: small enough to bring back;
# the tables can be redone here from the CSVs).
source "$(dirname "$0")/ncu_entries.sh"  # stage, out, here, the cache; "$@" = the entries
csvs=()
for entry in "$@"; do
  read -r m n k kernel flags <<<"$entry"
  name=$(entry_name "$m" "$n" "$k" "$kernel" "${flags:-}")
  force=()
  [[ $kernel != auto ]] && force=(--force-kernel "$kernel")
  # shellcheck disable=SC2086
  timeout 180 ncu --profile-from-start off --clock-control none --set full --import-source no \
    -o "$out/$name" -f "$stage/bin/deepgemm-bench" --m "$m" --n "$n" --k "$k" --dtype bf16 --layout tn \
    ${flags:-} "${force[@]}" --profile > "$out/$name.log" 2>&1
  echo "stall_regions: $name: ncu exit $?"
  ncu --import "$out/$name.ncu-rep" --page source --csv --print-source sass > "$out/$name-sass.csv" 2>>"$out/$name.log"
  csvs+=("$out/$name-sass.csv")
done
python3 "$here/stall_regions.py" "${csvs[@]}"

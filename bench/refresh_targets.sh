#!/usr/bin/env bash
# refresh_targets.sh STAGE   (on the device: run(command="bash bench/refresh_targets.sh STAGE", carry=[STAGE]))
#
# One device call that re-measures the rows bench/TARGETS.md counts, with this build's planner, so
# that the ledger says where the targets stand *now* (bench/targets.py takes the latest run of each
# row): issue 10's decode, batched and mid sets (bf16, f16, tn, nn), issue 11's prefill and
# unaligned rows (bf16, tn, nn), issue 12's fp8 set (fp8t, fp8b, fp8q, i8), and the rows TARGETS.md
# still counts "as run" (bench/jobs/ledger-as-run.jobs, through the same deepgemm-bench). Every run
# is `--quick`, the planner's choice only, one process per set, in order of what the ledger lacks
# most; a step that would not fit the budget is skipped and says so. Everything lands in
# OUT/logs.tar.gz; afterwards, here: copy the JSON into bench/results (named h200-DATE-refresh-*.json),
# then `python3 bench/targets.py --markdown bench/TARGETS.md` and a dated section in RESULTS.md.
# Prepare here: the stage's kernel cache should hold the planner's choices of these sets
# (`deepgemm warm --arch h200 --set decode,batched,mid,prefill,unaligned,fp8 ...`; whatever is
# missing compiles on the device, ~1 s a kernel a core).
HERE=$(cd "$(dirname "$0")" && pwd)
S=$(cd "${1:?usage: refresh_targets.sh STAGE}" && pwd)
source "$HERE/device_call.sh"
B="$S/bin/deepgemm-bench --quick --seed 1"
# REFRESH_STEPS="prefill unaligned asrun": only these steps (e.g. the rest, in a second call).
want() { [[ -z ${REFRESH_STEPS:-} || " $REFRESH_STEPS " == *" $1 "* ]]; }
want fp8 && run fp8 120 $B --set fp8 --dtype fp8t,fp8b,fp8q,i8 --json $OUT/refresh-fp8.json
want decode && run decode 150 $B --set decode,mid --dtype bf16,f16 --layout tn,nn --json $OUT/refresh-decode-mid.json
want batched && run batched 120 $B --set batched --dtype bf16,f16 --layout tn,nn --json $OUT/refresh-batched.json
want prefill && run prefill 120 $B --set prefill --dtype bf16 --layout tn,nn --json $OUT/refresh-prefill.json
want unaligned && run unaligned 60 $B --set unaligned --dtype bf16 --layout tn,nn --json $OUT/refresh-unaligned.json
want asrun && grep -v '^#' $HERE/jobs/ledger-as-run.jobs | awk 'NF >= 5 {print $1, $2, $3}' | sort -u > $OUT/as-run-shapes.txt
want asrun && run asrun 60 $B --shapes $OUT/as-run-shapes.txt --dtype bf16,f16 --layout tn,nn --json $OUT/refresh-as-run.json
for f in $OUT/refresh-*.json; do
  [[ -f $f ]] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=[x for x in d["rows"] if x.get("ratio")]; import math; print(sys.argv[1].rsplit("/",1)[1], len(r), "rows, geomean ratio", round(math.exp(sum(math.log(x["ratio"]) for x in r)/max(1,len(r))),3), "mismatches", sum(bool(x.get("mismatch")) for x in r))' $f
done
echo "total $(( $(date +%s) - T0 ))s; cache entries: staged $N0, now $(ls $DEEPGEMM_CACHE_DIR | wc -l)"

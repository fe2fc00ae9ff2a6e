#!/usr/bin/env bash
# run_fuzzers.sh SECONDS BIN_DIR TARGET... : runs the libFuzzer targets side by side, each for
# SECONDS, starting from its seed corpus (tests/fuzz/corpus/<target>, read only) and a working
# corpus in BIN_DIR/work/<target>. Fails when any target reports a finding; the input that
# triggered it is in BIN_DIR/findings/ (reproduce with: BIN_DIR/<target> <that file>). A finding
# that is fixed becomes a corpus entry (copy it into corpus/<target>) or a unit test.
# Long runs on demand: run_fuzzers.sh 3600 build/sanitize-address/tests/fuzz fuzz_c_api
set -uo pipefail
seconds=$1 bin=$2
shift 2
seeds=$(cd "$(dirname "$0")" && pwd)/corpus
mkdir -p "$bin/findings"
pids=()
for t in "$@"; do
  mkdir -p "$bin/work/$t"
  # -timeout: one input running longer than this is a finding (a hang); -rss_limit_mb: so is memory.
  "$bin/$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
            -artifact_prefix="$bin/findings/$t-" "$bin/work/$t" "$seeds/$t" > "$bin/$t.log" 2>&1 &
  pids+=($!)
done
status=0
i=0
for t in "$@"; do
  if wait "${pids[$i]}"; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$bin/$t.log" | grep -o '[0-9]*$')
    echo "$t: ${runs:-?} inputs in ${seconds} s, nothing found"
  else
    status=1
    echo "$t: FINDING (log: $bin/$t.log)"
    tail -n 40 "$bin/$t.log"
  fi
  i=$((i + 1))
done
ls "$bin/findings" 2>/dev/null | sed 's/^/finding: /'
exit $status

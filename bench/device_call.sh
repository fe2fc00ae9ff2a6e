# device_call.sh - sourced by the one-call device scripts (verify_by_name.sh, verify_grouped.sh)
# after they set S (the stage folder from bench/stage.sh): the setting-up they share.
#   - $OUT (what `run` returns, at most 8 files) receives one logs.tar.gz of a work folder, which
#     OUT then names, when the script exits;
#   - the stage's library and CUDA's tools on the paths, its kernel cache unpacked into a fresh
#     DEEPGEMM_CACHE_DIR (N0 entries);
#   - T0, BUDGET (default 570 s, under run's 600), left (seconds left), lim T (T or what is left),
#     (export BUDGET before sourcing: a `BUDGET=N source ...` prefix does not outlive the source),
#     and run NAME T CMD...: CMD with a limit of T seconds into $OUT/NAME.log, skipped when under
#     20 s are left, one summary line (rc, seconds, the log's verdict lines).
T0=$(date +%s); BUDGET=${BUDGET:-570}
RET=$OUT; OUT=$(mktemp -d /tmp/wout.XXXX); trap 'tar -czf $RET/logs.tar.gz -C $OUT .' EXIT
export LD_LIBRARY_PATH=$S/lib:/usr/local/cuda/lib64 PATH=/usr/local/cuda/bin:$PATH
export DEEPGEMM_CACHE_DIR=$(mktemp -d /tmp/dgc.XXXX); tar -xzf $S/cache.tar.gz -C $DEEPGEMM_CACHE_DIR; chmod 700 $DEEPGEMM_CACHE_DIR; N0=$(ls $DEEPGEMM_CACHE_DIR | wc -l)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
lim() { local l=$(left); (( $1 < l - 5 )) && echo $1 || echo $(( l > 10 ? l - 5 : 1 )); }
run() { local name=$1 t=$(lim $2); shift 2; (( $(left) < 20 )) && { echo "$name skipped (time)"; return; }; local s=$(date +%s); timeout $t "$@" > $OUT/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $(( $(date +%s) - s ))s: $(grep -E 'No errors|failure|error.*detected|test cases? (passed|failed)|ERROR SUMMARY|RACECHECK SUMMARY|geomean' $OUT/$name.log | tail -2 | tr '\n' ' ')"; }

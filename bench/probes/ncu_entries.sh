# ncu_entries.sh - sourced by the ncu probes (l2_traffic.sh, stall_regions.sh, grouped_loop_cap.sh)
# with their arguments "STAGE OUT ENTRY...": checks them, sets stage, out and here, puts the stage's
# library on the path and unpacks its kernel cache into a fresh DEEPGEMM_CACHE_DIR (unless one is
# set), and leaves the entries ("M N K KERNEL [bench flags...]", or what NCU_ENTRY_FORMAT says for
# the usage line) in "$@".
set -uo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 STAGE OUT \"${NCU_ENTRY_FORMAT:-M N K KERNEL [bench flags...]}\" ..." >&2
  exit 2
fi
stage=$(cd "$1" && pwd) out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export LD_LIBRARY_PATH="$stage/lib:${CUDA_HOME:-/usr/local/cuda}/lib64"
if [[ -z ${DEEPGEMM_CACHE_DIR:-} ]]; then
  export DEEPGEMM_CACHE_DIR=$(mktemp -d /tmp/dgemm-cache.XXXXXX)
  [[ -f $stage/cache.tar.gz ]] && tar -xzf "$stage/cache.tar.gz" -C "$DEEPGEMM_CACHE_DIR"
fi
# entry_name M N K KERNEL [flags]: the file name of an entry's report.
entry_name() {
  local name="$1x$2x$3-$4"
  [[ -n ${5:-} ]] && name="$name-$(tr -c 'A-Za-z0-9' '_' <<<"$5")"
  echo "$name"
}

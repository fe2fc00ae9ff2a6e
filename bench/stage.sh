#!/usr/bin/env bash
# stage.sh BUILD_DIR STAGE_DIR [CACHE_DIR]
#
# Copies exactly what one device run needs into STAGE_DIR, which `run` then carries (64 MiB limit):
#   STAGE_DIR/lib/    libdeepgemm.so* (the library under test), libdeepgemm_cublas.so.1 when built
#   STAGE_DIR/bin/    deepgemm-bench, the `deepgemm` tool, and the GPU test executables
#                     (tests/gpu/test_*.cpp; CPU tests run here, not there)
#   STAGE_DIR/cache.tar.gz  a pre-filled kernel cache (DEEPGEMM_CACHE_DIR), compressed, so that the
#                     device spends its minutes running kernels, not compiling them with NVRTC
# The cache is copied from CACHE_DIR, else $DEEPGEMM_CACHE_DIR, else BUILD_DIR/kernel-cache, when
# one exists; CACHE_DIR may also be the kernel-cache.tar.gz that gpu-check.sh returns (what the last
# device call compiled). If STAGE_CACHE_FILL is set, it is run first as a shell command with
# DEEPGEMM_CACHE_DIR pointing at the stage cache (the way to fill it with NVRTC here, without a GPU).
# Nothing else travels: no object files, no sources (the checkout travels by itself).
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 BUILD_DIR STAGE_DIR [CACHE_DIR]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
stage=$2
src=$(cd "$(dirname "$0")/.." && pwd)
cache_src=${3:-${DEEPGEMM_CACHE_DIR:-$build/kernel-cache}}

# Start clean: a stale binary from an earlier stage must never be measured by mistake.
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$stage/cache"

shopt -s nullglob
if [[ ! -e $build/src/libdeepgemm.so.1 ]]; then
  echo "stage.sh: no libdeepgemm.so.1 in $build/src (build the 'deepgemm' target first)" >&2
  exit 1
fi
# Only the soname the executables ask for, as a plain file: links may not survive the carry.
cp -L "$build/src/libdeepgemm.so.1" "$stage/lib/libdeepgemm.so.1"

copied=()
copy_bin() {  # copy_bin PATH: strip-free copy of one executable, if it was built
  if [[ -x $1 && -f $1 ]]; then
    cp "$1" "$stage/bin/"
    copied+=("$(basename "$1")")
  fi
}
copy_bin "$build/bench/deepgemm-bench"
copy_bin "$build/src/tools/deepgemm"
for t in "$src"/tests/gpu/test_*.cpp; do
  copy_bin "$build/tests/$(basename "$t" .cpp)"
done
# The cuBLAS drop-in (issue 13), for bench/compat-check.sh: the library and its test program, linked
# to the real cuBLAS and to the library.
if [[ -e $build/src/libdeepgemm_cublas.so.1 ]]; then
  cp -L "$build/src/libdeepgemm_cublas.so.1" "$stage/lib/libdeepgemm_cublas.so.1"
  copy_bin "$build/tests/compat/cublas_gpu_check"
  copy_bin "$build/tests/compat/cublas_gpu_check_linked"
fi

if [[ -n ${STAGE_CACHE_FILL:-} ]]; then
  echo "stage.sh: filling the kernel cache: $STAGE_CACHE_FILL"
  DEEPGEMM_CACHE_DIR=$(cd "$stage/cache" && pwd) bash -c "$STAGE_CACHE_FILL"
fi
if [[ -f $cache_src && $cache_src == *.tar.gz ]]; then
  tar -xzf "$cache_src" -C "$stage/cache"
elif [[ -d $cache_src ]] && [[ -n $(ls -A "$cache_src" 2>/dev/null) ]]; then
  cp -a "$cache_src"/. "$stage/cache/"
elif [[ -n ${3:-} ]]; then
  echo "stage.sh: $cache_src is neither a cache folder nor a .tar.gz" >&2
  exit 1
fi

# Kernel cubins compress about 4x: the cache travels as one archive (gpu-check.sh unpacks it).
if [[ -n $(ls -A "$stage/cache" 2>/dev/null) ]]; then
  tar -czf "$stage/cache.tar.gz" -C "$stage/cache" .
fi
rm -rf "$stage/cache"

# The carry limit is 64 MiB for the whole working tree; leave room for the checkout itself.
kib=$(du -sk "$stage" | cut -f1)
entries=0
[[ -f $stage/cache.tar.gz ]] && entries=$(tar -tzf "$stage/cache.tar.gz" | grep -c '\.cubin$' || true)
echo "stage.sh: $stage: ${copied[*]:-(no executables)}; $entries cache entries; $((kib / 1024)) MiB"
if (( kib > 56 * 1024 )); then
  echo "stage.sh: $stage is over 56 MiB: too big to carry with the checkout (limit 64 MiB)" >&2
  exit 1
fi

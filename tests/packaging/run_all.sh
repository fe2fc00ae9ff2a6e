#!/bin/bash
# run_all.sh - installs a built DeepGEMM into a staging prefix and checks it the ways its users
# consume it: the install layout, a C program built by a Makefile with only pkg-config, a CMake
# find_package(DeepGEMM) project, a C program that dlopen()s libdeepgemm.so.1 and binds its
# entry points with dlvsym(..., "DGEMM_1.0"), Python ctypes, and the library loading and running
# its CPU backend with the CUDA toolkit hidden from the dynamic loader.
#
#   tests/packaging/run_all.sh <build-dir> [work-dir]     (CTest: test `packaging`, label cpu)
# Exits non-zero at the first failing step; every step prints what it ran.
set -euo pipefail

BUILD=$(cd "${1:?usage: run_all.sh <build-dir> [work-dir]}" && pwd)
WORK=${2:-$BUILD/packaging}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CC=${CC:-cc}
PYTHON=${PYTHON:-python3}
STAGE=$WORK/stage

step() { printf '\n=== %s\n' "$*"; }
die() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK"

step "cmake --install $BUILD --prefix $STAGE"
cmake --install "$BUILD" --prefix "$STAGE" >"$WORK/install.log" || { cat "$WORK/install.log"; die "install"; }

step "install layout"
lib=$(find "$STAGE" -name 'libdeepgemm.so.1' | head -n 1)
[ -n "$lib" ] || die "no libdeepgemm.so.1 under $STAGE"
LIBDIR=$(dirname "$lib")
real=$(readlink "$LIBDIR/libdeepgemm.so.1")
devlink=$(readlink "$LIBDIR/libdeepgemm.so")
header=$STAGE/include/deepgemm/deepgemm.h
[ -f "$header" ] || die "no $header"
version=$(awk '/#define DGEMM_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v == "" ? "" : ".") $3} END {print v}' "$header")
[ "$real" = "libdeepgemm.so.$version" ] || die "libdeepgemm.so.1 -> '$real', expected libdeepgemm.so.$version"
[ "$devlink" = "libdeepgemm.so.1" ] || die "libdeepgemm.so -> '$devlink', expected libdeepgemm.so.1"
[ -f "$LIBDIR/$real" ] || die "$LIBDIR/$real missing"
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libdeepgemm.so.1" ] || die "SONAME '$soname'"
for f in pkgconfig/deepgemm.pc cmake/DeepGEMM/DeepGEMMConfig.cmake cmake/DeepGEMM/DeepGEMMConfigVersion.cmake \
         cmake/DeepGEMM/DeepGEMMTargets.cmake; do
  [ -f "$LIBDIR/$f" ] || die "$LIBDIR/$f missing"
done
# Nothing internal is installed: no static library, no private headers.
if find "$STAGE" \( -name '*.a' -o -name '*.hpp' \) | grep -q .; then die "internal files installed"; fi
echo "ok: $LIBDIR/{libdeepgemm.so -> libdeepgemm.so.1 -> $real}, SONAME $soname, header $version"

step "runtime dependencies of libdeepgemm.so.1 (libc/libstdc++/libm/libgcc/OpenMP only, no CUDA)"
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "$needed"
for n in $needed; do
  case "$n" in
    libc.so.*|libstdc++.so.*|libm.so.*|libgcc_s.so.*|libgomp.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) ;;
    *) die "unexpected NEEDED entry $n" ;;
  esac
done
if ldd "$lib" | grep -iE 'cuda|nvrtc|cublas'; then die "ldd shows CUDA libraries"; fi

step "pkg-config consumer (Makefile, pkg-config --cflags --libs deepgemm only)"
export PKG_CONFIG_LIBDIR=$LIBDIR/pkgconfig PKG_CONFIG_PATH=
[ "$(pkg-config --modversion deepgemm)" = "$version" ] || die "pkg-config --modversion $(pkg-config --modversion deepgemm)"
echo "pkg-config --cflags --libs deepgemm: $(pkg-config --cflags --libs deepgemm)"
make -C "$HERE/pkgconfig" O="$WORK" CC="$CC" check
unset PKG_CONFIG_LIBDIR PKG_CONFIG_PATH

step "CMake consumer (find_package(DeepGEMM) -> DeepGEMM::deepgemm)"
cmake -S "$HERE/cmake" -B "$WORK/cmake-consumer" -DCMAKE_PREFIX_PATH="$STAGE" -DCMAKE_C_COMPILER="$CC" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF >"$WORK/cmake-consumer.log" \
  || { cat "$WORK/cmake-consumer.log"; die "configure"; }
grep "DeepGEMM $version from $LIBDIR/cmake/DeepGEMM" "$WORK/cmake-consumer.log" \
  || { cat "$WORK/cmake-consumer.log"; die "find_package did not find the staged package"; }
cmake --build "$WORK/cmake-consumer"
# The imported target must not drag private dependencies (OpenMP, CUDA) into consumers.
if grep -E 'OpenMP|CUDA::' "$LIBDIR/cmake/DeepGEMM/DeepGEMMTargets.cmake"; then die "private deps exported"; fi
"$WORK/cmake-consumer/consumer_cmake"   # runs through the build-tree RPATH CMake sets

step "version file rejects an incompatible request"
mkdir -p "$WORK/cmake-v2"
printf 'cmake_minimum_required(VERSION 3.16)\nproject(v LANGUAGES NONE)\nfind_package(DeepGEMM 2.0 CONFIG)\nif(DeepGEMM_FOUND)\n  message(FATAL_ERROR "2.0 accepted")\nendif()\n' \
  >"$WORK/cmake-v2/CMakeLists.txt"
cmake -S "$WORK/cmake-v2" -B "$WORK/cmake-v2/b" -DCMAKE_PREFIX_PATH="$STAGE" >/dev/null 2>&1 || die "DeepGEMM 2.0 accepted"
echo "ok: find_package(DeepGEMM 2.0) not satisfied by $version"

step "dlopen consumer (dlopen + dlvsym DGEMM_1.0, not linked against the library)"
"$CC" -O2 -Wall -Wextra -Werror -std=c99 -I"$STAGE/include" -o "$WORK/dlopen_consumer" "$HERE/dlopen_consumer.c" -ldl -lm
if readelf -d "$WORK/dlopen_consumer" | grep -q deepgemm; then die "dlopen_consumer links libdeepgemm"; fi
LD_LIBRARY_PATH=$LIBDIR "$WORK/dlopen_consumer"
"$WORK/dlopen_consumer" "$LIBDIR/libdeepgemm.so.1" >/dev/null

step "Python ctypes loader"
LD_LIBRARY_PATH=$LIBDIR "$PYTHON" "$HERE/ctypes_check.py"
"$PYTHON" "$HERE/ctypes_check.py" "$LIBDIR/libdeepgemm.so.1" >/dev/null

pkg=$(find "$STAGE" -path '*/site-packages/deepgemm/__init__.py' | head -n 1)
if [ -n "$pkg" ]; then
  step "installed Python package (DGEMM_BUILD_PYTHON), finding the prefix's library through _location.py"
  site=$(dirname "$(dirname "$pkg")")
  (cd "$WORK" && env -u LD_LIBRARY_PATH -u DEEPGEMM_LIBRARY PYTHONPATH="$site" STAGE_LIB="$LIBDIR/libdeepgemm.so.1" "$PYTHON" - <<'PY'
import numpy as np
import deepgemm
rng = np.random.default_rng()
x, w, b = (rng.uniform(-1, 1, s).astype(np.float32) for s in ((9, 33), (17, 33), (17,)))
y = deepgemm.matmul(x, w, trans_b=True, bias=b, activation="relu")
ref = np.maximum(x.astype(np.float64) @ w.T.astype(np.float64) + b, 0)
err = np.linalg.norm(y - ref) / np.linalg.norm(ref)
assert err < 1e-5, err
import os
assert deepgemm.__file__.startswith(os.environ["PYTHONPATH"]), deepgemm.__file__
lib = os.path.realpath(deepgemm.capi.LIBRARY_PATH)
assert lib == os.path.realpath(os.environ["STAGE_LIB"]), (lib, os.environ["STAGE_LIB"])
print(f"[python] OK: {deepgemm.__file__}, relative error {err:.2e}")
PY
  )
fi

# Each binding as its users consume it, against the stage (77 from a script: a prerequisite is
# missing here, reported and skipped).
optional_step() {
  local rc=0
  "$@" || rc=$?
  [ $rc = 77 ] && { echo "skipped: $1 lacks a prerequisite"; return 0; }
  return $rc
}
if [ "${DGEMM_PACKAGING_GO:-0}" = 1 ]; then
  step "Go: a separate module requires the Go module by path and version, go build, run"
  optional_step "$HERE/go_consumer.sh" "$HERE/../.." "$LIBDIR" "$WORK/go-consumer"
fi
if [ "${DGEMM_PACKAGING_RUST:-0}" = 1 ]; then
  step "Rust: the crates as published packages, a dependent crate built offline, the example without LD_LIBRARY_PATH"
  optional_step "$HERE/rust_consumer.sh" "$HERE/../.." "$LIBDIR" "$WORK/rust-consumer"
fi

bench=$STAGE/bin/deepgemm-bench
if [ -x "$bench" ]; then
  step "deepgemm-bench runs from the install (RUNPATH \$ORIGIN/../lib), no LD_LIBRARY_PATH"
  runpath=$(readelf -d "$bench" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
  case ":$runpath:" in *':$ORIGIN/../'*) ;; *) die "deepgemm-bench RUNPATH '$runpath' lacks \$ORIGIN/../<libdir>" ;; esac
  found=$(env -u LD_LIBRARY_PATH ldd "$bench" | sed -n 's/.*libdeepgemm.so.1 => \([^ ]*\) .*/\1/p')
  [ -n "$found" ] && [ "$(readlink -f "$found")" = "$(readlink -f "$LIBDIR/libdeepgemm.so.1")" ] ||
    { ldd "$bench"; die "deepgemm-bench finds '$found', not the stage's library"; }
  (cd / && env -u LD_LIBRARY_PATH "$bench" --self-test >"$WORK/bench-self-test.log") || { cat "$WORK/bench-self-test.log"; die "bench --self-test"; }
  echo "ok: RUNPATH $runpath; --self-test passed from the install"
fi

step "with the CUDA toolkit hidden from the loader (env -i, no ld.so.cache, only system dirs + the stage)"
# /etc/ld.so.cache lists /usr/local/cuda*/lib on this machine; --inhibit-cache makes the loader
# search only --library-path and its built-in system directories, so nothing of the toolkit can be
# found, for the library's NEEDED entries as for its own run-time dlopen() calls.
ldso=$(readelf -l "$WORK/dlopen_consumer" | sed -n 's/.*interpreter: \(.*\)\]/\1/p')
# Without a GPU (CI) the dlopen consumer also checks AUTO -> CPU, CUDA -> NO_DEVICE and that no CUDA
# library got mapped; on a GPU machine the driver is a system library and may legitimately load.
no_gpu=
[ -e /dev/nvidiactl ] || no_gpu=DGEMM_EXPECT_NO_GPU=1
hidden() { env -i PATH=/usr/bin:/bin $no_gpu "$ldso" --inhibit-cache --library-path "$LIBDIR" "$@"; }
hidden "$WORK/dlopen_consumer"
hidden "$WORK/consumer_pkgconfig"

echo
echo "packaging: all checks passed ($STAGE)"

#!/bin/bash
# python_wheel.sh - the Python package as a user gets it: `pip install .` of this checkout into a
# fresh virtual environment (PEP 517: scikit-build-core drives the CMake build), then, from another
# folder, `import deepgemm` and deepgemm.linear / matmul against NumPy, the `deepgemm` console
# script and `python -m deepgemm`. Also checks what the wheel holds (py3-none tag, the library,
# the hardware descriptions, the tool) and that building it looked for no Go, cargo, SWIG or bindgen.
#
#   tests/packaging/python_wheel.sh <source-dir> <work-dir>      (CTest: python_wheel, label cpu)
# Exit 77 (skipped) when the virtual environment cannot be made or PyPI cannot be reached.
set -euo pipefail
SRC=$(cd "${1:?usage: python_wheel.sh <source-dir> <work-dir>}" && pwd)
WORK=${2:?usage: python_wheel.sh <source-dir> <work-dir>}
PYTHON=${PYTHON:-python3}
step() { printf '\n=== %s\n' "$*"; }
die() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

step "fresh virtual environment"
"$PYTHON" -m venv "$WORK/venv" || { echo "SKIP: $PYTHON -m venv failed (Debian: python3-venv)"; exit 77; }
VPY=$WORK/venv/bin/python

step "pip install $SRC (build dir $WORK/wheel-build)"
if ! "$VPY" -m pip install --disable-pip-version-check -q "$SRC" -Cbuild-dir="$WORK/wheel-build" \
     >"$WORK/pip.log" 2>&1; then
  cat "$WORK/pip.log"
  if grep -qE "No matching distribution found|Failed to establish a new connection|Temporary failure in name resolution" "$WORK/pip.log"; then
    echo "SKIP: PyPI cannot be reached for the build requirements"; exit 77
  fi
  die "pip install"
fi
tail -n 3 "$WORK/pip.log"

step "the build needed only the library's own tools"
cache=$WORK/wheel-build/CMakeCache.txt
[ -f "$cache" ] || die "no $cache"
if grep -E '^(GO_EXECUTABLE|CARGO_EXECUTABLE|BINDGEN_EXECUTABLE|SWIG_EXECUTABLE)[:=]' "$cache"; then
  die "building the Python package looked for another language's toolchain"
fi
grep -q '^DGEMM_BUILD_PYTHON:BOOL=ON' "$cache" || die "DGEMM_BUILD_PYTHON not set by pyproject.toml"
echo "ok: no Go, cargo, SWIG or bindgen in $cache"

step "what got installed"
site=$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
pkg=$site/deepgemm
for f in __init__.py capi.py py.typed libdeepgemm.so.1 arch/h200.yaml bin/deepgemm; do
  [ -e "$pkg/$f" ] || die "$pkg/$f missing"
done
wheel_tag=$(sed -n 's/^Tag: //p' "$site"/deepgemm-*.dist-info/WHEEL)
case "$wheel_tag" in py3-none-linux_*) ;; *) die "wheel tag '$wheel_tag', expected py3-none-<platform>" ;; esac
header_version=$(awk '/#define DGEMM_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v == "" ? "" : ".") $3} END {print v}' \
  "$SRC/include/deepgemm/deepgemm.h")
dist_version=$(sed -n 's/^Version: //p' "$site"/deepgemm-*.dist-info/METADATA)
[ "$dist_version" = "$header_version" ] || die "pyproject.toml version $dist_version, deepgemm.h $header_version"
# Nothing in the wheel may point at this machine's folders: the library needs only system
# libraries (ctypes loads it by its path in the package) and the tool links it statically.
for f in "$pkg/libdeepgemm.so.1" "$pkg/bin/deepgemm"; do
  rpath=$(readelf -d "$f" | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]/\1/p')
  case "$rpath" in ''|'$ORIGIN'*) ;; *) die "$f has RPATH/RUNPATH '$rpath': absolute paths do not travel with a wheel" ;; esac
done
echo "ok: tag $wheel_tag, version $dist_version, $(ls "$pkg" | tr '\n' ' ')"

step "import deepgemm and compute, from outside the checkout"
cd "$WORK"
env -u PYTHONPATH -u LD_LIBRARY_PATH -u DEEPGEMM_LIBRARY "$VPY" - "$pkg" <<'PY'
import sys
import numpy as np
import deepgemm

pkg = sys.argv[1]
assert deepgemm.__file__.startswith(pkg), deepgemm.__file__
assert deepgemm.capi.LIBRARY_PATH.startswith(pkg), deepgemm.capi.LIBRARY_PATH  # the wheel's own library
rng = np.random.default_rng()
x, w, b = (rng.uniform(-1, 1, s).astype(np.float32) for s in ((4, 9, 64), (48, 64), (48,)))
y = deepgemm.linear(x, w, b, activation="relu")
ref = np.maximum(x.astype(np.float64) @ w.T.astype(np.float64) + b, 0)
err = np.linalg.norm(y - ref) / np.linalg.norm(ref)
assert y.shape == (4, 9, 48) and err < 1e-5, (y.shape, err)
z = deepgemm.matmul(x, w, trans_b=True)
assert np.linalg.norm(z - x.astype(np.float64) @ w.T) / np.linalg.norm(z) < 1e-5
assert set(deepgemm.arch_files()) >= {"a100", "h100", "h200"}
print(f"[python] OK: deepgemm {deepgemm.version()} from {deepgemm.__file__}, linear rel. error {err:.1e}")
PY

step "the deepgemm console script and python -m deepgemm"
"$WORK/venv/bin/deepgemm" --version | grep -qx "$header_version" || die "deepgemm --version"
"$WORK/venv/bin/deepgemm" run --device cpu --m 33 --n 17 --k 65 --dtype f32 --bias col --act gelu | tee "$WORK/run.log"
grep -q "PASS" "$WORK/run.log" || die "deepgemm run did not PASS"
"$VPY" -m deepgemm --help | grep -q "usage: deepgemm" || die "python -m deepgemm --help"

echo
echo "python_wheel: all checks passed"

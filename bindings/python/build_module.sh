#!/bin/bash
# build_module.sh - builds the Python package `deepgemm` for whatever python3 runs this script,
# without CMake: for machines that have a compiler and Python headers but not the project's build
# tools (the GPU device has Python 3.12 + PyTorch and no SWIG).
#
#   bindings/python/build_module.sh <out-dir> <lib-dir> [<pregenerated-dir>]
#
# <lib-dir> holds libdeepgemm.so.1 (linked with an RPATH to it). The SWIG outputs come from
# running swig on bindings/deepgemm.i when swig is installed, else from <pregenerated-dir>: a
# build folder's bindings/python (capi_wrap.c and deepgemm/capi.py, written by the CMake build
# with -DDGEMM_BUILD_BINDINGS=ON); SWIG's C output compiles against any Python 3 version.
# Afterwards: PYTHONPATH=<out-dir> python3 -c 'import deepgemm'.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${1:?usage: build_module.sh <out-dir> <lib-dir> [<pregenerated-dir>]}
LIBDIR=$(cd "${2:?usage: build_module.sh <out-dir> <lib-dir> [<pregenerated-dir>]}" && pwd)
PREGEN=${3:-}
PYTHON=${PYTHON:-python3}
CC=${CC:-cc}

mkdir -p "$OUT/deepgemm"
OUT=$(cd "$OUT" && pwd)
GEN=$OUT/.gen
mkdir -p "$GEN"
if [ -z "$PREGEN" ] && command -v "${SWIG:-swig}" >/dev/null; then
  "${SWIG:-swig}" -python -I"$HERE/../../include" -outdir "$OUT/deepgemm" -o "$GEN/capi_wrap.c" "$HERE/../deepgemm.i"
elif [ -n "$PREGEN" ]; then
  cp "$PREGEN/capi_wrap.c" "$GEN/capi_wrap.c"
  cp "$PREGEN/deepgemm/capi.py" "$OUT/deepgemm/capi.py"
else
  echo "build_module.sh: no swig here; pass the pregenerated dir (<build>/bindings/python)" >&2
  exit 2
fi
cp "$HERE"/deepgemm/*.py "$OUT/deepgemm/"

include=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
# The include dir of the public header: next to the library in an install, or this repository's.
hdr=$HERE/../../include
[ -f "$LIBDIR/../include/deepgemm/deepgemm.h" ] && hdr=$LIBDIR/../include
"$CC" -O2 -shared -fPIC -fvisibility=hidden -w -I"$include" -I"$hdr" "$GEN/capi_wrap.c" \
  -o "$OUT/deepgemm/_capi$suffix" -L"$LIBDIR" -ldeepgemm -Wl,-rpath,"$LIBDIR"
cd "$OUT" && PYTHONPATH=$OUT "$PYTHON" -c 'import deepgemm; print("deepgemm", deepgemm.version(), "for Python", __import__("sys").version.split()[0], "in", deepgemm.__path__[0])'

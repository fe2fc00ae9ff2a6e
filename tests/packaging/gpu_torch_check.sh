#!/bin/bash
# gpu_torch_check.sh - the Python binding with PyTorch CUDA tensors, on a machine (the GPU device)
# that has Python + torch but neither SWIG nor CMake nor Boost. Two steps:
#
#   here:    tests/packaging/gpu_torch_check.sh stage <build-dir> <stage-dir>
#            (a build configured with -DDGEMM_BUILD_BINDINGS=ON: installs the library into the
#            stage and adds the SWIG-generated wrapper source, stage/pygen)
#   device:  tests/packaging/gpu_torch_check.sh run <stage-dir> [<out-dir>]
#            (compiles the wrapper for the device's python3 against stage/lib, then runs
#            gpu_torch_check.py; exit 77 = no CUDA there)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case "${1:-}" in
  stage)
    BUILD=${2:?stage <build-dir> <stage-dir>}
    STAGE=${3:?stage <build-dir> <stage-dir>}
    cmake --install "$BUILD" --prefix "$STAGE" >/dev/null
    mkdir -p "$STAGE/pygen/deepgemm"
    cp "$BUILD/bindings/python/capi_wrap.c" "$STAGE/pygen/"
    cp "$BUILD/bindings/python/deepgemm/capi.py" "$STAGE/pygen/deepgemm/"
    du -sh "$STAGE"
    ;;
  run)
    STAGE=$(cd "${2:?run <stage-dir> [<out-dir>]}" && pwd)
    OUTDIR=${3:-${OUT:-/tmp}/deepgemm-python}
    lib=$(dirname "$(find "$STAGE" -name libdeepgemm.so.1 | head -n 1)")
    # The system compiler: a C extension built by another toolchain's gcc can drag in a second
    # libstdc++ (seen on the device with /opt/gcc).
    CC=${CC:-$(command -v /usr/bin/gcc || command -v cc)} "$HERE/../../bindings/python/build_module.sh" \
      "$OUTDIR" "$lib" "$STAGE/pygen"
    cd "$OUTDIR"
    PYTHONPATH=$OUTDIR python3 "$HERE/gpu_torch_check.py"
    ;;
  *)
    echo "usage: gpu_torch_check.sh stage <build-dir> <stage-dir> | run <stage-dir> [<out-dir>]" >&2
    exit 2
    ;;
esac

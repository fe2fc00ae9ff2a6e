#!/bin/bash
# gpu_torch_check.sh - the Python package with PyTorch CUDA tensors, on a machine (the GPU device)
# that has Python + torch but no compiler toolchain for DeepGEMM. Two steps:
#
#   here:    tests/packaging/gpu_torch_check.sh stage <source-dir> <stage-dir>
#            (builds the wheel, with the CUDA backend when the toolkit is here, into stage/wheels:
#            what `pip install .` would install)
#   device:  tests/packaging/gpu_torch_check.sh run <stage-dir> [<out-dir>]
#            (installs the wheel into <out-dir>/site with pip, offline, then runs
#            gpu_torch_check.py; exit 77 = no CUDA or no torch there)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PYTHON=${PYTHON:-python3}
case "${1:-}" in
  stage)
    SRC=$(cd "${2:?stage <source-dir> <stage-dir>}" && pwd)
    STAGE=${3:?stage <source-dir> <stage-dir>}
    mkdir -p "$STAGE/wheels"
    rm -f "$STAGE"/wheels/deepgemm-*.whl
    "$PYTHON" -m pip wheel --no-deps -q -w "$STAGE/wheels" "$SRC" -Cbuild-dir="$STAGE/.wheel-build"
    rm -rf "$STAGE/.wheel-build"
    ls -la "$STAGE"/wheels/deepgemm-*.whl
    ;;
  run)
    STAGE=$(cd "${2:?run <stage-dir> [<out-dir>]}" && pwd)
    OUTDIR=${3:-${OUT:-/tmp}/deepgemm-python}
    rm -rf "$OUTDIR/site"
    mkdir -p "$OUTDIR"
    "$PYTHON" -m pip install -q --no-deps --no-index --disable-pip-version-check --target "$OUTDIR/site" \
      "$STAGE"/wheels/deepgemm-*.whl
    cd "$OUTDIR"
    PYTHONPATH=$OUTDIR/site "$PYTHON" "$HERE/gpu_torch_check.py"
    ;;
  *)
    echo "usage: gpu_torch_check.sh stage <source-dir> <stage-dir> | run <stage-dir> [<out-dir>]" >&2
    exit 2
    ;;
esac

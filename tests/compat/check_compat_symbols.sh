#!/usr/bin/env bash
# check_compat_symbols.sh LIBRARY EXPORTS_DEF EXPORTS_MAP
# The dynamic symbols libdeepgemm_cublas.so.1 exports must be exactly:
#   every DGC_CUBLAS(name) of exports.def as name@@libcublas.so.13 and name@libcublas.so.12,
#   every DGC_CUBLASLT(name) as name@@libcublasLt.so.13 and name@libcublasLt.so.12,
#   every function of the map's DEEPGEMM_CUBLAS_1.0 node as name@@DEEPGEMM_CUBLAS_1.0;
# its soname libdeepgemm_cublas.so.1, and no cuBLAS / CUDA library among its DT_NEEDED entries
# (the real cuBLAS and the driver are loaded with dlopen when needed).
set -euo pipefail
lib=$1 def=$2 map=$3
fail=0

expected=$( {
  sed -nE 's/^DGC_CUBLAS\(([A-Za-z0-9_]+)\)$/\1@@libcublas.so.13\n\1@libcublas.so.12/p' "$def"
  sed -nE 's/^DGC_CUBLASLT\(([A-Za-z0-9_]+)\)$/\1@@libcublasLt.so.13\n\1@libcublasLt.so.12/p' "$def"
  sed -n '/DEEPGEMM_CUBLAS_1.0/,/local:/p' "$map" | sed -nE 's/^ *([a-z_]+);$/\1@@DEEPGEMM_CUBLAS_1.0/p'
} | sort)
# Defined dynamic symbols, without the version-definition entries (ABS OBJECTs named like nodes).
actual=$(readelf --dyn-syms -W "$lib" | awk '$7 != "UND" && $4 != "OBJECT" && NR > 3 {print $8}' | grep . | sort)

if [[ $(echo "$expected" | wc -l) -lt 40 ]]; then
  echo "check_compat_symbols: FAIL: only $(echo "$expected" | wc -l) names read from $def / $map"; fail=1
fi
if ! diff <(echo "$expected") <(echo "$actual") > /tmp/compat_symbols.$$.diff; then
  echo "check_compat_symbols: FAIL: exported symbols differ from exports.def / exports.map (< expected, > exported):"
  cat /tmp/compat_symbols.$$.diff
  fail=1
fi
rm -f /tmp/compat_symbols.$$.diff

soname=$(readelf -d "$lib" | sed -nE 's/.*\(SONAME\).*\[(.*)\]/\1/p')
[[ $soname == libdeepgemm_cublas.so.1 ]] || { echo "check_compat_symbols: FAIL: soname is '$soname'"; fail=1; }
needed=$(readelf -d "$lib" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p' | tr '\n' ' ')
if echo "$needed" | grep -qE 'libcublas|libcuda|libcudart|libnvrtc'; then
  echo "check_compat_symbols: FAIL: links a CUDA library: $needed"; fail=1
fi
echo "$needed" | grep -q 'libdeepgemm.so.1' || { echo "check_compat_symbols: FAIL: does not link libdeepgemm.so.1"; fail=1; }

echo "check_compat_symbols: $(echo "$actual" | wc -l) exported symbols; needs: $needed"
[[ $fail == 0 ]] && echo "check_compat_symbols: ok"
exit $fail

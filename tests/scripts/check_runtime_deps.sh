#!/usr/bin/env bash
# Fails if the library needs anything at load time beyond the system C/C++ runtime (and OpenMP):
# CUDA's runtime is linked statically and NVRTC / the driver are loaded with dlopen.
set -euo pipefail
lib=$1
allowed='^(libc|libm|libstdc\+\+|libgcc_s|libgomp|libdl|libpthread|librt|ld-linux-x86-64)\.so'
needed=$(readelf -d "$lib" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
bad=$(echo "$needed" | grep -vE "$allowed" || true)
if [ -n "$bad" ]; then
  echo "unexpected NEEDED entries in $lib:"; echo "$bad"; exit 1
fi
echo "runtime_deps: NEEDED =" $needed

#!/bin/bash
# run_rust_test.sh - CTest driver of the Rust crates against a build tree: cargo test of the
# workspace (deepgemm-sys's version check and bindgen layout tests, the safe crate's tests, its
# doc tests and its example), offline. The one crate from outside, `half`, comes from Debian's
# crate folder (librust-half-dev: /usr/share/cargo/registry), used as cargo's crates.io source.
#   run_rust_test.sh <work-dir> <include-dir> <lib-dir>
# Exit 77 (skipped) when the Debian crate folder lacks half.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=${1:?usage: run_rust_test.sh <work-dir> <include-dir> <lib-dir>}
LIBDIR=$(cd "${3:?}" && pwd)
CARGO=${CARGO:-cargo}
REGISTRY=${DEEPGEMM_CARGO_REGISTRY:-/usr/share/cargo/registry}
if ! ls -d "$REGISTRY"/half-* >/dev/null 2>&1; then
  echo "SKIP: no half crate in $REGISTRY (Debian: apt-get install librust-half-dev)"
  exit 77
fi
mkdir -p "$WORK"
export CARGO_TARGET_DIR=$WORK/target DEEPGEMM_LIB_DIR=$LIBDIR CARGO_TERM_COLOR=never
offline=(--offline --config "source.crates-io.replace-with='local-crates'"
         --config "source.local-crates.directory='$REGISTRY'")
"$CARGO" test "${offline[@]}" --manifest-path "$HERE/Cargo.toml"
"$CARGO" build "${offline[@]}" --manifest-path "$HERE/Cargo.toml" -p deepgemm --example linear
# The example runs with the RPATH the safe crate's build script gives it: no LD_LIBRARY_PATH.
env -u LD_LIBRARY_PATH "$WORK/target/debug/examples/linear"

#!/bin/bash
# rust_consumer.sh - the Rust crates as a user gets them from crates.io: `cargo package` makes the
# .crate files of deepgemm-sys and deepgemm, they are laid out with Debian's crates (half) in a
# local crate folder that stands in for crates.io, and a separate crate (tests/packaging/rust-consumer)
# that depends on `deepgemm = "1.0"` is built and run offline. deepgemm-sys finds the installed
# library through pkg-config alone. Then the packaged crate's own example is built the same way
# and runs without LD_LIBRARY_PATH (its RPATH comes from the crate's build script).
#   tests/packaging/rust_consumer.sh <source-dir> <install-libdir> <work-dir>
# Exit 77 (skipped) when Debian's crate folder lacks half.
set -euo pipefail
SRC=$(cd "${1:?usage: rust_consumer.sh <source-dir> <install-libdir> <work-dir>}" && pwd)
LIBDIR=$(cd "${2:?}" && pwd)
WORK=${3:?}
CARGO=${CARGO:-cargo}
DEBIAN_CRATES=${DEEPGEMM_CARGO_REGISTRY:-/usr/share/cargo/registry}
if ! ls -d "$DEBIAN_CRATES"/half-* >/dev/null 2>&1; then
  echo "SKIP: no half crate in $DEBIAN_CRATES (Debian: apt-get install librust-half-dev)"
  exit 77
fi
rm -rf "$WORK"
mkdir -p "$WORK/crates"
WORK=$(cd "$WORK" && pwd)
for c in "$DEBIAN_CRATES"/*; do ln -s "$c" "$WORK/crates/"; done
export CARGO_TARGET_DIR=$WORK/target CARGO_TERM_COLOR=never CARGO_HOME=$WORK/cargo-home
offline=(--offline --config "source.crates-io.replace-with='local-crates'"
         --config "source.local-crates.directory='$WORK/crates'")
unset DEEPGEMM_LIB_DIR LD_LIBRARY_PATH
export PKG_CONFIG_LIBDIR=$LIBDIR/pkgconfig PKG_CONFIG_PATH=

# A crate folder entry: the unpacked .crate and the checksum cargo verifies it by.
add_crate() {
  local crate=$1
  tar -xzf "$crate" -C "$WORK/crates"
  local dir=$WORK/crates/$(basename "$crate" .crate)
  printf '{"package":"%s","files":{}}' "$(sha256sum "$crate" | cut -d' ' -f1)" >"$dir/.cargo-checksum.json"
  echo "packaged: $(basename "$crate") ($(tar -tzf "$crate" | wc -l) files)"
}
for crate in deepgemm-sys deepgemm; do  # in dependency order: deepgemm's package resolves deepgemm-sys
  "$CARGO" package "${offline[@]}" --no-verify --allow-dirty -q --manifest-path "$SRC/bindings/rust/Cargo.toml" -p "$crate"
  add_crate "$WORK/target/package/$crate-1.0.0.crate"
done

cp -r "$SRC/tests/packaging/rust-consumer" "$WORK/consumer"
"$CARGO" build "${offline[@]}" -q --manifest-path "$WORK/consumer/Cargo.toml"
grep -A1 'name = "deepgemm"' "$WORK/consumer/Cargo.lock" | grep -q 'version = "1.0.0"'
# A prefix outside the loader's search path: LD_LIBRARY_PATH, as for any library installed there.
LD_LIBRARY_PATH=$LIBDIR "$WORK/target/debug/deepgemm-consumer"

# The published crate's example, built from the package: its RPATH finds the library.
cp -r "$WORK/crates/deepgemm-1.0.0" "$WORK/deepgemm-crate"
rm "$WORK/deepgemm-crate/.cargo-checksum.json"
"$CARGO" build "${offline[@]}" -q --manifest-path "$WORK/deepgemm-crate/Cargo.toml" --example linear
"$WORK/target/debug/examples/linear"

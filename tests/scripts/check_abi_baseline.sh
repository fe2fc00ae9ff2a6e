#!/usr/bin/env bash
# check_abi_baseline.sh PROBE_LIB BASELINE_DIR HEADERS_DIR [--update]
#
# Fails when the DGEMM_1.0 ABI differs from the recorded baseline (tests/abi): a 1.0 function
# removed or with another signature, or a change to any type it reaches (struct sizes, member
# offsets and types, enumerators). Additions pass: new functions in DGEMM_1.1 or later nodes are
# outside the baseline's symbol list, and added symbols are not reported.
#
# PROBE_LIB is libdeepgemm built with debug info in its C boundary (target deepgemm_abi_probe;
# the shipped library has none for abidw to read). --update rewrites the baseline from it: run
# that only for an intentional change (see tests/abi/README.md). Exit 77 (CTest: skipped) when
# libabigail's abidw/abidiff are not installed (Debian package abigail-tools).
set -euo pipefail
probe=$1 baseline_dir=$2 headers=$3 mode=${4:-check}
if ! command -v abidw >/dev/null || ! command -v abidiff >/dev/null; then
  echo "SKIPPED: abidw/abidiff not installed (apt-get install abigail-tools)"
  exit 77
fi
abi=$baseline_dir/deepgemm-1.0.abi
symbols=$baseline_dir/deepgemm-1.0.symbols
# The same reading of the binary for the baseline and the check: exported interfaces only, only
# the types defined in the public header, nothing that depends on the build machine.
dump() {
  abidw --exported-interfaces-only --drop-private-types --headers-dir "$headers" --no-show-locs \
        --no-comp-dir-path --no-corpus-path --no-elf-needed -w "$symbols" "$1" |
    sed "s#path='[^']*/src/api/#path='src/api/#"
}

if [ "$mode" = --update ]; then
  # The DGEMM_1.0 names, from the symbol versions of the probe itself.
  { echo "[deepgemm_1_0_whitelist]"  # libabigail reads sections whose name ends in _whitelist
    nm -D --defined-only "$probe" | awk '$3 ~ /@@?DGEMM_1\.0$/ {sub(/@.*/, "", $3); print "  " $3}' | sort
  } > "$symbols"
  dump "$probe" > "$abi"
  echo "abi_baseline: wrote $abi ($(grep -c '<elf-symbol' "$abi") functions) and $symbols"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dump "$probe" > "$tmp/current.abi"
status=0
abidiff --no-added-syms -w "$symbols" "$abi" "$tmp/current.abi" > "$tmp/report" || status=$?
if [ $status -ne 0 ]; then
  cat "$tmp/report"
  echo "abi_baseline: the DGEMM_1.0 ABI changed (abidiff status $status). DGEMM_1.0 never changes:"
  echo "add new functions to a new version node instead. For an intentional change, see tests/abi/README.md."
  exit 1
fi
echo "abi_baseline: DGEMM_1.0 unchanged ($(grep -c '^  ' "$symbols") functions and the types they reach)"

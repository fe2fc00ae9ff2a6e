#!/usr/bin/env bash
# Fails unless the library's exported (defined, dynamic) symbols are exactly the names listed in
# the version script, each bound to the version node that lists it (DGEMM_1.0, DGEMM_1.1, ...),
# with no C++ symbol among them.
set -euo pipefail
lib=$1 map=$2
# "name@@NODE" for every name in the script, from the node it appears in (comments stripped).
expected=$(sed 's#/\*.*\*/##' "$map" | awk '
  /^[[:space:]]*DGEMM_[0-9.]+[[:space:]]*\{/ { node = $1; sub(/\{.*/, "", node); next }
  /global:|local:|^[[:space:]]*\}/ { next }
  node != "" && /^[[:space:]]*[A-Za-z_][A-Za-z0-9_]*;/ { gsub(/[ ;\t]/, ""); print $0 "@@" node }' | sort)
# nm prints "ADDR TYPE name@@VERSION"; the version nodes themselves show as absolute symbols.
exported=$(nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sort)
status=0
if [ "$exported" != "$expected" ]; then
  echo "exported symbols or their versions differ from $map (< exported, > version script):"
  diff <(echo "$exported") <(echo "$expected") || true
  status=1
fi
if echo "$exported" | grep -q '^_Z'; then echo "C++ symbols are exported"; status=1; fi
count=$(echo "$expected" | wc -l)
nodes=$(echo "$expected" | sed 's/.*@@//' | sort -u | tr '\n' ' ')
[ $status -eq 0 ] && echo "abi_symbols: $count symbols in $nodes matching $map"
exit $status

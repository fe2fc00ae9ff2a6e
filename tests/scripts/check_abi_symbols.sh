#!/usr/bin/env bash
# Fails unless the library's exported (defined, dynamic) symbols are exactly the names listed in
# the version script's DGEMM_1.0 node, each bound to that version, with no C++ symbol among them.
set -euo pipefail
lib=$1 map=$2
expected=$(sed -n '/global:/,/local:/p' "$map" | grep -oE '^[[:space:]]*[A-Za-z_][A-Za-z0-9_]*;' | tr -d ' ;' | sort)
# nm prints "ADDR TYPE name@@VERSION"; the version node itself shows as an absolute symbol.
exported=$(nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sort)
unversioned=$(echo "$exported" | grep -v '@@DGEMM_1\.0$' || true)
names=$(echo "$exported" | sed 's/@@.*//' | sort)
status=0
if [ -n "$unversioned" ]; then
  echo "symbols exported outside DGEMM_1.0:"; echo "$unversioned"; status=1
fi
if [ "$names" != "$expected" ]; then
  echo "exported symbols differ from $map (< exported, > version script):"
  diff <(echo "$names") <(echo "$expected") || true
  status=1
fi
if echo "$names" | grep -q '^_Z'; then echo "C++ symbols are exported"; status=1; fi
count=$(echo "$expected" | wc -l)
[ $status -eq 0 ] && echo "abi_symbols: $count symbols, all in DGEMM_1.0, matching $map"
exit $status

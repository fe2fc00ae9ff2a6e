#!/bin/bash
# run_go_test.sh - CTest driver of the Go binding against a build tree: writes a deepgemm.pc for
# the given include and library directories (the binding finds the library through
# `#cgo pkg-config: deepgemm`, as it does after an install), then gofmt, go vet and go test (with
# the race detector when available). Offline: the module has no dependencies, GOPROXY=off, caches
# live in the work directory.
#   run_go_test.sh <work-dir> <include-dir> <lib-dir>
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=${1:?usage: run_go_test.sh <work-dir> <include-dir> <lib-dir>}
INCLUDE=$(cd "${2:?}" && pwd)
LIBDIR=$(cd "${3:?}" && pwd)
GO=${GO:-go}

mkdir -p "$WORK/pkgconfig" "$WORK/cache" "$WORK/gopath"
cat >"$WORK/pkgconfig/deepgemm.pc" <<PC
Name: deepgemm
Description: DeepGEMM (build tree, for the Go binding's tests)
Version: 0
Cflags: -I$INCLUDE
Libs: -L$LIBDIR -ldeepgemm -Wl,-rpath,$LIBDIR
PC
cd "$HERE"
export PKG_CONFIG_PATH=$WORK/pkgconfig PKG_CONFIG_LIBDIR=$WORK/pkgconfig
export GOPROXY=off GOFLAGS=-mod=readonly GOTOOLCHAIN=local GO111MODULE=on GOSUMDB=off
export GOCACHE=$WORK/cache GOPATH=$WORK/gopath CGO_ENABLED=1
unformatted=$(gofmt -l .)
[ -z "$unformatted" ] || { echo "gofmt: $unformatted"; exit 1; }
"$GO" vet .
race=-race
"$GO" test -race -run TestVersion . >/dev/null 2>&1 || race=  # no race runtime on this platform
"$GO" test -count=1 $race -v . 2>&1

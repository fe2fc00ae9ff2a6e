#!/bin/bash
# run_go_test.sh - CTest driver of the Go binding: copies the module out of the source tree,
# generates internal/capi with SWIG from bindings/deepgemm.i, then go vet + go test (with the race
# detector when available) against the given include and library directories. Offline: the
# module has no dependencies, GOPROXY=off, caches live in the work directory.
#   run_go_test.sh <work-dir> <include-dir> <lib-dir>
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=${1:?usage: run_go_test.sh <work-dir> <include-dir> <lib-dir>}
INCLUDE=$(cd "${2:?}" && pwd)
LIBDIR=$(cd "${3:?}" && pwd)
SWIG=${SWIG:-swig}

rm -rf "$WORK/module"
mkdir -p "$WORK/module" "$WORK/cache" "$WORK/gopath"
cp -r "$HERE/." "$WORK/module/"
cd "$WORK/module/internal/capi"
rm -f capi.go capi_wrap.c
"$SWIG" -go -cgo -intgosize 64 -I"$INCLUDE" -module capi -outdir . -o capi_wrap.c "$HERE/../deepgemm.i"
cd "$WORK/module"

export GOPROXY=off GOFLAGS=-mod=readonly GOTOOLCHAIN=local GO111MODULE=on GOSUMDB=off
export GOCACHE=$WORK/cache GOPATH=$WORK/gopath CGO_ENABLED=1
export CGO_CFLAGS="-I$INCLUDE" CGO_LDFLAGS="-L$LIBDIR -Wl,-rpath,$LIBDIR"
unformatted=$(gofmt -l deepgemm.go memory.go scaling.go deepgemm_test.go scaling_test.go example_test.go internal/capi/generate.go)
[ -z "$unformatted" ] || { echo "gofmt: $unformatted"; exit 1; }
go vet .
race=-race
go test -race -run TestVersion . >/dev/null 2>&1 || race=  # no race runtime on this platform
go test -count=1 $race -v . 2>&1

#!/bin/bash
# go_consumer.sh - the Go module as a user gets it: the module bindings/go is packed as version
# v1.0.0 into a module-proxy folder (the layout `go get` downloads from; GOPROXY=file://...), and
# a separate module (tests/packaging/go-consumer) requires it by path and version, `go get`s it,
# `go build`s and runs. The library comes from an installed prefix through pkg-config.
#   tests/packaging/go_consumer.sh <source-dir> <install-libdir> <work-dir>
set -euo pipefail
SRC=$(cd "${1:?usage: go_consumer.sh <source-dir> <install-libdir> <work-dir>}" && pwd)
LIBDIR=$(cd "${2:?}" && pwd)
WORK=${3:?}
GO=${GO:-go}
PYTHON=${PYTHON:-python3}
MODULE=$(sed -n 's/^module //p' "$SRC/bindings/go/go.mod")
VERSION=v1.0.0
rm -rf "$WORK"
mkdir -p "$WORK/proxy" "$WORK/consumer"
WORK=$(cd "$WORK" && pwd)

# The proxy protocol's three files per version: .info, .mod and a zip whose paths start with
# module@version/ (what `go mod download` verifies).
"$PYTHON" - "$SRC/bindings/go" "$WORK/proxy" "$MODULE" "$VERSION" <<'PY'
import json, os, sys, zipfile
src, proxy, module, version = sys.argv[1:]
folder = os.path.join(proxy, module.lower(), "@v")
os.makedirs(folder)
with open(os.path.join(folder, "list"), "w") as f:
    f.write(version + "\n")
with open(os.path.join(folder, version + ".info"), "w") as f:
    json.dump({"Version": version, "Time": "2026-11-30T00:00:00Z"}, f)
with open(os.path.join(src, "go.mod")) as f, open(os.path.join(folder, version + ".mod"), "w") as g:
    g.write(f.read())
with zipfile.ZipFile(os.path.join(folder, version + ".zip"), "w") as z:
    for name in sorted(os.listdir(src)):
        if name.endswith((".go", ".mod")) or name in ("LICENSE",):
            z.write(os.path.join(src, name), f"{module}@{version}/{name}")
    z.write(os.path.join(src, "..", "..", "LICENSE"), f"{module}@{version}/LICENSE")
PY
cp "$SRC/tests/packaging/go-consumer/main.go" "$WORK/consumer/"
printf 'module example.com/deepgemm-consumer\n\ngo 1.19\n' >"$WORK/consumer/go.mod"

cd "$WORK/consumer"
export GOPROXY=file://$WORK/proxy GOSUMDB=off GOFLAGS=-mod=mod GOTOOLCHAIN=local GO111MODULE=on CGO_ENABLED=1
export GOCACHE=$WORK/cache GOPATH=$WORK/gopath GOMODCACHE=$WORK/gopath/pkg/mod
export PKG_CONFIG_LIBDIR=$LIBDIR/pkgconfig PKG_CONFIG_PATH=
"$GO" get "$MODULE@$VERSION"
grep -q "require $MODULE $VERSION" go.mod || { cat go.mod; echo "FAIL: go.mod does not require $MODULE $VERSION"; exit 1; }
"$GO" build -o consumer .
# A prefix outside the loader's search path: LD_LIBRARY_PATH, as for any library installed there
# (after an install into /usr/local and ldconfig the program runs as it is).
LD_LIBRARY_PATH=$LIBDIR ./consumer

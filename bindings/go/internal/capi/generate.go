// Package capi is the SWIG-generated (cgo) binding of deepgemm.h, produced from the project's one
// interface file ../../../deepgemm.i by `go generate ./...`; the deepgemm package wraps it.
//
// It links -ldeepgemm; point cgo at an install with CGO_CFLAGS/CGO_LDFLAGS, for example
//
//	CGO_CFLAGS="$(pkg-config --cflags deepgemm)" CGO_LDFLAGS="$(pkg-config --libs deepgemm)"
package capi

//go:generate swig -go -cgo -intgosize 64 -I../../../../include -module capi -outdir . -o capi_wrap.c ../../../deepgemm.i

// #cgo LDFLAGS: -ldeepgemm
import "C"

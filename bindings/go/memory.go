package deepgemm

// #include <stdlib.h>
import "C"

import (
	"runtime"
	"unsafe"
)

// Memory is an address the library reads or writes: device memory for CUDA plans, host memory
// for CPU plans.
type Memory interface {
	Address() uintptr
}

// DevicePtr is CUDA device memory allocated elsewhere (a CUdeviceptr, or a tensor's data pointer).
type DevicePtr uintptr

// Address implements Memory.
func (p DevicePtr) Address() uintptr { return uintptr(p) }

// HostBuffer is host memory allocated with C's malloc: the library may read and write it without
// breaking cgo's pointer rules, and Go's garbage collector neither moves nor frees it. Views like
// Float32s alias it and must not be used after Close.
type HostBuffer struct {
	p    unsafe.Pointer
	size int
}

// NewHostBuffer allocates size bytes (at least one, 16-byte aligned by malloc).
func NewHostBuffer(size int) (*HostBuffer, error) {
	n := size
	if n < 1 {
		n = 1
	}
	p := C.malloc(C.size_t(n))
	if p == nil {
		return nil, &Error{Status: StatusOutOfMemory, Message: "deepgemm: malloc failed"}
	}
	b := &HostBuffer{p: p, size: size}
	runtime.SetFinalizer(b, func(b *HostBuffer) { b.Close() })
	return b, nil
}

// Address implements Memory.
func (b *HostBuffer) Address() uintptr { return uintptr(b.p) }

// Size is the buffer's length in bytes.
func (b *HostBuffer) Size() int { return b.size }

// Bytes views the buffer as bytes.
func (b *HostBuffer) Bytes() []byte { return unsafe.Slice((*byte)(b.p), b.size) }

// Float32s views the buffer as float32 values.
func (b *HostBuffer) Float32s() []float32 { return unsafe.Slice((*float32)(b.p), b.size/4) }

// Uint16s views the buffer as 16-bit words (F16 / BF16 bit patterns).
func (b *HostBuffer) Uint16s() []uint16 { return unsafe.Slice((*uint16)(b.p), b.size/2) }

// Int8s views the buffer as int8 values.
func (b *HostBuffer) Int8s() []int8 { return unsafe.Slice((*int8)(b.p), b.size) }

// Int32s views the buffer as int32 values.
func (b *HostBuffer) Int32s() []int32 { return unsafe.Slice((*int32)(b.p), b.size/4) }

// Close frees the buffer; closing twice is a no-op.
func (b *HostBuffer) Close() {
	if b.p != nil {
		C.free(b.p)
		b.p = nil
		b.size = 0
		runtime.SetFinalizer(b, nil)
	}
}

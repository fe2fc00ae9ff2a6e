// Package deepgemm is the Go binding of DeepGEMM (libdeepgemm.so.1): GEMM with fused epilogues,
//
//	D = act(alpha * op(A) @ op(B) + beta * C + bias)
//
// planned once per shape (Context.NewPlan) and executed many times (Plan.Execute), on a CUDA GPU
// or on the CPU reference backend. It calls deepgemm.h directly through cgo (this file, memory.go
// and scaling.go, the DGEMM_1.1 input scaling, are the whole binding; cgo reads the installed
// header, so a changed declaration is a compile error, and there is nothing to generate): handles
// become types with Close, statuses become *Error values carrying the status and message.
//
// Build requirements: cgo and an installed libdeepgemm with its pkg-config file (`cmake --install`
// puts deepgemm.pc in <prefix>/lib/pkgconfig; set PKG_CONFIG_PATH for a prefix pkg-config does not
// search).
//
// Memory handed to the library is addressed through the Memory interface: DevicePtr for CUDA
// memory allocated elsewhere, HostBuffer (C-allocated, so the Go garbage collector never moves
// or frees it under the library) for the CPU backend.
package deepgemm

/*
#cgo pkg-config: deepgemm
#include <stdint.h>
#include <stdlib.h>
#include "deepgemm/deepgemm.h"

// Addresses cross as uintptr on the Go side (device memory, C allocations): turning them back into
// pointers here keeps Go's unsafe.Pointer rules out of it.
static inline void *dgemm_go_ptr(uintptr_t p) { return (void *)p; }
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Status is a dgemm_status_t; the numbers are fixed forever by deepgemm.h.
type Status int

var (
	StatusSuccess               = Status(C.DGEMM_STATUS_SUCCESS)
	StatusInvalidArgument       = Status(C.DGEMM_STATUS_INVALID_ARGUMENT)
	StatusNotSupported          = Status(C.DGEMM_STATUS_NOT_SUPPORTED)
	StatusOutOfMemory           = Status(C.DGEMM_STATUS_OUT_OF_MEMORY)
	StatusInsufficientWorkspace = Status(C.DGEMM_STATUS_INSUFFICIENT_WORKSPACE)
	StatusContextMismatch       = Status(C.DGEMM_STATUS_CONTEXT_MISMATCH)
	StatusNoDevice              = Status(C.DGEMM_STATUS_NO_DEVICE)
	StatusDeviceError           = Status(C.DGEMM_STATUS_DEVICE_ERROR)
	StatusCompileError          = Status(C.DGEMM_STATUS_COMPILE_ERROR)
	StatusArchFileError         = Status(C.DGEMM_STATUS_ARCH_FILE_ERROR)
	StatusInternalError         = Status(C.DGEMM_STATUS_INTERNAL_ERROR)
)

// String returns the library's name for the status ("DGEMM_STATUS_INVALID_ARGUMENT").
func (s Status) String() string { return C.GoString(C.dgemm_status_string(C.dgemm_status_t(s))) }

// Error is a failed library call: its status and the library's message, which names the
// offending argument and its value.
type Error struct {
	Status  Status
	Message string
}

func (e *Error) Error() string { return e.Status.String() + ": " + e.Message }

// check turns a status into an *Error. The message is thread-local in the library, so the
// goroutine must stay on its OS thread between the call and the read: callers lock it.
func check(status C.dgemm_status_t) error {
	if status == C.DGEMM_STATUS_SUCCESS {
		return nil
	}
	return &Error{Status: Status(status), Message: C.GoString(C.dgemm_last_error())}
}

// call runs one library call and collects its status and message on one OS thread.
func call(f func() C.dgemm_status_t) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return check(f())
}

// Version returns the loaded library's "MAJOR.MINOR.PATCH".
func Version() string { return C.GoString(C.dgemm_version_string()) }

// DType is an element type.
type DType int

var (
	F32    = DType(C.DGEMM_DTYPE_F32)
	F16    = DType(C.DGEMM_DTYPE_F16)
	BF16   = DType(C.DGEMM_DTYPE_BF16)
	F8E4M3 = DType(C.DGEMM_DTYPE_F8_E4M3)
	F8E5M2 = DType(C.DGEMM_DTYPE_F8_E5M2)
	I8     = DType(C.DGEMM_DTYPE_I8)
	I32    = DType(C.DGEMM_DTYPE_I32)
)

// Size is the element size in bytes.
func (t DType) Size() int {
	switch t {
	case F32, I32:
		return 4
	case F16, BF16:
		return 2
	}
	return 1
}

// Activation is the epilogue's activation function (see deepgemm.h for the formulas).
type Activation int

var (
	ActNone     = Activation(C.DGEMM_ACT_NONE)
	ActReLU     = Activation(C.DGEMM_ACT_RELU)
	ActGELUTanh = Activation(C.DGEMM_ACT_GELU_TANH)
	ActGELUErf  = Activation(C.DGEMM_ACT_GELU_ERF)
	ActSiLU     = Activation(C.DGEMM_ACT_SILU)
)

// VectorMode says how a bias (or scale) vector is indexed.
type VectorMode int

var (
	VectorNone      = VectorMode(C.DGEMM_VECTOR_NONE)
	VectorPerTensor = VectorMode(C.DGEMM_VECTOR_PER_TENSOR)
	VectorPerRow    = VectorMode(C.DGEMM_VECTOR_PER_ROW)
	VectorPerColumn = VectorMode(C.DGEMM_VECTOR_PER_COLUMN)
)

// DeviceKind selects where a context runs.
type DeviceKind int

var (
	DeviceAuto = DeviceKind(C.DGEMM_DEVICE_AUTO)
	DeviceCUDA = DeviceKind(C.DGEMM_DEVICE_CUDA)
	DeviceCPU  = DeviceKind(C.DGEMM_DEVICE_CPU)
)

// ---------------------------------------------------------------------------------------------

// Context is a device and its caches. Creating plans from several goroutines is safe. Close it
// after the plans made on it.
type Context struct {
	mu sync.Mutex
	h  C.dgemm_context_t
}

// NewContext creates a context: DeviceAuto (the first GPU, else the CPU), DeviceCUDA with a
// device index, or DeviceCPU.
func NewContext(kind DeviceKind, index int) (*Context, error) {
	var h C.dgemm_context_t
	if err := call(func() C.dgemm_status_t {
		return C.dgemm_context_create(C.dgemm_device_kind_t(kind), C.int(index), &h)
	}); err != nil {
		return nil, err
	}
	c := &Context{h: h}
	runtime.SetFinalizer(c, func(c *Context) { _ = c.Close() }) // a guard against leaks, not the way to free
	return c, nil
}

func (c *Context) handle() (C.dgemm_context_t, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return nil, &Error{Status: StatusInvalidArgument, Message: "deepgemm: the context is closed"}
	}
	return c.h, nil
}

// Device reports where the context runs: DeviceCUDA and its ordinal, or DeviceCPU and 0.
func (c *Context) Device() (DeviceKind, int, error) {
	h, err := c.handle()
	if err != nil {
		return 0, 0, err
	}
	var kind C.dgemm_device_kind_t
	var index C.int
	err = call(func() C.dgemm_status_t { return C.dgemm_context_device(h, &kind, &index) })
	runtime.KeepAlive(c)
	if err != nil {
		return 0, 0, err
	}
	return DeviceKind(kind), int(index), nil
}

// Close frees the context. It fails (and frees nothing) while plans made on it are open; closing
// twice is a no-op.
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return nil
	}
	if err := call(func() C.dgemm_status_t { return C.dgemm_context_destroy(c.h) }); err != nil {
		return err
	}
	c.h = nil
	runtime.SetFinalizer(c, nil)
	return nil
}

// Problem describes the shape, types and layout of a GEMM: op(A) is M x K, op(B) is K x N, C and
// D are M x N. Leading dimensions and batch strides are in elements, 0 meaning packed.
type Problem struct {
	M, N, K                    int64
	AType, BType, CType, DType DType
	ComputeType                DType
	TransA, TransB             bool
	ColumnMajor                bool
	Lda, Ldb, Ldc, Ldd         int64
	BatchCount                 int64
	StrideA, StrideB           int64
	StrideC, StrideD           int64
	// Scaling, when non-nil, plans with DGEMM_1.1 scales of A / B, a block-scaled D or the amax
	// of D (scaling.go); each Execute then takes the tensors in ExecArgs.
	Scaling *Scaling
}

// NewProblem returns the library's defaults (dgemm_problem_init) for an m x n x k GEMM whose
// operands are all of type t (the compute type is I32 for I8, F32 otherwise).
func NewProblem(m, n, k int64, t DType) Problem {
	var p C.dgemm_problem_t
	C.dgemm_problem_init(&p)
	out := Problem{M: m, N: n, K: k, AType: t, BType: t, CType: t, DType: t,
		ComputeType: DType(p.compute_type), BatchCount: int64(p.batch_count)}
	if t == I8 {
		out.ComputeType, out.CType, out.DType = I32, I32, I32
	}
	return out
}

func (p *Problem) toC() C.dgemm_problem_t {
	var c C.dgemm_problem_t
	C.dgemm_problem_init(&c)
	c.m, c.n, c.k = C.int64_t(p.M), C.int64_t(p.N), C.int64_t(p.K)
	c.a_type, c.b_type = C.dgemm_dtype_t(p.AType), C.dgemm_dtype_t(p.BType)
	c.c_type, c.d_type = C.dgemm_dtype_t(p.CType), C.dgemm_dtype_t(p.DType)
	c.compute_type = C.dgemm_dtype_t(p.ComputeType)
	c.op_a, c.op_b = op(p.TransA), op(p.TransB)
	if p.ColumnMajor {
		c.order = C.DGEMM_ORDER_COL_MAJOR
	}
	c.lda, c.ldb, c.ldc, c.ldd = C.int64_t(p.Lda), C.int64_t(p.Ldb), C.int64_t(p.Ldc), C.int64_t(p.Ldd)
	c.batch_count = C.int64_t(p.BatchCount)
	c.stride_a, c.stride_b = C.int64_t(p.StrideA), C.int64_t(p.StrideB)
	c.stride_c, c.stride_d = C.int64_t(p.StrideC), C.int64_t(p.StrideD)
	return c
}

func op(t bool) C.dgemm_op_t {
	if t {
		return C.DGEMM_OP_T
	}
	return C.DGEMM_OP_N
}

// Epilogue is what happens after the product, fixed at plan time.
type Epilogue struct {
	Alpha, Beta float32 // Beta != 0 means the plan reads C
	BiasMode    VectorMode
	BiasType    DType
	Activation  Activation
	// ScaleMode is the output scale's indexing (VectorNone: no scale); the float32 vector itself
	// is given to each Execute in ExecArgs.Scale.
	ScaleMode VectorMode
	// ZeroPoint adds an int32 zero point per scale entry to I8 outputs (ExecArgs.ZeroPoint).
	ZeroPoint bool
	// NoSaturate lets FP8 outputs overflow (NaN for E4M3, inf for E5M2) instead of clamping to
	// the largest finite value; false, the zero value, is the library's default.
	NoSaturate bool
}

// scaleLength is how many entries the plan's scale (and zero point) vectors have.
func (e *Epilogue) scaleLength(p *Problem) int64 {
	switch e.ScaleMode {
	case VectorPerTensor:
		return 1
	case VectorPerRow:
		return p.M
	case VectorPerColumn:
		return p.N
	}
	return 0
}

// NewEpilogue returns the identity epilogue (dgemm_epilogue_init): alpha 1, beta 0, no bias.
func NewEpilogue() Epilogue {
	var e C.dgemm_epilogue_t
	C.dgemm_epilogue_init(&e)
	return Epilogue{Alpha: float32(e.alpha), Beta: float32(e.beta), BiasMode: VectorMode(e.bias_mode),
		BiasType: DType(e.bias_type), Activation: Activation(e.activation)}
}

// PlanOptions are rarely needed knobs; the zero value is the default.
type PlanOptions struct {
	ForceKernel string // a kernel family name ("cpu", "sm80", "sm90", ...), "" lets the planner choose
	ArchFile    string // a YAML hardware description overriding the detected device
	Autotune    bool   // time the best candidates on the device
	// Grouped plans a grouped (mixture-of-experts) problem: the Problem's BatchCount groups,
	// whose rows each Execute gives in ExecArgs.GroupRows (deepgemm.h, "grouped problems").
	Grouped *Grouping
}

// GroupLayout is how a grouped problem's rows are laid out (dgemm_group_layout_t).
type GroupLayout int

var (
	GroupContiguous = GroupLayout(C.DGEMM_GROUP_CONTIGUOUS) // rows concatenated; G + 1 offsets
	GroupMasked     = GroupLayout(C.DGEMM_GROUP_MASKED)     // a slot of M rows per group; G counts
)

// Grouping describes a grouped problem at plan time (dgemm_grouped_t).
type Grouping struct {
	Layout     GroupLayout
	MAlignment int64 // contiguous: every offset is a multiple of it (0 or 1: no promise)
	// ExpectedM: the rows a group is expected to hold on average (0: unknown), as DeepSeek's
	// masked GEMM takes expected_m; a hint for the choice of kernel only.
	ExpectedM int64
}

// Plan is a planned GEMM. Execute may be called from many goroutines at once; Close must not race
// with Execute.
type Plan struct {
	ctx       *Context // keeps the context open as long as the plan
	h         C.dgemm_plan_t
	problem   Problem
	epilogue  Epilogue
	workspace uint64
	grouped   *Grouping
	scales    [3]ScaleShape // A, B, D scale tensors (Problem.Scaling)
}

// NewPlan validates the problem, chooses (and compiles) a kernel and sizes its workspace. A nil
// epilogue is the identity, nil options the defaults.
func (c *Context) NewPlan(p Problem, e *Epilogue, o *PlanOptions) (*Plan, error) {
	ctxh, err := c.handle()
	if err != nil {
		return nil, err
	}
	cp := p.toC()
	var ce C.dgemm_epilogue_t
	C.dgemm_epilogue_init(&ce)
	epi := NewEpilogue()
	if e != nil {
		epi = *e
		ce.alpha, ce.beta = C.float(e.Alpha), C.float(e.Beta)
		ce.bias_mode = C.dgemm_vector_mode_t(e.BiasMode)
		ce.bias_type = C.dgemm_dtype_t(e.BiasType)
		ce.activation = C.dgemm_activation_t(e.Activation)
		ce.scale_mode = C.dgemm_vector_mode_t(e.ScaleMode)
		flags := C.uint32_t(0)
		if !e.NoSaturate {
			flags |= C.DGEMM_EPILOGUE_SATURATE
		}
		if e.ZeroPoint {
			flags |= C.DGEMM_EPILOGUE_ZERO_POINT
		}
		ce.flags = flags
	}
	// The options and their strings live in C memory: they are read by the call only.
	var co *C.dgemm_plan_options_t
	if o != nil {
		co = (*C.dgemm_plan_options_t)(C.calloc(1, C.sizeof_dgemm_plan_options_t))
		defer C.free(unsafe.Pointer(co))
		C.dgemm_plan_options_init(co)
		if o.ForceKernel != "" {
			co.force_kernel = C.CString(o.ForceKernel)
			defer C.free(unsafe.Pointer(co.force_kernel))
		}
		if o.ArchFile != "" {
			co.arch_file = C.CString(o.ArchFile)
			defer C.free(unsafe.Pointer(co.arch_file))
		}
		if o.Autotune {
			co.flags = C.DGEMM_PLAN_AUTOTUNE
		}
	}
	// The DGEMM_1.1 extensions (scaling, grouping), in C memory like the options, read by the call only.
	var chain extChain
	defer chain.free()
	if p.Scaling != nil {
		p.Scaling.toC((*C.dgemm_scaling_t)(chain.add(C.sizeof_dgemm_scaling_t)))
	}
	var grouped *Grouping
	if o != nil && o.Grouped != nil {
		g := (*C.dgemm_grouped_t)(chain.add(C.sizeof_dgemm_grouped_t))
		C.dgemm_grouped_init(g)
		g.layout = C.dgemm_group_layout_t(o.Grouped.Layout)
		if o.Grouped.MAlignment > 0 {
			g.m_alignment = C.int64_t(o.Grouped.MAlignment)
		}
		g.expected_m = C.int64_t(o.Grouped.ExpectedM)
		copied := *o.Grouped
		grouped = &copied
	}
	var h C.dgemm_plan_t
	if err := call(func() C.dgemm_status_t {
		if ext := chain.head(); ext != nil {
			return C.dgemm_create_plan_ext(ctxh, &cp, &ce, co, ext, &h)
		}
		return C.dgemm_create_plan(ctxh, &cp, &ce, co, &h)
	}); err != nil {
		return nil, err
	}
	runtime.KeepAlive(c)
	plan := &Plan{ctx: c, h: h, problem: p, epilogue: epi, grouped: grouped}
	var size C.size_t
	if err := call(func() C.dgemm_status_t { return C.dgemm_plan_workspace_size(plan.h, &size) }); err != nil {
		_ = plan.Close()
		return nil, err
	}
	plan.workspace = uint64(size)
	if err := plan.scaleShapes(); err != nil {
		_ = plan.Close()
		return nil, err
	}
	runtime.SetFinalizer(plan, func(p *Plan) { _ = p.Close() })
	return plan, nil
}

// WorkspaceSize is the number of bytes of workspace Execute needs (often 0).
func (p *Plan) WorkspaceSize() uint64 { return p.workspace }

// Describe returns the plan's JSON description: backend, kernel family, tile, predicted time,
// and why the other candidates lost.
func (p *Plan) Describe() (string, error) {
	if p.h == nil {
		return "", &Error{Status: StatusInvalidArgument, Message: "deepgemm: the plan is closed"}
	}
	var need C.size_t
	if err := call(func() C.dgemm_status_t { return C.dgemm_plan_describe(p.h, nil, 0, &need) }); err != nil {
		return "", err
	}
	buf := (*C.char)(C.malloc(need))
	defer C.free(unsafe.Pointer(buf))
	if err := call(func() C.dgemm_status_t { return C.dgemm_plan_describe(p.h, buf, need, nil) }); err != nil {
		return "", err
	}
	runtime.KeepAlive(p)
	return C.GoString(buf), nil
}

// ExecArgs are the execute-time values; nil Execute args mean the plan's alpha/beta and no vectors.
type ExecArgs struct {
	Alpha, Beta *float32 // override the plan's scalars when non-nil
	// AlphaPtr and BetaPtr hold one float32 each in the plan's memory, read when the kernel runs
	// (DGEMM_SCALARS_DEVICE): set AlphaPtr, and BetaPtr when the plan reads C. They exclude
	// Alpha/Beta.
	AlphaPtr, BetaPtr Memory
	Bias              Memory // the bias vector, required iff the plan has one
	Scale             Memory // float32 output scale (1, m or n entries), required iff Epilogue.ScaleMode
	ZeroPoint         Memory // int32, as many entries as Scale, required iff Epilogue.ZeroPoint
	// Scale tensors of a plan with Problem.Scaling (Plan.ScaleShapes gives their sizes): read
	// AScale / BScale, written DScale and AmaxD (one float32).
	AScale, BScale, DScale, AmaxD Memory
	// Grouped plans: GroupRows holds the int32 offsets (contiguous, G + 1) or counts (masked, G),
	// read when the kernel runs; GroupStatus (optional, one uint32) receives the status bits.
	// Epilogue vectors then hold one copy per group (bias per column: G x n).
	GroupRows, GroupStatus Memory
}

// checkSize reports a HostBuffer too small for what the plan reads from it (other Memory kinds
// carry no size and are the caller's responsibility).
func checkSize(name string, m Memory, need int) error {
	if s, ok := m.(interface{ Size() int }); ok && s.Size() < need {
		return &Error{Status: StatusInvalidArgument,
			Message: fmt.Sprintf("deepgemm: %s holds %d bytes, the plan reads %d", name, s.Size(), need)}
	}
	return nil
}

// Execute runs the plan: D = epilogue(A @ B). A, B, D (and C when the plan reads it) are in the
// plan's device memory; stream is a cudaStream_t (0 = default stream), ignored on the CPU. On the
// CPU the result is ready when Execute returns; on a GPU the work is enqueued on the stream.
// HostBuffer operands are checked to be large enough for the plan's shapes. A nil workspace on
// the CPU is allocated for the call (WorkspaceSize bytes); a GPU plan that needs one must get it.
func (p *Plan) Execute(a, b, c, d Memory, args *ExecArgs, workspace Memory, stream uintptr) error {
	if p.h == nil {
		return &Error{Status: StatusInvalidArgument, Message: "deepgemm: the plan is closed"}
	}
	pr := &p.problem
	ar, ac := pr.M, pr.K
	if pr.TransA {
		ar, ac = ac, ar
	}
	br, bc := pr.K, pr.N
	if pr.TransB {
		br, bc = bc, br
	}
	checks := []struct {
		name       string
		mem        Memory
		t          DType
		rows, cols int64
		ld, stride int64
	}{
		{"a", a, pr.AType, ar, ac, pr.Lda, pr.StrideA},
		{"b", b, pr.BType, br, bc, pr.Ldb, pr.StrideB},
		{"c", c, pr.CType, pr.M, pr.N, pr.Ldc, pr.StrideC},
		{"d", d, pr.DType, pr.M, pr.N, pr.Ldd, pr.StrideD},
	}
	for _, x := range checks {
		if err := checkExtent(x.name, x.mem, x.t, x.rows, x.cols, x.ld, x.stride, pr); err != nil {
			return err
		}
	}
	var cargs C.dgemm_args_t
	C.dgemm_args_init(&cargs)
	if args != nil {
		if args.AlphaPtr != nil || args.BetaPtr != nil {
			if args.Alpha != nil || args.Beta != nil || args.AlphaPtr == nil {
				return &Error{Status: StatusInvalidArgument,
					Message: "deepgemm: device scalars need AlphaPtr (and BetaPtr when C is read), without Alpha/Beta"}
			}
			cargs.scalar_mode = C.DGEMM_SCALARS_DEVICE
			if err := checkSize("alpha", args.AlphaPtr, 4); err != nil {
				return err
			}
			cargs.alpha_ptr = (*C.float)(pointer(args.AlphaPtr))
			if args.BetaPtr != nil {
				if err := checkSize("beta", args.BetaPtr, 4); err != nil {
					return err
				}
				cargs.beta_ptr = (*C.float)(pointer(args.BetaPtr))
			}
		} else if args.Alpha != nil || args.Beta != nil {
			cargs.scalar_mode = C.DGEMM_SCALARS_HOST
			cargs.alpha, cargs.beta = C.float(p.epilogue.Alpha), C.float(p.epilogue.Beta)
			if args.Alpha != nil {
				cargs.alpha = C.float(*args.Alpha)
			}
			if args.Beta != nil {
				cargs.beta = C.float(*args.Beta)
			}
		}
		if args.Bias != nil {
			n := pr.N
			if p.epilogue.BiasMode == VectorPerRow {
				n = pr.M
			}
			if err := checkSize("bias", args.Bias, int(n)*p.epilogue.BiasType.Size()); err != nil {
				return err
			}
			cargs.bias = pointer(args.Bias)
		}
		length := int(p.epilogue.scaleLength(pr))
		if args.Scale != nil {
			if err := checkSize("scale", args.Scale, 4*length); err != nil {
				return err
			}
			cargs.scale = (*C.float)(pointer(args.Scale))
		}
		if args.ZeroPoint != nil {
			if err := checkSize("zero point", args.ZeroPoint, 4*length); err != nil {
				return err
			}
			cargs.zero_point = (*C.int32_t)(pointer(args.ZeroPoint))
		}
	}
	if workspace == nil && p.workspace > 0 {
		// The library never allocates during Execute; on the CPU (whose scratch is workspace too)
		// the binding allocates for a caller who passed none. A GPU plan needs the caller's.
		if kind, _, err := p.ctx.Device(); err == nil && kind == DeviceCPU {
			buf, err := NewHostBuffer(int(p.workspace))
			if err != nil {
				return err
			}
			defer buf.Close()
			workspace = buf
		}
	}
	var ws unsafe.Pointer
	wsSize := uint64(0)
	if workspace != nil {
		ws = pointer(workspace)
		wsSize = p.workspace
		if s, ok := workspace.(interface{ Size() int }); ok {
			wsSize = uint64(s.Size())
		}
	}
	var chain extChain
	defer chain.free()
	if err := p.scaleArgs(args, &chain); err != nil {
		return err
	}
	p.groupArgs(args, &chain)
	ext := chain.head()
	err := call(func() C.dgemm_status_t {
		if ext == nil {
			return C.dgemm_execute(p.h, pointer(a), pointer(b), pointer(c), pointer(d), &cargs, ws, C.size_t(wsSize),
				C.dgemm_go_ptr(C.uintptr_t(stream)))
		}
		return C.dgemm_execute_ext(p.h, pointer(a), pointer(b), pointer(c), pointer(d), &cargs, ext, ws,
			C.size_t(wsSize), C.dgemm_go_ptr(C.uintptr_t(stream)))
	})
	runtime.KeepAlive(p)
	runtime.KeepAlive([]Memory{a, b, c, d, workspace})
	if args != nil {
		runtime.KeepAlive([]Memory{args.Bias, args.Scale, args.ZeroPoint, args.AlphaPtr, args.BetaPtr,
			args.AScale, args.BScale, args.DScale, args.AmaxD, args.GroupRows, args.GroupStatus})
	}
	return err
}

// groupArgs adds a call's DGEMM_EXT_GROUP_ARGS to the chain whenever the plan is grouped or the
// call gives group arrays: the library says what is missing or extra (no rows for a grouped plan,
// rows for a plain one).
func (p *Plan) groupArgs(args *ExecArgs, chain *extChain) {
	if p.grouped == nil && (args == nil || (args.GroupRows == nil && args.GroupStatus == nil)) {
		return
	}
	ga := (*C.dgemm_group_args_t)(chain.add(C.sizeof_dgemm_group_args_t))
	C.dgemm_group_args_init(ga)
	if args != nil {
		rows := (*C.int32_t)(pointer(args.GroupRows))
		if p.grouped != nil && p.grouped.Layout == GroupMasked {
			ga.counts = rows
		} else {
			ga.offsets = rows
		}
		ga.status = (*C.uint32_t)(pointer(args.GroupStatus))
	}
}

// extChain holds the DGEMM_1.1 extension structs of one call in C memory: a chain's structs
// point to one another, which cgo does not allow for Go memory. Each struct begins with its
// dgemm_ext_header_t; head links them (after their *_init functions, which clear next).
type extChain struct {
	structs []unsafe.Pointer
}

// add allocates one extension struct of the given size (uninitialized: call its *_init).
func (c *extChain) add(size C.size_t) unsafe.Pointer {
	s := C.malloc(size) // cgo's malloc never returns nil
	c.structs = append(c.structs, s)
	return s
}

// head links the structs in the order they were added and returns the first (nil: none).
func (c *extChain) head() unsafe.Pointer {
	if len(c.structs) == 0 {
		return nil
	}
	for i := 0; i+1 < len(c.structs); i++ {
		(*C.dgemm_ext_header_t)(c.structs[i]).next = c.structs[i+1]
	}
	return c.structs[0]
}

func (c *extChain) free() {
	for _, s := range c.structs {
		C.free(s)
	}
	c.structs = nil
}

// pointer is the C pointer of a Memory (nil for none).
func pointer(m Memory) unsafe.Pointer {
	if m == nil {
		return nil
	}
	return C.dgemm_go_ptr(C.uintptr_t(m.Address()))
}

// checkExtent refuses a HostBuffer smaller than what the plan will touch (device pointers carry
// no size and are the caller's responsibility).
func checkExtent(name string, m Memory, t DType, rows, cols, ld, stride int64, p *Problem) error {
	s, ok := m.(interface{ Size() int })
	if !ok || rows == 0 || cols == 0 {
		return nil
	}
	if p.ColumnMajor {
		rows, cols = cols, rows
	}
	if ld == 0 {
		ld = cols
	}
	need := (rows-1)*ld + cols
	if p.BatchCount > 1 {
		need += (p.BatchCount - 1) * stride
	}
	if int64(s.Size()) < need*int64(t.Size()) {
		return &Error{Status: StatusInvalidArgument,
			Message: fmt.Sprintf("deepgemm: %s holds %d bytes, the plan touches %d", name, s.Size(), need*int64(t.Size()))}
	}
	return nil
}

// Close frees the plan; closing twice is a no-op.
func (p *Plan) Close() error {
	if p.h == nil {
		return nil
	}
	err := call(func() C.dgemm_status_t { return C.dgemm_destroy_plan(p.h) })
	p.h = nil
	p.ctx = nil
	runtime.SetFinalizer(p, nil)
	return err
}

package deepgemm

// DGEMM_1.1 scaling (deepgemm.h, "DGEMM_1.1: input scaling"): scales of A and B per tensor, per
// row / column, in 1 x 128 or 128 x 128 blocks (float32 or UE8M0), an FP8 D quantized in 1 x 128
// blocks with scales the plan writes, and the amax of D. Set Problem.Scaling to plan with it;
// give the tensors to each Execute in ExecArgs.AScale / BScale / DScale / AmaxD.

/*
#include <stdint.h>
#include "deepgemm/deepgemm.h"
*/
import "C"

// ScaleMode says which elements share a scale (the header's table).
type ScaleMode int

var (
	ScaleNone       = ScaleMode(C.DGEMM_SCALE_NONE)
	ScalePerTensor  = ScaleMode(C.DGEMM_SCALE_PER_TENSOR)
	ScaleOuterVec   = ScaleMode(C.DGEMM_SCALE_OUTER_VEC)  // per row of op(A) / column of op(B)
	ScaleVec128     = ScaleMode(C.DGEMM_SCALE_VEC128)     // per row / column and 128 of K
	ScaleBlk128x128 = ScaleMode(C.DGEMM_SCALE_BLK128x128) // per 128 x 128 block
)

// ScaleType is a scale tensor's element type.
type ScaleType int

var (
	ScaleF32   = ScaleType(C.DGEMM_SCALE_TYPE_F32)
	ScaleUE8M0 = ScaleType(C.DGEMM_SCALE_TYPE_UE8M0) // one byte e: 2^(e - 127)
)

// ScaleLayout is a scale tensor's storage order.
type ScaleLayout int

var (
	ScaleMNMajor = ScaleLayout(C.DGEMM_SCALE_MN_MAJOR) // element (r, c) at r + c*Ld
	ScaleKMajor  = ScaleLayout(C.DGEMM_SCALE_K_MAJOR)  // element (r, c) at r*Ld + c
)

// Scale describes one scale tensor; the zero value is "no scale" (float32, MN-major, packed).
type Scale struct {
	Mode   ScaleMode
	Type   ScaleType
	Layout ScaleLayout
	Ld     int64 // leading dimension in elements, 0 = packed
	Stride int64 // elements between batches, 0 = shared
}

// Scaling is a plan's DGEMM_EXT_SCALING: the scales of A and B, D's block scales (ScaleNone or
// ScaleVec128 with an FP8 D) and whether the plan writes max |y| of D.
type Scaling struct {
	A, B, D Scale
	AmaxD   bool
}

func (s Scale) toC(d *C.dgemm_scale_desc_t) {
	d.mode = C.dgemm_scale_mode_t(s.Mode)
	d._type = C.dgemm_scale_type_t(s.Type)
	d.layout = C.dgemm_scale_layout_t(s.Layout)
	d.ld, d.stride = C.int64_t(s.Ld), C.int64_t(s.Stride)
}

// toC initializes *cs (C memory, part of a plan's extension chain) with this scaling.
func (s *Scaling) toC(cs *C.dgemm_scaling_t) {
	C.dgemm_scaling_init(cs)
	s.A.toC(&cs.a_scale)
	s.B.toC(&cs.b_scale)
	s.D.toC(&cs.d_scale)
	if s.AmaxD {
		cs.flags = C.DGEMM_SCALING_AMAX_D
	}
}

// ScaleShape is one of a plan's scale tensors as the library resolved it: Rows x Cols (one
// batch), its leading dimension, and the elements one call addresses over every batch.
type ScaleShape struct {
	Rows, Cols, Ld, Elements int64
}

// scaleShapes asks the library for the plan's three scale tensors (A, B, D).
func (p *Plan) scaleShapes() error {
	for w := range p.scales {
		var rows, cols, ld, elements C.int64_t
		if err := call(func() C.dgemm_status_t {
			return C.dgemm_plan_scale_shape(p.h, C.dgemm_scale_tensor_t(w), &rows, &cols, &ld, &elements)
		}); err != nil {
			return err
		}
		p.scales[w] = ScaleShape{int64(rows), int64(cols), int64(ld), int64(elements)}
	}
	return nil
}

// ScaleShapes returns the plan's scale tensors of A, B and D (zero when absent).
func (p *Plan) ScaleShapes() (a, b, d ScaleShape) { return p.scales[0], p.scales[1], p.scales[2] }

// scaleArgs adds the DGEMM_EXT_SCALE_ARGS of a call to the chain (nothing for a plan without
// scaling) after checking that HostBuffers hold the elements the plan addresses.
func (p *Plan) scaleArgs(args *ExecArgs, chain *extChain) error {
	var a, b, d, amax Memory
	if args != nil {
		a, b, d, amax = args.AScale, args.BScale, args.DScale, args.AmaxD
	}
	s := p.problem.Scaling
	if s == nil {
		if a != nil || b != nil || d != nil || amax != nil {
			return &Error{Status: StatusInvalidArgument, Message: "deepgemm: scale tensors given, but the plan has no Scaling"}
		}
		return nil
	}
	types := [3]ScaleType{s.A.Type, s.B.Type, s.D.Type}
	for w, m := range []Memory{a, b, d} {
		size := 4
		if types[w] == ScaleUE8M0 {
			size = 1
		}
		if err := checkSize([]string{"a scale", "b scale", "d scale"}[w], m, size*int(p.scales[w].Elements)); m != nil && err != nil {
			return err
		}
	}
	if amax != nil {
		if err := checkSize("amax", amax, 4); err != nil {
			return err
		}
	}
	c := (*C.dgemm_scale_args_t)(chain.add(C.sizeof_dgemm_scale_args_t))
	C.dgemm_scale_args_init(c)
	c.a_scale, c.b_scale, c.d_scale = pointer(a), pointer(b), pointer(d)
	c.amax_d = (*C.float)(pointer(amax))
	return nil
}

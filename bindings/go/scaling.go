package deepgemm

// DGEMM_1.1 scaling (deepgemm.h, "DGEMM_1.1: input scaling"): scales of A and B per tensor, per
// row / column, in 1 x 128 or 128 x 128 blocks (float32 or UE8M0), an FP8 D quantized in 1 x 128
// blocks with scales the plan writes, and the amax of D. Set Problem.Scaling to plan with it;
// give the tensors to each Execute in ExecArgs.AScale / BScale / DScale / AmaxD.

import "deepgemm/internal/capi"

// ScaleMode says which elements share a scale (the header's table).
type ScaleMode int

var (
	ScaleNone       = ScaleMode(capi.DGEMM_SCALE_NONE)
	ScalePerTensor  = ScaleMode(capi.DGEMM_SCALE_PER_TENSOR)
	ScaleOuterVec   = ScaleMode(capi.DGEMM_SCALE_OUTER_VEC)  // per row of op(A) / column of op(B)
	ScaleVec128     = ScaleMode(capi.DGEMM_SCALE_VEC128)     // per row / column and 128 of K
	ScaleBlk128x128 = ScaleMode(capi.DGEMM_SCALE_BLK128x128) // per 128 x 128 block
)

// ScaleType is a scale tensor's element type.
type ScaleType int

var (
	ScaleF32   = ScaleType(capi.DGEMM_SCALE_TYPE_F32)
	ScaleUE8M0 = ScaleType(capi.DGEMM_SCALE_TYPE_UE8M0) // one byte e: 2^(e - 127)
)

// ScaleLayout is a scale tensor's storage order.
type ScaleLayout int

var (
	ScaleMNMajor = ScaleLayout(capi.DGEMM_SCALE_MN_MAJOR) // element (r, c) at r + c*Ld
	ScaleKMajor  = ScaleLayout(capi.DGEMM_SCALE_K_MAJOR)  // element (r, c) at r*Ld + c
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

func (s Scale) toC(d capi.Dgemm_scale_desc_t) {
	d.SetMode(capi.Enum_SS_dgemm_scale_mode_t(s.Mode))
	d.SetXtype(capi.Enum_SS_dgemm_scale_type_t(s.Type))
	d.SetLayout(capi.Enum_SS_dgemm_scale_layout_t(s.Layout))
	d.SetLd(s.Ld)
	d.SetStride(s.Stride)
}

// createPlan is dgemm_create_plan, or dgemm_create_plan_ext with the scaling extension.
func createPlan(ctx capi.Struct_SS_dgemm_context, p capi.Dgemm_problem_t, e capi.Dgemm_epilogue_t,
	o capi.Dgemm_plan_options_t, s *Scaling, cell capi.Struct_SS_dgemm_plan) error {
	if s == nil {
		return call(func() capi.Enum_SS_dgemm_status_t { return capi.Dgemm_create_plan(ctx, p, e, o, cell) })
	}
	cs := capi.NewDgemm_scaling_t()
	defer capi.DeleteDgemm_scaling_t(cs)
	capi.Dgemm_scaling_init(cs)
	s.A.toC(cs.GetA_scale())
	s.B.toC(cs.GetB_scale())
	s.D.toC(cs.GetD_scale())
	if s.AmaxD {
		cs.SetFlags(uint(capi.DGEMM_SCALING_AMAX_D))
	}
	return call(func() capi.Enum_SS_dgemm_status_t {
		return capi.Dgemm_create_plan_ext(ctx, p, e, o, cs.Swigcptr(), cell)
	})
}

// ScaleShape is one of a plan's scale tensors as the library resolved it: Rows x Cols (one
// batch), its leading dimension, and the elements one call addresses over every batch.
type ScaleShape struct {
	Rows, Cols, Ld, Elements int64
}

// scaleShapes asks the library for the plan's three scale tensors (A, B, D).
func (p *Plan) scaleShapes() error {
	for w := range p.scales {
		cells := [4]*int64{capi.New_int64_cell(), capi.New_int64_cell(), capi.New_int64_cell(), capi.New_int64_cell()}
		err := call(func() capi.Enum_SS_dgemm_status_t {
			return capi.Dgemm_plan_scale_shape(p.h, capi.Enum_SS_dgemm_scale_tensor_t(w), cells[0], cells[1], cells[2], cells[3])
		})
		p.scales[w] = ScaleShape{capi.Int64_cell_value(cells[0]), capi.Int64_cell_value(cells[1]),
			capi.Int64_cell_value(cells[2]), capi.Int64_cell_value(cells[3])}
		for _, c := range cells {
			capi.Delete_int64_cell(c)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ScaleShapes returns the plan's scale tensors of A, B and D (zero when absent).
func (p *Plan) ScaleShapes() (a, b, d ScaleShape) { return p.scales[0], p.scales[1], p.scales[2] }

// scaleArgs builds the DGEMM_EXT_SCALE_ARGS of a call (nil, 0 for a plan without scaling) and
// checks that HostBuffers hold the elements the plan addresses. The caller deletes the struct.
func (p *Plan) scaleArgs(args *ExecArgs) (capi.Dgemm_scale_args_t, uintptr, error) {
	var a, b, d, amax Memory
	if args != nil {
		a, b, d, amax = args.AScale, args.BScale, args.DScale, args.AmaxD
	}
	s := p.problem.Scaling
	if s == nil {
		if a != nil || b != nil || d != nil || amax != nil {
			return nil, 0, &Error{Status: StatusInvalidArgument, Message: "deepgemm: scale tensors given, but the plan has no Scaling"}
		}
		return nil, 0, nil
	}
	types := [3]ScaleType{s.A.Type, s.B.Type, s.D.Type}
	for w, m := range []Memory{a, b, d} {
		size := 4
		if types[w] == ScaleUE8M0 {
			size = 1
		}
		if err := checkSize([]string{"a scale", "b scale", "d scale"}[w], m, size*int(p.scales[w].Elements)); m != nil && err != nil {
			return nil, 0, err
		}
	}
	if amax != nil {
		if err := checkSize("amax", amax, 4); err != nil {
			return nil, 0, err
		}
	}
	c := capi.NewDgemm_scale_args_t()
	capi.Dgemm_scale_args_init(c)
	c.SetA_scale(address(a))
	c.SetB_scale(address(b))
	c.SetD_scale(address(d))
	c.SetAmax_d(address(amax))
	return c, c.Swigcptr(), nil
}

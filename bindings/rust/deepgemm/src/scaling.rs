//! DGEMM_1.1 scaling (deepgemm.h, "DGEMM_1.1: input scaling"): scales of A and B per tensor, per
//! row / column, in 1 x 128 or 128 x 128 blocks (f32 or UE8M0), an FP8 D quantized in 1 x 128
//! blocks with scales the plan writes, and the amax of D. Plan with [`Context::plan_scaled`];
//! give the tensors to [`Plan::execute_host_scaled`] (or [`Plan::execute_raw_scaled`]).
use std::ffi::c_void;
use std::ptr;

use super::{check, invalid, sys, Context, Element, Epilogue, HostArgs, Plan, Problem, Result};

/// Which elements share a scale (the header's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleMode {
    /// One scale for the whole operand.
    PerTensor,
    /// One per row of op(A) (per token) / column of op(B) (per output channel).
    OuterVec,
    /// One per row / column and 128 of K (DeepGEMM's 1 x 128).
    Vec128,
    /// One per 128 x 128 block (DeepGEMM's weight scales).
    Blk128x128,
}

/// A scale tensor's element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleType {
    F32,
    /// One byte e: 2^(e - 127); 0xFF is NaN.
    UE8M0,
}

/// A scale tensor's storage order: element (r, c) at `r + c * ld` (MN-major, what the GPU reads
/// fastest) or `r * ld + c` (K-major: a row-major rows x K-blocks array).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleLayout {
    MnMajor,
    KMajor,
}

/// One scale tensor's plan-time description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    pub mode: ScaleMode,
    pub dtype: ScaleType,
    pub layout: ScaleLayout,
    /// Leading dimension in elements, 0 = packed.
    pub ld: i64,
    /// Elements between the tensors of consecutive batches, 0 = shared.
    pub stride: i64,
}

impl Scale {
    /// f32, MN-major, packed, shared by every batch.
    pub fn new(mode: ScaleMode) -> Scale {
        Scale { mode, dtype: ScaleType::F32, layout: ScaleLayout::MnMajor, ld: 0, stride: 0 }
    }
    pub fn ue8m0(mut self) -> Self {
        self.dtype = ScaleType::UE8M0;
        self
    }
    pub fn k_major(mut self) -> Self {
        self.layout = ScaleLayout::KMajor;
        self
    }
    pub fn ld(mut self, ld: i64) -> Self {
        self.ld = ld;
        self
    }
    pub fn stride(mut self, stride: i64) -> Self {
        self.stride = stride;
        self
    }
    fn write(&self, d: &mut sys::dgemm_scale_desc_t) {
        use sys::dgemm_scale_mode_t as m;
        d.mode = match self.mode {
            ScaleMode::PerTensor => m::DGEMM_SCALE_PER_TENSOR,
            ScaleMode::OuterVec => m::DGEMM_SCALE_OUTER_VEC,
            ScaleMode::Vec128 => m::DGEMM_SCALE_VEC128,
            ScaleMode::Blk128x128 => m::DGEMM_SCALE_BLK128x128,
        };
        d.type_ = match self.dtype {
            ScaleType::F32 => sys::dgemm_scale_type_t::DGEMM_SCALE_TYPE_F32,
            ScaleType::UE8M0 => sys::dgemm_scale_type_t::DGEMM_SCALE_TYPE_UE8M0,
        };
        d.layout = match self.layout {
            ScaleLayout::MnMajor => sys::dgemm_scale_layout_t::DGEMM_SCALE_MN_MAJOR,
            ScaleLayout::KMajor => sys::dgemm_scale_layout_t::DGEMM_SCALE_K_MAJOR,
        };
        d.ld = self.ld;
        d.stride = self.stride;
    }
}

/// A plan's scaling: scales of A and B, D's 1 x 128 block scales (mode `Vec128`, FP8 D only),
/// and whether the plan writes max |y| of D.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scaling {
    pub a: Option<Scale>,
    pub b: Option<Scale>,
    pub d: Option<Scale>,
    pub amax_d: bool,
}

impl Scaling {
    pub(crate) fn raw(&self) -> sys::dgemm_scaling_t {
        // SAFETY: dgemm_scaling_init writes every field of a properly sized struct.
        let mut raw = unsafe { std::mem::zeroed::<sys::dgemm_scaling_t>() };
        unsafe { sys::dgemm_scaling_init(&mut raw) };
        for (scale, desc) in [(&self.a, &mut raw.a_scale), (&self.b, &mut raw.b_scale), (&self.d, &mut raw.d_scale)] {
            if let Some(s) = scale {
                s.write(desc);
            }
        }
        if self.amax_d {
            raw.flags |= sys::DGEMM_SCALING_AMAX_D;
        }
        raw
    }
}

/// One of a plan's scale tensors as the library resolved it: rows x cols (one batch), leading
/// dimension, and the elements one call addresses over every batch (all 0 when absent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScaleShape {
    pub rows: i64,
    pub cols: i64,
    pub ld: i64,
    pub elements: i64,
}

pub(crate) fn plan_scale_shapes(plan: sys::dgemm_plan_t) -> Result<[ScaleShape; 3]> {
    use sys::dgemm_scale_tensor_t as t;
    let mut out = [ScaleShape::default(); 3];
    for (shape, which) in out.iter_mut().zip([t::DGEMM_SCALE_TENSOR_A, t::DGEMM_SCALE_TENSOR_B, t::DGEMM_SCALE_TENSOR_D]) {
        // SAFETY: a live plan and valid out-pointers.
        check(unsafe {
            sys::dgemm_plan_scale_shape(plan, which, &mut shape.rows, &mut shape.cols, &mut shape.ld, &mut shape.elements)
        })?;
    }
    Ok(out)
}

/// A scale tensor the library reads.
#[derive(Clone, Copy)]
pub enum ScaleData<'a> {
    F32(&'a [f32]),
    UE8M0(&'a [u8]),
}

/// A scale tensor the library writes.
pub enum ScaleDataMut<'a> {
    F32(&'a mut [f32]),
    UE8M0(&'a mut [u8]),
}

/// The scale tensors of one [`Plan::execute_host_scaled`] call.
#[derive(Default)]
pub struct HostScales<'a> {
    pub a: Option<ScaleData<'a>>,
    pub b: Option<ScaleData<'a>>,
    /// D's block scales, written.
    pub d: Option<ScaleDataMut<'a>>,
    /// max |y| of D, written.
    pub amax_d: Option<&'a mut f32>,
}

impl Context {
    /// [`Context::plan`] with DGEMM_1.1 scaling.
    pub fn plan_scaled(&self, problem: &Problem, epilogue: &Epilogue, scaling: &Scaling) -> Result<Plan> {
        self.plan_impl(problem, epilogue, None, None, Some(scaling), None)
    }
}

impl Plan {
    /// The plan's A, B and D scale tensors.
    pub fn scale_shapes(&self) -> [ScaleShape; 3] {
        self.scale_shapes
    }

    /// [`Plan::execute_host`] for a scaled plan: the scale tensors' types and lengths are checked
    /// against the plan before the library is called (a missing one is the library's
    /// INVALID_ARGUMENT, naming it).
    pub fn execute_host_scaled<A: Element, B: Element, D: Element>(
        &self,
        a: &[A],
        b: &[B],
        d: &mut [D],
        args: &HostArgs<'_>,
        scales: HostScales<'_>,
    ) -> Result<()> {
        let plan_scaling = self.scaling.ok_or_else(|| invalid("the plan has no scaling (use Context::plan_scaled)".into()))?;
        let mut raw = unsafe { std::mem::zeroed::<sys::dgemm_scale_args_t>() };
        // SAFETY: a properly sized struct.
        unsafe { sys::dgemm_scale_args_init(&mut raw) };
        let tensors = [
            ("a_scale", plan_scaling.a, scales.a.map(|s| s.parts())),
            ("b_scale", plan_scaling.b, scales.b.map(|s| s.parts())),
            ("d_scale", plan_scaling.d, scales.d.map(|s| s.parts())),
        ];
        let mut pointers = [ptr::null::<c_void>(); 3];
        for (w, (name, planned, given)) in tensors.into_iter().enumerate() {
            let Some((dtype, ptr, len)) = given else { continue };
            let planned = planned.ok_or_else(|| invalid(format!("{name} given, but the plan has no such scale tensor")))?;
            if dtype != planned.dtype {
                return Err(invalid(format!("{name} holds {dtype:?} scales, the plan's are {:?}", planned.dtype)));
            }
            let need = self.scale_shapes[w].elements;
            if (len as i64) < need {
                return Err(invalid(format!("{name} holds {len} elements, the plan addresses {need}")));
            }
            pointers[w] = ptr;
        }
        raw.a_scale = pointers[0];
        raw.b_scale = pointers[1];
        raw.d_scale = pointers[2] as *mut c_void;
        if let Some(amax) = scales.amax_d {
            raw.amax_d = amax;
        }
        self.execute_host_ext(a, b, d, args, &raw as *const sys::dgemm_scale_args_t as *const c_void)
    }

    /// [`Plan::execute_raw`] for a scaled plan, with its `dgemm_scale_args_t`.
    ///
    /// # Safety
    /// As `execute_raw`; the scale pointers must be valid for the plan's scale tensors
    /// ([`Plan::scale_shapes`]) in the plan's device memory until the work completes.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn execute_raw_scaled(
        &self,
        a: *const c_void,
        b: *const c_void,
        c: *const c_void,
        d: *mut c_void,
        args: Option<&sys::dgemm_args_t>,
        scale_args: &sys::dgemm_scale_args_t,
        workspace: *mut c_void,
        workspace_size: usize,
        stream: *mut c_void,
    ) -> Result<()> {
        self.execute_ext(
            a,
            b,
            c,
            d,
            args,
            scale_args as *const sys::dgemm_scale_args_t as *const c_void,
            workspace,
            workspace_size,
            stream,
        )
    }
}

impl ScaleData<'_> {
    fn parts(self) -> (ScaleType, *const c_void, usize) {
        match self {
            ScaleData::F32(s) => (ScaleType::F32, s.as_ptr() as *const c_void, s.len()),
            ScaleData::UE8M0(s) => (ScaleType::UE8M0, s.as_ptr() as *const c_void, s.len()),
        }
    }
}

impl ScaleDataMut<'_> {
    fn parts(self) -> (ScaleType, *const c_void, usize) {
        match self {
            ScaleDataMut::F32(s) => (ScaleType::F32, s.as_mut_ptr() as *const c_void, s.len()),
            ScaleDataMut::UE8M0(s) => (ScaleType::UE8M0, s.as_mut_ptr() as *const c_void, s.len()),
        }
    }
}

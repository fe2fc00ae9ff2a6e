//! Safe Rust API of DeepGEMM (`libdeepgemm.so.1`): GEMM with fused epilogues,
//!
//! ```text
//! D = act(alpha * op(A) @ op(B) + beta * C + bias)
//! ```
//!
//! planned once per shape ([`Context::plan`]) and executed many times ([`Plan::execute_host`] on
//! the CPU backend, the `unsafe` [`Plan::execute_raw`] for device memory). Handles free
//! themselves on drop; failures are [`Error`]s carrying the library's status and message.
//!
//! ```no_run
//! use deepgemm::{Activation, Context, DType, Device, Epilogue, HostArgs, Problem};
//!
//! // y = gelu(x @ w^T + b), w stored n x k like a torch.nn.Linear weight.
//! let (m, n, k) = (8, 128, 64);
//! let ctx = Context::new(Device::Cpu)?; // Device::Cuda(0) / Device::Auto on a GPU
//! let problem = Problem::new(m, n, k, DType::F32).trans_b(true);
//! let epilogue = Epilogue::new().bias_per_column(DType::F32).activation(Activation::GeluErf);
//! let plan = ctx.plan(&problem, &epilogue)?;
//! let (x, w, b) = (vec![0.5f32; 8 * 64], vec![0.25f32; 128 * 64], vec![0.1f32; 128]);
//! let mut y = vec![0f32; 8 * 128];
//! plan.execute_host(&x, &w, &mut y, &HostArgs { bias: Some(b.as_slice().into()), ..Default::default() })?;
//! println!("{}", plan.describe()?);
//! # Ok::<(), deepgemm::Error>(())
//! ```
//!
//! Thread safety, from `deepgemm.h`: creating plans on one context is thread-safe and a plan may
//! be executed from many threads at once, so both [`Context`] and [`Plan`] are `Send + Sync`.
//! Destruction needs exclusive access, which `Drop` has; a plan keeps its context alive, because
//! the library refuses to destroy a context with live plans.
use std::ffi::{c_void, CStr, CString};
use std::fmt;
use std::ptr;
use std::sync::Arc;

pub use deepgemm_sys as sys;
/// The `half` crate this one is built with, for `f16` / `bf16` host values.
pub use half;

mod scaling;
pub use scaling::{HostScales, Scale, ScaleData, ScaleDataMut, ScaleLayout, ScaleMode, ScaleShape, ScaleType, Scaling};

/// The version of the loaded library, "MAJOR.MINOR.PATCH".
pub fn version() -> &'static str {
    // SAFETY: static storage, never NULL (deepgemm.h).
    unsafe { CStr::from_ptr(sys::dgemm_version_string()) }.to_str().unwrap_or("?")
}

/// A `dgemm_status_t` other than success. The numbers are fixed forever by deepgemm.h.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Status(pub sys::dgemm_status_t::Type);

impl Status {
    pub const INVALID_ARGUMENT: Status = Status(sys::dgemm_status_t::DGEMM_STATUS_INVALID_ARGUMENT);
    pub const NOT_SUPPORTED: Status = Status(sys::dgemm_status_t::DGEMM_STATUS_NOT_SUPPORTED);
    pub const OUT_OF_MEMORY: Status = Status(sys::dgemm_status_t::DGEMM_STATUS_OUT_OF_MEMORY);
    pub const INSUFFICIENT_WORKSPACE: Status = Status(sys::dgemm_status_t::DGEMM_STATUS_INSUFFICIENT_WORKSPACE);
    pub const CONTEXT_MISMATCH: Status = Status(sys::dgemm_status_t::DGEMM_STATUS_CONTEXT_MISMATCH);
    pub const NO_DEVICE: Status = Status(sys::dgemm_status_t::DGEMM_STATUS_NO_DEVICE);
    pub const DEVICE_ERROR: Status = Status(sys::dgemm_status_t::DGEMM_STATUS_DEVICE_ERROR);
    pub const COMPILE_ERROR: Status = Status(sys::dgemm_status_t::DGEMM_STATUS_COMPILE_ERROR);
    pub const ARCH_FILE_ERROR: Status = Status(sys::dgemm_status_t::DGEMM_STATUS_ARCH_FILE_ERROR);
    pub const INTERNAL_ERROR: Status = Status(sys::dgemm_status_t::DGEMM_STATUS_INTERNAL_ERROR);

    /// The library's name for the status ("DGEMM_STATUS_INVALID_ARGUMENT").
    pub fn name(self) -> &'static str {
        // SAFETY: static storage, never NULL, for any number.
        unsafe { CStr::from_ptr(sys::dgemm_status_string(self.0)) }.to_str().unwrap_or("?")
    }
}

/// A failed call: the status and the library's message naming the argument and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status.name(), self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Turns a status into a Result. The message is thread-local in the library and read right
/// after the call on the same thread.
fn check(status: sys::dgemm_status_t::Type) -> Result<()> {
    if status == sys::dgemm_status_t::DGEMM_STATUS_SUCCESS {
        return Ok(());
    }
    // SAFETY: never NULL, valid until this thread's next call.
    let message = unsafe { CStr::from_ptr(sys::dgemm_last_error()) }.to_string_lossy().into_owned();
    Err(Error { status: Status(status), message })
}

fn invalid(message: String) -> Error {
    Error { status: Status::INVALID_ARGUMENT, message }
}

/// Element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    F32,
    F16,
    BF16,
    F8E4M3,
    F8E5M2,
    I8,
    I32,
}

impl DType {
    fn raw(self) -> sys::dgemm_dtype_t::Type {
        use sys::dgemm_dtype_t as t;
        match self {
            DType::F32 => t::DGEMM_DTYPE_F32,
            DType::F16 => t::DGEMM_DTYPE_F16,
            DType::BF16 => t::DGEMM_DTYPE_BF16,
            DType::F8E4M3 => t::DGEMM_DTYPE_F8_E4M3,
            DType::F8E5M2 => t::DGEMM_DTYPE_F8_E5M2,
            DType::I8 => t::DGEMM_DTYPE_I8,
            DType::I32 => t::DGEMM_DTYPE_I32,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::F16 | DType::BF16 => 2,
            _ => 1,
        }
    }
}

/// Host element types usable with [`Plan::execute_host`]: `f32`, `i8`, `i32`, and the `half`
/// crate's [`half::f16`] and [`half::bf16`] (re-exported as `deepgemm::half`).
pub trait Element: Copy + Send + Sync + 'static {
    const DTYPE: DType;
}
impl Element for f32 {
    const DTYPE: DType = DType::F32;
}
impl Element for i8 {
    const DTYPE: DType = DType::I8;
}
impl Element for i32 {
    const DTYPE: DType = DType::I32;
}
impl Element for half::f16 {
    const DTYPE: DType = DType::F16;
}
impl Element for half::bf16 {
    const DTYPE: DType = DType::BF16;
}
/// OCP FP8 E4M3, as bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct F8E4M3(pub u8);
impl Element for F8E4M3 {
    const DTYPE: DType = DType::F8E4M3;
}
/// OCP FP8 E5M2, as bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct F8E5M2(pub u8);
impl Element for F8E5M2 {
    const DTYPE: DType = DType::F8E5M2;
}

/// Activation functions (formulas in deepgemm.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activation {
    None,
    Relu,
    GeluTanh,
    GeluErf,
    Silu,
}

impl Activation {
    fn raw(self) -> sys::dgemm_activation_t::Type {
        use sys::dgemm_activation_t as a;
        match self {
            Activation::None => a::DGEMM_ACT_NONE,
            Activation::Relu => a::DGEMM_ACT_RELU,
            Activation::GeluTanh => a::DGEMM_ACT_GELU_TANH,
            Activation::GeluErf => a::DGEMM_ACT_GELU_ERF,
            Activation::Silu => a::DGEMM_ACT_SILU,
        }
    }
}

/// Where a context runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Device {
    /// The first usable CUDA GPU, else the CPU (only as a request: a context reports what it got).
    Auto,
    /// The CUDA device with this ordinal.
    Cuda(i32),
    /// The CPU reference backend.
    Cpu,
}

/// The problem: shape, types and layout. Starts from `dgemm_problem_init`'s defaults.
#[derive(Clone, Copy)]
pub struct Problem {
    raw: sys::dgemm_problem_t,
}

impl Problem {
    /// An `m x n x k` GEMM, row-major, packed, with A, B, C and D of type `dtype` (int8 inputs
    /// get i32 compute, C and D).
    pub fn new(m: i64, n: i64, k: i64, dtype: DType) -> Problem {
        // SAFETY: dgemm_problem_init writes every field of a properly sized struct.
        let mut raw = unsafe { std::mem::zeroed::<sys::dgemm_problem_t>() };
        unsafe { sys::dgemm_problem_init(&mut raw) };
        raw.m = m;
        raw.n = n;
        raw.k = k;
        let out = if dtype == DType::I8 { DType::I32 } else { dtype };
        raw.a_type = dtype.raw();
        raw.b_type = dtype.raw();
        raw.c_type = out.raw();
        raw.d_type = out.raw();
        raw.compute_type = if dtype == DType::I8 { DType::I32.raw() } else { DType::F32.raw() };
        Problem { raw }
    }
    /// op(A) = A^T: A is stored k x m.
    pub fn trans_a(mut self, t: bool) -> Self {
        self.raw.op_a = if t { sys::dgemm_op_t::DGEMM_OP_T } else { sys::dgemm_op_t::DGEMM_OP_N };
        self
    }
    /// op(B) = B^T: B is stored n x k.
    pub fn trans_b(mut self, t: bool) -> Self {
        self.raw.op_b = if t { sys::dgemm_op_t::DGEMM_OP_T } else { sys::dgemm_op_t::DGEMM_OP_N };
        self
    }
    /// The type of B when it differs from A's (mixed FP8).
    pub fn b_type(mut self, t: DType) -> Self {
        self.raw.b_type = t.raw();
        self
    }
    /// The output type (and C's).
    pub fn out_type(mut self, t: DType) -> Self {
        self.raw.c_type = t.raw();
        self.raw.d_type = t.raw();
        self
    }
    /// Leading dimensions in elements (0 = packed).
    pub fn leading_dims(mut self, lda: i64, ldb: i64, ldc: i64, ldd: i64) -> Self {
        self.raw.lda = lda;
        self.raw.ldb = ldb;
        self.raw.ldc = ldc;
        self.raw.ldd = ldd;
        self
    }
    /// `count` GEMMs; matrix b of X starts `stride_x * b` elements in (0 broadcasts, not for D).
    pub fn batch(mut self, count: i64, stride_a: i64, stride_b: i64, stride_c: i64, stride_d: i64) -> Self {
        self.raw.batch_count = count;
        self.raw.stride_a = stride_a;
        self.raw.stride_b = stride_b;
        self.raw.stride_c = stride_c;
        self.raw.stride_d = stride_d;
        self
    }
    /// Column-major storage for every matrix (BLAS convention).
    pub fn column_major(mut self, yes: bool) -> Self {
        self.raw.order = if yes {
            sys::dgemm_order_t::DGEMM_ORDER_COL_MAJOR
        } else {
            sys::dgemm_order_t::DGEMM_ORDER_ROW_MAJOR
        };
        self
    }
    /// The raw descriptor, for fields this builder does not cover.
    pub fn raw_mut(&mut self) -> &mut sys::dgemm_problem_t {
        &mut self.raw
    }

    fn dtype(t: sys::dgemm_dtype_t::Type) -> Option<DType> {
        [DType::F32, DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2, DType::I8, DType::I32]
            .into_iter()
            .find(|d| d.raw() == t)
    }

    /// Elements of a stored matrix (rows x cols of op(X) before the transpose) the plan touches.
    fn extent(&self, rows: i64, cols: i64, transposed: bool, ld: i64, stride: i64) -> i64 {
        if rows == 0 || cols == 0 {
            return 0;
        }
        let (mut r, mut c) = if transposed { (cols, rows) } else { (rows, cols) };
        if self.raw.order == sys::dgemm_order_t::DGEMM_ORDER_COL_MAJOR {
            std::mem::swap(&mut r, &mut c);
        }
        let ld = if ld == 0 { c } else { ld };
        (r - 1) * ld + c + (self.raw.batch_count - 1).max(0) * stride
    }
}

/// What happens after the product. Starts as the identity (`dgemm_epilogue_init`).
#[derive(Clone, Copy)]
pub struct Epilogue {
    raw: sys::dgemm_epilogue_t,
}

impl Default for Epilogue {
    fn default() -> Self {
        Self::new()
    }
}

impl Epilogue {
    pub fn new() -> Epilogue {
        // SAFETY: dgemm_epilogue_init writes every field of a properly sized struct.
        let mut raw = unsafe { std::mem::zeroed::<sys::dgemm_epilogue_t>() };
        unsafe { sys::dgemm_epilogue_init(&mut raw) };
        Epilogue { raw }
    }
    pub fn alpha(mut self, alpha: f32) -> Self {
        self.raw.alpha = alpha;
        self
    }
    /// beta != 0 makes the plan read C.
    pub fn beta(mut self, beta: f32) -> Self {
        self.raw.beta = beta;
        self
    }
    /// A bias vector of type `dtype` added per column (length n) of D.
    pub fn bias_per_column(mut self, dtype: DType) -> Self {
        self.raw.bias_mode = sys::dgemm_vector_mode_t::DGEMM_VECTOR_PER_COLUMN;
        self.raw.bias_type = dtype.raw();
        self
    }
    /// A bias vector of type `dtype` added per row (length m) of D.
    pub fn bias_per_row(mut self, dtype: DType) -> Self {
        self.raw.bias_mode = sys::dgemm_vector_mode_t::DGEMM_VECTOR_PER_ROW;
        self.raw.bias_type = dtype.raw();
        self
    }
    pub fn activation(mut self, act: Activation) -> Self {
        self.raw.activation = act.raw();
        self
    }
    /// One f32 output scale for all of D; the value is given to each execution
    /// ([`HostArgs::scale`]).
    pub fn scale_per_tensor(mut self) -> Self {
        self.raw.scale_mode = sys::dgemm_vector_mode_t::DGEMM_VECTOR_PER_TENSOR;
        self
    }
    /// An f32 output scale per row (length m) of D.
    pub fn scale_per_row(mut self) -> Self {
        self.raw.scale_mode = sys::dgemm_vector_mode_t::DGEMM_VECTOR_PER_ROW;
        self
    }
    /// An f32 output scale per column (length n) of D.
    pub fn scale_per_column(mut self) -> Self {
        self.raw.scale_mode = sys::dgemm_vector_mode_t::DGEMM_VECTOR_PER_COLUMN;
        self
    }
    /// I8 outputs add an i32 zero point per scale entry ([`HostArgs::zero_point`]).
    pub fn zero_point(mut self, yes: bool) -> Self {
        self.set_flag(sys::DGEMM_EPILOGUE_ZERO_POINT, yes);
        self
    }
    /// FP8 outputs clamp to the largest finite value (the default) instead of overflowing.
    pub fn saturate(mut self, yes: bool) -> Self {
        self.set_flag(sys::DGEMM_EPILOGUE_SATURATE, yes);
        self
    }
    fn set_flag(&mut self, bit: u32, yes: bool) {
        if yes {
            self.raw.flags |= bit;
        } else {
            self.raw.flags &= !bit;
        }
    }
    /// Entries of the output scale (and zero point) vectors for `problem`; 0 without a scale.
    fn scale_len(&self, problem: &sys::dgemm_problem_t) -> i64 {
        match self.raw.scale_mode {
            sys::dgemm_vector_mode_t::DGEMM_VECTOR_PER_TENSOR => 1,
            sys::dgemm_vector_mode_t::DGEMM_VECTOR_PER_ROW => problem.m,
            sys::dgemm_vector_mode_t::DGEMM_VECTOR_PER_COLUMN => problem.n,
            _ => 0,
        }
    }
    pub fn raw_mut(&mut self) -> &mut sys::dgemm_epilogue_t {
        &mut self.raw
    }
}

struct ContextHandle(sys::dgemm_context_t);

// SAFETY: deepgemm.h makes plan creation thread-safe; the handle is destroyed only in Drop, when
// no plan (each holds an Arc) and no other reference remain.
unsafe impl Send for ContextHandle {}
unsafe impl Sync for ContextHandle {}

impl Drop for ContextHandle {
    fn drop(&mut self) {
        // SAFETY: the last reference; every plan made on it is gone.
        unsafe { sys::dgemm_context_destroy(self.0) };
    }
}

/// A device and its caches. Cloning is cheap and shares the context.
#[derive(Clone)]
pub struct Context {
    handle: Arc<ContextHandle>,
    device: Device,
}

impl Context {
    /// Creates a context on `device`.
    pub fn new(device: Device) -> Result<Context> {
        use sys::dgemm_device_kind_t as k;
        let (kind, index) = match device {
            Device::Auto => (k::DGEMM_DEVICE_AUTO, 0),
            Device::Cuda(i) => (k::DGEMM_DEVICE_CUDA, i),
            Device::Cpu => (k::DGEMM_DEVICE_CPU, 0),
        };
        let mut raw: sys::dgemm_context_t = ptr::null_mut();
        // SAFETY: raw is a valid out-pointer.
        check(unsafe { sys::dgemm_context_create(kind, index, &mut raw) })?;
        let handle = Arc::new(ContextHandle(raw));
        let mut got_kind: k::Type = 0;
        let mut got_index = 0;
        // SAFETY: a live context and valid out-pointers.
        check(unsafe { sys::dgemm_context_device(raw, &mut got_kind, &mut got_index) })?;
        let device = if got_kind == k::DGEMM_DEVICE_CPU { Device::Cpu } else { Device::Cuda(got_index) };
        Ok(Context { handle, device })
    }

    /// The device the context actually runs on (never `Auto`).
    pub fn device(&self) -> Device {
        self.device
    }

    /// Plans `problem` with `epilogue` (validation, kernel choice, compilation, workspace size).
    pub fn plan(&self, problem: &Problem, epilogue: &Epilogue) -> Result<Plan> {
        self.plan_with(problem, epilogue, None, None)
    }

    /// [`Context::plan`] forcing a kernel family ("cpu", "sm80", "sm90", ...) and/or reading a YAML
    /// hardware description.
    pub fn plan_with(
        &self,
        problem: &Problem,
        epilogue: &Epilogue,
        force_kernel: Option<&str>,
        arch_file: Option<&str>,
    ) -> Result<Plan> {
        self.plan_impl(problem, epilogue, force_kernel, arch_file, None, None)
    }

    /// Plans a grouped (mixture-of-experts) problem: the problem's batches are the groups, whose
    /// rows each [`Plan::execute_grouped_raw`] gives (deepgemm.h, "grouped problems").
    /// `m_alignment`: contiguous layouts promise offsets that are multiples of it (1: none).
    pub fn plan_grouped(&self, problem: &Problem, epilogue: &Epilogue, layout: GroupLayout, m_alignment: i64) -> Result<Plan> {
        self.plan_grouped_expected(problem, epilogue, layout, m_alignment, 0)
    }

    /// [`Context::plan_grouped`] with `expected_m`, the rows a group is expected to hold on
    /// average (0: unknown), as DeepSeek's masked GEMM takes it: a hint for the choice of kernel
    /// only; any row counts the layout allows still compute correctly.
    pub fn plan_grouped_expected(
        &self,
        problem: &Problem,
        epilogue: &Epilogue,
        layout: GroupLayout,
        m_alignment: i64,
        expected_m: i64,
    ) -> Result<Plan> {
        let mut g = unsafe { std::mem::zeroed::<sys::dgemm_grouped_t>() };
        // SAFETY: a properly sized struct.
        unsafe { sys::dgemm_grouped_init(&mut g) };
        g.layout = match layout {
            GroupLayout::Contiguous => sys::dgemm_group_layout_t::DGEMM_GROUP_CONTIGUOUS,
            GroupLayout::Masked => sys::dgemm_group_layout_t::DGEMM_GROUP_MASKED,
        };
        g.m_alignment = m_alignment;
        g.expected_m = expected_m;
        self.plan_impl(problem, epilogue, None, None, None, Some((&g, layout)))
    }

    /// `plan_with`, with the DGEMM_1.1 extensions given (scaling, a grouping) chained.
    fn plan_impl(
        &self,
        problem: &Problem,
        epilogue: &Epilogue,
        force_kernel: Option<&str>,
        arch_file: Option<&str>,
        scaling: Option<&Scaling>,
        grouped: Option<(&sys::dgemm_grouped_t, GroupLayout)>,
    ) -> Result<Plan> {
        let to_c = |s: Option<&str>, what: &str| -> Result<Option<CString>> {
            s.map(|s| CString::new(s).map_err(|_| invalid(format!("{what} contains a NUL byte")))).transpose()
        };
        let force = to_c(force_kernel, "force_kernel")?;
        let arch = to_c(arch_file, "arch_file")?;
        let mut options = unsafe { std::mem::zeroed::<sys::dgemm_plan_options_t>() };
        // SAFETY: a properly sized struct; the strings outlive the call.
        unsafe { sys::dgemm_plan_options_init(&mut options) };
        options.force_kernel = force.as_ref().map_or(ptr::null(), |s| s.as_ptr());
        options.arch_file = arch.as_ref().map_or(ptr::null(), |s| s.as_ptr());
        // The chain: the scaling (when given), then the grouping (when given).
        let grouped_ptr = grouped.map_or(ptr::null(), |(g, _)| g as *const sys::dgemm_grouped_t as *const c_void);
        let mut ext = scaling.map(Scaling::raw);
        let ext_ptr = match ext.as_mut() {
            Some(s) => {
                s.header.next = grouped_ptr;
                s as *const sys::dgemm_scaling_t as *const c_void
            }
            None => grouped_ptr,
        };
        let mut raw: sys::dgemm_plan_t = ptr::null_mut();
        check(unsafe {
            sys::dgemm_create_plan_ext(self.handle.0, &problem.raw, &epilogue.raw, &options, ext_ptr, &mut raw)
        })?;
        let mut plan = Plan {
            raw,
            context: self.clone(),
            problem: *problem,
            epilogue: *epilogue,
            workspace_size: 0,
            scaling: scaling.copied(),
            scale_shapes: Default::default(),
            grouped: grouped.map(|(_, layout)| layout),
        };
        check(unsafe { sys::dgemm_plan_workspace_size(raw, &mut plan.workspace_size) })?;
        plan.scale_shapes = scaling::plan_scale_shapes(raw)?;
        Ok(plan)
    }
}

/// Execute-time values for [`Plan::execute_host`].
#[derive(Default)]
pub struct HostArgs<'a> {
    /// C, read iff the plan's beta != 0; of the plan's C type.
    pub c: Option<HostSlice<'a>>,
    /// The bias vector, required iff the plan has one.
    pub bias: Option<HostSlice<'a>>,
    /// Override the plan's alpha / beta for this call.
    pub alpha: Option<f32>,
    pub beta: Option<f32>,
    /// Alpha / beta read through pointers when the library runs (DGEMM_SCALARS_DEVICE; on the
    /// CPU backend "device" memory is host memory). `alpha_ptr` is required for this mode and
    /// `beta_ptr` too when the plan reads C; they exclude `alpha` / `beta`.
    pub alpha_ptr: Option<&'a f32>,
    pub beta_ptr: Option<&'a f32>,
    /// The output scale (1, m or n entries as planned), required iff the plan has one.
    pub scale: Option<&'a [f32]>,
    /// The I8 zero point, as many entries as the scale, required iff the plan has one.
    pub zero_point: Option<&'a [i32]>,
}

/// A borrowed host vector of any [`Element`] type.
#[derive(Clone, Copy)]
pub struct HostSlice<'a> {
    ptr: *const c_void,
    len: usize,
    dtype: DType,
    _borrow: std::marker::PhantomData<&'a ()>,
}

impl<'a, T: Element> From<&'a [T]> for HostSlice<'a> {
    fn from(s: &'a [T]) -> Self {
        HostSlice { ptr: s.as_ptr() as *const c_void, len: s.len(), dtype: T::DTYPE, _borrow: std::marker::PhantomData }
    }
}

/// How a grouped problem's rows are laid out (deepgemm.h, dgemm_group_layout_t).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupLayout {
    /// The rows of all groups concatenated; G + 1 row offsets.
    Contiguous,
    /// A slot of m rows per group; G valid-row counts.
    Masked,
}

/// A planned GEMM.
pub struct Plan {
    raw: sys::dgemm_plan_t,
    context: Context,
    problem: Problem,
    epilogue: Epilogue,
    workspace_size: usize,
    scaling: Option<Scaling>,        // DGEMM_1.1 scaling the plan was made with
    scale_shapes: [ScaleShape; 3],   // its A, B, D scale tensors
    grouped: Option<GroupLayout>,    // the layout of a grouped plan
}

// SAFETY: deepgemm.h allows dgemm_execute on one plan from several threads at once, and
// workspace_size/describe only read it; dgemm_destroy_plan (Drop) has exclusive access.
unsafe impl Send for Plan {}
unsafe impl Sync for Plan {}

impl Drop for Plan {
    fn drop(&mut self) {
        // SAFETY: exclusive; the context outlives this call (self.context holds it).
        unsafe { sys::dgemm_destroy_plan(self.raw) };
    }
}

impl Plan {
    /// Bytes of workspace an execution needs (often 0).
    pub fn workspace_size(&self) -> usize {
        self.workspace_size
    }

    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The plan's JSON description: backend, kernel family, tile, predicted time, rejected candidates.
    pub fn describe(&self) -> Result<String> {
        let mut need = 0usize;
        check(unsafe { sys::dgemm_plan_describe(self.raw, ptr::null_mut(), 0, &mut need) })?;
        let mut buf = vec![0u8; need.max(1)];
        check(unsafe { sys::dgemm_plan_describe(self.raw, buf.as_mut_ptr() as *mut _, buf.len(), ptr::null_mut()) })?;
        let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
        Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
    }

    fn check_host(&self, name: &str, dtype: DType, len: usize, want_type: sys::dgemm_dtype_t::Type, need: i64) -> Result<()> {
        let want = Problem::dtype(want_type).ok_or_else(|| invalid(format!("{name}: unknown plan type")))?;
        if dtype != want {
            return Err(invalid(format!("{name} holds {dtype:?}, the plan expects {want:?}")));
        }
        if (len as i64) < need {
            return Err(invalid(format!("{name} holds {len} elements, the plan touches {need}")));
        }
        Ok(())
    }

    /// Runs the plan on host memory (CPU contexts only): `d` receives the result. Element types
    /// and slice lengths are checked against the plan before the library is called.
    pub fn execute_host<A: Element, B: Element, D: Element>(
        &self,
        a: &[A],
        b: &[B],
        d: &mut [D],
        args: &HostArgs<'_>,
    ) -> Result<()> {
        self.execute_host_ext(a, b, d, args, ptr::null())
    }

    /// `execute_host` with an execute-time extension chain (checked by the caller).
    fn execute_host_ext<A: Element, B: Element, D: Element>(
        &self,
        a: &[A],
        b: &[B],
        d: &mut [D],
        args: &HostArgs<'_>,
        ext: *const c_void,
    ) -> Result<()> {
        if self.context.device != Device::Cpu {
            return Err(invalid("execute_host needs a CPU context; use execute_raw for device memory".into()));
        }
        let p = &self.problem;
        let r = &p.raw;
        let ta = r.op_a == sys::dgemm_op_t::DGEMM_OP_T;
        let tb = r.op_b == sys::dgemm_op_t::DGEMM_OP_T;
        self.check_host("a", A::DTYPE, a.len(), r.a_type, p.extent(r.m, r.k, ta, r.lda, r.stride_a))?;
        self.check_host("b", B::DTYPE, b.len(), r.b_type, p.extent(r.k, r.n, tb, r.ldb, r.stride_b))?;
        self.check_host("d", D::DTYPE, d.len(), r.d_type, p.extent(r.m, r.n, false, r.ldd, r.stride_d))?;
        let mut c_ptr = ptr::null();
        if self.epilogue.raw.beta != 0.0 || args.beta.map_or(false, |b| b != 0.0) {
            let c = args.c.ok_or_else(|| invalid("the plan reads C (beta != 0) and no c was given".into()))?;
            self.check_host("c", c.dtype, c.len, r.c_type, p.extent(r.m, r.n, false, r.ldc, r.stride_c))?;
            c_ptr = c.ptr;
        }
        let mut raw_args = unsafe { std::mem::zeroed::<sys::dgemm_args_t>() };
        unsafe { sys::dgemm_args_init(&mut raw_args) };
        if args.alpha_ptr.is_some() || args.beta_ptr.is_some() {
            let alpha = match (args.alpha_ptr, args.alpha.is_some() || args.beta.is_some()) {
                (Some(a), false) => a,
                _ => return Err(invalid("device scalars need alpha_ptr (and beta_ptr when C is read), without alpha/beta".into())),
            };
            raw_args.scalar_mode = sys::dgemm_scalar_mode_t::DGEMM_SCALARS_DEVICE;
            raw_args.alpha_ptr = alpha;
            raw_args.beta_ptr = args.beta_ptr.map_or(ptr::null(), |b| b as *const f32);
        } else if args.alpha.is_some() || args.beta.is_some() {
            raw_args.scalar_mode = sys::dgemm_scalar_mode_t::DGEMM_SCALARS_HOST;
            raw_args.alpha = args.alpha.unwrap_or(self.epilogue.raw.alpha);
            raw_args.beta = args.beta.unwrap_or(self.epilogue.raw.beta);
        }
        if let Some(bias) = args.bias {
            let e = &self.epilogue.raw;
            let len = match e.bias_mode {
                sys::dgemm_vector_mode_t::DGEMM_VECTOR_PER_ROW => r.m,
                sys::dgemm_vector_mode_t::DGEMM_VECTOR_PER_COLUMN => r.n,
                _ => return Err(invalid("bias given but the plan has none".into())),
            };
            self.check_host("bias", bias.dtype, bias.len, e.bias_type, len)?;
            raw_args.bias = bias.ptr;
        }
        // The library takes bare pointers: the lengths are checked here, before it reads them.
        let scale_len = self.epilogue.scale_len(r);
        if let Some(scale) = args.scale {
            if scale.len() as i64 != scale_len {
                return Err(invalid(format!("scale holds {} elements, the plan reads {scale_len}", scale.len())));
            }
            raw_args.scale = scale.as_ptr();
        }
        if let Some(zero_point) = args.zero_point {
            if zero_point.len() as i64 != scale_len {
                return Err(invalid(format!("zero_point holds {} elements, the plan reads {scale_len}", zero_point.len())));
            }
            raw_args.zero_point = zero_point.as_ptr();
        }
        let mut workspace = vec![0u8; self.workspace_size];
        // SAFETY: every slice was checked to cover what the plan touches, with the plan's types;
        // the CPU backend computes before returning, so nothing outlives the borrows.
        check(unsafe {
            sys::dgemm_execute_ext(
                self.raw,
                a.as_ptr() as *const c_void,
                b.as_ptr() as *const c_void,
                c_ptr,
                d.as_mut_ptr() as *mut c_void,
                &raw_args,
                ext,
                workspace.as_mut_ptr() as *mut c_void,
                workspace.len(),
                ptr::null_mut(),
            )
        })
    }

    /// Runs a grouped plan on raw pointers: `rows` points to the int32 offsets (contiguous, G + 1)
    /// or counts (masked, G), `status` (may be null) receives the DGEMM_GROUP_STATUS_* bits; both
    /// in the plan's memory, read or written when the kernel runs.
    ///
    /// # Safety
    /// As [`Plan::execute_raw`]; `rows` and `status` too must stay valid until the work completes.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn execute_grouped_raw(
        &self,
        a: *const c_void,
        b: *const c_void,
        c: *const c_void,
        d: *mut c_void,
        args: Option<&sys::dgemm_args_t>,
        rows: *const i32,
        status: *mut u32,
        workspace: *mut c_void,
        workspace_size: usize,
        stream: *mut c_void,
    ) -> Result<()> {
        let layout = self.grouped.ok_or_else(|| invalid("execute_grouped_raw: the plan is not grouped".into()))?;
        let mut g = std::mem::zeroed::<sys::dgemm_group_args_t>();
        sys::dgemm_group_args_init(&mut g);
        match layout {
            GroupLayout::Contiguous => g.offsets = rows,
            GroupLayout::Masked => g.counts = rows,
        }
        g.status = status;
        self.execute_ext(a, b, c, d, args, &g as *const sys::dgemm_group_args_t as *const c_void, workspace, workspace_size, stream)
    }

    /// Runs the plan on raw pointers (device memory for CUDA plans), enqueued on `stream` (a
    /// `cudaStream_t`, null = default stream).
    ///
    /// # Safety
    /// The pointers must be valid for what the plan reads and writes (deepgemm.h, dgemm_execute),
    /// in the plan's device memory, and stay valid until the work on `stream` completes.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn execute_raw(
        &self,
        a: *const c_void,
        b: *const c_void,
        c: *const c_void,
        d: *mut c_void,
        args: Option<&sys::dgemm_args_t>,
        workspace: *mut c_void,
        workspace_size: usize,
        stream: *mut c_void,
    ) -> Result<()> {
        self.execute_ext(a, b, c, d, args, ptr::null(), workspace, workspace_size, stream)
    }

    /// dgemm_execute_ext with an extension chain (null: dgemm_execute).
    #[allow(clippy::too_many_arguments)]
    unsafe fn execute_ext(
        &self,
        a: *const c_void,
        b: *const c_void,
        c: *const c_void,
        d: *mut c_void,
        args: Option<&sys::dgemm_args_t>,
        ext: *const c_void,
        workspace: *mut c_void,
        workspace_size: usize,
        stream: *mut c_void,
    ) -> Result<()> {
        check(sys::dgemm_execute_ext(
            self.raw,
            a,
            b,
            c,
            d,
            args.map_or(ptr::null(), |x| x as *const _),
            ext,
            workspace,
            workspace_size,
            stream,
        ))
    }
}

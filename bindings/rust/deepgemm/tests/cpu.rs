//! Tests of the safe Rust API on the CPU backend: results against an f64 reference computed here
//! (relative Frobenius error), fresh random inputs, poisoned outputs, errors with status and
//! message, one plan executed from several threads.
use deepgemm::half::bf16;
use deepgemm::{Activation, Context, DType, Device, Epilogue, GroupLayout, HostArgs, Plan, Problem, Status};
use std::time::{SystemTime, UNIX_EPOCH};

/// xorshift64*: inputs differ on every run (the seed is printed for a repro).
struct Rng(u64);
impl Rng {
    fn new() -> Rng {
        let seed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
        println!("seed {seed}");
        Rng(seed)
    }
    fn uniform(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545F4914F6CDD1D) >> 11;
        (x as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32
    }
    fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.uniform()).collect()
    }
}

fn gelu_tanh(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
}

#[allow(clippy::too_many_arguments)]
fn reference(a: &[f32], b: &[f32], bias: Option<&[f32]>, m: usize, n: usize, k: usize, ta: bool, tb: bool, alpha: f64, act: fn(f64) -> f64) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0;
            for p in 0..k {
                let av = if ta { a[p * m + i] } else { a[i * k + p] };
                let bv = if tb { b[j * k + p] } else { b[p * n + j] };
                acc += av as f64 * bv as f64;
            }
            out[i * n + j] = act(alpha * acc + bias.map_or(0.0, |v| v[j] as f64));
        }
    }
    out
}

fn rel_error(got: &[f64], want: &[f64]) -> f64 {
    assert!(got.iter().all(|x| x.is_finite()), "an element of D was not written");
    let e: f64 = got.iter().zip(want).map(|(g, w)| (g - w) * (g - w)).sum();
    let r: f64 = want.iter().map(|w| w * w).sum();
    (e / r.max(1e-300)).sqrt()
}

fn cpu() -> Context {
    let ctx = Context::new(Device::Cpu).expect("CPU context");
    assert_eq!(ctx.device(), Device::Cpu);
    ctx
}

#[test]
fn version_matches_header() {
    assert!(deepgemm::version().starts_with(&format!("{}.", deepgemm::sys::DGEMM_VERSION_MAJOR)));
    assert_eq!(unsafe { deepgemm::sys::dgemm_version() }, deepgemm::sys::DGEMM_VERSION_NUMBER);
    assert_eq!(Status::NO_DEVICE.name(), "DGEMM_STATUS_NO_DEVICE");
}

#[test]
fn f32_bias_gelu_every_transpose() {
    let ctx = cpu();
    let mut rng = Rng::new();
    for &(m, n, k) in &[(1, 1, 1), (17, 15, 16), (63, 7, 129), (33, 65, 1)] {
        for ta in [false, true] {
            for tb in [false, true] {
                let problem = Problem::new(m as i64, n as i64, k as i64, DType::F32).trans_a(ta).trans_b(tb);
                let epi = Epilogue::new().alpha(0.5).bias_per_column(DType::F32).activation(Activation::GeluTanh);
                let plan = ctx.plan(&problem, &epi).unwrap();
                let (a, b, bias) = (rng.vec(m * k), rng.vec(k * n), rng.vec(n));
                let mut d = vec![f32::NAN; m * n];
                plan.execute_host(&a, &b, &mut d, &HostArgs { bias: Some(bias.as_slice().into()), ..Default::default() })
                    .unwrap();
                let want = reference(&a, &b, Some(&bias), m, n, k, ta, tb, 0.5, gelu_tanh);
                let got: Vec<f64> = d.iter().map(|&x| x as f64).collect();
                let err = rel_error(&got, &want);
                assert!(err < 1e-5, "{m}x{n}x{k} ta={ta} tb={tb}: relative error {err}");
            }
        }
    }
}

#[test]
fn bf16_and_beta() {
    let ctx = cpu();
    let mut rng = Rng::new();
    let (m, n, k) = (29, 31, 64);
    let plan = ctx.plan(&Problem::new(m as i64, n as i64, k as i64, DType::BF16), &Epilogue::new().beta(1.0)).unwrap();
    let to_bf16 = |v: Vec<f32>| v.into_iter().map(bf16::from_f32).collect::<Vec<_>>();
    let (a, b, c) = (to_bf16(rng.vec(m * k)), to_bf16(rng.vec(k * n)), to_bf16(rng.vec(m * n)));
    let mut d = vec![bf16::from_bits(0x7fc0); m * n]; // NaN
    let args = HostArgs { c: Some(c.as_slice().into()), alpha: Some(-1.5), beta: Some(0.25), ..Default::default() };
    plan.execute_host(&a, &b, &mut d, &args).unwrap();
    let f = |v: &[bf16]| v.iter().map(|x| x.to_f32()).collect::<Vec<f32>>();
    let mut want = reference(&f(&a), &f(&b), None, m, n, k, false, false, -1.5, |x| x);
    for (w, cv) in want.iter_mut().zip(f(&c)) {
        *w += 0.25 * cv as f64;
    }
    let got: Vec<f64> = d.iter().map(|x| x.to_f32() as f64).collect();
    let err = rel_error(&got, &want);
    assert!(err < 1.5e-2, "relative error {err}");
}

#[test]
fn one_plan_many_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Plan>();
    assert_send_sync::<Context>();
    let ctx = cpu();
    let (m, n, k) = (24, 40, 56);
    let plan = ctx.plan(&Problem::new(m as i64, n as i64, k as i64, DType::F32), &Epilogue::new().activation(Activation::Relu)).unwrap();
    drop(ctx); // the plan keeps its context alive
    let mut rng = Rng::new();
    let inputs: Vec<_> = (0..8).map(|_| (rng.vec(m * k), rng.vec(k * n))).collect();
    let results: Vec<Vec<f32>> = std::thread::scope(|s| {
        let handles: Vec<_> = inputs
            .iter()
            .map(|(a, b)| {
                let plan = &plan;
                s.spawn(move || {
                    let mut d = vec![f32::NAN; m * n];
                    plan.execute_host(a, b, &mut d, &HostArgs::default()).unwrap();
                    d
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for ((a, b), d) in inputs.iter().zip(results) {
        let want = reference(a, b, None, m, n, k, false, false, 1.0, |x| x.max(0.0));
        let got: Vec<f64> = d.iter().map(|&x| x as f64).collect();
        assert!(rel_error(&got, &want) < 1e-5);
    }
    let info = plan.describe().unwrap();
    assert!(info.starts_with('{') && info.contains("\"backend\":\"cpu\""), "{info}");
}

#[test]
fn errors_carry_status_and_message() {
    let ctx = cpu();
    let err = ctx.plan(&Problem::new(8, 8, 8, DType::F32).leading_dims(3, 0, 0, 0), &Epilogue::new()).err().unwrap();
    assert_eq!(err.status, Status::INVALID_ARGUMENT);
    assert!(err.message.contains("lda"), "{err}");
    assert!(err.to_string().starts_with("DGEMM_STATUS_INVALID_ARGUMENT: "));
    let err = ctx.plan(&Problem::new(8, 8, 8, DType::F32).b_type(DType::F16), &Epilogue::new()).err().unwrap();
    assert_eq!(err.status, Status::NOT_SUPPORTED, "{err}");
    let err = Context::new(Device::Cuda(4096)).err().unwrap();
    assert_eq!(err.status, Status::NO_DEVICE, "{err}");

    // Checked before the library is called: wrong element type, short slices.
    let plan = ctx.plan(&Problem::new(4, 5, 6, DType::F32), &Epilogue::new().bias_per_column(DType::F32)).unwrap();
    let (a, b, bias) = (vec![0.5f32; 24], vec![0.25f32; 30], vec![1.0f32; 5]);
    let mut d = vec![f32::NAN; 20];
    let err = plan.execute_host(&a[..23], &b, &mut d, &HostArgs::default()).err().unwrap();
    assert!(err.message.contains("a holds 23"), "{err}");
    let mut wrong = vec![0i32; 20];
    assert!(plan.execute_host(&a, &b, &mut wrong, &HostArgs::default()).is_err());
    // The library's own check: the plan has a bias and none is given; D stays untouched.
    let err = plan.execute_host(&a, &b, &mut d, &HostArgs::default()).err().unwrap();
    assert_eq!(err.status, Status::INVALID_ARGUMENT, "{err}");
    assert!(d.iter().all(|x| x.is_nan()));
    plan.execute_host(&a, &b, &mut d, &HostArgs { bias: Some(bias.as_slice().into()), ..Default::default() }).unwrap();
    assert!(d.iter().all(|&x| (x - (6.0 * 0.125 + 1.0)).abs() < 1e-6));
}

/// Round half to even (f64::round_ties_even needs a newer Rust than this crate's minimum).
fn rint(x: f64) -> f64 {
    let f = x.floor();
    match (x - f).partial_cmp(&0.5).unwrap() {
        std::cmp::Ordering::Less => f,
        std::cmp::Ordering::Greater => f + 1.0,
        std::cmp::Ordering::Equal => if f % 2.0 == 0.0 { f } else { f + 1.0 },
    }
}

/// An F32 GEMM with an I8 output, a per-column scale and zero point, alpha read through a
/// pointer (DGEMM_SCALARS_DEVICE, host memory on the CPU backend). Integer inputs keep the sums
/// exact, so D is checked bit for bit against deepgemm.h's rule: round half to even, add the zero
/// point, saturate to [-128, 127].
#[test]
fn int8_scale_zero_point_and_device_alpha() {
    let ctx = cpu();
    let (m, n, k) = (10usize, 7usize, 5usize);
    let problem = Problem::new(m as i64, n as i64, k as i64, DType::F32).out_type(DType::I8);
    let plan = ctx.plan(&problem, &Epilogue::new().scale_per_column().zero_point(true)).unwrap();
    let mut rng = Rng::new();
    let mut ints = |len: usize| -> Vec<f32> { (0..len).map(|_| (rng.uniform() * 6.5).round()).collect() };
    let (a, b) = (ints(m * k), ints(k * n));
    let choices = [0.25f32, 0.5, 1.5, 4.0];
    let scale: Vec<f32> = (0..n).map(|j| choices[(j * 7 + m) % 4]).collect();
    let zero: Vec<i32> = (0..n).map(|j| j as i32 * 5 - 15).collect();
    let alpha = 0.5f32;
    let mut d = vec![99i8; m * n]; // poisoned
    let args = HostArgs { alpha_ptr: Some(&alpha), scale: Some(&scale), zero_point: Some(&zero), ..Default::default() };
    plan.execute_host(&a, &b, &mut d, &args).unwrap();
    let acc = reference(&a, &b, None, m, n, k, false, false, 0.5, |x| x);
    for i in 0..m {
        for j in 0..n {
            let want = (rint(acc[i * n + j] * scale[j] as f64) + zero[j] as f64).clamp(-128.0, 127.0) as i8;
            assert_eq!(d[i * n + j], want, "d[{i},{j}] (acc {})", acc[i * n + j]);
        }
    }
    // Lengths are checked before the library runs; a missing zero point is the library's error.
    let err = plan.execute_host(&a, &b, &mut d, &HostArgs { scale: Some(&scale[1..]), zero_point: Some(&zero), ..Default::default() }).err().unwrap();
    assert_eq!(err.status, Status::INVALID_ARGUMENT, "{err}");
    let err = plan.execute_host(&a, &b, &mut d, &HostArgs { scale: Some(&scale), ..Default::default() }).err().unwrap();
    assert_eq!(err.status, Status::INVALID_ARGUMENT, "{err}");
    assert!(err.message.contains("zero_point"), "{err}");
}

/// A contiguous grouped GEMM (mixture of experts) through the raw entry point, with host memory
/// on the CPU backend: group g's rows [offsets[g], offsets[g + 1]) against its own B and bias;
/// rows outside every group keep their poison, the status word reads 0, a decreasing offset is
/// INVALID_ARGUMENT.
#[test]
fn grouped_contiguous() {
    let ctx = cpu();
    let mut rng = Rng::new();
    let (groups, m, n, k) = (3usize, 12usize, 5usize, 7usize);
    let problem = Problem::new(m as i64, n as i64, k as i64, DType::F32).trans_b(true).batch(groups as i64, 0, (n * k) as i64, 0, 0);
    let epi = Epilogue::new().bias_per_column(DType::F32).activation(Activation::GeluTanh);
    let plan = ctx.plan_grouped(&problem, &epi, GroupLayout::Contiguous, 2).unwrap();
    let (a, b, bias) = (rng.vec(m * k), rng.vec(groups * n * k), rng.vec(groups * n));
    let mut d = vec![f32::NAN; m * n];
    let offsets = [2i32, 6, 6, 10];
    let mut status = u32::MAX;
    let mut args = unsafe { std::mem::zeroed::<deepgemm::sys::dgemm_args_t>() };
    unsafe { deepgemm::sys::dgemm_args_init(&mut args) };
    args.bias = bias.as_ptr() as *const _;
    // The raw entry points take the caller's workspace (a CPU plan's scratch is workspace too).
    let mut workspace = vec![0u8; plan.workspace_size()];
    let mut run = |d: &mut Vec<f32>, offsets: &[i32], status: &mut u32| unsafe {
        plan.execute_grouped_raw(a.as_ptr() as *const _, b.as_ptr() as *const _, std::ptr::null(), d.as_mut_ptr() as *mut _,
                                 Some(&args), offsets.as_ptr(), status, workspace.as_mut_ptr() as *mut _, workspace.len(),
                                 std::ptr::null_mut())
    };
    run(&mut d, &offsets, &mut status).unwrap();
    assert_eq!(status, 0);
    for g in 0..groups {
        let (lo, hi) = (offsets[g] as usize, offsets[g + 1] as usize);
        let want = reference(&a[lo * k..hi * k], &b[g * n * k..(g + 1) * n * k], Some(&bias[g * n..(g + 1) * n]), hi - lo, n, k,
                             false, true, 1.0, gelu_tanh);
        let got: Vec<f64> = d[lo * n..hi * n].iter().map(|&x| x as f64).collect();
        assert!(rel_error(&got, &want) < 1e-5, "group {g}");
    }
    assert!(d[..2 * n].iter().chain(&d[10 * n..]).all(|x| x.is_nan()), "rows outside the groups were written");
    let err = run(&mut d, &[0, 6, 4, 12], &mut status).unwrap_err();
    assert_eq!(err.status, Status::INVALID_ARGUMENT);
    assert!(err.message.contains("offsets[2] = 4"), "{}", err.message);
    // A plain plan has no group rows to take.
    let plain = ctx.plan(&Problem::new(4, 4, 4, DType::F32), &Epilogue::new()).unwrap();
    let err = unsafe {
        plain.execute_grouped_raw(a.as_ptr() as *const _, b.as_ptr() as *const _, std::ptr::null(), d.as_mut_ptr() as *mut _,
                                  None, offsets.as_ptr(), std::ptr::null_mut(), std::ptr::null_mut(), 0, std::ptr::null_mut())
    };
    assert!(err.is_err());
}

/// A grouped problem's planning hint (expected_m): part of the plan's description, refused past
/// the rows the groups hold on average (m / G for the contiguous layout).
#[test]
fn grouped_expected_m() {
    let ctx = cpu();
    let problem = Problem::new(12, 5, 7, DType::F32).trans_b(true).batch(3, 0, 35, 0, 0);
    let plan = ctx.plan_grouped_expected(&problem, &Epilogue::new(), GroupLayout::Contiguous, 2, 4).unwrap();
    assert!(plan.describe().unwrap().contains("expected_m=4"));
    let err = ctx.plan_grouped_expected(&problem, &Epilogue::new(), GroupLayout::Contiguous, 2, 5).err().unwrap();
    assert_eq!(err.status, Status::INVALID_ARGUMENT, "{err}");
    assert!(err.message.contains("expected_m = 5"), "{err}");
}

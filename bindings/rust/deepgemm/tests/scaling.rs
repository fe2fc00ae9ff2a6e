//! Tests of DGEMM_1.1 scaling through the safe Rust API on the CPU backend: FP8 with DeepGEMM's
//! 1 x 128 / 128 x 128 block scales, INT8 dequantized per token x per channel plus bias, the fused
//! block-scaled FP8 output with f32 scales and amax, and the errors for bad scale tensors.
use deepgemm::{
    Context, DType, Device, Epilogue, HostArgs, HostScales, Problem, Scale, ScaleData, ScaleDataMut, ScaleMode, ScaleShape,
    Scaling, Status, F8E4M3,
};
use std::time::{SystemTime, UNIX_EPOCH};

struct Rng(u64);
impl Rng {
    fn new() -> Rng {
        let seed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
        println!("seed {seed}");
        Rng(seed)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f32 {
        (lo + (self.next() >> 11) as f64 / (1u64 << 53) as f64 * (hi - lo)) as f32
    }
    /// A finite E4M3 bit pattern with |x| <= 8.
    fn e4m3(&mut self) -> F8E4M3 {
        loop {
            let v = (self.next() >> 56) as u8;
            if v & 0x7f <= 0x50 {
                return F8E4M3(v);
            }
        }
    }
}

fn e4m3_value(x: F8E4M3) -> f64 {
    let (sign, exp, man) = (if x.0 & 0x80 != 0 { -1.0 } else { 1.0 }, ((x.0 >> 3) & 0xf) as i32, (x.0 & 7) as f64);
    if exp == 0 {
        sign * man * 2f64.powi(-9)
    } else {
        sign * (1.0 + man / 8.0) * 2f64.powi(exp - 7)
    }
}

fn rel_error(got: &[f64], want: &[f64]) -> f64 {
    assert!(got.iter().all(|x| x.is_finite()), "an element of D was not written");
    let e: f64 = got.iter().zip(want).map(|(g, w)| (g - w) * (g - w)).sum();
    let r: f64 = want.iter().map(|w| w * w).sum();
    (e / r.max(1e-300)).sqrt()
}

#[test]
fn fp8_block_scaled_inputs() {
    let mut rng = Rng::new();
    let ctx = Context::new(Device::Cpu).unwrap();
    let (m, n, k, kb, nb) = (6usize, 150usize, 260usize, 3usize, 2usize);
    let problem = Problem::new(m as i64, n as i64, k as i64, DType::F8E4M3).trans_b(true).out_type(DType::F32);
    let scaling = Scaling {
        a: Some(Scale::new(ScaleMode::Vec128).k_major()),
        b: Some(Scale::new(ScaleMode::Blk128x128).k_major()),
        ..Default::default()
    };
    let plan = ctx.plan_scaled(&problem, &Epilogue::new(), &scaling).unwrap();
    let shapes = plan.scale_shapes();
    assert_eq!(shapes[0], ScaleShape { rows: m as i64, cols: kb as i64, ld: kb as i64, elements: (m * kb) as i64 });
    assert_eq!((shapes[1].rows, shapes[1].cols), (nb as i64, kb as i64));
    let a: Vec<F8E4M3> = (0..m * k).map(|_| rng.e4m3()).collect();
    let b: Vec<F8E4M3> = (0..n * k).map(|_| rng.e4m3()).collect();
    let sa: Vec<f32> = (0..m * kb).map(|_| rng.uniform(0.25, 4.0)).collect();
    let sb: Vec<f32> = (0..nb * kb).map(|_| rng.uniform(0.25, 4.0)).collect();
    let mut d = vec![f32::NAN; m * n];
    let scales = HostScales { a: Some(ScaleData::F32(&sa)), b: Some(ScaleData::F32(&sb)), ..Default::default() };
    plan.execute_host_scaled(&a, &b, &mut d, &HostArgs::default(), scales).unwrap();
    let mut want = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            for p in 0..k {
                let s = sa[i * kb + p / 128] as f64 * sb[(j / 128) * kb + p / 128] as f64;
                want[i * n + j] += s * e4m3_value(a[i * k + p]) * e4m3_value(b[j * k + p]);
            }
        }
    }
    let got: Vec<f64> = d.iter().map(|&x| x as f64).collect();
    assert!(rel_error(&got, &want) < 1e-6);

    // A short or mistyped tensor is refused before the library reads it; a missing one is the
    // library's INVALID_ARGUMENT naming it.
    let short = &sa[..m * kb - 1];
    let bytes = vec![127u8; nb * kb];
    for (scales, what) in [
        (HostScales { a: Some(ScaleData::F32(short)), b: Some(ScaleData::F32(&sb)), ..Default::default() }, "a_scale holds"),
        (HostScales { a: Some(ScaleData::F32(&sa)), b: Some(ScaleData::UE8M0(&bytes)), ..Default::default() }, "UE8M0"),
        (HostScales { a: Some(ScaleData::F32(&sa)), ..Default::default() }, "scale_args->b_scale is NULL"),
    ] {
        let err = plan.execute_host_scaled(&a, &b, &mut d, &HostArgs::default(), scales).unwrap_err();
        assert_eq!(err.status, Status::INVALID_ARGUMENT);
        assert!(err.message.contains(what), "{}", err.message);
    }
    // execute_host (1.0) on a scaled plan lacks the scale tensors.
    let err = plan.execute_host(&a, &b, &mut d, &HostArgs::default()).unwrap_err();
    assert!(err.message.contains("no DGEMM_EXT_SCALE_ARGS"), "{}", err.message);
}

#[test]
fn int8_dequantized_per_token_per_channel_with_bias() {
    let mut rng = Rng::new();
    let ctx = Context::new(Device::Cpu).unwrap();
    let (m, n, k) = (11usize, 40usize, 90usize);
    let problem = Problem::new(m as i64, n as i64, k as i64, DType::I8).trans_b(true).out_type(DType::F32);
    let scaling = Scaling {
        a: Some(Scale::new(ScaleMode::OuterVec)),
        b: Some(Scale::new(ScaleMode::OuterVec)),
        ..Default::default()
    };
    let plan = ctx.plan_scaled(&problem, &Epilogue::new().bias_per_column(DType::F32), &scaling).unwrap();
    let a: Vec<i8> = (0..m * k).map(|_| (rng.next() % 255) as i8).collect();
    let b: Vec<i8> = (0..n * k).map(|_| (rng.next() % 255) as i8).collect();
    let sa: Vec<f32> = (0..m).map(|_| rng.uniform(1e-3, 1e-2)).collect();
    let sb: Vec<f32> = (0..n).map(|_| rng.uniform(1e-3, 1e-2)).collect();
    let bias: Vec<f32> = (0..n).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let mut d = vec![f32::NAN; m * n];
    let args = HostArgs { bias: Some(bias.as_slice().into()), ..Default::default() };
    let scales = HostScales { a: Some(ScaleData::F32(&sa)), b: Some(ScaleData::F32(&sb)), ..Default::default() };
    plan.execute_host_scaled(&a, &b, &mut d, &args, scales).unwrap();
    let mut want = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let acc: i64 = (0..k).map(|p| a[i * k + p] as i64 * b[j * k + p] as i64).sum();
            want[i * n + j] = acc as f64 * sa[i] as f64 * sb[j] as f64 + bias[j] as f64;
        }
    }
    let got: Vec<f64> = d.iter().map(|&x| x as f64).collect();
    assert!(rel_error(&got, &want) < 1e-6);
}

#[test]
fn fused_block_scaled_fp8_output_and_amax() {
    let mut rng = Rng::new();
    let ctx = Context::new(Device::Cpu).unwrap();
    let (m, n, k) = (4usize, 260usize, 32usize);
    let problem = Problem::new(m as i64, n as i64, k as i64, DType::F32).out_type(DType::F8E4M3);
    let scaling = Scaling { d: Some(Scale::new(ScaleMode::Vec128).k_major()), amax_d: true, ..Default::default() };
    let plan = ctx.plan_scaled(&problem, &Epilogue::new(), &scaling).unwrap();
    let a: Vec<f32> = (0..m * k).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let b: Vec<f32> = (0..k * n).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let mut d = vec![F8E4M3(0x7f); m * n];
    let mut ds = vec![f32::NAN; m * 3];
    let mut amax = -1.0f32;
    let scales = HostScales { d: Some(ScaleDataMut::F32(&mut ds)), amax_d: Some(&mut amax), ..Default::default() };
    plan.execute_host_scaled(&a, &b, &mut d, &HostArgs::default(), scales).unwrap();
    let mut want = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k).map(|p| a[i * k + p] as f64 * b[p * n + j] as f64).sum();
        }
    }
    let mut deq = vec![0.0; m * n];
    let mut all_max = 0.0f64;
    for i in 0..m {
        for jb in 0..3 {
            let cols = jb * 128..(jb * 128 + 128).min(n);
            let block_max = cols.clone().map(|j| want[i * n + j].abs()).fold(0.0, f64::max);
            all_max = all_max.max(block_max);
            let s = ds[i * 3 + jb] as f64; // K-major: (row, block) at row * 3 + block
            assert!((s - block_max / 448.0).abs() <= 1e-6 * s, "block ({i}, {jb}): scale {s}, amax {block_max}");
            for j in cols {
                deq[i * n + j] = e4m3_value(d[i * n + j]) * s;
            }
        }
    }
    assert!(rel_error(&deq, &want) < 0.07);
    assert!((amax as f64 - all_max).abs() <= 1e-6 * all_max, "amax {amax}, want {all_max}");
}

//! y = gelu_tanh(x @ w^T + b) in bf16 on the CPU backend, the weight stored like a torch.nn.Linear's,
//! checked against f64 arithmetic. `cargo run --example linear` after installing the library
//! (pkg-config finds it; the example's RPATH points at it, so no LD_LIBRARY_PATH is needed).
use deepgemm::half::bf16;
use deepgemm::{Activation, Context, DType, Device, Epilogue, HostArgs, Problem};

fn main() -> Result<(), deepgemm::Error> {
    let (m, n, k) = (4usize, 6usize, 32usize);
    let ctx = Context::new(Device::Cpu)?; // Device::Auto picks the first GPU when there is one
    let problem = Problem::new(m as i64, n as i64, k as i64, DType::BF16).trans_b(true);
    let epilogue = Epilogue::new().bias_per_column(DType::BF16).activation(Activation::GeluTanh);
    let plan = ctx.plan(&problem, &epilogue)?;
    let x: Vec<bf16> = (0..m * k).map(|i| bf16::from_f32(((i * 7 % 13) as f32 - 6.0) / 8.0)).collect();
    let w: Vec<bf16> = (0..n * k).map(|i| bf16::from_f32(((i * 5 % 11) as f32 - 5.0) / 16.0)).collect();
    let b: Vec<bf16> = (0..n).map(|j| bf16::from_f32(j as f32 / 8.0)).collect();
    let mut y = vec![bf16::from_f32(f32::NAN); m * n];
    plan.execute_host(&x, &w, &mut y, &HostArgs { bias: Some(b.as_slice().into()), ..Default::default() })?;
    let mut worst = 0f64;
    for i in 0..m {
        for j in 0..n {
            let acc: f64 = (0..k).map(|l| f64::from(x[i * k + l].to_f32()) * f64::from(w[j * k + l].to_f32())).sum::<f64>()
                + f64::from(b[j].to_f32());
            let want = 0.5 * acc * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (acc + 0.044715 * acc.powi(3))).tanh());
            worst = worst.max((f64::from(y[i * n + j].to_f32()) - want).abs() / want.abs().max(1.0));
        }
    }
    assert!(worst < 1e-2, "largest relative difference {worst}");
    println!("[rust] OK: deepgemm {}, {m}x{n}x{k} bf16 bias+gelu_tanh, largest relative difference {worst:.1e}", deepgemm::version());
    Ok(())
}

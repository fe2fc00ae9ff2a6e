//! y = relu(x @ w^T + b) in f16 through the published `deepgemm` crate, checked against f64.
use deepgemm::half::f16;
use deepgemm::{Activation, Context, DType, Device, Epilogue, HostArgs, Problem};

fn main() {
    let (m, n, k) = (5usize, 9usize, 24usize);
    let ctx = Context::new(Device::Cpu).expect("CPU context");
    let problem = Problem::new(m as i64, n as i64, k as i64, DType::F16).trans_b(true);
    let epilogue = Epilogue::new().bias_per_column(DType::F16).activation(Activation::Relu);
    let plan = ctx.plan(&problem, &epilogue).expect("plan");
    let x: Vec<f16> = (0..m * k).map(|i| f16::from_f32(((i * 7 % 17) as f32 - 8.0) / 8.0)).collect();
    let w: Vec<f16> = (0..n * k).map(|i| f16::from_f32(((i * 3 % 13) as f32 - 6.0) / 16.0)).collect();
    let b: Vec<f16> = (0..n).map(|j| f16::from_f32(j as f32 / 4.0 - 1.0)).collect();
    let mut y = vec![f16::NAN; m * n];
    plan.execute_host(&x, &w, &mut y, &HostArgs { bias: Some(b.as_slice().into()), ..Default::default() })
        .expect("execute");
    let mut worst = 0f64;
    for i in 0..m {
        for j in 0..n {
            let acc: f64 = (0..k).map(|l| f64::from(x[i * k + l].to_f32()) * f64::from(w[j * k + l].to_f32())).sum();
            let want = (acc + f64::from(b[j].to_f32())).max(0.0);
            worst = worst.max((f64::from(y[i * n + j].to_f32()) - want).abs() / want.abs().max(1.0));
        }
    }
    assert!(worst < 2e-3, "largest relative difference {worst}");
    println!("[rust consumer] OK: deepgemm {} from the published crates, f16 {m}x{n}x{k}, largest difference {worst:.1e}",
             deepgemm::version());
}

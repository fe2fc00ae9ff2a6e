// GPU tests of the sm80 family through the public API (label gpu; exit 77 = skipped without a
// GPU). Every case: fresh random inputs, D poisoned and surrounded by guard bands, compared with
// the CPU oracle (dgemm::cpu_gemm, f64) by relative Frobenius error with per-type thresholds,
// and every byte outside the m x n elements of D (ld padding, guard bands) checked untouched.
// Identity-epilogue f16/bf16 cases are also checked against cuBLAS. Then: execute ordered with
// other work on a user stream, captured into a CUDA graph and replayed, two threads on one plan.
// Every failure prints a one-line repro and the `deepgemm run` line that reruns its problem.
#include <boost/test/unit_test.hpp>

#include <cublas_v2.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "backend/cuda/sm80_gemm.hpp"
#include "common/gpu_harness.hpp"
#include "common/shapes.hpp"
#include "plan/arch_file.hpp"
#include "plan/families.hpp"
#include "plan/planner.hpp"

namespace {

using namespace dgemm;
using namespace dgemm_test;

void prefill_cache(const char* arch_name);

struct SkipWithoutGpu {
  SkipWithoutGpu() { skip_without_gpu(prefill_cache); }
};
BOOST_TEST_GLOBAL_FIXTURE(SkipWithoutGpu);

dgemm_status_t make_plan(const Case& c, dgemm_plan_t* plan) { return make_plan_forced(c.p, c.e, "sm80", plan); }

// cuBLAS on the same inputs (identity epilogue, f16/bf16 in and out): validation of the oracle
// and of our result.
bool cublas_can(const Case& cs) {
  const GemmProblem& p = cs.p;
  return cs.e.is_identity() && cs.misalign == 0 && cs.scalars == ScalarMode::FromPlan &&
         (p.d_type == DType::F16 || p.d_type == DType::BF16 || p.d_type == DType::F32) && p.k > 0;
}

std::vector<unsigned char> run_cublas(const Case& cs, const Operands& ops) {
  static cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    cublasCreate(&h);
    return h;
  }();
  const GemmProblem& p = cs.p;
  auto cuda_type = [](DType t) {
    return t == DType::F16 ? CUDA_R_16F : t == DType::BF16 ? CUDA_R_16BF : CUDA_R_32F;
  };
  DevBuf d(ops.d_init.size());
  cudaMemcpy(d.base, ops.d_init.data(), ops.d_init.size(), cudaMemcpyHostToDevice);
  const float alpha = 1.0f, beta = 0.0f;
  auto op = [](Op o) { return o == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; };
  cublasStatus_t st;
  if (p.order == Order::ColMajor) {
    st = cublasGemmStridedBatchedEx(handle, op(p.op_a), op(p.op_b), int(p.m), int(p.n), int(p.k), &alpha,
                                    ops.da->at(ops.off_a), cuda_type(p.a_type), int(p.lda), p.stride_a,
                                    ops.db->at(ops.off_b), cuda_type(p.b_type), int(p.ldb), p.stride_b, &beta,
                                    d.at(kGuard), cuda_type(p.d_type), int(p.ldd), p.stride_d, int(p.batch_count),
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  } else {
    st = cublasGemmStridedBatchedEx(handle, op(p.op_b), op(p.op_a), int(p.n), int(p.m), int(p.k), &alpha,
                                    ops.db->at(ops.off_b), cuda_type(p.b_type), int(p.ldb), p.stride_b,
                                    ops.da->at(ops.off_a), cuda_type(p.a_type), int(p.lda), p.stride_a, &beta,
                                    d.at(kGuard), cuda_type(p.d_type), int(p.ldd), p.stride_d, int(p.batch_count),
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  }
  std::vector<unsigned char> out(ops.d_init.size());
  if (st != CUBLAS_STATUS_SUCCESS) return {};
  cudaMemcpy(out.data(), d.base, out.size(), cudaMemcpyDeviceToHost);
  return out;
}
std::vector<Case> sweep() {
  std::vector<Case> cases;
  const Op ops[] = {Op::N, Op::T};
  const Order orders[] = {Order::RowMajor, Order::ColMajor};
  // 1. DESIGN.md edge sizes in each of M, N, K, every transpose and order (bf16 -> bf16).
  for (int dim = 0; dim < 3; ++dim)
    for (int64_t s : dgemm_test::kEdgeSizes)
      for (Op oa : ops)
        for (Op ob : ops)
          for (Order o : orders) {
            int64_t m = dim == 0 ? s : dgemm_test::kSweepOtherM, n = dim == 1 ? s : dgemm_test::kSweepOtherN,
                    k = dim == 2 ? s : dgemm_test::kSweepOtherK;
            cases.push_back(make_case(m, n, k, DType::BF16, DType::BF16, oa, ob, o, "edge"));
          }
  // 2. Odd and even numbers of K tiles (32 wide) around the pipeline depth, and big tiles.
  for (int64_t k : {16, 32, 48, 64, 96, 128, 160, 192, 224, 256, 288, 1000})
    cases.push_back(make_case(130, 136, k, DType::F16, DType::F32, Op::N, Op::N, Order::RowMajor, "ktiles"));
  for (Op oa : ops)
    for (Op ob : ops) {
      cases.push_back(make_case(1024, 1024, 512, DType::BF16, DType::BF16, oa, ob, Order::RowMajor, "big"));
      cases.push_back(make_case(1000, 1000, 1000, DType::F16, DType::F32, oa, ob, Order::ColMajor, "big"));
      cases.push_back(make_case(513, 771, 4093, DType::BF16, DType::F32, oa, ob, Order::RowMajor, "bigk"));
    }
  // 3. Types.
  for (DType ab : {DType::F16, DType::BF16})
    for (DType d : {DType::F32, DType::F16, DType::BF16})
      for (Op oa : ops)
        for (Op ob : ops) {
          cases.push_back(make_case(67, 263, 259, ab, d, oa, ob, Order::RowMajor, "types"));
          cases.push_back(make_case(129, 17, 513, ab, d, oa, ob, Order::ColMajor, "types"));
        }
  // 4. Leading-dimension padding and unaligned pointers (the scalar-load kernel).
  for (Op oa : ops)
    for (Op ob : ops)
      for (Order o : orders)
        for (int mis : {0, 1}) {
          Case c = make_case(65, 67, 259, DType::BF16, DType::BF16, oa, ob, o, mis ? "unaligned" : "ldpad");
          c.p.resolve_and_validate();
          c.p.lda += dgemm_test::kLdPad;
          c.p.ldb += dgemm_test::kLdPad;
          c.p.ldc += dgemm_test::kLdPad;
          c.p.ldd += dgemm_test::kLdPad;
          c.misalign = mis;
          cases.push_back(c);
          Case aligned_pad = c;  // padded to a multiple of 8: vector path with ld > minimum
          aligned_pad.misalign = 0;
          aligned_pad.p.lda += 3;
          aligned_pad.p.ldb += 3;
          aligned_pad.tag = "ldpad8";
          cases.push_back(aligned_pad);
        }
  // 5. Batches (strided with gaps, and a broadcast B).
  for (Order o : orders)
    for (int bcast : {0, 1}) {
      Case c = make_case(70, 45, 99, DType::F16, DType::F16, Op::N, Op::T, o, "batch");
      c.p.resolve_and_validate();
      c.p.batch_count = 3;
      GemmProblem& p = c.p;
      p.stride_a = span(p, p.a_rows(), p.a_cols(), p.lda, 0) + 8;
      p.stride_b = bcast ? 0 : span(p, p.b_rows(), p.b_cols(), p.ldb, 0) + 16;
      p.stride_c = span(p, p.m, p.n, p.ldc, 0) + 3;
      p.stride_d = span(p, p.m, p.n, p.ldd, 0) + 5;
      c.e.beta = 0.5f;
      cases.push_back(c);
    }
  // 6. Every epilogue piece, in both orders (so per-row / per-column are exercised transposed).
  struct Epi {
    DType c, d, bias_type;
    float alpha, beta;
    VectorMode bias, scale;
    Activation act;
    bool zp, sat;
    ScalarMode scalars;
  };
  const Epi epis[] = {
      {DType::F32, DType::F32, DType::F32, 1.5f, 0.5f, VectorMode::None, VectorMode::None, Activation::None, false, true, ScalarMode::FromPlan},
      {DType::BF16, DType::BF16, DType::F32, 1.0f, -1.0f, VectorMode::PerColumn, VectorMode::None, Activation::Relu, false, true, ScalarMode::FromPlan},
      {DType::F16, DType::F32, DType::BF16, 0.5f, 0.0f, VectorMode::PerRow, VectorMode::None, Activation::GeluTanh, false, true, ScalarMode::FromPlan},
      {DType::F32, DType::F32, DType::F16, 1.0f, 2.0f, VectorMode::PerColumn, VectorMode::PerTensor, Activation::GeluErf, false, true, ScalarMode::FromPlan},
      {DType::F32, DType::F16, DType::F32, 1.0f, 0.0f, VectorMode::PerRow, VectorMode::PerColumn, Activation::Silu, false, true, ScalarMode::FromPlan},
      {DType::BF16, DType::BF16, DType::BF16, 1.0f, 1.0f, VectorMode::None, VectorMode::PerRow, Activation::None, false, true, ScalarMode::Host},
      {DType::F32, DType::F32, DType::F32, 1.0f, 1.0f, VectorMode::PerColumn, VectorMode::None, Activation::None, false, true, ScalarMode::Device},
      {DType::F32, DType::I8, DType::F32, 8.0f, 0.0f, VectorMode::PerColumn, VectorMode::PerRow, Activation::None, true, true, ScalarMode::FromPlan},
      {DType::I8, DType::I8, DType::F32, 8.0f, 1.0f, VectorMode::None, VectorMode::PerColumn, Activation::Relu, true, true, ScalarMode::FromPlan},
      {DType::F32, DType::F8E4M3, DType::F32, 16.0f, 0.0f, VectorMode::None, VectorMode::PerTensor, Activation::None, false, true, ScalarMode::FromPlan},
      {DType::F32, DType::F8E4M3, DType::F32, 64.0f, 0.0f, VectorMode::None, VectorMode::None, Activation::None, false, false, ScalarMode::FromPlan},
      {DType::F8E5M2, DType::F8E5M2, DType::F32, 4.0f, 0.5f, VectorMode::PerRow, VectorMode::None, Activation::GeluErf, false, true, ScalarMode::FromPlan},
  };
  for (const Epi& x : epis)
    for (Order o : orders)
      for (int64_t k : {int64_t(0), int64_t(259)}) {
        if (k == 0 && x.scalars != ScalarMode::FromPlan) continue;
        Case c = make_case(131, 70, k, DType::BF16, x.d, Op::T, Op::N, o, "epilogue");
        c.p.c_type = x.c;
        c.e.alpha = x.alpha;
        c.e.beta = x.beta;
        c.e.bias_mode = x.bias;
        c.e.bias_type = x.bias_type;
        c.e.scale_mode = x.scale;
        c.e.activation = x.act;
        c.e.zero_point = x.zp;
        c.e.saturate = x.sat;
        c.scalars = x.scalars;
        cases.push_back(c);
      }
  for (Case& c : cases) c.p.resolve_and_validate();
  return cases;
}

}  // namespace

BOOST_AUTO_TEST_CASE(sm80_sweep_vs_oracle_and_cublas) {
  BOOST_REQUIRE(context() != nullptr);
  std::vector<Case> cases = sweep();
  const SweepPlans made = create_plans(cases, make_plan);
  const std::vector<dgemm_plan_t>& plans = made.plans;
  const std::vector<dgemm_status_t>& status = made.status;
  const std::vector<std::string>& errors = made.errors;
  std::mt19937 rng(12345);
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int failed = 0, cublas_checked = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& cs = cases[i];
    BOOST_CHECK_MESSAGE(status[i] == DGEMM_STATUS_SUCCESS,
                        repro(cs) << ": create_plan: " << errors[i] << repro_command(cs, "sm80"));
    if (status[i] != DGEMM_STATUS_SUCCESS) continue;
    Operands ops(cs, rng);
    dgemm_status_t st = ops.execute(plans[i], cs, stream);
    BOOST_CHECK_MESSAGE(st == DGEMM_STATUS_SUCCESS,
                        repro(cs) << ": execute: " << dgemm_last_error() << repro_command(cs, "sm80"));
    CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<unsigned char> got = ops.fetch_d();
    std::vector<unsigned char> want = ops.oracle(cs);
    const std::size_t got_off = ops.off_d;
    std::string why = compare(cs, got, want, got_off);
    if (cublas_can(cs)) {
      std::vector<unsigned char> cub = run_cublas(cs, ops);
      if (!cub.empty()) {
        ++cublas_checked;
        why += compare(cs, cub, want, kGuard, "oracle (cuBLAS result)");
        why += compare(cs, got, cub, got_off, "cuBLAS");
      }
    }
    BOOST_CHECK_MESSAGE(why.empty(), repro(cs) << ": " << why << repro_command(cs, "sm80"));
    failed += !why.empty();
    dgemm_destroy_plan(plans[i]);
  }
  cudaStreamDestroy(stream);
  BOOST_TEST_MESSAGE(cases.size() << " cases, " << failed << " failed, " << cublas_checked << " also checked against cuBLAS");
}

namespace {
// A mid-size case for the stream / graph / thread tests.
Case medium_case() {
  Case c = make_case(300, 260, 520, DType::BF16, DType::F32, Op::N, Op::T, Order::RowMajor, "medium");
  c.e.beta = 0.5f;
  c.e.bias_mode = VectorMode::PerColumn;
  c.e.activation = Activation::GeluErf;
  c.p.resolve_and_validate();
  return c;
}
}  // namespace

// Every tile of the planner's menu (not only the ones it picks for the sweep's shapes), in every
// operand layout, through both kernels (aligned -> 16-byte loads, misaligned -> element loads),
// with C read: the backend's prepare() is called directly with each configuration.
namespace {
std::vector<Case> menu_cases() {
  std::vector<Case> cases;
  for (Op oa : {Op::N, Op::T})
    for (Op ob : {Op::N, Op::T})
      for (int mis : {0, 1}) {
        // K = 520: 17 K tiles of 32 (odd), enough for split-K 4 (5, 5, 5 and 2 tiles).
        Case c = make_case(257, 263, 520, DType::BF16, DType::BF16, oa, ob, Order::RowMajor, "menu");
        c.misalign = mis;
        c.e.beta = 0.5f;
        c.p.resolve_and_validate();
        cases.push_back(c);
      }
  return cases;
}
}  // namespace

BOOST_AUTO_TEST_CASE(sm80_every_menu_tile_every_layout) {
  std::string why;
  std::unique_ptr<Backend> backend = make_cuda_backend(0, &why);
  BOOST_REQUIRE_MESSAGE(backend, why);
  std::vector<Case> cases = menu_cases();
  std::vector<MenuJob> jobs;
  for (const Case& cs : cases)
    for (const Candidate& c : sm80_family_model().enumerate(cs.p, cs.e, backend->hardware()))
      if (c.feasible) jobs.push_back({&cs, c.config, nullptr, ""});
  prepare_all(*backend, jobs);
  std::mt19937 rng(33);
  const Case* current = nullptr;
  std::unique_ptr<Operands> ops;
  std::vector<unsigned char> want;
  for (MenuJob& j : jobs) {
    BOOST_CHECK_MESSAGE(j.exe, j.cfg.name() << " " << repro(*j.cs) << ": prepare: " << j.error
                                            << repro_command(*j.cs, j.cfg.name()));
    if (!j.exe) continue;
    if (j.cs != current) {
      current = j.cs;
      ops = std::make_unique<Operands>(*j.cs, rng);
      want = ops->oracle(*j.cs);
    }
    ops->poison_d();
    ExecArgs x;
    x.a = ops->da->at(ops->off_a);
    x.b = ops->db->at(ops->off_b);
    x.c = ops->dc->at(ops->off_c);
    x.d = ops->dd->at(ops->off_d);
    x.alpha = j.cs->e.alpha;
    x.beta = j.cs->e.beta;
    x.workspace_size = j.exe->workspace_size();
    x.workspace = ops->workspace_for(x.workspace_size);
    j.exe->run(x);
    CUDA_OK(cudaDeviceSynchronize());
    std::string bad = compare(*j.cs, ops->fetch_d(), want, ops->off_d);
    BOOST_CHECK_MESSAGE(bad.empty(),
                        j.cfg.name() << " " << repro(*j.cs) << ": " << bad << repro_command(*j.cs, j.cfg.name()));
  }
  BOOST_TEST_MESSAGE(jobs.size() << " tile x layout x alignment runs");
}

BOOST_AUTO_TEST_CASE(sm80_user_stream_ordering) {
  Case cs = medium_case();
  dgemm_plan_t plan = nullptr;
  BOOST_REQUIRE_MESSAGE(make_plan(cs, &plan) == DGEMM_STATUS_SUCCESS, dgemm_last_error());
  std::mt19937 rng(7);
  Operands ops(cs, rng);
  std::vector<unsigned char> a2;
  fill_random(rng, cs.p.a_type, a2, ops.a_elems, -1, 1);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned char *pinned_a2 = nullptr, *out1 = nullptr, *out2 = nullptr;
  const std::size_t dbytes = ops.d_init.size();
  CUDA_OK(cudaMallocHost(&pinned_a2, a2.size()));
  CUDA_OK(cudaMallocHost(&out1, dbytes));
  CUDA_OK(cudaMallocHost(&out2, dbytes));
  std::memcpy(pinned_a2, a2.data(), a2.size());
  // execute(A1) -> copy D out -> overwrite A with A2 -> execute -> copy D out, all queued on s
  // without any host synchronization: each step must see the previous one's result.
  BOOST_CHECK_EQUAL(ops.execute(plan, cs, s), DGEMM_STATUS_SUCCESS);
  CUDA_OK(cudaMemcpyAsync(out1, ops.dd->base, dbytes, cudaMemcpyDeviceToHost, s));
  CUDA_OK(cudaMemcpyAsync(ops.da->at(ops.off_a), pinned_a2, a2.size(), cudaMemcpyHostToDevice, s));
  BOOST_CHECK_EQUAL(ops.execute(plan, cs, s), DGEMM_STATUS_SUCCESS);
  CUDA_OK(cudaMemcpyAsync(out2, ops.dd->base, dbytes, cudaMemcpyDeviceToHost, s));
  CUDA_OK(cudaStreamSynchronize(s));
  std::string why1 = compare(cs, std::vector<unsigned char>(out1, out1 + dbytes), ops.oracle(cs), ops.off_d);
  ops.a = a2;
  std::string why2 = compare(cs, std::vector<unsigned char>(out2, out2 + dbytes), ops.oracle(cs), ops.off_d);
  BOOST_CHECK_MESSAGE(why1.empty(), "first execute: " << why1);
  BOOST_CHECK_MESSAGE(why2.empty(), "second execute (after A changed on the stream): " << why2);
  cudaFreeHost(pinned_a2);
  cudaFreeHost(out1);
  cudaFreeHost(out2);
  cudaStreamDestroy(s);
  dgemm_destroy_plan(plan);
}

BOOST_AUTO_TEST_CASE(sm80_cuda_graph_capture_and_replay) {
  Case cs = medium_case();
  dgemm_plan_t plan = nullptr;
  BOOST_REQUIRE_MESSAGE(make_plan(cs, &plan) == DGEMM_STATUS_SUCCESS, dgemm_last_error());
  std::mt19937 rng(8);
  Operands ops(cs, rng);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  std::size_t ws = 0;
  dgemm_plan_workspace_size(plan, &ws);
  ops.workspace_for(ws);  // no allocation while capturing
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  dgemm_status_t st = ops.execute(plan, cs, s);
  CUDA_OK(cudaStreamEndCapture(s, &graph));
  BOOST_REQUIRE_MESSAGE(st == DGEMM_STATUS_SUCCESS, "execute while capturing: " << dgemm_last_error());
  cudaGraphExec_t exec = nullptr;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 3; ++replay) {
    // New inputs each replay: the graph reads the buffers when it runs.
    std::vector<unsigned char> a2;
    fill_random(rng, cs.p.a_type, a2, ops.a_elems, -1, 1);
    ops.a = a2;
    CUDA_OK(cudaMemcpy(ops.da->at(ops.off_a), a2.data(), a2.size(), cudaMemcpyHostToDevice));
    ops.poison_d();
    CUDA_OK(cudaGraphLaunch(exec, s));
    CUDA_OK(cudaStreamSynchronize(s));
    std::string why = compare(cs, ops.fetch_d(), ops.oracle(cs), ops.off_d);
    BOOST_CHECK_MESSAGE(why.empty(), "graph replay " << replay << ": " << why);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  dgemm_destroy_plan(plan);
}

BOOST_AUTO_TEST_CASE(sm80_two_threads_one_plan) {
  Case cs = medium_case();
  dgemm_plan_t plan = nullptr;
  BOOST_REQUIRE_MESSAGE(make_plan(cs, &plan) == DGEMM_STATUS_SUCCESS, dgemm_last_error());
  std::string why[2];
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      cudaSetDevice(0);
      std::mt19937 rng(100 + t);
      Operands ops(cs, rng);
      std::vector<unsigned char> want = ops.oracle(cs);
      cudaStream_t s;
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      for (int it = 0; it < 20 && why[t].empty(); ++it) {
        if (ops.execute(plan, cs, s) != DGEMM_STATUS_SUCCESS) why[t] = dgemm_last_error();
      }
      cudaStreamSynchronize(s);
      if (why[t].empty()) why[t] = compare(cs, ops.fetch_d(), want, ops.off_d);
      cudaStreamDestroy(s);
    });
  for (auto& t : threads) t.join();
  BOOST_CHECK_MESSAGE(why[0].empty(), "thread 0: " << why[0]);
  BOOST_CHECK_MESSAGE(why[1].empty(), "thread 1: " << why[1]);
  dgemm_destroy_plan(plan);
}

// Needs two devices (Boost.Test reports it skipped with one).
boost::test_tools::assertion_result two_devices(boost::unit_test::test_unit_id) {
  int n = 0;
  cudaGetDeviceCount(&n);
  boost::test_tools::assertion_result r(n >= 2);
  r.message() << "the CONTEXT_MISMATCH path needs two devices, this machine has " << n;
  return r;
}
BOOST_AUTO_TEST_CASE(sm80_wrong_current_device_is_refused, *boost::unit_test::precondition(two_devices)) {
  Case cs = medium_case();
  dgemm_plan_t plan = nullptr;
  BOOST_REQUIRE(make_plan(cs, &plan) == DGEMM_STATUS_SUCCESS);
  std::mt19937 rng(9);
  Operands ops(cs, rng);
  cudaSetDevice(1);
  BOOST_CHECK_EQUAL(ops.execute(plan, cs, nullptr), DGEMM_STATUS_CONTEXT_MISMATCH);
  cudaSetDevice(0);
  dgemm_destroy_plan(plan);
}

// ---- i8 operands: mma.sync m16n8k32 s8, s32 accumulators -----------------------------------
// Every sm80 i8 configuration (family_sm80.cpp kI8Menu; by name only until these cases passed on
// an H200, 2026-12-05): each case forces one by name. Inputs cover the whole i8 range (-128 .. 127); "big
// sums" inputs make every product positive (|a|, |b| in 100 .. 128, signs matched per k), so that
// sums pass 2^24 and an f32 staging tile or f32 split-K partials would round them. Outputs: an i32
// D with nothing applied compared element for element (exact); an i8 D requantized with power-of-
// two scales, a zero point, beta C and ReLU also exact (every step is exact in float and in the
// oracle's double); otherwise the harness's thresholds (integers within 1: float epilogues vs the
// oracle's double).
namespace {

// kI8Menu's names; the first five do not split K.
const std::vector<std::string> kI8Tiles = {"sm80_128x128x64_s4_t128_v1", "sm80_128x256x64_s4_t256_v1",
                                           "sm80_128x64x64_s4_t128",     "sm80_64x128x64_s4_t128",
                                           "sm80_64x64x64_s4_t128",      "sm80_128x128x64_s4_t128_sk4_v1",
                                           "sm80_128x128x128_s4_t256_sk2_v1"};
constexpr std::size_t kI8PlainTiles = 5;

struct I8Case {
  Case c;              // i8 A and B computed in i32, both K-major (the kernel's only layout)
  std::string force;   // the configuration's name
  bool big_sums = false;
  bool exact = false;  // every element of D equal to the oracle's
  int out_scale_log2 = 0;   // output scales 2^(this + {-1, 0, 1}) (power-of-two requantization)
  float run_alpha = 0.75f;  // alpha (and beta -0.5) of ScalarMode::Host / Device calls
};

// m x n x k, K-major A and B (row-major: A, B^T; column-major: A^T, B), D of type d.
Case i8_problem(int64_t m, int64_t n, int64_t k, DType d, Order o, const std::string& tag) {
  const bool row = o == Order::RowMajor;
  Case c = make_case(m, n, k, DType::I8, d, row ? Op::N : Op::T, row ? Op::T : Op::N, o, tag);
  c.p.compute_type = DType::I32;
  return c;
}

// Leading dimensions of A and B rounded up to 16 bytes (the 16-byte cp.async kernel runs, its last
// chunk of a row partial when K is not a multiple of 16).
int64_t round16(int64_t v) { return (v + 15) / 16 * 16; }
void vector_rows(Case& c) {
  c.p.resolve_and_validate();
  c.p.lda = round16(c.p.lda);
  c.p.ldb = round16(c.p.ldb);
}

// log2 of an output scale that maps random sums over k terms (std ~ 5461 sqrt(k)) to ~ +-40.
int i8_scale_log2(int64_t k) { return -int(std::lround(std::log2(5461.0 * std::sqrt(double(std::max<int64_t>(k, 1))) / 40.0))); }

std::vector<I8Case> i8_cases() {
  std::vector<I8Case> out;
  const Order orders[] = {Order::RowMajor, Order::ColMajor};
  std::size_t rot = 0;  // rotates the plain tiles over the sweep
  auto add = [&](Case c, const std::string& force, bool exact) {
    c.p.resolve_and_validate();
    I8Case x;
    x.c = c;
    x.force = force;
    x.exact = exact;
    out.push_back(x);
    return &out.back();
  };
  // 1. DESIGN.md edge sizes in each of M, N, K (K = 1, 16, and tails of the 64-wide K tile), both
  //    orders, exact i32 (K = 0: the epilogue cases below).
  for (int dim = 0; dim < 3; ++dim)
    for (int64_t e : dgemm_test::kEdgeSizes)
      for (Order o : orders) {
        const int64_t m = dim == 0 ? e : dgemm_test::kSweepOtherM, n = dim == 1 ? e : dgemm_test::kSweepOtherN,
                      k = dim == 2 ? e : dgemm_test::kSweepOtherK;
        add(i8_problem(m, n, k, DType::I32, o, "i8-edge"), kI8Tiles[rot++ % kI8PlainTiles], true);
      }
  // 2. K tails and K-tile counts around the 4-stage pipeline (K tile 64; 128 for the sk2 tile),
  //    every plain tile, big and odd M x N; rows padded to 16 bytes on every other tile (the
  //    vector kernel with a partial last chunk), packed on the others (element loads unless
  //    K % 16 == 0).
  for (int64_t k : {1, 16, 17, 31, 32, 33, 48, 63, 64, 65, 100, 127, 128, 129, 192, 255, 256, 257, 320, 449, 1000})
    for (std::size_t t = 0; t < kI8PlainTiles; ++t)
      if ((k + t) % 2 == 0 || k >= 255) {
        Case c = i8_problem(131, 263, k, DType::I32, orders[t % 2], t % 2 ? "i8-ktail-ld16" : "i8-ktail");
        if (t % 2) vector_rows(c);
        add(c, kI8Tiles[t], true);
      }
  // 3. Sums beyond 2^24 (exact only in s32): every tile, split-K included, both orders.
  for (std::size_t t = 0; t < kI8Tiles.size(); ++t)
    for (int64_t k : {1024, 4093}) {
      I8Case* x = add(i8_problem(257, 263, k, DType::I32, orders[t % 2], "i8-bigsum"), kI8Tiles[t], true);
      x->big_sums = true;
    }
  // 4. Split-K tiles on random inputs and tails (4 K tiles per split at least: k >= 1024).
  for (std::size_t t = kI8PlainTiles; t < kI8Tiles.size(); ++t)
    for (auto [m, n, k] : {std::tuple{1, 1, 1024}, std::tuple{65, 17, 1031}, std::tuple{300, 129, 4093}})
      add(i8_problem(m, n, k, DType::I32, orders[t % 2], "i8-splitk"), kI8Tiles[t], true);
  // 5. Leading-dimension padding (ld % 16 != 0: the element-load kernel; ld a multiple of 16 above
  //    the minimum: the vector kernel), misaligned pointers; a plain tile and split-K.
  for (Order o : orders)
    for (int pad : {3, 16})
      for (int mis : {0, 1}) {
        if (pad == 16 && mis) continue;
        for (int64_t k : {259, 1031}) {
          Case c = i8_problem(65, 67, k, DType::I32, o, mis ? "i8-unaligned" : pad == 16 ? "i8-ldpad16" : "i8-ldpad");
          c.p.resolve_and_validate();
          if (pad == 16) vector_rows(c);
          c.p.lda += pad;
          c.p.ldb += pad;
          c.p.ldd += dgemm_test::kLdPad;
          c.misalign = mis;
          add(c, k == 1031 ? kI8Tiles[5] : kI8Tiles[rot++ % kI8PlainTiles], true);
        }
      }
  // 6. Batches: strides and leading dimensions that are not multiples of 16 bytes (element loads)
  //    and that are (vector loads, K = 99: a partial last chunk), a broadcast B; the exact i32 D
  //    and a requantized i8 D.
  for (Order o : orders)
    for (int aligned : {0, 1})
      for (int bcast : {0, 1}) {
        Case c = i8_problem(70, 45, 99, bcast ? DType::I8 : DType::I32, o, aligned ? "i8-batch16" : "i8-batch");
        c.p.resolve_and_validate();
        GemmProblem& p = c.p;
        p.batch_count = 3;
        if (aligned) p.lda = p.ldb = 112;
        const int64_t one_a = span(p, p.a_rows(), p.a_cols(), p.lda, 0), one_b = span(p, p.b_rows(), p.b_cols(), p.ldb, 0);
        p.stride_a = aligned ? round16(one_a) + 16 : one_a + 8;
        p.stride_b = bcast ? 0 : aligned ? round16(one_b) + 32 : one_b + 16;
        p.stride_c = span(p, p.m, p.n, p.ldc, 0) + 3;
        p.stride_d = span(p, p.m, p.n, p.ldd, 0) + 5;
        if (bcast) {  // i8 D: power-of-two per-row scale, zero point, beta C (exact)
          c.e.scale_mode = VectorMode::PerRow;
          c.e.zero_point = true;
          c.e.beta = 0.5f;
        }
        I8Case* x = add(c, kI8Tiles[rot++ % kI8PlainTiles], true);
        x->out_scale_log2 = i8_scale_log2(99);
      }
  // 7. Outputs and epilogues, both orders (per-row / per-column swap under the column-major run),
  //    k = 259 and k = 0, a plain tile and a split-K one (k = 1031).
  struct Epi {
    DType c, d, bias_type;
    float alpha, beta;
    VectorMode bias, scale;
    Activation act;
    bool zp;
    ScalarMode scalars;
    bool exact;
    const char* tag;
  };
  const Epi epis[] = {
      // i32: alpha != 1 (through float), C (i32) and a bias, the call's scalars.
      {DType::I32, DType::I32, DType::F32, 3.0f, 0.0f, VectorMode::None, VectorMode::None, Activation::None, false, ScalarMode::FromPlan, false, "i32-alpha"},
      {DType::I32, DType::I32, DType::BF16, 1.0f, -1.0f, VectorMode::PerColumn, VectorMode::None, Activation::Relu, false, ScalarMode::FromPlan, false, "i32-c-bias"},
      {DType::I32, DType::I32, DType::F32, 1.0f, 0.0f, VectorMode::None, VectorMode::None, Activation::None, false, ScalarMode::Host, false, "i32-host-alpha"},
      {DType::I32, DType::I32, DType::F32, 1.0f, 2.0f, VectorMode::PerRow, VectorMode::None, Activation::None, false, ScalarMode::Device, false, "i32-device-scalars"},
      // i8 requantized: power-of-two scales (exact), then general ones with a bias and GELU.
      {DType::I8, DType::I8, DType::F32, 1.0f, 0.5f, VectorMode::None, VectorMode::PerRow, Activation::Relu, true, ScalarMode::FromPlan, true, "i8-requant-row"},
      {DType::F32, DType::I8, DType::F32, 1.0f, 0.0f, VectorMode::None, VectorMode::PerColumn, Activation::None, true, ScalarMode::FromPlan, true, "i8-requant-col"},
      {DType::I8, DType::I8, DType::F32, 1.0f, 0.0f, VectorMode::None, VectorMode::PerTensor, Activation::None, false, ScalarMode::FromPlan, true, "i8-requant-tensor"},
      {DType::F32, DType::I8, DType::F16, 0.5f, 0.0f, VectorMode::PerRow, VectorMode::PerColumn, Activation::GeluErf, true, ScalarMode::FromPlan, false, "i8-requant-gelu"},
      // Dequantized: f32, bf16, f16 (alpha keeps f16 finite) with bias and activations.
      {DType::F32, DType::F32, DType::F32, 1.5f, 0.5f, VectorMode::PerColumn, VectorMode::None, Activation::Silu, false, ScalarMode::FromPlan, false, "f32-out"},
      {DType::BF16, DType::BF16, DType::BF16, 1.0f, 1.0f, VectorMode::PerRow, VectorMode::PerTensor, Activation::GeluTanh, false, ScalarMode::FromPlan, false, "bf16-out"},
      {DType::F16, DType::F16, DType::F32, 0.015625f, 0.0f, VectorMode::None, VectorMode::PerRow, Activation::None, false, ScalarMode::FromPlan, false, "f16-out"},
  };
  for (const Epi& x : epis)
    for (Order o : orders)
      for (int64_t k : {int64_t(259), int64_t(0), int64_t(1031)}) {
        if (k == 0 && x.scalars != ScalarMode::FromPlan) continue;
        Case c = i8_problem(131, 70, k, x.d, o, std::string("i8-epilogue-") + x.tag);
        c.p.c_type = x.c;
        c.e.alpha = x.alpha;
        c.e.beta = x.beta;
        c.e.bias_mode = x.bias;
        c.e.bias_type = x.bias_type;
        c.e.scale_mode = x.scale;
        c.e.activation = x.act;
        c.e.zero_point = x.zp;
        c.scalars = x.scalars;
        I8Case* y = add(c, k == 1031 ? kI8Tiles[5 + rot % 2] : kI8Tiles[rot % kI8PlainTiles], x.exact);
        ++rot;
        y->out_scale_log2 = x.d == DType::I8 ? i8_scale_log2(k) : 0;
      }
  // The call's alpha is 1 from device memory: still the exact sums (the kernel reads it at run time).
  {
    Case c = i8_problem(257, 263, 1024, DType::I32, Order::RowMajor, "i8-device-alpha-1");
    c.scalars = ScalarMode::Device;
    for (const std::string& t : {kI8Tiles[0], kI8Tiles[5]}) {
      I8Case* y = add(c, t, true);
      y->big_sums = true;
      y->run_alpha = 1.0f;
    }
  }
  // 8. DGEMM_1.1 input scales in the epilogue: per tensor and per row / column (f32).
  auto scaled = [&](ScaleMode a, ScaleMode b, DType d, Order o, const std::string& force) {
    Case c = i8_problem(131, 263, 1031, d, o, "i8-input-scales");
    c.p.a_scale.mode = a;
    c.p.b_scale.mode = b;
    if (d == DType::I8) {
      c.e.scale_mode = VectorMode::PerTensor;
      c.e.zero_point = true;
    }
    c.p.resolve_and_validate();
    resolve_and_validate_scaling(c.p, c.e);
    I8Case* y = add(c, force, false);
    y->out_scale_log2 = d == DType::I8 ? i8_scale_log2(1031) : 0;
  };
  for (Order o : orders) {
    scaled(ScaleMode::OuterVec, ScaleMode::OuterVec, DType::F32, o, kI8Tiles[0]);
    scaled(ScaleMode::PerTensor, ScaleMode::OuterVec, DType::BF16, o, kI8Tiles[5]);
    scaled(ScaleMode::OuterVec, ScaleMode::PerTensor, DType::I8, o, kI8Tiles[2]);
  }
  return out;
}

// Scale tensors of the input-scale cases: one f32 per row of op(A) / column of op(B) (or one),
// in [0.5, 2).
struct InputScales {
  std::vector<float> a, b;
  std::unique_ptr<DevBuf> da, db;
  InputScales(const GemmProblem& p, std::mt19937& rng) {
    std::uniform_real_distribution<float> u(0.5f, 2.0f);
    a.resize(p.a_scale.mode == ScaleMode::OuterVec ? std::size_t(p.m) : 1);
    b.resize(p.b_scale.mode == ScaleMode::OuterVec ? std::size_t(p.n) : 1);
    for (float& x : a) x = u(rng);
    for (float& x : b) x = u(rng);
    da = std::make_unique<DevBuf>(a.size() * 4);
    db = std::make_unique<DevBuf>(b.size() * 4);
    cudaMemcpy(da->base, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(db->base, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
  }
};

dgemm_status_t make_i8_plan(const I8Case& x, dgemm_plan_t* plan) {
  const GemmProblem& p = x.c.p;
  if (!p.a_scale.active() && !p.b_scale.active()) return make_plan_forced(p, x.c.e, x.force.c_str(), plan);
  dgemm_scaling_t s;
  dgemm_scaling_init(&s);
  s.a_scale.mode = dgemm_scale_mode_t(p.a_scale.mode);
  s.b_scale.mode = dgemm_scale_mode_t(p.b_scale.mode);
  return make_plan_forced(p, x.c.e, x.force.c_str(), plan, &s);
}

// Replaces the harness's operands and epilogue vectors with the case's: A and B over the whole i8
// range (or big sums), output scales of powers of two around 2^out_scale_log2, the call's alpha.
void i8_inputs(const I8Case& x, Operands& ops, std::mt19937& rng) {
  const GemmProblem& p = x.c.p;
  std::uniform_int_distribution<int> full(-128, 127), big(100, 128), sign(0, 1), step(-1, 1);
  for (auto* v : {&ops.a, &ops.b})
    for (unsigned char& e : *v) e = (unsigned char)(signed char)full(rng);
  if (x.big_sums && p.k > 0) {
    // A'(i, k) = A[i lda + k] and B'(k, j) = B[j ldb + k] (both K-major), one sign per k.
    std::vector<int> s(std::size_t(p.k));
    for (int& v : s) v = sign(rng) ? 1 : -1;
    auto value = [&](int64_t kk) { const int v = big(rng); return (signed char)(s[std::size_t(kk)] > 0 ? std::min(v, 127) : -v); };
    for (int64_t bt = 0; bt < p.batch_count; ++bt) {
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t kk = 0; kk < p.k; ++kk) ops.a[std::size_t(bt * p.stride_a + i * p.lda + kk)] = (unsigned char)value(kk);
      for (int64_t j = 0; j < p.n; ++j)
        for (int64_t kk = 0; kk < p.k; ++kk) ops.b[std::size_t(bt * p.stride_b + j * p.ldb + kk)] = (unsigned char)value(kk);
    }
  }
  cudaMemcpy(ops.da->at(ops.off_a), ops.a.data(), ops.a.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(ops.db->at(ops.off_b), ops.b.data(), ops.b.size(), cudaMemcpyHostToDevice);
  if (x.out_scale_log2 != 0) {
    for (float& v : ops.scale) v = std::ldexp(1.0f, x.out_scale_log2 + step(rng));
    cudaMemcpy(ops.dscale->base, ops.scale.data(), ops.scale.size() * 4, cudaMemcpyHostToDevice);
  }
  ops.alpha_beta = {x.run_alpha, -0.5f};
  cudaMemcpy(ops.dscalars->base, ops.alpha_beta.data(), 8, cudaMemcpyHostToDevice);
}

dgemm_status_t execute_i8(dgemm_plan_t plan, const I8Case& x, const Operands& ops, const InputScales* in,
                          cudaStream_t stream) {
  if (!in) return ops.execute(plan, x.c, stream);
  dgemm_args_t a = ops.args(x.c);
  dgemm_scale_args_t sx;
  dgemm_scale_args_init(&sx);
  if (x.c.p.a_scale.active()) sx.a_scale = in->da->base;
  if (x.c.p.b_scale.active()) sx.b_scale = in->db->base;
  std::size_t ws = 0;
  dgemm_plan_workspace_size(plan, &ws);
  return dgemm_execute_ext(plan, ops.da->at(ops.off_a), ops.db->at(ops.off_b),
                           x.c.e.reads_c() ? ops.dc->at(ops.off_c) : nullptr, ops.dd->at(ops.off_d), &a, &sx,
                           ops.workspace_for(ws), ws, stream);
}

// The oracle's D with the input scales (Operands::oracle has none).
std::vector<unsigned char> i8_oracle(const I8Case& x, const Operands& ops, const InputScales* in) {
  if (!in) return ops.oracle(x.c);
  const Case& cs = x.c;
  std::vector<unsigned char> out = ops.d_init;
  ExecArgs a;
  a.a = ops.a.data();
  a.b = ops.b.data();
  a.c = ops.c.empty() ? nullptr : ops.c.data();
  a.d = out.data() + kGuard;
  a.alpha = cs.e.alpha;
  a.beta = cs.e.beta;
  a.bias = ops.bias.data();
  a.scale = ops.scale.data();
  a.zero_point = ops.zp.data();
  a.a_scale = in->a.data();
  a.b_scale = in->b.data();
  cpu_gemm(cs.p, cs.e, a);
  return out;
}

// Elements of D that differ from the oracle's at all (compare() lets integers differ by 1).
std::string exact_mismatches(const Case& cs, const std::vector<unsigned char>& got_all,
                             const std::vector<unsigned char>& want_all, std::size_t got_off) {
  const GemmProblem& p = cs.p;
  const std::size_t es = dtype_size(p.d_type);
  int64_t bad = 0;
  std::ostringstream first;
  for (int64_t bt = 0; bt < p.batch_count; ++bt)
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        const int64_t idx = bt * p.stride_d + p.offset(i, j, p.ldd);
        if (std::memcmp(got_all.data() + got_off + std::size_t(idx) * es, want_all.data() + kGuard + std::size_t(idx) * es,
                        es) == 0)
          continue;
        if (bad++ == 0)
          first << " (first: batch " << bt << " D(" << i << ", " << j << ") = "
                << load_as_double(p.d_type, got_all.data() + got_off, idx) << ", oracle "
                << load_as_double(p.d_type, want_all.data() + kGuard, idx) << ")";
      }
  if (bad == 0) return "";
  std::ostringstream os;
  os << bad << " elements differ from the oracle's exact values" << first.str() << "; ";
  return os.str();
}

std::string i8_repro(const I8Case& x) { return x.force + (x.big_sums ? " big-sums " : " ") + repro(x.c); }

}  // namespace

// Every i8 case on its forced configuration, against the oracle (exact where exactness is defined).
BOOST_AUTO_TEST_CASE(sm80_i8_forced_vs_oracle) {
  BOOST_REQUIRE(context() != nullptr);
  const std::vector<I8Case> cases = i8_cases();
  std::vector<dgemm_plan_t> plans(cases.size(), nullptr);
  std::vector<dgemm_status_t> status(cases.size());
  std::vector<std::string> errors(cases.size());
  parallel_for(cases.size(), worker_count(), [&](std::size_t i) {
    status[i] = make_i8_plan(cases[i], &plans[i]);
    if (status[i] != DGEMM_STATUS_SUCCESS) errors[i] = dgemm_last_error();
  });
  std::mt19937 rng(808);
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int failed = 0, exact = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const I8Case& x = cases[i];
    BOOST_CHECK_MESSAGE(status[i] == DGEMM_STATUS_SUCCESS,
                        i8_repro(x) << ": create_plan: " << errors[i] << repro_command(x.c, x.force));
    if (status[i] != DGEMM_STATUS_SUCCESS) {
      ++failed;
      continue;
    }
    // The plan is the forced configuration (never the planner's own choice).
    char desc[8192];
    dgemm_plan_describe(plans[i], desc, sizeof desc, nullptr);
    BOOST_CHECK_MESSAGE(std::string(desc).find("\"name\":\"" + x.force + "\"") != std::string::npos,
                        i8_repro(x) << ": the plan is not " << x.force << ": " << desc);
    Operands ops(x.c, rng);
    i8_inputs(x, ops, rng);
    std::unique_ptr<InputScales> in;
    if (x.c.p.a_scale.active() || x.c.p.b_scale.active()) in = std::make_unique<InputScales>(x.c.p, rng);
    const dgemm_status_t st = execute_i8(plans[i], x, ops, in.get(), stream);
    BOOST_CHECK_MESSAGE(st == DGEMM_STATUS_SUCCESS,
                        i8_repro(x) << ": execute: " << dgemm_last_error() << repro_command(x.c, x.force));
    CUDA_OK(cudaStreamSynchronize(stream));
    const std::vector<unsigned char> got = ops.fetch_d(), want = i8_oracle(x, ops, in.get());
    std::string why = compare(x.c, got, want, ops.off_d);
    if (x.exact) {
      why += exact_mismatches(x.c, got, want, ops.off_d);
      ++exact;
    }
    BOOST_CHECK_MESSAGE(why.empty(), i8_repro(x) << ": " << why << repro_command(x.c, x.force));
    failed += !why.empty();
    dgemm_destroy_plan(plans[i]);
  }
  cudaStreamDestroy(stream);
  BOOST_TEST_MESSAGE(cases.size() << " i8 cases (" << exact << " exact), " << failed << " failed");
}

// Every i8 configuration (by name) through both kernels (aligned: 16-byte cp.async; misaligned:
// element loads), both orders, with the exact i32 D of big sums and a requantized i8 D; prepared
// directly by the backend, as sm80_every_menu_tile_every_layout does for 16-bit operands.
namespace {
std::vector<I8Case> i8_menu_cases() {
  std::vector<I8Case> out;
  for (Order o : {Order::RowMajor, Order::ColMajor})
    for (int mis : {0, 1})
      for (DType d : {DType::I32, DType::I8}) {
        // K = 1031: 17 K tiles of 64 (odd), 9 of 128; enough for split-K 4 and 2.
        I8Case x;
        x.c = i8_problem(257, 263, 1031, d, o, "i8-menu");
        x.c.misalign = mis;
        if (!mis) vector_rows(x.c);  // 1040-byte rows: the 16-byte kernel, a partial last chunk
        if (d == DType::I8) {
          x.c.e.scale_mode = VectorMode::PerColumn;
          x.c.e.zero_point = true;
          x.c.e.beta = 0.5f;
          x.out_scale_log2 = i8_scale_log2(1031);
        }
        x.c.p.resolve_and_validate();
        x.big_sums = d == DType::I32;
        x.exact = true;
        out.push_back(x);
      }
  return out;
}
}  // namespace

BOOST_AUTO_TEST_CASE(sm80_i8_every_menu_tile) {
  std::string why;
  std::unique_ptr<Backend> backend = make_cuda_backend(0, &why);
  BOOST_REQUIRE_MESSAGE(backend, why);
  const std::vector<I8Case> cases = i8_menu_cases();
  std::vector<MenuJob> jobs;
  std::vector<const I8Case*> job_case;
  for (const I8Case& x : cases)
    for (const Candidate& c : sm80_family_model().enumerate(x.c.p, x.c.e, backend->hardware())) {
      BOOST_CHECK_MESSAGE(c.feasible && !c.measuring_only, c.config.name() << " " << i8_repro(x)
                                                                           << ": expected a default i8 candidate, got "
                                                                           << (c.feasible ? "a measuring-only one" : c.reject_reason));
      if (c.feasible) {
        jobs.push_back({&x.c, c.config, nullptr, ""});
        job_case.push_back(&x);
      }
    }
  BOOST_CHECK(jobs.size() == cases.size() * kI8Tiles.size());
  prepare_all(*backend, jobs);
  std::mt19937 rng(81);
  const Case* current = nullptr;
  std::unique_ptr<Operands> ops;
  std::vector<unsigned char> want;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    MenuJob& j = jobs[i];
    const I8Case& x = *job_case[i];
    BOOST_CHECK_MESSAGE(j.exe, j.cfg.name() << " " << i8_repro(x) << ": prepare: " << j.error
                                            << repro_command(x.c, j.cfg.name()));
    if (!j.exe) continue;
    if (j.cs != current) {
      current = j.cs;
      ops = std::make_unique<Operands>(x.c, rng);
      i8_inputs(x, *ops, rng);
      want = ops->oracle(x.c);
    }
    ops->poison_d();
    ExecArgs a;
    a.a = ops->da->at(ops->off_a);
    a.b = ops->db->at(ops->off_b);
    a.c = ops->dc->at(ops->off_c);
    a.d = ops->dd->at(ops->off_d);
    a.alpha = x.c.e.alpha;
    a.beta = x.c.e.beta;
    a.scale = static_cast<const float*>(ops->dscale->base);
    a.zero_point = static_cast<const int32_t*>(ops->dzp->base);
    a.workspace_size = j.exe->workspace_size();
    a.workspace = ops->workspace_for(a.workspace_size);
    j.exe->run(a);
    CUDA_OK(cudaDeviceSynchronize());
    const std::vector<unsigned char> got = ops->fetch_d();
    const std::string bad = compare(x.c, got, want, ops->off_d) + exact_mismatches(x.c, got, want, ops->off_d);
    BOOST_CHECK_MESSAGE(bad.empty(), j.cfg.name() << " " << i8_repro(x) << ": " << bad << repro_command(x.c, j.cfg.name()));
  }
  BOOST_TEST_MESSAGE(jobs.size() << " i8 tile x order x alignment x output runs");
}

namespace {

void prefill_cache(const char* arch_name) {
  HardwareDesc hw = apply_arch_file(HardwareDesc{}, arch_name);
  const std::string arch = jit::arch_for_cc(hw.cc_major, hw.cc_minor);
  std::vector<Case> cases = sweep();
  cases.push_back(medium_case());
  PrefillSet requests;
  std::vector<std::pair<Case, KernelConfig>> forced;
  for (const Case& c : menu_cases())
    for (const Candidate& cand : sm80_family_model().enumerate(c.p, c.e, hw))
      if (cand.feasible) forced.push_back({c, cand.config});
  for (auto& [c, cfg] : forced) requests.add(cuda::sm80_compile_request(c.p, c.e, cfg, arch));
  // The i8 cases' forced configurations (forced by name).
  std::vector<I8Case> i8 = i8_cases();
  for (const I8Case& x : i8_menu_cases()) i8.push_back(x);
  for (const I8Case& x : i8) {
    PlanRequest r;
    r.force = Family::Sm80;
    r.force_config = x.force;
    if (x.force.empty()) {  // the menu cases: every configuration
      for (const Candidate& cand : sm80_family_model().enumerate(x.c.p, x.c.e, hw))
        if (cand.feasible) requests.add(cuda::sm80_compile_request(x.c.p, x.c.e, cand.config, arch));
      continue;
    }
    try {
      requests.add(cuda::sm80_compile_request(x.c.p, x.c.e, choose_kernel(x.c.p, x.c.e, hw, r).chosen.config, arch));
    } catch (const std::exception& ex) {
      std::printf("prefill: %s %s: %s\n", x.force.c_str(), repro(x.c).c_str(), ex.what());
      std::exit(1);
    }
  }
  for (const Case& c : cases) {
    PlanRequest r;
    r.force = Family::Sm80;
    PlanDecision d = choose_kernel(c.p, c.e, hw, r);
    requests.add(cuda::sm80_compile_request(c.p, c.e, d.chosen.config, arch));
  }
  requests.compile(arch_name, arch, 2);
}

}  // namespace

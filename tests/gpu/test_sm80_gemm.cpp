// GPU tests of the sm80 family through the public API (label gpu; exit 77 = skipped without a
// GPU). Every case: fresh random inputs, D poisoned and surrounded by guard bands, compared with
// the CPU oracle (dgemm::cpu_gemm, f64) by relative Frobenius error with per-type thresholds,
// and every byte outside the m x n elements of D (ld padding, guard bands) checked untouched.
// Identity-epilogue f16/bf16 cases are also checked against cuBLAS. Then: execute ordered with
// other work on a user stream, captured into a CUDA graph and replayed, two threads on one plan.
// Every failure prints a one-line repro.
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
    BOOST_CHECK_MESSAGE(status[i] == DGEMM_STATUS_SUCCESS, repro(cs) << ": create_plan: " << errors[i]);
    if (status[i] != DGEMM_STATUS_SUCCESS) continue;
    Operands ops(cs, rng);
    dgemm_status_t st = ops.execute(plans[i], cs, stream);
    BOOST_CHECK_MESSAGE(st == DGEMM_STATUS_SUCCESS, repro(cs) << ": execute: " << dgemm_last_error());
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
    BOOST_CHECK_MESSAGE(why.empty(), repro(cs) << ": " << why);
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
    BOOST_CHECK_MESSAGE(j.exe, j.cfg.name() << " " << repro(*j.cs) << ": prepare: " << j.error);
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
    BOOST_CHECK_MESSAGE(bad.empty(), j.cfg.name() << " " << repro(*j.cs) << ": " << bad);
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
  for (const Case& c : cases) {
    PlanRequest r;
    r.force = Family::Sm80;
    PlanDecision d = choose_kernel(c.p, c.e, hw, r);
    requests.add(cuda::sm80_compile_request(c.p, c.e, d.chosen.config, arch));
  }
  requests.compile(arch_name, arch, 2);
}

}  // namespace

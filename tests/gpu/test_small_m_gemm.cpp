// GPU tests of the small-M (decode) family through the public API and through its launcher
// (label gpu; exit 77 = skipped without a GPU). Every case: fresh random inputs, D poisoned and
// surrounded by guard bands, compared with the CPU oracle (dgemm::cpu_gemm, f64) by relative
// Frobenius error with per-type thresholds, and every byte outside the m x n elements of D checked
// untouched. Sweeps: M in {1, 2, 7, 15, 16} x N in {1, 7, 63, 64, 65, 1000, 4096} x K in {1, 7, 15,
// 16, 17, 127, 1000, 4093, 4096}, cycling through both operand types, every transpose of A and B
// and both orders; epilogues (bias per row / column, GELU, beta * C, other output types);
// unaligned pointers and padded leading dimensions (the element-load kernel); batches (strided
// with gaps, broadcast B); and every configuration of the planner's menu (columns per CTA, every
// split-K count) run directly through the launcher. Every failure prints a one-line repro and the
// `deepgemm run` line that reruns its problem.
// DGEMM_TEST_PREFILL=<arch, e.g. h200> without a GPU compiles the kernels the sweep's plans use
// into $DEEPGEMM_CACHE_DIR (to carry to the device).
#include <boost/test/unit_test.hpp>

#include <cuda_runtime.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/small_m_gemm.hpp"
#include "common/gpu_harness.hpp"
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

dgemm_status_t make_plan(const Case& c, dgemm_plan_t* plan) { return make_plan_forced(c.p, c.e, "small_m", plan); }

// The 16 combinations of operand type, op_a, op_b and order, cycled through by the shape sweep.
struct Layout {
  DType ab;
  Op op_a, op_b;
  Order order;
};
std::vector<Layout> layouts() {
  std::vector<Layout> out;
  for (Order o : {Order::RowMajor, Order::ColMajor})
    for (Op ob : {Op::T, Op::N})
      for (Op oa : {Op::N, Op::T})
        for (DType t : {DType::BF16, DType::F16}) out.push_back({t, oa, ob, o});
  return out;
}

std::vector<Case> sweep() {
  std::vector<Case> cases;
  const std::vector<Layout> lay = layouts();
  const int64_t ms[] = {1, 2, 7, 15, 16};
  const int64_t ns[] = {1, 7, 63, 64, 65, 1000, 4096};
  const int64_t ks[] = {1, 7, 15, 16, 17, 127, 1000, 4093, 4096};
  // 1. Every M x N x K; the layout advances with every case (315 = 5 x 7 x 9 cases, so each of the
  //    16 layouts meets every size of each dimension).
  std::size_t i = 0;
  for (int64_t m : ms)
    for (int64_t n : ns)
      for (int64_t k : ks) {
        const Layout& l = lay[i++ % lay.size()];
        cases.push_back(make_case(m, n, k, l.ab, l.ab, l.op_a, l.op_b, l.order, "shape"));
      }
  // 2. Every layout on the decode shapes that matter (N, K of a 4096-wide model) at M = 1 and 16.
  for (const Layout& l : lay)
    for (int64_t m : {int64_t(1), int64_t(16)})
      cases.push_back(make_case(m, 4096, 4096, l.ab, l.ab, l.op_a, l.op_b, l.order, "decode"));
  // 3. Epilogues, in both orders and both B layouts (per-row / per-column swap when transposed).
  struct Epi {
    DType c, d, bias_type;
    float alpha, beta;
    VectorMode bias;
    Activation act;
    ScalarMode scalars;
  };
  const Epi epis[] = {
      {DType::F32, DType::F32, DType::F32, 1.5f, 0.5f, VectorMode::None, Activation::None, ScalarMode::FromPlan},
      {DType::BF16, DType::BF16, DType::F32, 1.0f, -1.0f, VectorMode::PerColumn, Activation::GeluTanh, ScalarMode::FromPlan},
      {DType::F16, DType::F32, DType::BF16, 0.5f, 0.0f, VectorMode::PerRow, Activation::GeluErf, ScalarMode::FromPlan},
      {DType::F32, DType::F16, DType::F16, 1.0f, 2.0f, VectorMode::PerRow, Activation::GeluErf, ScalarMode::Host},
      {DType::F32, DType::F32, DType::F32, 1.0f, 1.0f, VectorMode::PerColumn, Activation::Silu, ScalarMode::Device},
  };
  for (const Epi& x : epis)
    for (Order o : {Order::RowMajor, Order::ColMajor})
      for (Op ob : {Op::N, Op::T}) {
        Case c = make_case(7, 1000, 1000, DType::BF16, x.d, Op::N, ob, o, "epilogue");
        c.p.c_type = x.c;
        c.e.alpha = x.alpha;
        c.e.beta = x.beta;
        c.e.bias_mode = x.bias;
        c.e.bias_type = x.bias_type;
        c.e.activation = x.act;
        c.scalars = x.scalars;
        cases.push_back(c);
      }
  // 4. Padded leading dimensions and unaligned pointers (the element-load kernel), every layout.
  for (const Layout& l : lay)
    for (int mis : {0, 1}) {
      Case c = make_case(15, 65, 1000, l.ab, l.ab, l.op_a, l.op_b, l.order, mis ? "unaligned" : "ldpad");
      c.p.resolve_and_validate();
      c.p.lda += 5;
      c.p.ldb += 5;
      c.p.ldc += 5;
      c.p.ldd += 5;
      c.misalign = mis;
      c.e.beta = 0.5f;
      cases.push_back(c);
      if (!mis) {  // padded to a multiple of 8 elements: 16-byte loads with ld > minimum
        Case pad8 = c;
        pad8.p.lda += 3;
        pad8.p.ldb += 3;
        pad8.tag = "ldpad8";
        cases.push_back(pad8);
      }
    }
  // 5. Batches (strided with gaps, and a broadcast B), both orders and B layouts.
  for (Order o : {Order::RowMajor, Order::ColMajor})
    for (Op ob : {Op::N, Op::T})
      for (int bcast : {0, 1}) {
        Case c = make_case(7, 130, 520, DType::F16, DType::F16, Op::N, ob, o, "batch");
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
  for (Case& c : cases) c.p.resolve_and_validate();
  return cases;
}

// Shapes on which every configuration of the menu runs (through the launcher, not the planner).
std::vector<Case> menu_cases() {
  std::vector<Case> cases;
  for (Order o : {Order::RowMajor, Order::ColMajor})
    for (Op ob : {Op::N, Op::T})
      for (int64_t m : {int64_t(1), int64_t(7), int64_t(16)}) {
        Case c = make_case(m, 1000, 4093, m == 7 ? DType::F16 : DType::BF16, DType::BF16, m == 16 ? Op::T : Op::N, ob,
                           o, "menu");
        c.e.beta = 0.5f;
        c.e.bias_mode = VectorMode::PerColumn;
        c.p.resolve_and_validate();
        cases.push_back(c);
      }
  return cases;
}

void prefill_cache(const char* arch_name) {
  HardwareDesc hw = apply_arch_file(HardwareDesc{}, arch_name);
  const std::string arch = jit::arch_for_cc(hw.cc_major, hw.cc_minor);
  PrefillSet requests;
  auto add = [&](const Case& c, const KernelConfig& cfg) {
    requests.add(cuda::small_m_compile_request(c.p, c.e, cfg, arch));
  };
  for (const Case& c : sweep()) {
    PlanRequest r;
    r.force = Family::SmallM;
    add(c, choose_kernel(c.p, c.e, hw, r).chosen.config);
  }
  for (const Case& c : menu_cases())
    for (const Candidate& cand : small_m_family_model().enumerate(c.p, c.e, hw))
      if (cand.feasible) add(c, cand.config);
  requests.compile(arch_name, arch, worker_count());
}

}  // namespace

BOOST_AUTO_TEST_CASE(small_m_sweep_vs_oracle) {
  BOOST_REQUIRE(context() != nullptr);
  std::vector<Case> cases = sweep();
  const SweepPlans made = create_plans(cases, make_plan);
  const std::vector<dgemm_plan_t>& plans = made.plans;
  const std::vector<dgemm_status_t>& status = made.status;
  const std::vector<std::string>& errors = made.errors;
  std::mt19937 rng(4242);
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int failed = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& cs = cases[i];
    BOOST_CHECK_MESSAGE(status[i] == DGEMM_STATUS_SUCCESS,
                        repro(cs) << ": create_plan: " << errors[i] << repro_command(cs, "small_m"));
    if (status[i] != DGEMM_STATUS_SUCCESS) continue;
    Operands ops(cs, rng);
    dgemm_status_t st = ops.execute(plans[i], cs, stream);
    BOOST_CHECK_MESSAGE(st == DGEMM_STATUS_SUCCESS,
                        repro(cs) << ": execute: " << dgemm_last_error() << repro_command(cs, "small_m"));
    CUDA_OK(cudaStreamSynchronize(stream));
    std::string why = compare(cs, ops.fetch_d(), ops.oracle(cs), ops.off_d);
    if (!why.empty()) {
      char desc[1024];
      dgemm_plan_describe(plans[i], desc, sizeof desc, nullptr);
      why += std::string(" plan: ") + std::string(desc).substr(0, 300);
    }
    BOOST_CHECK_MESSAGE(why.empty(), repro(cs) << ": " << why << repro_command(cs, "small_m"));
    failed += !why.empty();
    dgemm_destroy_plan(plans[i]);
  }
  cudaStreamDestroy(stream);
  std::printf("small_m sweep: %zu cases, %d failed\n", cases.size(), failed);
}

// Every configuration of the planner's menu (columns per CTA, every split-K count) on shapes with
// tails in N and K, both B layouts and orders, aligned (16-byte kernel) and misaligned (element
// kernel): the backend's prepare() is called directly with each configuration.
BOOST_AUTO_TEST_CASE(small_m_every_menu_configuration) {
  std::string why;
  std::unique_ptr<Backend> backend = make_cuda_backend(0, &why);
  BOOST_REQUIRE_MESSAGE(backend, why);
  std::vector<Case> cases = menu_cases();
  for (Case& c : menu_cases()) {
    c.misalign = 1;
    c.tag = "menu-unaligned";
    cases.push_back(c);
  }
  std::vector<MenuJob> jobs;
  for (const Case& cs : cases)
    for (const Candidate& c : small_m_family_model().enumerate(cs.p, cs.e, backend->hardware()))
      if (c.feasible) jobs.push_back({&cs, c.config, nullptr, ""});
  prepare_all(*backend, jobs);
  std::mt19937 rng(77);
  const Case* current = nullptr;
  std::unique_ptr<Operands> ops;
  std::vector<unsigned char> want;
  int failed = 0;
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
    dgemm_args_t a = ops->args(*j.cs);
    ExecArgs x;
    x.a = ops->da->at(ops->off_a);
    x.b = ops->db->at(ops->off_b);
    x.c = ops->dc->at(ops->off_c);
    x.d = ops->dd->at(ops->off_d);
    x.alpha = j.cs->e.alpha;
    x.beta = j.cs->e.beta;
    x.bias = a.bias;
    x.workspace_size = j.exe->workspace_size();
    x.workspace = ops->workspace_for(x.workspace_size);
    j.exe->run(x);
    CUDA_OK(cudaDeviceSynchronize());
    std::string bad = compare(*j.cs, ops->fetch_d(), want, ops->off_d);
    BOOST_CHECK_MESSAGE(bad.empty(),
                        j.cfg.name() << " " << repro(*j.cs) << ": " << bad << repro_command(*j.cs, j.cfg.name()));
    failed += !bad.empty();
  }
  std::printf("small_m menu: %zu configuration x case runs, %d failed\n", jobs.size(), failed);
}

// sm90 family without a GPU (label cpu): every default planner variant compiles with NVRTC for
// sm_90a, ptxas keeps the setmaxnreg register split (no C7508 warning) with no spills and no stack,
// and, where cuobjdump is installed, the SASS has HGMMA and no local memory (LDL/STL). Also the
// planner model: chosen on Hopper for TMA-friendly problems, rejected with a reason otherwise.
#include <boost/test/unit_test.hpp>

#if DGEMM_WITH_CUDA

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "backend/cuda/jit.hpp"
#include "backend/cuda/sm90_gemm.hpp"
#include "common/nvrtc_checks.hpp"
#include "plan/arch_file.hpp"
#include "plan/families.hpp"
#include "plan/family_sm90.hpp"
#include "plan/planner.hpp"

namespace {

using namespace dgemm;
using dgemm_test::find_cuobjdump;
using dgemm_test::have_nvrtc;

using dgemm_test::CacheDirFixture;
BOOST_TEST_GLOBAL_FIXTURE(CacheDirFixture);

// A Hopper (H100/H200-like) planning description.
HardwareDesc hopper() {
  HardwareDesc hw;
  hw.name = "test-hopper";
  hw.vendor = Vendor::Nvidia;
  hw.cc_major = 9;
  hw.cc_minor = 0;
  hw.sm_count = 132;
  hw.smem_per_sm = 233472;
  hw.smem_per_block_optin = 232448;
  hw.l2_bytes = 50 << 20;
  hw.mem_bandwidth_gbs = 4800;
  hw.clock_mhz = 1755;
  hw.peak_tflops_bf16 = hw.peak_tflops_f16 = 989;
  hw.has_tma = hw.has_wgmma = true;
  hw.can_run_kernels = true;
  return hw;
}

std::size_t count(const std::string& text, const std::regex& re) {
  return std::size_t(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

// Checks one compiled variant; returns "regs" as ptxas reports them.
std::string check_code(const std::string& what, const jit::CompiledCode& code) {
  const std::string& log = code.log;
  std::smatch m;
  BOOST_CHECK_MESSAGE(std::regex_search(log, m, std::regex(R"((\d+) bytes spill stores, (\d+) bytes spill loads)")) &&
                          m[1] == "0" && m[2] == "0",
                      what << ": spills or no ptxas statistics:\n" << log);
  BOOST_CHECK_MESSAGE(std::regex_search(log, m, std::regex(R"((\d+) bytes stack frame)")) && m[1] == "0",
                      what << ": stack frame:\n" << log);
  // setmaxnreg is honoured only with a register cap at entry; ptxas says so when it is not.
  BOOST_CHECK_MESSAGE(log.find("C7508") == std::string::npos && log.find("setmaxnreg") == std::string::npos,
                      what << ": ptxas ignored setmaxnreg:\n" << log);
  BOOST_CHECK_MESSAGE(log.find("serialized") == std::string::npos, what << ": ptxas serialized wgmma:\n" << log);
  std::string regs = std::regex_search(log, m, std::regex(R"(Used (\d+) registers)")) ? m[1].str() : "?";
  // 384 threads x 168 = 64512 of 65536 registers: the cap __launch_bounds__(384, 1) gives.
  BOOST_CHECK_MESSAGE(regs == "168", what << ": expected 168 registers at entry, ptxas used " << regs);

  static const std::string cuobjdump = find_cuobjdump();
  if (!cuobjdump.empty()) {
    const std::string sass = dgemm_test::cuobjdump_cubin(cuobjdump, "-sass", code, "/tmp/dgemm_sm90_cubin_XXXXXX");
    BOOST_CHECK_MESSAGE(count(sass, std::regex(R"(\bHGMMA\b)")) > 0, what << ": no HGMMA in the SASS");
    BOOST_CHECK_MESSAGE(count(sass, std::regex(R"(\b(LDL|STL)\b)")) == 0, what << ": local memory (LDL/STL) in the SASS");
    BOOST_CHECK_MESSAGE(count(sass, std::regex(R"(\bUTMALDG\b)")) > 0, what << ": no TMA load (UTMALDG) in the SASS");
  }
  return regs;
}

// Kernels in a module's ptxas log, each checked for 0/0 spill bytes (the whole log on failure).
int spill_free_kernels(const std::string& log) {
  const std::regex spill(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
  int kernels = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), spill); it != std::sregex_iterator(); ++it) {
    ++kernels;
    BOOST_CHECK_MESSAGE((*it)[1] == "0" && (*it)[2] == "0", "spills:\n" << log);
  }
  return kernels;
}

GemmProblem problem(DType t, Op op_a, Op op_b, Order order = Order::RowMajor, int64_t m = 4096, int64_t n = 4096,
                    int64_t k = 4096) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a_type = p.b_type = t;
  p.c_type = p.d_type = t;
  p.op_a = op_a;
  p.op_b = op_b;
  p.order = order;
  p.resolve_and_validate();
  return p;
}

}  // namespace

BOOST_AUTO_TEST_CASE(sm90_default_menu_compiles_for_sm90a_with_hgmma_and_no_spills) {
  if (!have_nvrtc()) return;
  BOOST_TEST_MESSAGE("cuobjdump: " << (find_cuobjdump().empty() ? "not found (ptxas log only)" : find_cuobjdump()));
  const HardwareDesc hw = hopper();
  const std::string arch = jit::arch_for_cc(9, 0);
  int compiled = 0;
  // Every tile of the menu on the TN bf16 problem; the four operand majors and f16 on two tiles.
  auto compile = [&](const GemmProblem& p, const Epilogue& e, const KernelConfig& c) {
    jit::CompileRequest r = cuda::sm90_compile_request(p, e, c, arch);
    auto code = jit::compile(r);
    std::string regs = check_code(r.name, *code);
    BOOST_TEST_MESSAGE(arch << " " << r.name << " regs " << regs << " (" << code->cubin.size() << " B cubin)");
    ++compiled;
  };
  GemmProblem tn = problem(DType::BF16, Op::N, Op::T);
  Epilogue plain;
  std::vector<Candidate> menu = sm90_family_model().enumerate(tn, plain, hw);
  BOOST_REQUIRE(!menu.empty());
  for (const Candidate& c : menu) {
    BOOST_CHECK_MESSAGE(c.feasible, c.config.name() << " rejected: " << c.reject_reason);
    compile(tn, plain, c.config);
  }
  for (Op op_a : {Op::N, Op::T})
    for (Op op_b : {Op::N, Op::T})
      for (DType t : {DType::BF16, DType::F16}) {
        if (op_a == Op::N && op_b == Op::T && t == DType::BF16) continue;
        GemmProblem p = problem(t, op_a, op_b);
        compile(p, plain, menu[0].config);  // 128x256, cluster 2
      }
  // A full epilogue (C, per-column bias, GELU) and a column-major problem.
  Epilogue full;
  full.alpha = 1.5f;
  full.beta = 0.5f;
  full.bias_mode = VectorMode::PerColumn;
  full.activation = Activation::GeluTanh;
  compile(problem(DType::BF16, Op::N, Op::T, Order::ColMajor), full, menu[1].config);
  BOOST_CHECK_EQUAL(compiled, int(menu.size()) + 7 + 1);
}

// A packed plan's module holds the GEMM and the pack kernel; both compile without spills.
BOOST_AUTO_TEST_CASE(sm90_packed_variant_compiles_with_the_pack_kernel) {
  if (!have_nvrtc()) return;
  GemmProblem odd = problem(DType::BF16, Op::N, Op::T, Order::RowMajor, 4095, 4097, 4093);
  std::vector<Candidate> menu = sm90_family_model().enumerate(odd, Epilogue{}, hopper());
  BOOST_REQUIRE(!menu.empty() && menu[0].feasible && menu[0].config.pack_a);
  jit::CompileRequest r = cuda::sm90_compile_request(odd, Epilogue{}, menu[0].config, jit::arch_for_cc(9, 0));
  BOOST_CHECK(r.source.find("DGEMM_DEFINE_PACK_KERNEL") != std::string::npos);
  auto code = jit::compile(r);
  BOOST_CHECK_MESSAGE(code->log.find("dgemm_sm90_pack") != std::string::npos, code->log);
  BOOST_CHECK_EQUAL(spill_free_kernels(code->log), 2);
}

// A split-K plan's module holds the GEMM (partials to the workspace) and the reduce + epilogue
// kernel; both compile without spills, with a full epilogue.
BOOST_AUTO_TEST_CASE(sm90_split_k_variant_compiles_with_the_reduce_kernel) {
  if (!have_nvrtc()) return;
  GemmProblem p = problem(DType::BF16, Op::N, Op::T, Order::RowMajor, 1024, 1024, 4096);
  Epilogue full;
  full.beta = 0.5f;
  full.bias_mode = VectorMode::PerColumn;
  full.activation = Activation::GeluTanh;
  setenv("DEEPGEMM_SM90_SPLIT_K", "1", 1);  // opt-in candidates
  PlanDecision d = choose_kernel(p, full, apply_arch_file(HardwareDesc{}, "h200"), PlanRequest{});
  unsetenv("DEEPGEMM_SM90_SPLIT_K");
  BOOST_REQUIRE_MESSAGE(d.chosen.config.split_k > 1, d.chosen.config.name());
  jit::CompileRequest r = cuda::sm90_compile_request(p, full, d.chosen.config, jit::arch_for_cc(9, 0));
  auto code = jit::compile(r);
  BOOST_CHECK_MESSAGE(code->log.find("dgemm_sm90_split_reduce") != std::string::npos, code->log);
  BOOST_CHECK_EQUAL(spill_free_kernels(code->log), 2);
}

BOOST_AUTO_TEST_CASE(sm90_planner_model_feasibility_and_choice) {
  // The planner's choices on the built-in H200 description (the machine the targets are for).
  const HardwareDesc hw = apply_arch_file(HardwareDesc{}, "h200");
  Epilogue e;
  // Chosen for a big aligned problem on Hopper.
  PlanDecision d = choose_kernel(problem(DType::BF16, Op::N, Op::T), e, hw, PlanRequest{});
  BOOST_CHECK_MESSAGE(d.chosen.config.family == Family::Sm90, "4096^3 bf16 on Hopper chose " << d.chosen.config.name());
  // Mid-sized problems get a tile that fills the SMs (not 32 tiles of 128x256 on 132 SMs).
  PlanDecision mid = choose_kernel(problem(DType::BF16, Op::N, Op::T, Order::RowMajor, 1024, 1024, 4096), e, hw,
                                   PlanRequest{});
  BOOST_CHECK_MESSAGE(mid.chosen.config.family == Family::Sm90, "1024x1024x4096 chose " << mid.chosen.config.name());
  const KernelConfig& mc = mid.chosen.config;
  BOOST_CHECK_MESSAGE(((1024 + mc.block_m - 1) / mc.block_m) * ((1024 + mc.block_n - 1) / mc.block_n) * mc.split_k >= 100,
                      "1024x1024x4096 chose " << mc.name());
  // Split-K is opt-in (DEEPGEMM_SM90_SPLIT_K=1, measured slower so far). Then big problems
  // still never split K; one with few tiles and a long K does.
  BOOST_CHECK_EQUAL(d.chosen.config.split_k, 1);
  setenv("DEEPGEMM_SM90_SPLIT_K", "1", 1);
  BOOST_CHECK_EQUAL(choose_kernel(problem(DType::BF16, Op::N, Op::T), e, hw, PlanRequest{}).chosen.config.split_k, 1);
  PlanDecision narrow = choose_kernel(problem(DType::BF16, Op::N, Op::T, Order::RowMajor, 200, 150, 4096), e, hw,
                                      PlanRequest{});
  BOOST_CHECK_MESSAGE(narrow.chosen.config.split_k > 1, "200x150x4096 chose " << narrow.chosen.config.name());
  unsetenv("DEEPGEMM_SM90_SPLIT_K");
  // K = 4093 in bf16 (row-major A with op N): lda * 2 bytes is not a multiple of 16. The sm90
  // candidates pack the operands that break the rule into the workspace; the planner weighs the
  // copy against the sm80 family and, for a problem this big, packs.
  GemmProblem odd = problem(DType::BF16, Op::N, Op::T, Order::RowMajor, 4095, 4097, 4093);
  for (const Candidate& c : sm90_family_model().enumerate(odd, e, hw)) {
    BOOST_CHECK_MESSAGE(c.feasible, c.config.name() << ": " << c.reject_reason);
    BOOST_CHECK(c.config.pack_a && c.config.pack_b);
  }
  PlanDecision packed = choose_kernel(odd, e, hw, PlanRequest{});
  BOOST_CHECK_MESSAGE(packed.chosen.config.family == Family::Sm90 && packed.chosen.config.pack_a,
                      "4095x4097x4093 chose " << packed.chosen.config.name());
  // Only the operand that breaks the rule is packed (NN: A has lda = 4093, B has ldb = 4104).
  GemmProblem odd_a = problem(DType::BF16, Op::N, Op::N, Order::RowMajor, 4095, 4097, 4093);
  odd_a.ldb = 4104;
  for (const Candidate& c : sm90_family_model().enumerate(odd_a, e, hw))
    if (c.feasible) BOOST_CHECK(c.config.pack_a && !c.config.pack_b);
  // The packed copy's layout: rows padded to 8 elements, one copy for a broadcast batch.
  const Sm90PackLayout la = sm90_pack_layout(odd, 0);
  BOOST_CHECK_EQUAL(la.inner, 4093);
  BOOST_CHECK_EQUAL(la.outer, 4095);
  BOOST_CHECK_EQUAL(la.dst_ld, 4096);
  GemmProblem bcast = problem(DType::F16, Op::T, Op::N, Order::ColMajor, 100, 60, 33);
  bcast.batch_count = 3;
  bcast.lda = 33;
  bcast.stride_a = 0;
  bcast.ldb = 33;
  bcast.stride_b = 33 * 60 + 1;
  const Sm90PackLayout lb = sm90_pack_layout(bcast, 0), lb2 = sm90_pack_layout(bcast, 1);
  BOOST_CHECK(sm90_operand_needs_pack(bcast, 0) && sm90_operand_needs_pack(bcast, 1));
  BOOST_CHECK(lb.batch == 1 && lb.dst_stride == 0 && lb.inner == 33 && lb.outer == 100 && lb.dst_ld == 40);
  BOOST_CHECK(lb2.batch == 3 && lb2.inner == 33 && lb2.outer == 60 && lb2.dst_stride == 60 * 40);
  BOOST_CHECK(sm90_tma_layout_problem(sm90_packed_problem(bcast, true, true)).empty());
  // Not Hopper, not 16-bit operands: rejected with a reason.
  HardwareDesc ampere = hw;
  ampere.cc_major = 8;
  ampere.has_tma = ampere.has_wgmma = false;
  for (const Candidate& c : sm90_family_model().enumerate(problem(DType::BF16, Op::N, Op::T), e, ampere))
    BOOST_CHECK(!c.feasible && c.reject_reason.find("sm_90a") != std::string::npos);
  GemmProblem f32 = problem(DType::F32, Op::N, Op::T);
  for (const Candidate& c : sm90_family_model().enumerate(f32, e, hw))
    BOOST_CHECK(!c.feasible && c.reject_reason.find("f16 or bf16") != std::string::npos);
}

#else
BOOST_AUTO_TEST_CASE(sm90_compile_needs_cuda_build) { BOOST_TEST_MESSAGE("built without CUDA: nothing to test"); }
#endif

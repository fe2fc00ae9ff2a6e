// NVRTC compile tests of the small-M family (label cpu: they need NVRTC, not a GPU). Every
// configuration the planner's default menu offers (each row bucket x B layout x columns per CTA,
// with and without split-K, both operand types, both A layouts and output orders spread over
// them) compiles for sm_80 and sm_90a, and ptxas reports no spills and no stack for any kernel
// (the 16-byte one, the element one and the split-K reduction). Registers are printed: the
// planner's table (src/plan/family_small_m.cpp) must not be below them.
#include <boost/test/unit_test.hpp>

#if DGEMM_WITH_CUDA

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "backend/cuda/jit.hpp"
#include "backend/cuda/small_m_gemm.hpp"
#include "common/nvrtc_checks.hpp"
#include "plan/families.hpp"
#include "plan/family_small_m.hpp"

namespace {

using namespace dgemm;

using dgemm_test::CacheDirFixture;
using dgemm_test::RequireNvrtc;
BOOST_TEST_GLOBAL_FIXTURE(RequireNvrtc);
BOOST_TEST_GLOBAL_FIXTURE(CacheDirFixture);

HardwareDesc gpu(int major, int minor) {
  HardwareDesc hw;
  hw.name = "test-gpu";
  hw.vendor = Vendor::Nvidia;
  hw.cc_major = major;
  hw.cc_minor = minor;
  hw.sm_count = 132;
  hw.smem_per_sm = 233472;
  hw.smem_per_block_optin = 232448;
  hw.l2_bytes = 50 << 20;
  hw.mem_bandwidth_gbs = 4800;
  hw.clock_mhz = 1980;
  hw.peak_tflops_f32 = 66.9;
  hw.peak_tflops_bf16 = hw.peak_tflops_f16 = 989;
  hw.can_run_kernels = true;
  return hw;
}

// Registers of each kernel in the log; fails on spills or stack.
std::vector<int> check_log(const std::string& what, const jit::CompiledCode& code, int kernels) {
  std::regex stack(R"((\d+) bytes stack frame)");
  std::regex regs(R"(Used (\d+) registers)");
  const int found = dgemm_test::check_spill_lines(what, code.log);
  for (std::sregex_iterator it(code.log.begin(), code.log.end(), stack), end; it != end; ++it)
    BOOST_CHECK_MESSAGE((*it)[1] == "0", what << ": ptxas reports a stack frame: " << it->str());
  std::vector<int> out;
  for (std::sregex_iterator it(code.log.begin(), code.log.end(), regs), end; it != end; ++it)
    out.push_back(std::stoi((*it)[1].str()));
  BOOST_CHECK_MESSAGE(found == kernels, what << ": expected ptxas statistics for " << kernels << " kernels, found "
                                             << found << "\n" << code.log);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_default_small_m_variant_compiles_without_spills) {
  int variant = 0;
  for (int cc : {80, 90}) {
    const HardwareDesc hw = gpu(cc / 10, cc % 10);
    const std::string arch = jit::arch_for_cc(hw.cc_major, hw.cc_minor);
    for (int64_t m : {1, 2, 4, 8, 16}) {
      for (bool b_kmajor : {true, false}) {
        GemmProblem p;
        p.m = m;
        p.n = 4096;
        p.k = 4096;
        const bool alt = (variant++ % 2) == 1;
        p.a_type = p.b_type = alt ? DType::F16 : DType::BF16;
        p.c_type = p.d_type = alt ? DType::F32 : DType::BF16;
        p.order = alt ? Order::ColMajor : Order::RowMajor;
        // Pick op_b so that B has the wanted layout in this order.
        p.op_b = (p.order == Order::RowMajor) == b_kmajor ? Op::T : Op::N;
        p.op_a = (m % 4 == 0) ? Op::T : Op::N;
        p.resolve_and_validate();
        BOOST_REQUIRE(small_m_b_kmajor(p) == b_kmajor);
        Epilogue e;
        if (m == 16) {  // the heaviest epilogue on the biggest bucket
          e.beta = 0.5f;
          e.bias_mode = VectorMode::PerColumn;
          e.activation = Activation::GeluErf;
        }
        std::vector<std::string> seen;
        for (const Candidate& c : small_m_family_model().enumerate(p, e, hw)) {
          BOOST_REQUIRE_MESSAGE(c.feasible || c.config.split_k > 1, c.config.name() << ": " << c.reject_reason);
          // One split-K and one plain module per menu shape (the kernels do not depend on the count).
          KernelConfig cfg = c.config;
          cfg.split_k = cfg.split_k > 1 ? 2 : 1;
          const std::string key = cfg.name();
          if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
          seen.push_back(key);
          jit::CompileRequest req = cuda::small_m_compile_request(p, e, cfg, arch);
          std::shared_ptr<const jit::CompiledCode> code;
          try {
            code = jit::compile(req);
          } catch (const std::exception& ex) {
            BOOST_FAIL(req.name << " for " << arch << ": " << ex.what());
          }
          const std::vector<int> regs = check_log(req.name + " " + arch, *code, cfg.split_k > 1 ? 3 : 2);
          std::string list;
          for (int r : regs) list += std::to_string(r) + " ";
          BOOST_TEST_MESSAGE(arch << " " << req.name << ": registers " << list);
          std::printf("%s %s: registers %s\n", arch.c_str(), req.name.c_str(), list.c_str());
          for (int r : regs)
            BOOST_CHECK_MESSAGE(r <= c.cost.regs_per_thread || !c.feasible,
                                req.name << ": " << r << " registers > the planner's " << c.cost.regs_per_thread);
        }
      }
    }
  }
}

#else
#include "common/skip.hpp"
DGEMM_SKIP_WITHOUT_CUDA()
#endif

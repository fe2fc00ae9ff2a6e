// The compile requests of each family's launcher, in one place for the tools.
#include "backend/cuda/plan_kernels.hpp"

#include "backend/cuda/sm80_gemm.hpp"
#include "backend/cuda/sm90_gemm.hpp"
#include "backend/cuda/small_m_gemm.hpp"

namespace dgemm::cuda {

std::vector<jit::CompileRequest> plan_compile_requests(const GemmProblem& p, const Epilogue& e,
                                                       const KernelConfig& c, const std::string& arch) {
  switch (c.family) {
    case Family::Cpu:
      return {};
    case Family::Sm80:
      return {sm80_compile_request(p, e, c, arch)};
    case Family::SmallM:
      return {small_m_compile_request(p, e, c, arch)};
    case Family::Sm90: {
      std::vector<jit::CompileRequest> out{sm90_compile_request(p, e, c, arch)};
      // The sm90 launcher also prepares an sm80 kernel for pointers TMA cannot take, unless both
      // operands are packed into the workspace (sm90_gemm.cpp, end of its constructor).
      if (!(c.pack_a && c.pack_b)) out.push_back(sm80_compile_request(p, e, sm90_fallback_config(), arch));
      return out;
    }
  }
  return {};
}

}  // namespace dgemm::cuda

// The NVRTC compile requests behind a plan (what Backend::prepare compiles for a configuration),
// so that tools can fill the kernel cache for a machine without a GPU (`deepgemm warm`).
#pragma once

#include <string>
#include <vector>

#include "backend/cuda/jit.hpp"
#include "core/problem.hpp"
#include "plan/kernel_config.hpp"

namespace dgemm::cuda {

// Empty for the CPU family. `arch` is the NVRTC target (jit::arch_for_cc).
std::vector<jit::CompileRequest> plan_compile_requests(const GemmProblem& p, const Epilogue& e,
                                                       const KernelConfig& config, const std::string& arch);

}  // namespace dgemm::cuda

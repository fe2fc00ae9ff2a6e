// Host side of the small-M family (device code: src/kernels/small_m/small_m_gemm.cuh): the JIT
// source of a plan's kernels and the launcher (launcher.hpp). Exposed so that tests and tools can
// generate and compile the exact source a plan would use, for any architecture, without a GPU.
#pragma once

#include <string>

#include "backend/cuda/jit.hpp"
#include "core/kernel_config.hpp"
#include "core/problem.hpp"

namespace dgemm {
namespace cuda {

// The generated translation unit and its compile request for `arch` ("sm_80", "sm_90a").
jit::CompileRequest small_m_compile_request(const GemmProblem& p, const Epilogue& e, const KernelConfig& config,
                                            const std::string& arch);

}  // namespace cuda
}  // namespace dgemm

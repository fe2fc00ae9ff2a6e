// Host side of the sm80 family (device code: src/kernels/sm80/sm80_gemm.cuh): the JIT source of a
// plan's kernels and the launcher (launcher.hpp). Exposed so that tests and tools can generate and
// compile the exact source a plan would use, for any architecture, without a GPU.
#pragma once

#include <string>

#include "backend/cuda/jit.hpp"
#include "core/kernel_config.hpp"
#include "core/problem.hpp"

namespace dgemm {
namespace cuda {

// Bytes of dynamic shared memory the kernel of `config` uses for operands of type `ab`.
int sm80_smem_bytes(const KernelConfig& config, DType ab);

// The generated translation unit (both kernels) and its compile request for `arch` ("sm_80").
jit::CompileRequest sm80_compile_request(const GemmProblem& p, const Epilogue& e, const KernelConfig& config,
                                         const std::string& arch);

}  // namespace cuda
}  // namespace dgemm

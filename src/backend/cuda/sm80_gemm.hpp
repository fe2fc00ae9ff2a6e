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

// Names of the two kernels every sm80 module holds: 16-byte cp.async loads, and element loads
// for pointers / leading dimensions / strides that are not multiples of 16 bytes.
inline constexpr const char* kSm80VectorKernel = "dgemm_sm80_vec";
inline constexpr const char* kSm80ScalarKernel = "dgemm_sm80_scalar";
// With split_k > 1 the module also holds the shared split-K reduction (kernels/common/split_k.cuh).
inline constexpr const char* kSm80ReduceKernel = "dgemm_sm80_reduce";

// Bytes of dynamic shared memory the kernel of `config` uses.
int sm80_smem_bytes(const KernelConfig& config);

// The generated translation unit (both kernels) and its compile request for `arch` ("sm_80").
jit::CompileRequest sm80_compile_request(const GemmProblem& p, const Epilogue& e, const KernelConfig& config,
                                         const std::string& arch);

}  // namespace cuda
}  // namespace dgemm

// Host side of the sm80 family (device code: src/kernels/sm80/sm80_gemm.cuh): the JIT source of
// a plan's kernels and the launcher. Exposed so that tests and tools can generate and compile the
// exact source a plan would use, for any architecture, without a GPU.
#pragma once

#include <string>

#include "backend/cuda/jit.hpp"
#include "core/problem.hpp"
#include "plan/kernel_config.hpp"

namespace dgemm {
namespace cuda {

// How a problem maps onto the row-major kernel (column-major problems run as D^T = op(B)^T op(A)^T).
struct Sm80Mapping {
  bool transposed = false;  // column-major problem: A and B, m and n swapped
  bool a_kmajor = true;     // the kernel's A operand is K-contiguous
  bool b_kmajor = false;    // the kernel's B operand is K-contiguous
};
Sm80Mapping sm80_mapping(const GemmProblem& p);

// Names of the two kernels every sm80 module holds: 16-byte cp.async loads, and element loads
// for pointers / leading dimensions / strides that are not multiples of 16 bytes.
inline constexpr const char* kSm80VectorKernel = "dgemm_sm80_vec";
inline constexpr const char* kSm80ScalarKernel = "dgemm_sm80_scalar";
// With split_k > 1 the module also holds the reduction (sums the f32 partials in the workspace and
// applies the epilogue); the plan's workspace is batch x split_k x M x roundup(N, 4) floats.
inline constexpr const char* kSm80ReduceKernel = "dgemm_sm80_reduce";
inline constexpr int kSm80ReduceThreads = 256;

// Bytes of dynamic shared memory the kernel of `config` uses.
int sm80_smem_bytes(const KernelConfig& config);

// The generated translation unit (both kernels) and its compile request for `arch` ("sm_80").
jit::CompileRequest sm80_compile_request(const GemmProblem& p, const Epilogue& e, const KernelConfig& config,
                                         const std::string& arch);

}  // namespace cuda
}  // namespace dgemm

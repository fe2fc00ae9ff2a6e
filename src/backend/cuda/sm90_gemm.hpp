// Host side of the sm90 family (device code: src/kernels/sm90/sm90_bf16_gemm.cuh): the kernel's
// view of a problem, the JIT source of a plan's kernel, and the launcher. Exposed so that tests and
// tools can generate and compile the exact source a plan would use without a GPU.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.hpp"
#include "backend/cuda/jit.hpp"
#include "core/problem.hpp"
#include "plan/kernel_config.hpp"

namespace dgemm {
namespace cuda {

struct DeviceInfo;

// How a problem maps onto the row-major kernel. Column-major problems run as the row-major
// D^T = op(B)^T op(A)^T: A and B (and m and n) swap. A K-major operand is K-contiguous; the other
// majors are MN-contiguous and use wgmma's transpose bit.
struct Sm90Mapping {
  bool transposed = false;
  bool a_kmajor = true;
  bool b_kmajor = true;
  // The kernel's operands and sizes.
  int64_t m = 0, n = 0, lda = 0, ldb = 0, stride_a = 0, stride_b = 0;
};
Sm90Mapping sm90_mapping(const GemmProblem& p);

// The name of the one kernel each sm90 module holds.
inline constexpr const char* kSm90Kernel = "dgemm_sm90_gemm";
inline constexpr int kSm90BlockK = 64;
inline constexpr int kSm90Threads = 384;  // producer warpgroup + two consumer warpgroups

// Dynamic shared memory of `config`'s kernel: the stage ring, the barriers, 1 KB alignment slack.
int sm90_smem_bytes(const KernelConfig& config);

jit::CompileRequest sm90_compile_request(const GemmProblem& p, const Epilogue& e, const KernelConfig& config,
                                         const std::string& arch);

// The sm80 configuration a plan prepares alongside for A/B pointers TMA cannot take (unless both
// operands are packed: a packed operand's pointer may have any element alignment).
KernelConfig sm90_fallback_config();

// The launcher (registered in cuda_backend.cpp's kLaunchers). At execute, A or B pointers that are
// not 16-byte aligned (TMA's rule) run on an sm80 kernel prepared alongside at plan time.
std::unique_ptr<Executable> prepare_sm90(const DeviceInfo& device, const GemmProblem& p, const Epilogue& e,
                                         const KernelConfig& config);

}  // namespace cuda
}  // namespace dgemm

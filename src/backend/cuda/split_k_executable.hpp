// The executable shared by the families that split K across the CTAs of a grid (sm80, small_m):
// a module with a 16-byte-load kernel and an element-load kernel, picked per call from the
// pointers, and, when K is split, the shared split-K reduction (kernels/common/split_k.cuh) run
// after it on the same stream. The family's launcher decides the source, the block and the grid;
// loading, the workspace layout and the execute path are the same for both and live here.
#pragma once

#include <memory>

#include "backend/backend.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/jit.hpp"
#include "core/kernel_view.hpp"
#include "core/problem.hpp"

namespace dgemm {
namespace cuda {

// The block of the split-K reduction.
inline constexpr int kSplitKReduceThreads = 256;

// The kernels of a family's module, and the family's name for the launches in error messages.
struct SplitKKernelNames {
  const char* family;  // "sm80"
  const char* vector;  // 16-byte loads
  const char* scalar;  // element loads: any pointer
  const char* reduce;  // loaded only when split_k > 1
};

// How a family launches its GEMM kernels, decided at plan time.
struct SplitKLaunch {
  int threads = 0;               // block of the GEMM kernels
  int smem_bytes = 0;            // their dynamic shared memory
  unsigned tiles = 1;            // grid x: the tiles of one batch (y is the K split, z the batches)
  bool vector_rows_ok = false;   // the rows and batch steps the vector kernel reads are 16-byte aligned
  bool vector_reads_a = true;    // the vector kernel reads A 16 bytes at a time (B always)
};

// Compiles `request` (or finds it in the cache) and loads its kernels on `device`; `v` is the view
// the kernels compute (kernel_args.hpp's plan_params / bind_call). Throws Error.
std::unique_ptr<Executable> make_split_k_executable(const DeviceInfo& device, const GemmProblem& p, const KernelView& v,
                                                    const jit::CompileRequest& request, int split_k,
                                                    const SplitKKernelNames& names, const SplitKLaunch& launch);

}  // namespace cuda
}  // namespace dgemm

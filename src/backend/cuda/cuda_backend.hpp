// What the CUDA kernel families' host launchers share: the device a backend runs on, loading a
// JIT-compiled cubin through the CUDA runtime (cudaLibraryLoadData: no libcuda link) and error
// checks. The launchers themselves: launcher.hpp; their common plumbing: kernel_args.hpp.
//
// Device policy (decided here, for every family): dgemm_execute does NOT switch devices. If the
// calling thread's current device is not the plan's, execute fails with CONTEXT_MISMATCH and
// enqueues nothing; the caller sets the device (cudaSetDevice) before executing. This keeps
// execute free of hidden per-thread state changes and of any implicit context work.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "backend/backend.hpp"
#include "backend/cuda/jit.hpp"
#include "core/error.hpp"
#include "core/hardware.hpp"
#include "core/problem.hpp"

namespace dgemm {
namespace cuda {

struct DeviceInfo {
  int index = 0;
  HardwareDesc hw;
  std::string arch;  // NVRTC target, jit::arch_for_cc
};

// Throws Error(DeviceError) naming `what` when `rc` is not cudaSuccess.
void check(cudaError_t rc, const char* what);

// Throws Error(ContextMismatch) when the calling thread's current device is not `device`.
// Cheap (cudaGetDevice reads thread state), so execute calls it every time.
void require_current_device(int device);

// A cubin loaded into the process (all contexts, through the runtime's library API). Kernels
// obtained from it stay valid while it lives.
class Module {
 public:
  explicit Module(const jit::CompiledCode& code);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  // An extern "C" kernel of the module, opted in to `dynamic_smem` bytes of shared memory and
  // loaded into the current device's context now (so that execute never loads anything).
  cudaKernel_t kernel(const char* name, int dynamic_smem, cudaFuncAttributes* attrs = nullptr) const;

 private:
  cudaLibrary_t library_ = nullptr;
  std::string name_;
};

}  // namespace cuda
}  // namespace dgemm

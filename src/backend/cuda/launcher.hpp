// A kernel family's host side: what a plan with one of its configurations compiles, how it is
// loaded and launched, and how `deepgemm gen` describes it. One Launcher per family
// (src/backend/cuda/<family>_gemm.cpp), registered by its line in core/families.def; the CUDA
// backend, `deepgemm gen` and `deepgemm warm` reach every family through launcher_for().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cuda/jit.hpp"
#include "core/kernel_config.hpp"
#include "core/problem.hpp"

namespace dgemm {
namespace cuda {

struct DeviceInfo;

class Launcher {
 public:
  virtual ~Launcher() = default;
  // The NVRTC programs a plan with this configuration compiles, the main kernel's module first
  // (a plan's fallback configuration, if any, contributes its own).
  virtual std::vector<jit::CompileRequest> compile_requests(const GemmProblem& p, const Epilogue& e,
                                                            const KernelConfig& c, const std::string& arch) const = 0;
  // Compiles (or finds in the cache), loads and wraps the plan's kernels on `device`. `fallback`
  // (may be null) runs the calls whose pointers the configuration cannot take (TMA's 16-byte rule).
  virtual std::unique_ptr<Executable> prepare(const DeviceInfo& device, const GemmProblem& p, const Epilogue& e,
                                              const KernelConfig& c, std::unique_ptr<Executable> fallback) const = 0;
  // For `deepgemm gen`: the entry points of the main module and how to launch them.
  virtual std::string describe(const GemmProblem& p, const KernelConfig& c) const = 0;
  // Why the family's source cannot target `arch` ("" when it can), e.g. sm90 needs sm_90a.
  virtual std::string target_problem(const std::string& arch) const {
    (void)arch;
    return "";
  }
};

// The launcher of a family; nullptr for the CPU reference.
const Launcher* launcher_for(Family family);

// Every compile request of a plan: its configuration's and its fallback's (may be null).
std::vector<jit::CompileRequest> plan_compile_requests(const GemmProblem& p, const Epilogue& e, const KernelConfig& c,
                                                       const KernelConfig* fallback, const std::string& arch);

}  // namespace cuda
}  // namespace dgemm

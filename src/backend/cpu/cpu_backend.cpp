// The CPU backend: wraps the reference GEMM in the Backend / Executable interface.
#include <memory>

#include "backend/backend.hpp"
#include "backend/cpu/cpu_gemm.hpp"
#include "core/error.hpp"

namespace dgemm {
namespace {

class CpuExecutable final : public Executable {
 public:
  // The workspace is sized once, here: execute then only carves it up (and allocates nothing).
  CpuExecutable(const GemmProblem& p, const Epilogue& e)
      : problem_(p), epilogue_(e), workspace_size_(cpu_gemm_workspace_size(p)) {}
  std::size_t workspace_size() const override { return workspace_size_; }
  void run(const ExecArgs& args) const override { cpu_gemm(problem_, epilogue_, args); }

 private:
  GemmProblem problem_;
  Epilogue epilogue_;
  std::size_t workspace_size_;
};

class CpuBackend final : public Backend {
 public:
  CpuBackend() : hw_(cpu_hardware()) {}
  const char* name() const override { return "cpu"; }
  const HardwareDesc& hardware() const override { return hw_; }
  std::unique_ptr<Executable> prepare(const GemmProblem& p, const Epilogue& e, const KernelConfig& config, const KernelConfig*) override {
    if (config.family != Family::Cpu)
      fail(Status::NotSupported, "the CPU backend cannot run kernel family ", family_name(config.family));
    return std::make_unique<CpuExecutable>(p, e);
  }

 private:
  HardwareDesc hw_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace dgemm

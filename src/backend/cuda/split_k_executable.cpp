// The execute path of the families that split K across a grid (split_k_executable.hpp): no
// allocation, no synchronization, two launches at most on the caller's stream.
#include "backend/cuda/split_k_executable.hpp"

#include <cstdint>
#include <string>

#include "backend/cuda/kernel_args.hpp"
#include "core/error.hpp"

namespace dgemm {
namespace cuda {

namespace {
bool aligned16(const void* ptr) { return (reinterpret_cast<std::uintptr_t>(ptr) & 15u) == 0; }
unsigned clamp_grid(long long v) { return unsigned(v < 65535 ? (v > 0 ? v : 1) : 65535); }

class SplitKExecutable final : public Executable {
 public:
  SplitKExecutable(const DeviceInfo& device, const GemmProblem& p, const KernelView& v,
                   const jit::CompileRequest& request, int split_k, const SplitKKernelNames& names,
                   const SplitKLaunch& launch)
      : device_(device.index), view_(v), launch_(launch) {
    code_ = jit::compile(request);
    module_ = std::make_unique<Module>(*code_);
    vec_kernel_ = module_->kernel(names.vector, launch.smem_bytes);
    scalar_kernel_ = module_->kernel(names.scalar, launch.smem_bytes);
    splits_ = split_k > 1 ? split_k : 1;
    if (splits_ > 65535) fail(Status::InternalError, "split_k = ", splits_, " exceeds the grid's y extent");
    if (splits_ > 1) reduce_kernel_ = module_->kernel(names.reduce, 0);
    base_ = plan_params(p, view_);
    grid_ = dim3(launch.tiles, unsigned(splits_), clamp_grid(p.batch_count));
    if (splits_ > 1) {
      workspace_ = split_k_workspace_bytes(view_, p.batch_count, splits_);
      const long long runs = view_.rows * ((view_.cols + 3) / 4);
      reduce_grid_ =
          dim3(clamp_grid((runs + kSplitKReduceThreads - 1) / kSplitKReduceThreads), clamp_grid(p.batch_count));
    }
    gemm_what_ = std::string("cudaLaunchKernel (") + names.family + " GEMM)";
    reduce_what_ = std::string("cudaLaunchKernel (") + names.family + " split-K reduce)";
  }

  std::size_t workspace_size() const override { return workspace_; }

  void run(const ExecArgs& x) const override {
    require_current_device(device_);
    DgemmParams prm = bind_call(base_, view_, x);
    // The plan checked the rows; the base pointers are known only now.
    const bool vec = launch_.vector_rows_ok && aligned16(prm.b) && (!launch_.vector_reads_a || aligned16(prm.a));
    if (splits_ > 1 && !aligned16(x.workspace))
      fail(Status::InvalidArgument, "workspace = ", x.workspace,
           ": this plan (split-K) needs a 16-byte aligned workspace");
    const cudaStream_t stream = static_cast<cudaStream_t>(x.stream);
    void* args[] = {&prm};
    check(cudaLaunchKernel(reinterpret_cast<const void*>(vec ? vec_kernel_ : scalar_kernel_), grid_,
                           dim3(unsigned(launch_.threads)), args, std::size_t(launch_.smem_bytes), stream),
          gemm_what_.c_str());
    if (splits_ > 1) {
      int splits = splits_;
      void* reduce_args[] = {&prm, &splits};
      check(cudaLaunchKernel(reinterpret_cast<const void*>(reduce_kernel_), reduce_grid_, dim3(kSplitKReduceThreads),
                             reduce_args, 0, stream),
            reduce_what_.c_str());
    }
  }

 private:
  int device_;
  KernelView view_;
  SplitKLaunch launch_;
  std::shared_ptr<const jit::CompiledCode> code_;
  std::unique_ptr<Module> module_;
  cudaKernel_t vec_kernel_ = nullptr, scalar_kernel_ = nullptr, reduce_kernel_ = nullptr;
  int splits_ = 1;
  std::size_t workspace_ = 0;
  DgemmParams base_{};
  dim3 grid_, reduce_grid_;
  std::string gemm_what_, reduce_what_;
};

}  // namespace

std::unique_ptr<Executable> make_split_k_executable(const DeviceInfo& device, const GemmProblem& p, const KernelView& v,
                                                    const jit::CompileRequest& request, int split_k,
                                                    const SplitKKernelNames& names, const SplitKLaunch& launch) {
  return std::make_unique<SplitKExecutable>(device, p, v, request, split_k, names, launch);
}

}  // namespace cuda
}  // namespace dgemm

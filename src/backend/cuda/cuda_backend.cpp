// The CUDA backend: device query into a HardwareDesc, module loading through the runtime's
// library API, and dispatch of a plan's configuration to its family's launcher (launcher.hpp).
// See cuda_backend.hpp for the device policy of execute.
#include "backend/cuda/cuda_backend.hpp"

#include "backend/cuda/launcher.hpp"

#include <sstream>

#include "core/error.hpp"

namespace dgemm {
namespace cuda {

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    cudaGetLastError();  // clear a sticky-free error so later calls start clean
    fail(Status::DeviceError, what, " failed: ", cudaGetErrorName(rc), " (", cudaGetErrorString(rc), ")");
  }
}

void require_current_device(int device) {
  int current = -1;
  check(cudaGetDevice(&current), "cudaGetDevice");
  if (current != device)
    fail(Status::ContextMismatch, "the plan was made for CUDA device ", device, " but the calling thread's current device is ",
         current, ": call cudaSetDevice(", device, ") before dgemm_execute");
}

Module::Module(const jit::CompiledCode& code) : name_(code.key) {
  check(cudaLibraryLoadData(&library_, code.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
        "cudaLibraryLoadData (JIT cubin)");
}

Module::~Module() {
  if (library_) cudaLibraryUnload(library_);
}

cudaKernel_t Module::kernel(const char* name, int dynamic_smem, cudaFuncAttributes* attrs) const {
  cudaKernel_t k = nullptr;
  std::string what = std::string("cudaLibraryGetKernel(") + name + ")";
  check(cudaLibraryGetKernel(&k, library_, name), what.c_str());
  // The runtime accepts a cudaKernel_t cast to a function pointer; these calls also load the
  // kernel into the current context, so that the first execute does no loading.
  check(cudaFuncSetAttribute(reinterpret_cast<const void*>(k), cudaFuncAttributeMaxDynamicSharedMemorySize,
                             dynamic_smem),
        "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  cudaFuncAttributes local{};
  check(cudaFuncGetAttributes(attrs ? attrs : &local, reinterpret_cast<const void*>(k)), "cudaFuncGetAttributes");
  return k;
}

namespace {

// Dense tensor-core FLOP per clock per SM by compute capability (public datasheets); the
// planner only needs them to rank candidates, so approximate values are fine.
struct PeakPerClock {
  int cc_min;
  double f32, f16, fp8, i8;
};
constexpr PeakPerClock kPeaks[] = {
    {100, 256, 8192, 16384, 16384},  // Blackwell datacenter
    {90, 256, 4096, 8192, 8192},     // Hopper
    {89, 256, 512, 1024, 1024},      // Ada
    {86, 256, 512, 0, 1024},         // GA10x
    {80, 128, 2048, 0, 4096},        // A100
};

HardwareDesc query(int device) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  auto attr = [&](cudaDeviceAttr a) {
    int v = 0;
    check(cudaDeviceGetAttribute(&v, a, device), "cudaDeviceGetAttribute");
    return v;
  };
  HardwareDesc hw;
  hw.name = prop.name;
  hw.vendor = Vendor::Nvidia;
  hw.cc_major = prop.major;
  hw.cc_minor = prop.minor;
  hw.sm_count = prop.multiProcessorCount;
  hw.warp_size = prop.warpSize;
  hw.max_warps_per_sm = attr(cudaDevAttrMaxThreadsPerMultiProcessor) / prop.warpSize;
  hw.max_blocks_per_sm = attr(cudaDevAttrMaxBlocksPerMultiprocessor);
  hw.max_threads_per_block = prop.maxThreadsPerBlock;
  hw.regs_per_sm = attr(cudaDevAttrMaxRegistersPerMultiprocessor);
  hw.max_regs_per_thread = 255;
  hw.smem_per_sm = attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
  hw.smem_per_block_optin = attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
  hw.l2_bytes = attr(cudaDevAttrL2CacheSize);
  const double clock_khz = attr(cudaDevAttrClockRate);
  const double mem_khz = attr(cudaDevAttrMemoryClockRate);
  const double bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
  hw.clock_mhz = clock_khz / 1e3;
  // Double data rate: two transfers per memory clock.
  hw.mem_bandwidth_gbs = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  const int cc = hw.cc();
  for (const PeakPerClock& pk : kPeaks) {
    if (cc >= pk.cc_min) {
      const double tera_clocks = hw.sm_count * clock_khz * 1e3 / 1e12;
      hw.peak_tflops_f32 = pk.f32 * tera_clocks;
      hw.peak_tflops_f16 = hw.peak_tflops_bf16 = pk.f16 * tera_clocks;
      hw.peak_tflops_fp8 = pk.fp8 * tera_clocks;
      hw.peak_tops_i8 = pk.i8 * tera_clocks;
      break;
    }
  }
  if (cc >= 80) {
    for (DType t : {DType::F16, DType::BF16}) hw.mma_shapes.push_back({t, DType::F32, 16, 8, 16, "mma.sync"});
    hw.mma_shapes.push_back({DType::I8, DType::I32, 16, 8, 32, "mma.sync"});
  }
  if (cc >= 89) hw.mma_shapes.push_back({DType::F8E4M3, DType::F32, 16, 8, 32, "mma.sync"});
  hw.has_tma = hw.has_wgmma = (hw.cc_major == 9 && hw.cc_minor == 0);
  if (hw.has_wgmma) {
    for (DType t : {DType::F16, DType::BF16}) hw.mma_shapes.push_back({t, DType::F32, 64, 256, 16, "wgmma"});
    hw.mma_shapes.push_back({DType::F8E4M3, DType::F32, 64, 256, 32, "wgmma"});
  }
  hw.can_run_kernels = true;
  return hw;
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(DeviceInfo device) : device_(std::move(device)) {}
  const char* name() const override { return "cuda"; }
  const HardwareDesc& hardware() const override { return device_.hw; }
  std::unique_ptr<Executable> prepare(const GemmProblem& p, const Epilogue& e, const KernelConfig& config,
                                      const KernelConfig* fallback) override {
    auto launcher_of = [](const KernelConfig& c) {
      const Launcher* l = launcher_for(c.family);
      if (!l) fail(Status::NotSupported, "the CUDA backend has no launcher for kernel family ", family_name(c.family));
      return l;
    };
    const Launcher* main = launcher_of(config);
    // Modules are loaded and kernels configured on the plan's device.
    int previous = -1;
    check(cudaGetDevice(&previous), "cudaGetDevice");
    if (previous != device_.index) check(cudaSetDevice(device_.index), "cudaSetDevice");
    struct Restore {
      int device, previous;
      ~Restore() {
        if (previous >= 0 && previous != device) cudaSetDevice(previous);
      }
    } restore{device_.index, previous};
    std::unique_ptr<Executable> fb;
    if (fallback) fb = launcher_of(*fallback)->prepare(device_, p, e, *fallback, nullptr);
    return main->prepare(device_, p, e, config, std::move(fb));
  }

 private:
  DeviceInfo device_;
};

}  // namespace
}  // namespace cuda

std::unique_ptr<Backend> make_cuda_backend(int device_index, std::string* why) {
  auto say = [&](const std::string& s) {
    if (why) *why = s;
    return nullptr;
  };
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    cudaGetLastError();
    return say(std::string("cudaGetDeviceCount: ") + cudaGetErrorString(rc));
  }
  if (count <= 0) return say("no CUDA device");
  if (device_index < 0 || device_index >= count)
    return say("device_index " + std::to_string(device_index) + " out of range (" + std::to_string(count) + " devices)");
  try {
    cuda::DeviceInfo info;
    info.index = device_index;
    info.hw = cuda::query(device_index);
    if (info.hw.cc() < 70) return say("compute capability " + std::to_string(info.hw.cc()) + " is below 7.0");
    info.arch = jit::arch_for_cc(info.hw.cc_major, info.hw.cc_minor);
    return std::make_unique<cuda::CudaBackend>(std::move(info));
  } catch (const Error& e) {
    return say(e.what());
  }
}

}  // namespace dgemm

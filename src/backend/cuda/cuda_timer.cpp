// Autotuning's timer on a CUDA device (the planner's CandidateTimer, src/plan/autotune.hpp): each
// candidate is prepared like a real plan and timed on random operands between events. This runs
// at plan time, so it may allocate and synchronize; dgemm_execute never comes here.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

#include "backend/backend.hpp"
#include "core/float_convert.hpp"
#include "deepgemm/deepgemm.h"
#include "plan/autotune.hpp"

namespace dgemm {
namespace {

// A device buffer freed on scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
};

int64_t span(const GemmProblem& p, int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
  if (rows == 0 || cols == 0) return 0;
  return (p.batch_count - 1) * stride + p.offset(rows - 1, cols - 1, ld) + 1;
}

class CudaCandidateTimer final : public CandidateTimer {
 public:
  CudaCandidateTimer(Backend& backend, int device) : backend_(backend), device_(device) {}

  double time_us(const GemmProblem& p, const Epilogue& e, const KernelConfig& config) override {
    try {
      std::unique_ptr<Executable> exe = backend_.prepare(p, e, config);
      if (!allocate(p, e)) return -1;
      DeviceBuffer ws;
      const std::size_t ws_size = exe->workspace_size();
      if (ws_size && cudaMalloc(&ws.ptr, ws_size) != cudaSuccess) return -1;
      ExecArgs args;
      args.a = a_.ptr;
      args.b = b_.ptr;
      args.c = c_.ptr;
      args.d = d_.ptr;
      args.alpha = e.alpha;
      args.beta = e.beta;
      args.bias = bias_.ptr;
      args.scale = static_cast<const float*>(scale_.ptr);
      args.zero_point = static_cast<const int32_t*>(zero_.ptr);
      args.workspace = ws.ptr;
      args.workspace_size = ws_size;
      cudaStream_t stream = nullptr;
      if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return -1;
      args.stream = stream;
      cudaEvent_t start = nullptr, stop = nullptr;
      cudaEventCreate(&start);
      cudaEventCreate(&stop);
      double result = -1;
      // Warm-up, then size the batch of launches to about 1 ms so launch gaps do not dominate.
      for (int i = 0; i < 2; ++i) exe->run(args);
      float ms = 0;
      cudaEventRecord(start, stream);
      exe->run(args);
      cudaEventRecord(stop, stream);
      if (cudaEventSynchronize(stop) == cudaSuccess && cudaEventElapsedTime(&ms, start, stop) == cudaSuccess) {
        const int iters = std::clamp(int(1.0 / std::max(ms, 1e-3f)), 1, 200);
        std::vector<double> samples;
        for (int rep = 0; rep < 5; ++rep) {
          cudaEventRecord(start, stream);
          for (int i = 0; i < iters; ++i) exe->run(args);
          cudaEventRecord(stop, stream);
          if (cudaEventSynchronize(stop) != cudaSuccess || cudaEventElapsedTime(&ms, start, stop) != cudaSuccess) break;
          samples.push_back(double(ms) * 1e3 / iters);
        }
        if (samples.size() == 5) {
          std::sort(samples.begin(), samples.end());
          result = samples[2];
        }
      }
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
      cudaStreamDestroy(stream);
      if (cudaGetLastError() != cudaSuccess) return -1;  // a failed launch never wins
      return result;
    } catch (...) {
      return -1;  // a candidate that cannot compile or prepare never wins
    }
  }

  std::string device_key() const override {
    const HardwareDesc& hw = backend_.hardware();
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, device_);
    int driver = 0;
    cudaDriverGetVersion(&driver);
    std::ostringstream os;
    os << prop.name << " cc" << hw.cc_major << hw.cc_minor << " sms" << hw.sm_count << " clk" << hw.clock_mhz
       << " driver" << driver << " lib" << DGEMM_VERSION_NUMBER;
    return os.str();
  }

 private:
  // Operands for the problem with random values (uploaded once for all candidates of one plan).
  bool allocate(const GemmProblem& p, const Epilogue& e) {
    if (allocated_) return true;
    bool ok = upload(a_, p.a_type, span(p, p.a_rows(), p.a_cols(), p.lda, p.stride_a)) &&
              upload(b_, p.b_type, span(p, p.b_rows(), p.b_cols(), p.ldb, p.stride_b)) &&
              upload(d_, p.d_type, span(p, p.m, p.n, p.ldd, p.stride_d));
    if (ok && e.reads_c()) ok = upload(c_, p.c_type, span(p, p.m, p.n, p.ldc, p.stride_c));
    if (ok && e.bias_mode != VectorMode::None)
      ok = upload(bias_, e.bias_type, e.bias_mode == VectorMode::PerRow ? p.m : p.n);
    if (ok && e.scale_mode != VectorMode::None) {
      int64_t len = e.scale_mode == VectorMode::PerTensor ? 1 : e.scale_mode == VectorMode::PerRow ? p.m : p.n;
      ok = upload(scale_, DType::F32, len) && (!e.zero_point || upload(zero_, DType::I32, len));
    }
    allocated_ = ok;
    return ok;
  }

  // Random values in [-1, 1) (small integers for integer types), generated as one chunk on the
  // host and tiled over the buffer: random enough for timing, cheap for large operands.
  static bool upload(DeviceBuffer& buf, DType t, int64_t count) {
    if (count <= 0) return true;
    const std::size_t bytes = std::size_t(count) * dtype_size(t);
    if (cudaMalloc(&buf.ptr, bytes) != cudaSuccess) return false;
    const int64_t chunk_elems = std::min<int64_t>(count, int64_t(1) << 20);
    std::vector<unsigned char> chunk(std::size_t(chunk_elems) * dtype_size(t));
    std::mt19937 rng(12345);
    std::uniform_real_distribution<double> uni(-1.0, 1.0);
    for (int64_t i = 0; i < chunk_elems; ++i)
      store_from_double(t, chunk.data(), i, dtype_is_integer(t) ? double(int(rng() % 9) - 4) : uni(rng), true);
    for (std::size_t off = 0; off < bytes; off += chunk.size()) {
      std::size_t n = std::min(chunk.size(), bytes - off);
      if (cudaMemcpy(static_cast<char*>(buf.ptr) + off, chunk.data(), n, cudaMemcpyHostToDevice) != cudaSuccess)
        return false;
    }
    return true;
  }

  Backend& backend_;
  int device_;
  bool allocated_ = false;
  DeviceBuffer a_, b_, c_, d_, bias_, scale_, zero_;
};

}  // namespace

std::unique_ptr<CandidateTimer> make_candidate_timer(Backend& backend, int device_index) {
  if (std::strcmp(backend.name(), "cuda") != 0) return nullptr;
  return std::make_unique<CudaCandidateTimer>(backend, device_index);
}

}  // namespace dgemm

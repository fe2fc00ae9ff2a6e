// Device helpers of deepgemm-bench (see bench_device.hpp). The only CUDA C++ of the benchmark: the
// library itself is used through its public C API alone.
#include "bench_device.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cmath>

namespace bench {
namespace {

constexpr int kThreads = 256;

// Grid size for a grid-stride loop: enough blocks to fill any current GPU, never zero.
unsigned blocks_for(size_t n) {
  size_t b = (n + kThreads - 1) / kThreads;
  if (b > 65536) b = 65536;
  return b == 0 ? 1u : static_cast<unsigned>(b);
}

// splitmix64 finalizer: a good hash of (seed, index) in a few integer ops.
__device__ uint64_t hash64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ float load_as_float(const void* p, ElemType t, size_t i) {
  switch (t) {
    case ElemType::F16: return __half2float(static_cast<const __half*>(p)[i]);
    case ElemType::BF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case ElemType::E4M3: return float(static_cast<const __nv_fp8_e4m3*>(p)[i]);
    case ElemType::I8: return float(static_cast<const int8_t*>(p)[i]);
    case ElemType::I32: return float(static_cast<const int32_t*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}

__global__ void fill_random_kernel(void* data, size_t n, ElemType t, uint64_t seed, float scale) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    // 24 random bits -> [-1, 1); a value that rounds to exactly zero is possible but rare, as in
    // real data.
    float u = float(hash64(seed * 0x100000001b3ull + i) >> 40) * (2.0f / 16777216.0f) - 1.0f;
    float v = u * scale;
    switch (t) {
      case ElemType::F16: static_cast<__half*>(data)[i] = __float2half_rn(v); break;
      case ElemType::BF16: static_cast<__nv_bfloat16*>(data)[i] = __float2bfloat16_rn(v); break;
      case ElemType::E4M3: static_cast<__nv_fp8_e4m3*>(data)[i] = __nv_fp8_e4m3(v); break;
      case ElemType::I8: static_cast<int8_t*>(data)[i] = static_cast<int8_t>(rintf(fminf(fmaxf(v, -127.0f), 127.0f))); break;
      case ElemType::I32: static_cast<int32_t*>(data)[i] = static_cast<int32_t>(rintf(v)); break;
      default: static_cast<float*>(data)[i] = v; break;
    }
  }
}

__global__ void fill_scales_kernel(float* data, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    data[i] = 0.5f + 1.5f * float(hash64(seed * 0x100000001b3ull + i) >> 40) * (1.0f / 16777216.0f);
}

__global__ void dequantize_kernel(const void* src, ElemType t, int64_t rows, int64_t cols, const float* scales,
                                  int64_t group_rows, int64_t group_cols, bool mn_major, int64_t scale_ld, float* dst) {
  size_t count = size_t(rows) * size_t(cols);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    int64_t r = int64_t(i / size_t(cols)), c = int64_t(i % size_t(cols));
    float s = 1.0f;
    if (scales) {
      int64_t sr = r / group_rows, sc = c / group_cols;
      s = scales[mn_major ? sr + sc * scale_ld : sr * scale_ld + sc];
    }
    dst[i] = load_as_float(src, t, i) * s;
  }
}

__global__ void bias_gelu_kernel(float* ref, const void* bias, ElemType bias_type, int64_t m, int64_t n) {
  size_t count = size_t(m) * size_t(n);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    // Double precision: the reference must not share the kernel's float rounding of tanh.
    double x = double(ref[i]) + double(load_as_float(bias, bias_type, i % size_t(n)));
    double y = 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    ref[i] = float(y);
  }
}

// sums[0] += (out - ref)^2, sums[1] += ref^2 over finite pairs; count[0] += non-finite outputs.
__global__ void compare_kernel(const void* out, ElemType t, const float* ref, size_t count, double* sums,
                               unsigned long long* nonfinite) {
  __shared__ double s_err[kThreads], s_ref[kThreads];
  __shared__ unsigned long long s_bad[kThreads];
  double err = 0, mag = 0;
  unsigned long long bad = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    double r = ref[i];
    double o = load_as_float(out, t, i);
    if (!isfinite(r)) continue;
    if (!isfinite(o)) {
      ++bad;
      continue;
    }
    err += (o - r) * (o - r);
    mag += r * r;
  }
  s_err[threadIdx.x] = err;
  s_ref[threadIdx.x] = mag;
  s_bad[threadIdx.x] = bad;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      s_err[threadIdx.x] += s_err[threadIdx.x + stride];
      s_ref[threadIdx.x] += s_ref[threadIdx.x + stride];
      s_bad[threadIdx.x] += s_bad[threadIdx.x + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicAdd(&sums[0], s_err[0]);
    atomicAdd(&sums[1], s_ref[0]);
    atomicAdd(nonfinite, s_bad[0]);
  }
}

}  // namespace

size_t elem_size(ElemType t) {
  switch (t) {
    case ElemType::F32: case ElemType::I32: return 4;
    case ElemType::F16: case ElemType::BF16: return 2;
    default: return 1;
  }
}

int fill_scales(float* data, size_t n, uint64_t seed, void* stream) {
  if (n == 0) return 0;
  fill_scales_kernel<<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(data, n, seed);
  return static_cast<int>(cudaGetLastError());
}

int dequantize(const void* src, ElemType t, int64_t rows, int64_t cols, const float* scales, int64_t group_rows,
               int64_t group_cols, bool mn_major, int64_t scale_ld, float* dst, void* stream) {
  size_t count = size_t(rows) * size_t(cols);
  if (count == 0) return 0;
  dequantize_kernel<<<blocks_for(count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      src, t, rows, cols, scales, group_rows, group_cols, mn_major, scale_ld, dst);
  return static_cast<int>(cudaGetLastError());
}

int fill_random(void* data, size_t n, ElemType t, uint64_t seed, float scale, void* stream) {
  if (n == 0) return 0;
  fill_random_kernel<<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(data, n, t, seed, scale);
  return static_cast<int>(cudaGetLastError());
}

int apply_bias_gelu(float* ref, const void* bias, ElemType bias_type, int64_t m, int64_t n, void* stream) {
  size_t count = size_t(m) * size_t(n);
  if (count == 0) return 0;
  bias_gelu_kernel<<<blocks_for(count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(ref, bias, bias_type, m, n);
  return static_cast<int>(cudaGetLastError());
}

int compare(const void* out, ElemType t, const float* ref, size_t count, void* stream, Comparison* result) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  struct Acc {
    double sums[2];
    unsigned long long nonfinite;
  };
  Acc* acc = nullptr;
  cudaError_t e = cudaMalloc(&acc, sizeof(Acc));
  if (e != cudaSuccess) return static_cast<int>(e);
  Acc host{};
  e = cudaMemsetAsync(acc, 0, sizeof(Acc), s);
  if (e == cudaSuccess && count > 0) {
    compare_kernel<<<blocks_for(count), kThreads, 0, s>>>(out, t, ref, count, acc->sums, &acc->nonfinite);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaMemcpyAsync(&host, acc, sizeof(Acc), cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  cudaFree(acc);
  if (e != cudaSuccess) return static_cast<int>(e);
  result->rel_error = host.sums[1] > 0 ? std::sqrt(host.sums[0] / host.sums[1]) : std::sqrt(host.sums[0]);
  result->nonfinite = host.nonfinite;
  return 0;
}

}  // namespace bench

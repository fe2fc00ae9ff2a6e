// Runs the small-M kernels (src/kernels/small_m/small_m_gemm.cuh) on the CPU: every CUDA thread of
// a block is a std::thread, warps exchange values for __shfl_xor_sync through a per-warp barrier,
// __syncthreads is a block barrier, __shared__ arrays are function statics (blocks run one after
// another). Checks the kernels' index math, tails, split-K, batches, layouts and output order
// against a double-precision loop, without a GPU. bf16 inputs and f32 outputs only (the f16 and
// bf16 conversions of types.cuh are PTX, which a host compiler cannot run).
//   g++ -std=c++20 -O1 -pthread -I src/kernels tests/emu/small_m_emulate.cpp -o /tmp/small_m_emulate && /tmp/small_m_emulate
// Not part of the CMake build (it needs C++20's std::barrier); the GPU test is the real check.
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <thread>
#include <vector>

struct uint4 { unsigned x, y, z, w; };
struct float4 { float x, y, z, w; };
struct float2 { float x, y; };
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
struct Dim { unsigned x = 0, y = 0, z = 0; };
thread_local Dim threadIdx, blockIdx;
Dim gridDim, blockDim;
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline float __int_as_float(int u) { float f; std::memcpy(&f, &u, 4); return f; }
inline unsigned __float2uint_rn(float f) { return unsigned(std::nearbyint(f)); }

struct BlockSync {
  std::barrier<> block{256};
  std::vector<std::unique_ptr<std::barrier<>>> warp;
  float slots[8][32];
  BlockSync() { for (int i = 0; i < 8; ++i) warp.push_back(std::make_unique<std::barrier<>>(32)); }
};
BlockSync* g_sync = nullptr;
inline void __syncthreads() { g_sync->block.arrive_and_wait(); }
inline float __shfl_xor_sync(unsigned, float v, int off) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  g_sync->slots[w][lane] = v;
  g_sync->warp[w]->arrive_and_wait();
  const float r = g_sync->slots[w][lane ^ off];
  g_sync->warp[w]->arrive_and_wait();
  return r;
}

#define __device__
#define __forceinline__ inline
#define __global__
#define __shared__ static
#define __grid_constant__
#define asm(...) ((void)0)
#define DG_SMALL_M_HOST_EMULATION 1
#include "small_m/small_m_gemm.cuh"
#undef asm

struct Epi {
  using CType = float;
  using DType = float;
  using BiasType = float;
  static constexpr bool kHasC = true;
  static constexpr int kBiasMode = 3;  // per column of the kernel's epilogue coordinates
  static constexpr int kActivation = 0;
  static constexpr int kScaleMode = 0;
  static constexpr bool kZeroPoint = false;
  static constexpr bool kSaturate = true;
};

void launch(Dim grid, unsigned threads, const std::function<void()>& body) {
  gridDim = grid;
  blockDim = {threads, 1, 1};
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        BlockSync sync;
        g_sync = &sync;
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < threads; ++t)
          ts.emplace_back([&, t] {
            threadIdx = {t, 0, 0};
            blockIdx = {x, y, z};
            body();
          });
        for (auto& th : ts) th.join();
      }
}

unsigned short to_bf16(float f) { return (unsigned short)(__float_as_uint(f) >> 16); }  // truncation: exact for our values
float from_bf16(unsigned short b) { return __uint_as_float(unsigned(b) << 16); }

// One configuration on one shape; returns the number of wrong elements.
template <bool kBK, int kRows, int kCols, int kUnroll, bool kAK, bool kVec, bool kTrans>
int run_case(long long M, long long N, long long K, int splits, int batch, int pad) {
  std::mt19937 rng(unsigned(M * 1000003 + N * 1009 + K + splits));
  std::uniform_int_distribution<int> u(-8, 8);
  // Problem coordinates: A(i,k) = a[i*a_si + k*a_sk]; B(k,j) = kBK ? b[j*ldb + k] : b[k*ldb + j].
  const long long lda = (kAK ? K : M) + pad, ldb = (kBK ? K : N) + pad;
  const long long a_rows = kAK ? M : K, b_rows = kBK ? N : K;
  const long long stride_a = a_rows * lda + 8 * (pad > 0), stride_b = b_rows * ldb + 8 * (pad > 0);
  const long long ldd = (kTrans ? M : N) + pad, d_rows = kTrans ? N : M;
  const long long stride_d = d_rows * ldd + pad;
  std::vector<unsigned short> a(stride_a * batch + 16), b(stride_b * batch + 16);
  for (auto& x : a) x = to_bf16(float(u(rng)) / 8.0f);
  for (auto& x : b) x = to_bf16(float(u(rng)) / 8.0f);
  std::vector<float> c(stride_d * batch), d(stride_d * batch, -12345.0f), bias(std::max(M, N));
  for (auto& x : c) x = float(u(rng));
  for (auto& x : bias) x = float(u(rng));
  std::vector<float> ws(size_t(batch) * splits * M * N, std::nanf(""));
  DgemmParams p{};
  p.a = a.data(); p.b = b.data(); p.c = c.data(); p.d = d.data(); p.bias = bias.data();
  p.alpha = 0.5f; p.beta = 2.0f;
  p.m = M; p.n = N; p.k = K; p.lda = lda; p.ldb = ldb; p.ldc = ldd; p.ldd = ldd;
  p.stride_a = stride_a; p.stride_b = stride_b; p.stride_c = stride_d; p.stride_d = stride_d;
  p.batch_count = batch;
  p.workspace = ws.data();
  const int block_n = kBK ? 8 * kCols : 64;
  Dim grid{unsigned((N + block_n - 1) / block_n), unsigned(splits), unsigned(batch)};
  const bool split = splits > 1;
  if (kBK) {
    if (split) launch(grid, 256, [&] { dg::small_m::gemm_bk<kRows, kCols, kUnroll, kAK, dg::bf16, Epi, kVec, kTrans, true>(p); });
    else launch(grid, 256, [&] { dg::small_m::gemm_bk<kRows, kCols, kUnroll, kAK, dg::bf16, Epi, kVec, kTrans, false>(p); });
  } else {
    if (split) launch(grid, 256, [&] { dg::small_m::gemm_bn<kRows, kUnroll, dg::bf16, Epi, kVec, kAK, kTrans, true>(p); });
    else launch(grid, 256, [&] { dg::small_m::gemm_bn<kRows, kUnroll, dg::bf16, Epi, kVec, kAK, kTrans, false>(p); });
  }
  if (split) {
    Dim rg{unsigned((M * N + 255) / 256 < 3 ? (M * N + 255) / 256 : 3), unsigned(batch), 1};  // grid-stride
    launch(rg, 256, [&] { dg::small_m::reduce<Epi, kTrans>(p, splits); });
  }
  int bad = 0;
  std::vector<char> touched(d.size(), 0);
  for (int bt = 0; bt < batch; ++bt)
    for (long long i = 0; i < M; ++i)
      for (long long j = 0; j < N; ++j) {
        double s = 0;
        for (long long k = 0; k < K; ++k) {
          const double av = from_bf16(a[bt * stride_a + (kAK ? i * lda + k : k * lda + i)]);
          const double bv = from_bf16(b[bt * stride_b + (kBK ? j * ldb + k : k * ldb + j)]);
          s += av * bv;
        }
        const long long off = bt * stride_d + (kTrans ? j * ldd + i : i * ldd + j);
        const double want = 0.5 * s + 2.0 * c[off] + bias[kTrans ? i : j];
        touched[off] = 1;
        if (std::fabs(d[off] - want) > 1e-3 * (1 + std::fabs(want))) {
          if (bad < 3) std::printf("   (%d, %lld, %lld): got %g want %g\n", bt, i, j, d[off], want);
          ++bad;
        }
      }
  for (size_t x = 0; x < d.size(); ++x)
    if (!touched[x] && d[x] != -12345.0f) ++bad;
  std::printf("%s bk=%d rows=%d cols=%d U=%d ak=%d vec=%d trans=%d  M=%lld N=%lld K=%lld split=%d batch=%d pad=%d: %d bad\n",
              bad ? "FAIL" : "ok  ", kBK, kRows, kCols, kUnroll, kAK, kVec, kTrans, M, N, K, splits, batch, pad, bad);
  return bad;
}

int main() {
  int bad = 0;
  // B K-major.
  bad += run_case<true, 1, 4, 4, true, true, false>(1, 65, 1000, 1, 1, 0);
  bad += run_case<true, 1, 4, 4, true, true, false>(1, 65, 2100, 3, 2, 0);
  bad += run_case<true, 8, 2, 2, false, false, true>(7, 17, 1031, 2, 1, 3);
  bad += run_case<true, 16, 2, 2, true, true, true>(16, 40, 1000, 1, 2, 8);
  bad += run_case<true, 16, 2, 2, true, false, false>(15, 33, 17, 1, 1, 1);
  bad += run_case<true, 2, 4, 4, false, true, false>(2, 7, 7, 1, 1, 0);
  bad += run_case<true, 4, 4, 4, true, true, true>(3, 1, 3000, 2, 1, 0);
  // B N-major.
  bad += run_case<false, 1, 1, 8, true, true, false>(1, 65, 1000, 1, 1, 0);
  bad += run_case<false, 1, 1, 8, false, true, true>(1, 130, 700, 3, 2, 0);
  bad += run_case<false, 8, 1, 4, true, false, false>(7, 63, 129, 2, 1, 3);
  bad += run_case<false, 16, 1, 4, false, true, true>(16, 70, 300, 1, 2, 8);
  bad += run_case<false, 16, 1, 4, true, false, true>(15, 7, 1, 1, 1, 1);
  bad += run_case<false, 4, 1, 8, true, true, false>(4, 64, 17, 1, 1, 0);
  std::printf(bad ? "FAILED\n" : "all passed\n");
  return bad ? 1 : 0;
}

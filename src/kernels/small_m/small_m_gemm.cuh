// The small-M (decode) family: M <= kRows (1..16) rows of activations times a weight matrix that
// streams once from HBM. Plain f32 FMAs (no tensor cores): at these M the job is keeping enough
// 16-byte weight loads in flight on every SM, not math. It computes the kernel view
// (core/kernel_view.hpp) whose rows are the problem's M (for a column-major problem the launcher
// asks for the swapped view, which stores X transposed through the shared epilogue):
//     A(i, k) = a[i * a_si + k * a_sk]          (a_si, a_sk: lda / 1 as the layout says)
//     B(k, j) = b[j * ldb + k]   (kBKMajor: weights stored N x K, each column contiguous in K)
//             = b[k * ldb + j]   (!kBKMajor: weights stored K x N, each row contiguous in N)
// Two thread mappings, one per B layout:
//   - kBKMajor: a warp owns kCols columns; lane l reads 8 consecutive k (16 bytes) of each at
//     k = k0 + 256 u + 8 l, kUnroll chunks per trip; A's 8 matching values (all rows) come through
//     L1 (every warp of the CTA reads the same A). A warp covers the CTA's whole K slice, so the
//     lanes' partial sums are reduced with shuffles and no shared memory is needed.
//     BLOCK_N = kWarps * kCols.
//   - !kBKMajor: a thread owns 8 consecutive columns (one 16-byte load per k row); 8 lanes span
//     BLOCK_N = 64 columns (128-byte rows), so a warp reads 4 k rows and the CTA 32 k rows per step.
//     Partials of the lanes / warps that share columns are summed with shuffles, then through
//     shared memory.
// Split-K (kSplitK): gridDim.y CTAs share a column block's K range (slices are whole multiples of
// the step); each writes its raw f32 sums to the workspace (common/split_k.cuh), whose reduce
// kernel sums them and applies the epilogue once per element.
// kVec: 16-byte loads (the launcher checked base, leading dimension and batch stride alignment);
// otherwise every element is loaded alone (any alignment). Tails in N and K are predicated.
#pragma once

#include "common/gemm_params.cuh"
#include "common/split_k.cuh"
#include "common/types.cuh"
#include "epilogue/epilogue.cuh"

namespace dg {
namespace small_m {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;

// 16 bytes of weights read once: not kept in L1 (A, which every warp re-reads, stays there).
__device__ __forceinline__ uint4 ld_stream_16(const void* p) {
#ifdef DG_SMALL_M_HOST_EMULATION  // tests/emu/small_m_emulate.cpp runs these kernels on CPU threads
  return *reinterpret_cast<const uint4*>(p);
#else
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
#endif
}

// The two 16-bit elements of a 32-bit word (low first) as floats.
template <class T>
__device__ __forceinline__ void unpack2(unsigned w, float& lo, float& hi) {
  if (IsBf16<T>::value) {
    lo = __uint_as_float(w << 16);
    hi = __uint_as_float(w & 0xffff0000u);
  } else {
    f16 a, b;
    a.bits = (unsigned short)(w & 0xffffu);
    b.bits = (unsigned short)(w >> 16);
    lo = to_float(a);
    hi = to_float(b);
  }
}

template <class T>
__device__ __forceinline__ void unpack8(const uint4& v, float (&f)[8]) {
  unpack2<T>(v.x, f[0], f[1]);
  unpack2<T>(v.y, f[2], f[3]);
  unpack2<T>(v.z, f[4], f[5]);
  unpack2<T>(v.w, f[6], f[7]);
}

// Eight elements p[0], p[step], ..., p[7 * step], of which the first `count` exist (others 0).
template <class T>
__device__ __forceinline__ void load8_scalar(const T* p, long long step, long long count, float (&f)[8]) {
#pragma unroll
  for (int e = 0; e < 8; ++e) f[e] = e < count ? to_float(p[e * step]) : 0.0f;
}

// The K range [k_begin, k_end) of this CTA's split; slices are multiples of kGranule.
template <bool kSplitK, int kGranule>
__device__ __forceinline__ void k_slice(long long K, long long& k_begin, long long& k_end) {
  k_begin = 0;
  k_end = K;
  if (kSplitK) {
    const long long granules = (K + kGranule - 1) / kGranule;
    const long long per = (granules + gridDim.y - 1) / gridDim.y;
    k_begin = (long long)blockIdx.y * per * kGranule;
    k_end = k_begin + per * kGranule;
    if (k_end > K) k_end = K;
    if (k_begin > K) k_begin = K;
  }
}

// Final value of output (i, j) of one batch: the epilogue, or the raw sum into the workspace
// (common/split_k.cuh).
template <class Epi, bool kSplitK>
__device__ __forceinline__ void finish(const DgemmParams& p, const EpilogueOp<Epi>& epi, long long batch, long long i,
                                       long long j, float v) {
  if (kSplitK) split_k_row(p, batch, int(gridDim.y), int(blockIdx.y), i)[j] = v;
  else epi.store(i, j, v);
}

// ---- weights stored N x K (each column contiguous in K) ------------------------------------
template <int kRows, int kCols, int kUnroll, bool kAKMajor, class AB, class Epi, bool kVec, bool kSplitK>
__device__ __forceinline__ void gemm_bk(const DgemmParams& p) {
  static_assert(kRows >= 1 && kRows <= 16 && kCols >= 1 && kCols * kRows <= 128, "accumulators fit in registers");
  constexpr int kStep = 256;  // k per warp per chunk: 32 lanes x 8
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long M = p.m, N = p.n, K = p.k;
  const long long a_si = kAKMajor ? p.lda : 1, a_sk = kAKMajor ? 1 : p.lda;
  const long long n0 = (long long)blockIdx.x * (kWarps * kCols) + warp * kCols;
  long long k_begin, k_end;
  k_slice<kSplitK, kStep * kUnroll>(K, k_begin, k_end);

  for (long long batch = blockIdx.z; batch < p.batch_count; batch += gridDim.z) {
    const AB* a = static_cast<const AB*>(p.a) + batch * p.stride_a;
    const AB* b = static_cast<const AB*>(p.b) + batch * p.stride_b;
    float acc[kRows][kCols];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int c = 0; c < kCols; ++c) acc[r][c] = 0.0f;

    for (long long k0 = k_begin; k0 < k_end; k0 += kStep * kUnroll) {
      // Every weight load of the trip first (kUnroll x kCols 16-byte loads in flight), then the math.
      uint4 wv[kUnroll][kCols];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long long k = k0 + u * kStep + lane * 8;
#pragma unroll
        for (int c = 0; c < kCols; ++c) {
          wv[u][c] = make_uint4(0u, 0u, 0u, 0u);
          if (kVec && n0 + c < N && k + 8 <= k_end) wv[u][c] = ld_stream_16(b + (n0 + c) * p.ldb + k);
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long long k = k0 + u * kStep + lane * 8;
        if (k >= k_end) continue;
        const long long count = k_end - k;  // >= 1; a full chunk when >= 8
        float w[kCols][8];
#pragma unroll
        for (int c = 0; c < kCols; ++c) {
          if (kVec && count >= 8) {
            unpack8<AB>(wv[u][c], w[c]);
          } else if (n0 + c < N) {
            load8_scalar(b + (n0 + c) * p.ldb + k, 1, count, w[c]);
          } else {
#pragma unroll
            for (int e = 0; e < 8; ++e) w[c][e] = 0.0f;
          }
        }
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          if (r < M) {
            float x[8];
            const AB* ar = a + r * a_si + k * a_sk;
            if (kVec && kAKMajor && count >= 8) unpack8<AB>(*reinterpret_cast<const uint4*>(ar), x);
            else load8_scalar(ar, a_sk, count, x);
#pragma unroll
            for (int c = 0; c < kCols; ++c)
#pragma unroll
              for (int e = 0; e < 8; ++e) acc[r][c] = fmaf(x[e], w[c][e], acc[r][c]);
          }
        }
      }
    }

    // Sum over the warp's lanes (each holds a share of K); every lane ends with the totals.
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int c = 0; c < kCols; ++c)
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) acc[r][c] += __shfl_xor_sync(0xffffffffu, acc[r][c], off);

    EpilogueOp<Epi> epi;
    epi.init(p, batch);
    // Lane r * kCols + c stores element (r, c): the selection is unrolled so acc stays in registers.
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        const int owner = (r * kCols + c) & 31;
        if (lane == owner && r < M && n0 + c < N) finish<Epi, kSplitK>(p, epi, batch, r, n0 + c, acc[r][c]);
      }
  }
}

// ---- weights stored K x N (each row contiguous in N) ----------------------------------------
template <int kRows, int kUnroll, class AB, class Epi, bool kVec, bool kAKMajor, bool kSplitK>
__device__ __forceinline__ void gemm_bn(const DgemmParams& p) {
  static_assert(kRows >= 1 && kRows <= 16, "accumulators fit in registers");
  constexpr int kLanesN = 8, BLOCK_N = kLanesN * 8;
  constexpr int kRowsPerWarp = 32 / kLanesN, kRowsPerStep = kWarps * kRowsPerWarp;
  __shared__ float partial[kWarps][kRows][BLOCK_N];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long M = p.m, N = p.n, K = p.k;
  const long long a_si = kAKMajor ? p.lda : 1, a_sk = kAKMajor ? 1 : p.lda;
  const int col_in_block = (lane % kLanesN) * 8;
  const long long j0 = (long long)blockIdx.x * BLOCK_N + col_in_block;
  const int krow = warp * kRowsPerWarp + lane / kLanesN;
  const long long ncount = N - j0;  // columns of this thread's 8 that exist (may be <= 0)
  long long k_begin, k_end;
  k_slice<kSplitK, kRowsPerStep * kUnroll>(K, k_begin, k_end);

  for (long long batch = blockIdx.z; batch < p.batch_count; batch += gridDim.z) {
    const AB* a = static_cast<const AB*>(p.a) + batch * p.stride_a;
    const AB* b = static_cast<const AB*>(p.b) + batch * p.stride_b;
    float acc[kRows][8];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[r][e] = 0.0f;

    for (long long k0 = k_begin + krow; k0 < k_end; k0 += kRowsPerStep * kUnroll) {
      uint4 wv[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long long k = k0 + u * kRowsPerStep;
        wv[u] = make_uint4(0u, 0u, 0u, 0u);
        if (kVec && ncount >= 8 && k < k_end) wv[u] = ld_stream_16(b + k * p.ldb + j0);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long long k = k0 + u * kRowsPerStep;
        if (k >= k_end) continue;
        float w[8];
        if (kVec && ncount >= 8) unpack8<AB>(wv[u], w);
        else load8_scalar(b + k * p.ldb + j0, 1, ncount, w);
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          if (r < M) {
            const float x = to_float(a[r * a_si + k * a_sk]);
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[r][e] = fmaf(x, w[e], acc[r][e]);
          }
        }
      }
    }

    // Lanes l, l + 8, l + 16, l + 24 share columns: shuffle-sum them, then across warps in smem.
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int e = 0; e < 8; ++e)
#pragma unroll
        for (int off = kLanesN; off < 32; off <<= 1) acc[r][e] += __shfl_xor_sync(0xffffffffu, acc[r][e], off);
    if (lane < kLanesN) {
#pragma unroll
      for (int r = 0; r < kRows; ++r)
#pragma unroll
        for (int e = 0; e < 8; ++e) partial[warp][r][col_in_block + e] = acc[r][e];
    }
    __syncthreads();
    EpilogueOp<Epi> epi;
    epi.init(p, batch);
    for (int idx = threadIdx.x; idx < kRows * BLOCK_N; idx += kThreads) {
      const int r = idx / BLOCK_N, c = idx % BLOCK_N;
      const long long j = (long long)blockIdx.x * BLOCK_N + c;
      if (r < M && j < N) {
        float v = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) v += partial[w][r][c];
        finish<Epi, kSplitK>(p, epi, batch, r, j, v);
      }
    }
    __syncthreads();  // `partial` is reused by the next batch
  }
}

}  // namespace small_m
}  // namespace dg

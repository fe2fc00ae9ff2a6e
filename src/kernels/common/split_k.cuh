// Split-K through the workspace, shared by the families that split K across CTAs of a grid (sm80,
// small_m; sm90 reduces inside a cluster instead). CTAs that share an output tile's K write raw f32
// partial sums of X (the kernel's output, core/kernel_view.hpp) to the workspace (s32 for i8
// operands, so that an i32 D stays exact: same size, same layout), laid out
//     [batch][split][rows][split_k_ld(cols)]
// (rows padded to 4 floats so that every run of 4 columns is one aligned 16-byte access; the
// launcher hands the kernels a 16-byte-aligned workspace), and split_k_reduce() sums the splits
// and applies the epilogue once per element. The host side sizes it with the same formula
// (backend/cuda/kernel_args.hpp, split_k_workspace_bytes).
#pragma once

#include "common/gemm_params.cuh"
#include "epilogue/epilogue.cuh"

namespace dg {

__device__ __forceinline__ long long split_k_ld(long long cols) { return (cols + 3) / 4 * 4; }

// Row `row` of split `split`'s partial tile for batch `batch`, of Acc (float, or int for i8).
template <class Acc = float>
__device__ __forceinline__ Acc* split_k_row(const DgemmParams& p, long long batch, int splits, int split,
                                            long long row) {
  return static_cast<Acc*>(p.workspace) + ((batch * splits + split) * p.m + row) * split_k_ld(p.n);
}

// The second pass: sums the `splits` partials of every element and applies the epilogue, in runs
// of 4 columns. Grid: x over runs, y over batches. Acc int: s32 partials, summed exactly
// (EpilogueOp::store4_int).
template <class Epi, class Acc = float>
__device__ __forceinline__ void split_k_reduce(const DgemmParams& p, int splits) {
  const long long M = p.m, N = p.n, ldw = split_k_ld(N);
  const long long runs_per_row = ldw / 4, runs = M * runs_per_row;
  for (long long batch = blockIdx.y; batch < p.batch_count; batch += gridDim.y) {
    EpilogueOp<Epi> epi;
    epi.init(p, batch);
    for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < runs;
         g += (long long)gridDim.x * blockDim.x) {
      const long long row = g / runs_per_row, col = (g % runs_per_row) * 4;
      if (col >= N) continue;
      if constexpr (IsSame<Acc, int>::value) {
        int4 acc = make_int4(0, 0, 0, 0);
        // Rolled: unrolled, ptxas (13.0) spilled 4-8 bytes here (an f16 D at sm_90a, an i8 D with
        // GELU at sm_80); one thread's loads need not overlap, the grid's warps keep memory busy.
#pragma unroll 1
        for (int s = 0; s < splits; ++s) {
          const int4 v = *reinterpret_cast<const int4*>(split_k_row<int>(p, batch, splits, s, row) + col);
          acc.x += v.x;
          acc.y += v.y;
          acc.z += v.z;
          acc.w += v.w;
        }
        epi.store4_int(row, col, acc.x, acc.y, acc.z, acc.w, N - col);
      } else {
        float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int s = 0; s < splits; ++s) {
          const float4 v = *reinterpret_cast<const float4*>(split_k_row(p, batch, splits, s, row) + col);
          acc.x += v.x;
          acc.y += v.y;
          acc.z += v.z;
          acc.w += v.w;
        }
        epi.store4(row, col, acc.x, acc.y, acc.z, acc.w, N - col);
      }
    }
  }
}

}  // namespace dg

// The reduce kernel's entry point, named NAME, for the epilogue configuration EPI (f32 partials;
// _ACC: partials of type ACC). The _ACC form asks for 4 blocks per SM, i.e. up to 64 registers:
// with the bare bound ptxas (13.0) aimed at 32 and spilled 4-8 bytes in some s32 epilogues (an
// input-scaled bf16 D at sm_80, an f16 D at sm_90a); with it, 32-40 and none.
#define DGEMM_DEFINE_SPLIT_K_REDUCE(NAME, EPI)                                                   \
  extern "C" __global__ void __launch_bounds__(256) NAME(const DgemmParams p, int splits) {     \
    dg::split_k_reduce<EPI>(p, splits);                                                        \
  }
#define DGEMM_DEFINE_SPLIT_K_REDUCE_ACC(NAME, EPI, ACC)                                          \
  extern "C" __global__ void __launch_bounds__(256, 4) NAME(const DgemmParams p, int splits) {  \
    dg::split_k_reduce<EPI, ACC>(p, splits);                                                   \
  }

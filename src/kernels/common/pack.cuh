// Operand packing: copies a 16-bit operand whose rows (leading dimension or batch stride) break
// TMA's 16-byte rule into an aligned workspace, rows padded to a multiple of 8 elements (16 bytes)
// with the pad zero-filled, so that a TMA kernel can read the copy. One launch packs up to two
// operands (blockIdx.y picks the job): a GEMM that needs both A and B packed pays one launch.
// Memory-bound: each thread writes one 16-byte chunk of a padded row per step (grid-stride); the
// source is read element by element (it may be 2-byte aligned only), coalesced across the warp.
#pragma once

#include "common/types.cuh"

namespace dg {

struct PackJob {
  const unsigned short* src;  // the operand as the caller stores it (16-bit elements)
  unsigned short* dst;        // workspace: batch x outer rows of dst_ld elements
  long long inner, outer;     // contiguous elements per row, rows per batch entry
  long long src_ld, src_stride;
  long long dst_ld, dst_stride;  // dst_ld = inner rounded up to 8; dst_stride = outer * dst_ld
  long long chunks;              // batch * outer * dst_ld / 8
};

struct PackArgs {
  PackJob job[2];
};

struct alignas(16) PackChunk { unsigned x, y, z, w; };  // no toolkit header: NVRTC needs none

__device__ __forceinline__ void pack_rows(const PackJob& j) {
  const long long per_row = j.dst_ld / 8;
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < j.chunks; c += step) {
    const long long row_all = c / per_row;  // batch * outer + row
    const long long col = (c - row_all * per_row) * 8;
    const long long b = row_all / j.outer;
    const long long row = row_all - b * j.outer;
    const unsigned short* s = j.src + b * j.src_stride + row * j.src_ld + col;
    unsigned short v[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) v[e] = col + e < j.inner ? s[e] : (unsigned short)0;
    PackChunk out;
    out.x = unsigned(v[0]) | (unsigned(v[1]) << 16);
    out.y = unsigned(v[2]) | (unsigned(v[3]) << 16);
    out.z = unsigned(v[4]) | (unsigned(v[5]) << 16);
    out.w = unsigned(v[6]) | (unsigned(v[7]) << 16);
    *reinterpret_cast<PackChunk*>(j.dst + b * j.dst_stride + row * j.dst_ld + col) = out;
  }
}

}  // namespace dg

// Defines the extern "C" pack kernel NAME (launched with gridDim.y = number of jobs).
#define DGEMM_DEFINE_PACK_KERNEL(NAME)                                                    \
  extern "C" __global__ void __launch_bounds__(256) NAME(const __grid_constant__ dg::PackArgs args) { \
    dg::pack_rows(args.job[blockIdx.y]);                                                  \
  }

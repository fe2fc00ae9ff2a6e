// Operand packing: copies a 16-bit operand whose rows (leading dimension or batch stride) break
// TMA's 16-byte rule into an aligned workspace, rows padded to a multiple of 8 elements (16 bytes)
// with the pad zero-filled, so that a TMA kernel can read the copy. One launch packs up to two
// operands (blockIdx.y picks the job): a GEMM that needs both A and B packed pays one launch.
// Memory-bound. Each warp copies a 1024-element segment of one row at a time: 32 independent
// 2-byte loads per lane at consecutive addresses across the warp (coalesced: the source may be
// 2-byte aligned only), regrouped through 2 KB of shared memory so that each lane then writes four
// 16-byte chunks. (Each lane loading its own 8 consecutive elements made every load instruction
// touch 4x the cache lines it needed: the copy was L1-bound at ~70% of HBM bandwidth; 256-element
// segments kept only 512 bytes in flight per warp, RESULTS.md 2026-12-02 run X.)
// A transposed job (an MN-major operand copied K-major, core/tma_rules.hpp) moves 64 x 64 tiles
// through shared memory: coalesced 2-byte loads along the source's rows, 16-byte stores along the
// copy's, its rows (the source's columns) padded to a multiple of 8 elements with zeros.
#pragma once

#include "common/types.cuh"

namespace dg {

struct PackJob {
  const unsigned short* src;  // the operand as the caller stores it (16-bit elements)
  unsigned short* dst;        // workspace: rows of dst_ld elements
  long long inner, outer;     // contiguous elements per row, rows per batch entry
  long long src_ld, src_stride;
  long long dst_ld, dst_stride;  // dst_ld = inner rounded up to 8; dst_stride = outer * dst_ld
  long long rows;                // rows over all packed batch entries (batch * outer)
  long long transposed;          // 1: the copy is the transpose (inner rows of dst_ld >= outer elements)
};

struct PackArgs {
  PackJob job[2];
};

struct alignas(16) PackChunk { unsigned x, y, z, w; };  // no toolkit header: NVRTC needs none

constexpr int kPackWarps = 8;       // warps per block (256 threads)
constexpr int kPackPerLane = 32;    // elements each lane loads per step (independent loads in flight)
constexpr int kPackSegment = 32 * kPackPerLane;  // elements a warp copies per step (1024)

__device__ __forceinline__ void pack_rows(const PackJob& j) {
  __shared__ alignas(16) unsigned short stage[kPackWarps][kPackSegment];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long segs = (j.dst_ld + kPackSegment - 1) / kPackSegment;
  const long long items = j.rows * segs;
  for (long long item = (long long)blockIdx.x * kPackWarps + warp; item < items;
       item += (long long)gridDim.x * kPackWarps) {
    const long long row_all = item / segs;
    const long long col0 = (item - row_all * segs) * kPackSegment;
    const long long b = row_all / j.outer;
    const long long row = row_all - b * j.outer;
    const unsigned short* s = j.src + b * j.src_stride + row * j.src_ld;
    unsigned short v[kPackPerLane];
#pragma unroll
    for (int e = 0; e < kPackPerLane; ++e) {
      const long long col = col0 + e * 32 + lane;
      v[e] = col < j.inner ? s[col] : (unsigned short)0;
    }
#pragma unroll
    for (int e = 0; e < kPackPerLane; ++e) stage[warp][e * 32 + lane] = v[e];
    __syncwarp();
    unsigned short* d = j.dst + b * j.dst_stride + row * j.dst_ld;
#pragma unroll
    for (int c = 0; c < kPackPerLane / 8; ++c) {
      const int chunk = c * 32 + lane;  // 16-byte chunk of the segment
      const long long col = col0 + chunk * 8;
      if (col < j.dst_ld)
        *reinterpret_cast<PackChunk*>(d + col) = *reinterpret_cast<const PackChunk*>(&stage[warp][chunk * 8]);
    }
    __syncwarp();  // the segment's chunks are read before the next step overwrites them
  }
}

constexpr int kPackTile = 64;  // a transposed job's tile: 64 source rows x 64 source columns
// Source rows of a tile in shared memory padded by 2 elements: the 8 rows a lane gathers for one
// 16-byte store then fall in different banks more often than with 64.
constexpr int kPackTileLd = kPackTile + 2;

__device__ __forceinline__ void pack_transposed(const PackJob& j) {
  __shared__ unsigned short tile[kPackTile][kPackTileLd];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long batch = j.rows / j.outer;
  const long long tiles_r = (j.dst_ld + kPackTile - 1) / kPackTile;  // along the source's rows (the copy's K)
  const long long tiles_c = (j.inner + kPackTile - 1) / kPackTile;   // along the source's columns
  const long long items = batch * tiles_r * tiles_c;
  for (long long item = blockIdx.x; item < items; item += gridDim.x) {
    const long long b = item / (tiles_r * tiles_c);
    const long long rest = item - b * tiles_r * tiles_c;
    const long long r0 = (rest / tiles_c) * kPackTile, c0 = (rest % tiles_c) * kPackTile;
    const unsigned short* s = j.src + b * j.src_stride;
    // Load: warp w holds source rows r0 + 8w .. + 7, each lane two columns of each (16 loads in
    // flight); rows past `outer` are the copy's zero pad, columns past `inner` are never stored.
    unsigned short v[16];
#pragma unroll
    for (int e = 0; e < 8; ++e)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const long long r = r0 + warp * 8 + e, c = c0 + h * 32 + lane;
        v[e * 2 + h] = r < j.outer && c < j.inner ? s[r * j.src_ld + c] : (unsigned short)0;
      }
    __syncthreads();  // the previous tile's stores have read it
#pragma unroll
    for (int e = 0; e < 8; ++e)
#pragma unroll
      for (int h = 0; h < 2; ++h) tile[warp * 8 + e][h * 32 + lane] = v[e * 2 + h];
    __syncthreads();
    // Store: 64 copy rows (source columns) x 8 chunks of 8 elements, two per thread; 8 lanes cover
    // one copy row's 128 bytes.
    unsigned short* d = j.dst + b * j.dst_stride;
#pragma unroll
    for (int t = 0; t < 2; ++t) {
      const int item_in = t * 256 + threadIdx.x;
      const int row = item_in / 8, chunk = item_in % 8;
      const long long c = c0 + row, r = r0 + chunk * 8;
      if (c < j.inner && r < j.dst_ld) {
        unsigned w[4];
#pragma unroll
        for (int e = 0; e < 4; ++e)
          w[e] = unsigned(tile[chunk * 8 + 2 * e][row]) | (unsigned(tile[chunk * 8 + 2 * e + 1][row]) << 16);
        PackChunk out;
        out.x = w[0];
        out.y = w[1];
        out.z = w[2];
        out.w = w[3];
        *reinterpret_cast<PackChunk*>(d + c * j.dst_ld + r) = out;
      }
    }
  }
}

}  // namespace dg
// Defines the extern "C" pack kernel NAME (launched with gridDim.y = number of jobs).
#define DGEMM_DEFINE_PACK_KERNEL(NAME)                                                    \
  extern "C" __global__ void __launch_bounds__(256) NAME(const __grid_constant__ dg::PackArgs args) { \
    const dg::PackJob& j = args.job[blockIdx.y];                                          \
    if (j.transposed)                                                                     \
      dg::pack_transposed(j);                                                             \
    else                                                                                  \
      dg::pack_rows(j);                                                                   \
  }

// The Ampere-class GEMM (runs on every sm_80+ GPU; on Hopper it is the fallback where TMA's
// alignment rules do not hold). One CTA computes a BLOCK_M x BLOCK_N tile of a ROW-MAJOR problem
//     D[M x N] = epilogue( op(A)[M x K] * op(B)[K x N] )
// (the host launcher maps column-major problems onto this one by swapping A and B).
//   - operands: A stored K-contiguous (kAKMajor, A[m*lda + k]) or M-contiguous (A[k*lda + m]);
//               B stored K-contiguous (kBKMajor, B[n*ldb + k]) or N-contiguous (B[k*ldb + n]);
//   - global -> shared: cp.async 16-byte copies with zero fill for tails (kVec), or plain
//     element loads when pointers / leading dimensions are not 16-byte multiples (!kVec);
//   - kNumStages-deep ring of shared-memory stages (cp.async groups, one barrier per K tile);
//   - shared memory rows XOR-swizzled in 16-byte chunks so that ldmatrix reads and the copies'
//     writes of 8 rows hit 8 different bank groups (no conflicts);
//   - ldmatrix (.trans for MN-contiguous operands) -> mma.sync m16n8k16, f32 accumulators;
//   - the shared epilogue (epilogue/epilogue.cuh) applied straight from the accumulators.
// M, N, K, leading dimensions and batch strides are run-time values: a new M never recompiles.
#pragma once

#include "common/gemm_params.cuh"
#include "common/ptx.cuh"
#include "common/types.cuh"
#include "epilogue/epilogue.cuh"

namespace dg {
namespace sm80 {

// A ROWS x COLS tile of 16-bit elements, COLS contiguous, stored as 16-byte chunks whose index
// within a row is XOR-swizzled with the row so that 8 consecutive rows at one logical chunk land
// in 8 distinct 16-byte bank groups of a 128-byte bank row.
template <int ROWS, int COLS>
struct SmemTile {
  static constexpr int kChunks = COLS / 8;
  static constexpr int kRowBytes = COLS * 2;
  static constexpr int kBytes = ROWS * kRowBytes;
  static_assert(kChunks == 2 || kChunks == 4 || kChunks % 8 == 0, "tile width must be 16, 32 or a multiple of 64");

  __device__ __forceinline__ static int swizzle(int row, int chunk) {
    if (kChunks >= 8) return chunk ^ (row & 7);        // 128+ byte rows: one row per bank row
    if (kChunks == 4) return chunk ^ ((row >> 1) & 3);  // 64-byte rows: two rows per bank row
    return chunk ^ ((row >> 2) & 1);                    // 32-byte rows: four rows per bank row
  }
  __device__ __forceinline__ static unsigned offset(int row, int chunk) {
    return unsigned(row * kRowBytes + swizzle(row, chunk) * 16);
  }
};

// Copies the tile at (row0, col0) of a row-major global matrix (leading dimension ld, bounds
// rows x cols) into a swizzled shared tile; elements outside the bounds become zero.
template <class Tile, int kThreads, bool kVec, class T>
__device__ __forceinline__ void load_tile(unsigned smem, const T* g, long long ld, long long row0, long long col0,
                                          long long rows, long long cols, int tid) {
  constexpr int kTotal = Tile::kChunks * (Tile::kBytes / Tile::kRowBytes);
  static_assert(kTotal % kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int i = 0; i < kTotal / kThreads; ++i) {
    const int id = tid + i * kThreads;
    const int r = id / Tile::kChunks, c = id % Tile::kChunks;
    const long long gr = row0 + r, gc = col0 + c * 8;
    const unsigned dst = smem + Tile::offset(r, c);
    if (kVec) {
      long long left = cols - gc;
      int valid = gr < rows ? (left >= 8 ? 8 : left > 0 ? int(left) : 0) : 0;
      const T* src = valid > 0 ? g + gr * ld + gc : g;
      ptx::cp_async_16(dst, src, valid * 2);
    } else {
      unsigned short v[8];
      const bool row_ok = gr < rows;
      const T* src = g + (row_ok ? gr * ld : 0);
#pragma unroll
      for (int e = 0; e < 8; ++e) v[e] = (row_ok && gc + e < cols) ? src[gc + e].bits : (unsigned short)0;
      ptx::st_shared_128(dst, v[0] | (unsigned(v[1]) << 16), v[2] | (unsigned(v[3]) << 16),
                         v[4] | (unsigned(v[5]) << 16), v[6] | (unsigned(v[7]) << 16));
    }
  }
}

template <int BLOCK_M, int BLOCK_N, int BLOCK_K, int kNumStages>
struct SmemLayout {
  static constexpr int kABytes = BLOCK_M * BLOCK_K * 2;
  static constexpr int kBBytes = BLOCK_N * BLOCK_K * 2;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kBytes = kNumStages * kStageBytes;
};

template <int BLOCK_M, int BLOCK_N, int BLOCK_K, int kWarpsM, int kWarpsN, int kNumStages, bool kAKMajor,
          bool kBKMajor, class AB, class Epi, bool kVec>
__device__ __forceinline__ void gemm(const DgemmParams& p) {
  constexpr int kThreads = kWarpsM * kWarpsN * 32;
  constexpr int WARP_M = BLOCK_M / kWarpsM, WARP_N = BLOCK_N / kWarpsN;
  constexpr int kFragsM = WARP_M / 16, kFragsN = WARP_N / 8;
  static_assert(kNumStages >= 2, "the pipeline needs at least two stages");
  static_assert(BLOCK_K % 16 == 0, "BLOCK_K is a multiple of the mma's K (16)");
  static_assert(WARP_M % 16 == 0 && WARP_N % 16 == 0, "warp tiles are multiples of 16");
  constexpr bool kBf16 = IsBf16<AB>::value;

  // Shared tiles: K-major operands are [rows][BLOCK_K], MN-major ones [BLOCK_K][rows].
  using TileA = SmemTile<kAKMajor ? BLOCK_M : BLOCK_K, kAKMajor ? BLOCK_K : BLOCK_M>;
  using TileB = SmemTile<kBKMajor ? BLOCK_N : BLOCK_K, kBKMajor ? BLOCK_K : BLOCK_N>;
  using Layout = SmemLayout<BLOCK_M, BLOCK_N, BLOCK_K, kNumStages>;
  extern __shared__ __align__(128) unsigned char dg_smem[];
  const unsigned smem = ptx::smem_addr(dg_smem);

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
  const long long M = p.m, N = p.n, K = p.k;

  // Tile order: groups of 8 M-tiles sweep N together, so the B tiles they share stay in L2.
  const long long tiles_m = (M + BLOCK_M - 1) / BLOCK_M, tiles_n = (N + BLOCK_N - 1) / BLOCK_N;
  const long long tile = blockIdx.x;
  constexpr long long kGroup = 8;
  const long long group = tile / (kGroup * tiles_n);
  const long long first_m = group * kGroup;
  const long long group_rows = tiles_m - first_m < kGroup ? tiles_m - first_m : kGroup;
  const long long in_group = tile % (kGroup * tiles_n);
  const long long m0 = (first_m + in_group % group_rows) * BLOCK_M;
  const long long n0 = (in_group / group_rows) * BLOCK_N;
  const int k_tiles = int((K + BLOCK_K - 1) / BLOCK_K);

  for (long long batch = blockIdx.z; batch < p.batch_count; batch += gridDim.z) {
    const AB* a = static_cast<const AB*>(p.a) + batch * p.stride_a;
    const AB* b = static_cast<const AB*>(p.b) + batch * p.stride_b;

    auto load_stage = [&](int stage, int k_tile) {
      const unsigned sa = smem + stage * Layout::kStageBytes;
      const unsigned sb = sa + Layout::kABytes;
      const long long k0 = (long long)k_tile * BLOCK_K;
      if (kAKMajor) load_tile<TileA, kThreads, kVec>(sa, a, p.lda, m0, k0, M, K, tid);
      else          load_tile<TileA, kThreads, kVec>(sa, a, p.lda, k0, m0, K, M, tid);
      if (kBKMajor) load_tile<TileB, kThreads, kVec>(sb, b, p.ldb, n0, k0, N, K, tid);
      else          load_tile<TileB, kThreads, kVec>(sb, b, p.ldb, k0, n0, K, N, tid);
    };

    float acc[kFragsM][kFragsN][4];
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
      for (int j = 0; j < kFragsN; ++j)
#pragma unroll
        for (int v = 0; v < 4; ++v) acc[i][j][v] = 0.0f;

    // Prologue: the first kNumStages - 1 tiles in flight. Every step commits a group (possibly
    // empty) so that "wait until kNumStages - 2 groups are pending" always means "tile kt landed".
#pragma unroll
    for (int s = 0; s < kNumStages - 1; ++s) {
      if (s < k_tiles) load_stage(s, s);
      ptx::cp_async_commit();
    }

    for (int kt = 0; kt < k_tiles; ++kt) {
      ptx::cp_async_wait<kNumStages - 2>();
      // Tile kt is visible to all, and every warp has finished tile kt - 1, whose stage the
      // prefetch below overwrites.
      __syncthreads();
      {
        const int next = kt + kNumStages - 1;
        if (next < k_tiles) load_stage(next % kNumStages, next);
        ptx::cp_async_commit();
      }
      const unsigned sa = smem + (kt % kNumStages) * Layout::kStageBytes;
      const unsigned sb = sa + Layout::kABytes;
#pragma unroll
      for (int kk = 0; kk < BLOCK_K / 16; ++kk) {
        unsigned fa[kFragsM][4];
        unsigned fb[kFragsN][2];
        const int q = lane >> 3;
#pragma unroll
        for (int i = 0; i < kFragsM; ++i) {
          const int m = warp_m * WARP_M + i * 16;
          if (kAKMajor) {
            const int row = m + (lane & 15), chunk = kk * 2 + (lane >> 4);
            ptx::ldmatrix_x4(fa[i], sa + TileA::offset(row, chunk));
          } else {
            const int row = kk * 16 + (q >> 1) * 8 + (lane & 7), chunk = (m >> 3) + (q & 1);
            ptx::ldmatrix_x4_trans(fa[i], sa + TileA::offset(row, chunk));
          }
        }
#pragma unroll
        for (int j = 0; j < kFragsN; j += 2) {
          const int n = warp_n * WARP_N + j * 8;
          unsigned r[4];
          if (kBKMajor) {
            const int row = n + (q >> 1) * 8 + (lane & 7), chunk = kk * 2 + (q & 1);
            ptx::ldmatrix_x4(r, sb + TileB::offset(row, chunk));
          } else {
            const int row = kk * 16 + (q & 1) * 8 + (lane & 7), chunk = (n >> 3) + (q >> 1);
            ptx::ldmatrix_x4_trans(r, sb + TileB::offset(row, chunk));
          }
          fb[j][0] = r[0];
          fb[j][1] = r[1];
          fb[j + 1][0] = r[2];
          fb[j + 1][1] = r[3];
        }
#pragma unroll
        for (int i = 0; i < kFragsM; ++i)
#pragma unroll
          for (int j = 0; j < kFragsN; ++j) ptx::mma_16816<kBf16>(acc[i][j], fa[i], fb[j]);
      }
    }
    // Drain (only empty groups can remain) and make the ring reusable by the next batch.
    ptx::cp_async_wait<0>();
    __syncthreads();

    EpilogueOp<Epi> epi;
    epi.init(p, batch);
#pragma unroll
    for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
      for (int j = 0; j < kFragsN; ++j) {
        const long long row = m0 + warp_m * WARP_M + i * 16 + (lane >> 2);
        const long long col = n0 + warp_n * WARP_N + j * 8 + (lane & 3) * 2;
        if (col < N) {
          if (row < M) epi.store_pair(row, col, acc[i][j][0], acc[i][j][1], col + 1 < N);
          if (row + 8 < M) epi.store_pair(row + 8, col, acc[i][j][2], acc[i][j][3], col + 1 < N);
        }
      }
    }
  }
}

}  // namespace sm80
}  // namespace dg

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
//   - i8 operands (AB = signed char, both K-contiguous): the same bytes in shared memory and in
//     the fragments (a 16-byte chunk holds 16 K elements instead of 8, a k-slice is 32 of them),
//     mma.sync m16n8k32 s8, s32 accumulators;
//   - the shared epilogue (epilogue/epilogue.cuh) applied from an f32 (i8: s32) staging tile in
//     shared memory, in coalesced runs of 4 columns; an i8 product stored as an i32 D with nothing
//     applied is stored as the exact sums.
// M, N, K, leading dimensions and batch strides are run-time values: a new M never recompiles.
// Tiles are walked in the shared scheduler's order (common/scheduler.cuh; kRasterGroup M blocks per
// group, 0 = row order). Optional split-K (kSplitK): partial tiles in the workspace
// (common/split_k.cuh), summed by its reduce kernel.
#pragma once

#include "common/gemm_params.cuh"
#include "common/pipeline.cuh"
#include "common/ptx.cuh"
#include "common/scheduler.cuh"
#include "common/split_k.cuh"
#include "common/types.cuh"
#include "epilogue/epilogue.cuh"

namespace dg {
namespace sm80 {

// A ROWS x COLS tile of 16-bit elements, COLS contiguous, stored as 16-byte chunks whose index
// within a row is XOR-swizzled with the row so that 8 consecutive rows at one logical chunk land
// in 8 distinct 16-byte bank groups of a 128-byte bank row. (A K-major i8 operand's BLOCK_K
// columns are BLOCK_K / 2 such columns: only bytes matter here.)
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

// Streams one operand, K tile after K tile, from a row-major global matrix (leading dimension
// ld, bounds rows x cols) into swizzled shared tiles; elements outside the bounds become zero.
// Each thread owns the same chunks of every tile, kRowStep tile rows apart (a multiple of 8, so
// they share one swizzle), and keeps only a pointer and two remaining-extent counters per tile:
// address arithmetic stays out of the main loop's register budget.
// How kThreads threads share a tile's 16-byte chunks (both loaders below): each copies
// kPerThread chunks, kRowStep tile rows apart.
template <class Tile, int kThreads>
struct ChunkShare {
  static constexpr int kRows = Tile::kBytes / Tile::kRowBytes;
  static constexpr int kPerThread = kRows * Tile::kChunks / kThreads;
  static constexpr int kRowStep = kThreads / Tile::kChunks;
  static_assert(kThreads % Tile::kChunks == 0 && kRows % kRowStep == 0, "every thread copies whole chunks");
  static_assert(kRowStep % 8 == 0 || kPerThread == 1, "a thread's chunks share one swizzle phase");
};

// Elements of T in one 16-byte chunk: 8 (f16, bf16) or 16 (i8).
template <class T>
constexpr int kChunkElems = 16 / int(sizeof(T));

// One 16-byte chunk of i8 elements read element by element (any alignment): the first `valid`
// (may be <= 0) from src, zeros after them, stored to shared memory as cp.async would.
__device__ __forceinline__ void store_chunk_elements(unsigned dst, const signed char* src, long long valid) {
  unsigned w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
  for (int e = 0; e < 16; ++e)
    if (e < valid) w[e / 4] |= unsigned((unsigned char)src[e]) << (8 * (e % 4));
  ptx::st_shared_128(dst, w[0], w[1], w[2], w[3]);
}

template <class Tile, int kThreads, bool kVec, bool kKMajor, int BLOCK_K, class T>
struct OperandLoader : ChunkShare<Tile, kThreads> {
  using ChunkShare<Tile, kThreads>::kRows;
  using ChunkShare<Tile, kThreads>::kPerThread;
  using ChunkShare<Tile, kThreads>::kRowStep;

  const T* ptr;           // this thread's first chunk in the current K tile
  long long row_stride;   // kRowStep rows of the global matrix, in elements
  long long step;         // elements from one K tile to the next
  long long rows_left;    // global rows from the first chunk's row to the bound
  long long cols_left;    // global columns from the first chunk's column to the bound
  unsigned smem_offset;   // the first chunk's offset inside a tile

  // row0/col0: the tile's global origin at K tile 0 (K-major: (m0, 0); MN-major: (0, m0)).
  __device__ __forceinline__ void init(const T* g, long long ld, long long row0, long long col0, long long rows,
                                       long long cols, int tid) {
    constexpr int kChunk = kChunkElems<T>;
    const int r = tid / Tile::kChunks, c = tid % Tile::kChunks;
    ptr = g + (row0 + r) * ld + col0 + c * kChunk;
    row_stride = kRowStep * ld;
    step = kKMajor ? BLOCK_K : BLOCK_K * ld;
    rows_left = rows - (row0 + r);
    cols_left = cols - (col0 + c * kChunk);
    smem_offset = Tile::offset(r, c);
  }

  __device__ __forceinline__ void load(unsigned smem_tile) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const T* src = ptr + i * row_stride;
      const bool row_ok = rows_left > (long long)i * kRowStep;
      const unsigned dst = smem_tile + smem_offset + unsigned(i * kRowStep * Tile::kRowBytes);
      constexpr int kChunk = kChunkElems<T>;
      if (kVec) {
        const int valid = row_ok ? (cols_left >= kChunk ? kChunk : cols_left > 0 ? int(cols_left) : 0) : 0;
        ptx::cp_async_16(dst, valid > 0 ? static_cast<const void*>(src) : static_cast<const void*>(ptr),
                         valid * int(sizeof(T)));
      } else if constexpr (sizeof(T) == 1) {
        store_chunk_elements(dst, src, row_ok ? cols_left : 0);
      } else {
        unsigned short v[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) v[e] = (row_ok && cols_left > e) ? src[e].bits : (unsigned short)0;
        ptx::st_shared_128(dst, v[0] | (unsigned(v[1]) << 16), v[2] | (unsigned(v[3]) << 16),
                           v[4] | (unsigned(v[5]) << 16), v[6] | (unsigned(v[7]) << 16));
      }
    }
  }

  __device__ __forceinline__ void advance() {
    ptr += step;
    if (kKMajor) cols_left -= BLOCK_K;
    else rows_left -= BLOCK_K;
  }
};

// OperandLoader with fewer live registers, for the pipelined main loop (whose double-buffered
// fragments leave ~60 registers for everything else at 128x256): the bound that does not move
// along K is folded at init into a per-chunk valid-row mask (K-major) or a valid-element count
// (MN-major), the K step is derived from the row stride, and the shared offset is recomputed
// from the thread index at each tile (a few integer ops next to the copies).
template <class Tile, int kThreads, bool kVec, bool kKMajor, int BLOCK_K, class T>
struct LeanOperandLoader : ChunkShare<Tile, kThreads> {
  using ChunkShare<Tile, kThreads>::kRows;
  using ChunkShare<Tile, kThreads>::kPerThread;
  using ChunkShare<Tile, kThreads>::kRowStep;
  static_assert(kPerThread <= 32, "the valid-row mask has 32 bits");
  static_assert(kKMajor || BLOCK_K % kRowStep == 0, "MN-major K step is a whole number of row steps");

  const T* ptr;           // this thread's first chunk in the current K tile
  long long row_stride;   // kRowStep rows of the global matrix, in elements
  long long k_left;       // K-major: columns from the first chunk to K; MN-major: rows to K
  unsigned fixed;         // K-major: bit i = chunk i's row in bounds; MN-major: valid elements (0..8)

  __device__ __forceinline__ void init(const T* g, long long ld, long long row0, long long col0, long long rows,
                                       long long cols, int tid) {
    constexpr int kChunk = kChunkElems<T>;
    const int r = tid / Tile::kChunks, c = tid % Tile::kChunks;
    ptr = g + (row0 + r) * ld + col0 + c * kChunk;
    row_stride = kRowStep * ld;
    if (kKMajor) {
      k_left = cols - (col0 + c * kChunk);
      const long long rows_left = rows - (row0 + r);
      fixed = 0;
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) fixed |= rows_left > (long long)i * kRowStep ? 1u << i : 0u;
    } else {
      k_left = rows - (row0 + r);
      const long long cols_left = cols - (col0 + c * kChunk);
      fixed = cols_left >= kChunk ? unsigned(kChunk) : cols_left > 0 ? unsigned(cols_left) : 0u;
    }
  }

  __device__ __forceinline__ void load(unsigned smem_tile) const {
    const int tid = threadIdx.x;
    const unsigned smem_offset = Tile::offset(tid / Tile::kChunks, tid % Tile::kChunks);
    if (kVec) {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        const T* src = ptr + i * row_stride;
        const unsigned dst = smem_tile + smem_offset + unsigned(i * kRowStep * Tile::kRowBytes);
        const int valid = chunk_valid(i);
        ptx::cp_async_16(dst, valid > 0 ? static_cast<const void*>(src) : static_cast<const void*>(ptr),
                         valid * int(sizeof(T)));
      }
    } else if constexpr (sizeof(T) == 1) {
#pragma unroll 1
      for (int i = 0; i < kPerThread; ++i)
        store_chunk_elements(smem_tile + smem_offset + unsigned(i * kRowStep * Tile::kRowBytes), ptr + i * row_stride,
                             chunk_valid(i));
    } else {
      // Element loads (unaligned operands): a rolled loop, so that the loads of all chunks are
      // not in flight at once (the unrolled form spills next to the pipelined loop's fragments).
#pragma unroll 1
      for (int i = 0; i < kPerThread; ++i) {
        const T* src = ptr + i * row_stride;
        const unsigned dst = smem_tile + smem_offset + unsigned(i * kRowStep * Tile::kRowBytes);
        const int valid = chunk_valid(i);
        unsigned short v[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) v[e] = e < valid ? src[e].bits : (unsigned short)0;
        ptx::st_shared_128(dst, v[0] | (unsigned(v[1]) << 16), v[2] | (unsigned(v[3]) << 16),
                           v[4] | (unsigned(v[5]) << 16), v[6] | (unsigned(v[7]) << 16));
      }
    }
  }

  // Elements of chunk i inside the bounds (0..kChunkElems).
  __device__ __forceinline__ int chunk_valid(int i) const {
    constexpr int kChunk = kChunkElems<T>;
    if (kKMajor) return (fixed >> i) & 1u ? (k_left >= kChunk ? kChunk : k_left > 0 ? int(k_left) : 0) : 0;
    return k_left > (long long)i * kRowStep ? int(fixed) : 0;
  }

  __device__ __forceinline__ void advance() {
    if (kKMajor) {
      ptr += BLOCK_K;
      k_left -= BLOCK_K;
    } else {
      ptr += (BLOCK_K / kRowStep) * row_stride;
      k_left -= BLOCK_K;
    }
  }
};

template <int BLOCK_M, int BLOCK_N, int BLOCK_K, int kNumStages, int kElemBytes = 2>
struct SmemLayout {
  static constexpr int kABytes = BLOCK_M * BLOCK_K * kElemBytes;
  static constexpr int kBBytes = BLOCK_N * BLOCK_K * kElemBytes;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kBytes = kNumStages * kStageBytes;
};

// One mma.sync over a 32-byte k-slice of the fragments: m16n8k16 for f16 / bf16 (f32
// accumulators), m16n8k32 for i8 (s32 accumulators).
template <class AB>
__device__ __forceinline__ void mma_slice(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  ptx::mma_16816<IsBf16<AB>::value>(d, a, b);
}
template <class AB>
__device__ __forceinline__ void mma_slice(int (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  ptx::mma_16832_s8(d, a, b);
}

// kSplitK: the K tiles are divided among gridDim.y CTAs per output tile; each writes its raw f32
// (i8: s32) partial tile to the workspace (common/split_k.cuh) and its reduce kernel sums them and
// applies the epilogue.
// kPipelined (KernelConfig::variant 1): the main loop keeps two sets of mma fragments and loads
// the next k-slice's fragments (ldmatrix) before issuing the current slice's mma.sync, also across
// K tiles: the one barrier per K tile sits before the last slice's mma, so the tensor pipe keeps
// working while warps meet there. The default (false) is the loop verified on the device first:
// all of a slice's fragments, then its mma, and a barrier with an empty pipe at every K tile.
template <int BLOCK_M, int BLOCK_N, int BLOCK_K, int kWarpsM, int kWarpsN, int kNumStages, int kRasterGroup, bool kAKMajor,
          bool kBKMajor, class AB, class Epi, bool kVec, bool kSplitK = false, bool kPipelined = false>
__device__ __forceinline__ void gemm(const DgemmParams& p) {
  constexpr int kThreads = kWarpsM * kWarpsN * 32;
  constexpr int WARP_M = BLOCK_M / kWarpsM, WARP_N = BLOCK_N / kWarpsN;
  constexpr int kFragsM = WARP_M / 16, kFragsN = WARP_N / 8;
  // i8: the same shared bytes and fragments as 16-bit operands, a K element per byte.
  constexpr bool kInt8 = IsSame<AB, signed char>::value;
  constexpr int kElemBytes = int(sizeof(AB));
  constexpr int kSliceK = 32 / kElemBytes;          // K of one mma.sync: 16, or 32 for i8 (32 bytes)
  constexpr int kTileK = BLOCK_K * kElemBytes / 2;  // BLOCK_K in the shared tiles' 16-bit columns
  static_assert(kElemBytes == 2 || kInt8, "operands are f16, bf16 or i8");
  static_assert(!kInt8 || (kAKMajor && kBKMajor),
                "i8 operands are read K-major only: ldmatrix.trans transposes 16-bit elements, not bytes");
  static_assert(kNumStages >= 2, "the pipeline needs at least two stages");
  static_assert(BLOCK_K % kSliceK == 0, "BLOCK_K is a multiple of the mma's K (16; i8: 32)");
  static_assert(WARP_M % 16 == 0 && WARP_N % 16 == 0, "warp tiles are multiples of 16");
  using Acc = typename Select<kInt8, int, float>::type;

  // Shared tiles: K-major operands are [rows][BLOCK_K], MN-major ones [BLOCK_K][rows].
  using TileA = SmemTile<kAKMajor ? BLOCK_M : BLOCK_K, kAKMajor ? kTileK : BLOCK_M>;
  using TileB = SmemTile<kBKMajor ? BLOCK_N : BLOCK_K, kBKMajor ? kTileK : BLOCK_N>;
  using Layout = SmemLayout<BLOCK_M, BLOCK_N, BLOCK_K, kNumStages, kElemBytes>;
  extern __shared__ __align__(128) unsigned char dg_smem[];
  const unsigned smem = ptx::smem_addr(dg_smem);

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
  const long long M = p.m, N = p.n, K = p.k;

  // Tile order from the shared scheduler (grouped rasterization: M blocks that sweep N together
  // share the B tiles in L2); batches and K splits are the grid's z and y.
  const TileGrid grid{int((M + BLOCK_M - 1) / BLOCK_M), int((N + BLOCK_N - 1) / BLOCK_N), 1, kRasterGroup, 1, 1};
  const TileCoord tc = TileScheduler{grid}.coords(int(blockIdx.x));
  const long long m0 = (long long)tc.m_block * BLOCK_M, n0 = (long long)tc.n_block * BLOCK_N;
  int k_tiles = int((K + BLOCK_K - 1) / BLOCK_K);
  long long k_begin = 0;  // first K element of this CTA's share
  if (kSplitK) {
    int first, last;
    TileScheduler::k_range(k_tiles, int(gridDim.y), int(blockIdx.y), first, last);
    k_begin = (long long)first * BLOCK_K;
    k_tiles = last - first;
  }

  for (long long batch = blockIdx.z; batch < p.batch_count; batch += gridDim.z) {
    const AB* a = static_cast<const AB*>(p.a) + batch * p.stride_a;
    const AB* b = static_cast<const AB*>(p.b) + batch * p.stride_b;

    typename Select<kPipelined, LeanOperandLoader<TileA, kThreads, kVec, kAKMajor, BLOCK_K, AB>,
                    OperandLoader<TileA, kThreads, kVec, kAKMajor, BLOCK_K, AB>>::type load_a;
    typename Select<kPipelined, LeanOperandLoader<TileB, kThreads, kVec, kBKMajor, BLOCK_K, AB>,
                    OperandLoader<TileB, kThreads, kVec, kBKMajor, BLOCK_K, AB>>::type load_b;
    if (kAKMajor) load_a.init(a, p.lda, m0, k_begin, M, K, tid);
    else          load_a.init(a, p.lda, k_begin, m0, K, M, tid);
    if (kBKMajor) load_b.init(b, p.ldb, n0, k_begin, N, K, tid);
    else          load_b.init(b, p.ldb, k_begin, n0, K, N, tid);
    // Loads the next K tile (in order) into `stage`.
    auto load_stage = [&](int stage) {
      const unsigned sa = smem + stage * Layout::kStageBytes;
      load_a.load(sa);
      load_b.load(sa + Layout::kABytes);
      load_a.advance();
      load_b.advance();
    };

    Acc acc[kFragsM][kFragsN][4];
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
      for (int j = 0; j < kFragsN; ++j)
#pragma unroll
        for (int v = 0; v < 4; ++v) acc[i][j][v] = Acc(0);

    // Fragments of k-slice kk (32 bytes of K: 16 elements, i8 32) of the stage at shared address
    // sa: A as kFragsM 16-row tiles, B as kFragsN 8-column tiles (ldmatrix.x4 fetches two at once).
    const int q = lane >> 3;
    auto load_a_frag = [&](unsigned (&fa)[4], unsigned sa, int kk, int i) {
      const int m = warp_m * WARP_M + i * 16;
      if (kAKMajor) {
        const int row = m + (lane & 15), chunk = kk * 2 + (lane >> 4);
        ptx::ldmatrix_x4(fa, sa + TileA::offset(row, chunk));
      } else {
        const int row = kk * 16 + (q >> 1) * 8 + (lane & 7), chunk = (m >> 3) + (q & 1);
        ptx::ldmatrix_x4_trans(fa, sa + TileA::offset(row, chunk));
      }
    };
    auto load_b_frags = [&](unsigned (&fb)[kFragsN][2], unsigned sa, int kk) {
      const unsigned sb = sa + Layout::kABytes;
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
    };
    auto load_frags = [&](unsigned (&fa)[kFragsM][4], unsigned (&fb)[kFragsN][2], unsigned sa, int kk) {
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) load_a_frag(fa[i], sa, kk, i);
      load_b_frags(fb, sa, kk);
    };
    auto mma_all = [&](const unsigned (&fa)[kFragsM][4], const unsigned (&fb)[kFragsN][2]) {
#pragma unroll
      for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) mma_slice<AB>(acc[i][j], fa[i], fb[j]);
    };

    if (kPipelined) {
      // Same prologue and cp.async group accounting as below; fragments double buffered.
      constexpr int kSlices = BLOCK_K / kSliceK;
      static_assert(kSlices >= 2, "the pipelined loop needs two k-slices per K tile");
#pragma unroll
      for (int s = 0; s < kNumStages - 1; ++s) {
        if (s < k_tiles) load_stage(s);
        ptx::cp_async_commit();
      }
      ptx::cp_async_wait<kNumStages - 2>();
      __syncthreads();
      // Per-thread fragment offsets inside a stage, computed once. Every ldmatrix row address
      // here has lane & 7 as its low 3 bits (the other terms are multiples of 8), and the XOR
      // swizzle depends only on those bits, so it folds into a few per-thread constants; what
      // varies per fragment (i, j or kk steps of whole rows) is an immediate offset. The generic
      // load_frags recomputes the swizzle of every address in the loop (~10 integer ops each).
      constexpr int kAOffs = kAKMajor ? kSlices : kFragsM;
      constexpr int kBOffs = kBKMajor ? kSlices : kFragsN / 2;
      unsigned a_off[kAOffs], b_off[kBOffs];
      {
        const int lo = lane & 7;
#pragma unroll
        for (int x = 0; x < kAOffs; ++x) {
          if (kAKMajor)  // row = warp_m * WARP_M + i * 16 + (lane & 15), chunk = 2 kk + (lane >> 4)
            a_off[x] = unsigned((warp_m * WARP_M + (lane & 15)) * TileA::kRowBytes) +
                       unsigned(TileA::swizzle(lo, x * 2 + (lane >> 4)) * 16);
          else  // row = 16 kk + (q >> 1) * 8 + (lane & 7), chunk = (warp_m * WARP_M + 16 i) / 8 + (q & 1)
            a_off[x] = unsigned(((q >> 1) * 8 + lo) * TileA::kRowBytes) +
                       unsigned(TileA::swizzle(lo, (warp_m * WARP_M + x * 16) / 8 + (q & 1)) * 16);
        }
#pragma unroll
        for (int x = 0; x < kBOffs; ++x) {
          if (kBKMajor)  // row = warp_n * WARP_N + 8 j + (q >> 1) * 8 + (lane & 7), chunk = 2 kk + (q & 1)
            b_off[x] = unsigned((warp_n * WARP_N + (q >> 1) * 8 + lo) * TileB::kRowBytes) +
                       unsigned(TileB::swizzle(lo, x * 2 + (q & 1)) * 16);
          else  // row = 16 kk + (q & 1) * 8 + (lane & 7), chunk = (warp_n * WARP_N + 8 j) / 8 + (q >> 1), j = 2x
            b_off[x] = unsigned(((q & 1) * 8 + lo) * TileB::kRowBytes) +
                       unsigned(TileB::swizzle(lo, (warp_n * WARP_N + x * 16) / 8 + (q >> 1)) * 16);
        }
      }
      auto load_a_fast = [&](unsigned (&f)[4], unsigned sa, int kk, int i) {
        if (kAKMajor) ptx::ldmatrix_x4(f, sa + a_off[kk] + unsigned(i * 16 * TileA::kRowBytes));
        else ptx::ldmatrix_x4_trans(f, sa + a_off[i] + unsigned(kk * 16 * TileA::kRowBytes));
      };
      auto load_b_fast = [&](unsigned (&f)[kFragsN][2], unsigned sa, int kk) {
        const unsigned sb = sa + Layout::kABytes;
#pragma unroll
        for (int j = 0; j < kFragsN; j += 2) {
          unsigned r[4];
          if (kBKMajor) ptx::ldmatrix_x4(r, sb + b_off[kk] + unsigned(j * 8 * TileB::kRowBytes));
          else ptx::ldmatrix_x4_trans(r, sb + b_off[j / 2] + unsigned(kk * 16 * TileB::kRowBytes));
          f[j][0] = r[0];
          f[j][1] = r[1];
          f[j + 1][0] = r[2];
          f[j + 1][1] = r[3];
        }
      };
      // B fragments are double buffered; A fragments roll: row i of the next slice is loaded
      // right after row i's mma of this slice were issued (ldmatrix waits only for those to read
      // their operands), which saves kFragsM * 4 registers (128x256 would spill otherwise).
      unsigned fa[kFragsM][4];
      unsigned fb[2][kFragsN][2];
      PipelineState<kNumStages> read, write;
      write.stage = kNumStages - 1;
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) load_a_fast(fa[i], smem, 0, i);
      load_b_fast(fb[0], smem, 0);
      for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
        for (int kk = 0; kk < kSlices; ++kk) {
          if (kk == kSlices - 1) {
            // Every warp has loaded all fragments of tile kt (the last slice's at kk - 1), so
            // after this barrier its stage may be refilled; tile kt + 1 has landed (groups
            // committed: kNumStages - 1 + kt + 1, at most kNumStages - 2 pending).
            ptx::cp_async_wait<kNumStages - 2>();
            __syncthreads();
            read.advance();
          }
          // Next slice's fragments (slice 0 of tile kt + 1 after the barrier; past the last tile
          // this reads a stale stage whose values are never used): B now, A row by row below.
          const unsigned next_sa = smem + read.stage * Layout::kStageBytes;
          load_b_fast(fb[(kk + 1) % 2], next_sa, (kk + 1) % kSlices);
          if (kk == 0) {
            // Tile kt + kNumStages - 1 into the stage tile kt - 1 used: every warp passed the
            // barrier after its last read of it.
            if (kt + kNumStages - 1 < k_tiles) load_stage(write.stage);
            ptx::cp_async_commit();
            write.advance();
          }
#pragma unroll
          for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
            for (int j = 0; j < kFragsN; ++j) mma_slice<AB>(acc[i][j], fa[i], fb[kk % 2][j]);
            load_a_fast(fa[i], next_sa, (kk + 1) % kSlices, i);
          }
        }
      }
    } else {
      // Prologue: the first kNumStages - 1 tiles in flight. Every step commits a group (possibly
      // empty) so that "wait until kNumStages - 2 groups are pending" always means "tile kt landed".
#pragma unroll
      for (int s = 0; s < kNumStages - 1; ++s) {
        if (s < k_tiles) load_stage(s);
        ptx::cp_async_commit();
      }

      for (int kt = 0; kt < k_tiles; ++kt) {
        ptx::cp_async_wait<kNumStages - 2>();
        // Tile kt is visible to all, and every warp has finished tile kt - 1, whose stage the
        // prefetch below overwrites.
        __syncthreads();
        {
          const int next = kt + kNumStages - 1;
          if (next < k_tiles) load_stage(next % kNumStages);
          ptx::cp_async_commit();
        }
        const unsigned sa = smem + (kt % kNumStages) * Layout::kStageBytes;
#pragma unroll
        for (int kk = 0; kk < BLOCK_K / kSliceK; ++kk) {
          unsigned fa[kFragsM][4];
          unsigned fb[kFragsN][2];
          load_frags(fa, fb, sa, kk);
          mma_all(fa, fb);
        }
      }
    }
    // Drain (only empty groups can remain) and make the ring reusable by the next batch.
    ptx::cp_async_wait<0>();
    __syncthreads();

    // Epilogue through shared memory (the ring is free now): one warp row at a time writes its
    // accumulators into an f32 staging tile (rows padded by 8 floats: the float2 writes of a
    // quarter warp then hit distinct banks), then all threads apply the epilogue to runs of 4
    // consecutive columns, so that C is read and D written in wide, coalesced accesses, and the
    // per-element epilogue runs in a rolled loop that keeps register pressure low. i8: the tile
    // holds the s32 sums, stored by EpilogueOp::store4_int (exactly for an i32 D).
    constexpr int kStride = BLOCK_N + 8;
    static_assert(WARP_M * kStride * 4 <= Layout::kBytes, "the staging tile fits in the ring");
    Acc* staging = reinterpret_cast<Acc*>(dg_smem);
    EpilogueOp<Epi> epi;
    epi.init(p, batch);
#pragma unroll
    for (int pass = 0; pass < kWarpsM; ++pass) {
      if (warp_m == pass) {
#pragma unroll
        for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
          for (int j = 0; j < kFragsN; ++j) {
            const int r = i * 16 + (lane >> 2), c = warp_n * WARP_N + j * 8 + (lane & 3) * 2;
            if constexpr (kInt8) {
              *reinterpret_cast<int2*>(&staging[r * kStride + c]) = make_int2(acc[i][j][0], acc[i][j][1]);
              *reinterpret_cast<int2*>(&staging[(r + 8) * kStride + c]) = make_int2(acc[i][j][2], acc[i][j][3]);
            } else {
              *reinterpret_cast<float2*>(&staging[r * kStride + c]) = make_float2(acc[i][j][0], acc[i][j][1]);
              *reinterpret_cast<float2*>(&staging[(r + 8) * kStride + c]) = make_float2(acc[i][j][2], acc[i][j][3]);
            }
          }
        }
      }
      __syncthreads();
      constexpr int kGroupsPerRow = BLOCK_N / 4;
      const long long row0 = m0 + pass * WARP_M;
#pragma unroll 1
      for (int g = tid; g < WARP_M * kGroupsPerRow; g += kThreads) {
        const int r = g / kGroupsPerRow, c = (g % kGroupsPerRow) * 4;
        const long long row = row0 + r, col = n0 + c;
        if (row < M && col < N) {
          if constexpr (kInt8) {
            const int4 v = *reinterpret_cast<const int4*>(&staging[r * kStride + c]);
            if (kSplitK) {
              *reinterpret_cast<int4*>(split_k_row<int>(p, batch, int(gridDim.y), int(blockIdx.y), row) + col) = v;
            } else {
              epi.store4_int(row, col, v.x, v.y, v.z, v.w, N - col);
            }
          } else {
            const float4 v = *reinterpret_cast<const float4*>(&staging[r * kStride + c]);
            if (kSplitK) {
              *reinterpret_cast<float4*>(split_k_row(p, batch, int(gridDim.y), int(blockIdx.y), row) + col) = v;
            } else {
              epi.store4(row, col, v.x, v.y, v.z, v.w, N - col);
            }
          }
        }
      }
      __syncthreads();
    }
  }
}

}  // namespace sm80
}  // namespace dg

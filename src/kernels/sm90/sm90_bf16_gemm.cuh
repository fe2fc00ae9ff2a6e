// sm90 family: the Hopper GEMM kernel for f16/bf16 operands with f32 accumulation.
// Persistent grid (one CTA per SM walks tiles in grouped order); warp specialization: warpgroup 0
// is the producer (one thread issues TMA loads into a kStages ring of 128-byte-swizzled stages,
// guarded by full/empty mbarriers) and gives its registers away with setmaxnreg; warpgroups 1..2
// are consumers issuing wgmma.mma_async m64nNk16 with accumulators in registers, then run the
// epilogue (EpiOp, e.g. dg::EpilogueOp) straight from registers. Tails in M, N and K come from
// TMA's out-of-bounds zero fill. Operands may be K-major or MN-major (wgmma transpose bits).
// With kClusterM = 2, two CTAs of a cluster take vertically adjacent tiles (same N block): each
// loads half of the shared B tile and multicasts it to both, halving B's L2->SM traffic.
// Split-K (built with DGEMM_SM90_SPLIT_K, for problems with fewer tiles than SMs): each work unit
// is a tile and a K range; its f32 partials go to the workspace and DGEMM_SM90_DEFINE_SPLIT_REDUCE's
// kernel adds them and runs the epilogue.
//
// The JIT prelude instantiates Sm90Gemm<...> through DGEMM_SM90_DEFINE_KERNEL (bottom) so that the
// kernel has a stable extern "C" name.
#pragma once

#include "common/gemm_params.cuh"
#include "sm90/ptx_cluster.cuh"
#include "sm90/ptx_mbarrier.cuh"
#include "sm90/ptx_tma.cuh"
#include "sm90/ptx_wgmma.cuh"

namespace dgemm_sm90 {

// The kernel's one parameter, passed as __grid_constant__ so the tensor maps stay in parameter
// space (TMA reads them from there; the host encodes them per call, on its stack).
struct Sm90GemmArgs {
  TensorMap tma_a;  // A: K-major {K, M, batch} box {64, BLOCK_M}, or M-major {M, K, batch} box {64, 64}
  TensorMap tma_b;  // B: K-major {K, N, batch} box {64, BLOCK_N / kClusterM}, or N-major {N, K, batch} box {64, 64}
  DgemmParams p;    // pointers, sizes, leading dimensions, scalars (row-major view of the problem)
  int num_m_blocks, num_n_blocks, num_k_blocks;
  int raster_group;  // M blocks per rasterization group (consecutive tiles share a B column)
  int num_tiles;     // tiles (clusters' tile pairs when kClusterM = 2) over all batches and K splits
  int split_k;       // K splits: > 1 only in kernels built with DGEMM_SM90_SPLIT_K (partials to p.workspace)
};

template <int kBlockM, int kBlockN, int kStages, int kF16, int kAMajorMN, int kBMajorMN, int kClusterM, class EpiOp>
struct Sm90Gemm {
  static constexpr int kBlockK = 64;  // 64 16-bit elements = one 128-byte swizzle span
  static constexpr int kMathWGs = 2;
  static constexpr int kThreads = 128 * (kMathWGs + 1);
  static constexpr int kWGRows = kBlockM / kMathWGs;
  static constexpr int kMAtoms = kWGRows / 64;  // m64 instructions per consumer warpgroup
  static constexpr int kAcc = kBlockN / 2;      // f32 accumulators per thread per m64 atom
  static constexpr u32 kStageA = kBlockM * kBlockK * 2;
  static constexpr u32 kStageB = kBlockN * kBlockK * 2;
  static constexpr u32 kBarrierOffset = kStages * (kStageA + kStageB);
  // +1024: the dynamic shared window is only 16-byte aligned; swizzled stages need 1024.
  static constexpr u32 kSmemBytes = kBarrierOffset + 2 * kStages * 8 + 1024;
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = 232;

  static_assert(kBlockM % 128 == 0 && kBlockM <= 256, "BLOCK_M is 128 or 256 (two consumer warpgroups)");
  static_assert(kBlockN == 64 || kBlockN == 128 || kBlockN == 192 || kBlockN == 256, "BLOCK_N is 64, 128, 192 or 256");
  static_assert(kMAtoms * kAcc <= 128, "accumulators must fit the consumer register budget");
  static_assert(kStages >= 2, "need at least two stages");
  static_assert(kClusterM == 1 || kClusterM == 2, "clusters of 1 or 2 CTAs");
  static_assert(kClusterM == 1 || !kBMajorMN || (kBlockN / 64) % kClusterM == 0,
                "an N-major B tile splits into whole 64-column boxes per CTA");
  static_assert(kClusterM == 1 || kBMajorMN || (kBlockN / kClusterM) % 8 == 0, "B box rows per CTA");

  // Tile `tile` of the persistent walk -> (M block, N block, batch). Tiles are grouped
  // raster_group M blocks high so that CTAs running together share B columns and A rows in L2.
  // With a cluster, `tile` counts tile pairs and `mb` is the pair's first M block. With split-K,
  // the tile's K blocks are [kb_begin, kb_end) of its split (the host makes every split non-empty).
  __device__ static void tile_coords(const Sm90GemmArgs& a, int tile, int& mb, int& nb, int& batch, int& kb_begin,
                                     int& kb_end) {
    const int m_units = (a.num_m_blocks + kClusterM - 1) / kClusterM;
    const int group_m = a.raster_group / kClusterM > 0 ? a.raster_group / kClusterM : 1;
    const int per_batch = m_units * a.num_n_blocks;
    batch = tile / per_batch;
    const int t = tile - batch * per_batch;
    // Splits are outermost (batch index = split * batch_count + batch).
    const int split = batch / a.p.batch_count;
    batch -= split * a.p.batch_count;
    const int per_split = (a.num_k_blocks + a.split_k - 1) / a.split_k;
    kb_begin = split * per_split;
    kb_end = min(a.num_k_blocks, kb_begin + per_split);
    const int group_tiles = group_m * a.num_n_blocks;
    const int group = t / group_tiles;
    const int first_m = group * group_m;
    const int rows = min(m_units - first_m, group_m);
    const int r = t - group * group_tiles;
    mb = (first_m + r % rows) * kClusterM;
    nb = r / rows;
  }

  __device__ static void run(const Sm90GemmArgs& args) {
    extern __shared__ unsigned char smem_raw[];
    const u32 raw = smem_addr(smem_raw);
    const u32 base = (raw + 1023u) & ~1023u;
    auto smem_a = [&](int s) { return base + s * kStageA; };
    auto smem_b = [&](int s) { return base + kStages * kStageA + s * kStageB; };
    auto full_bar = [&](int s) { return base + kBarrierOffset + s * 8; };
    auto empty_bar = [&](int s) { return base + kBarrierOffset + (kStages + s) * 8; };

    const u32 rank = kClusterM > 1 ? cluster_ctarank() : 0;
    const int cluster_id = blockIdx.x / kClusterM;
    const int num_clusters = gridDim.x / kClusterM;
    const int warpgroup = threadIdx.x / 128;
    if (threadIdx.x == 0) {
      tma_prefetch_map(&args.tma_a);
      tma_prefetch_map(&args.tma_b);
      for (int s = 0; s < kStages; ++s) {
        mbar_init(full_bar(s), 1);                             // the local producer's arrive.expect_tx
        mbar_init(empty_bar(s), kClusterM * kMathWGs * 4);     // every consumer warp of the cluster
      }
      mbar_fence_init();
    }
    if constexpr (kClusterM > 1) cluster_sync();
    else __syncthreads();

    if (warpgroup == 0) {
      // Producer warpgroup: registers go to the consumers; one thread drives the TMA ring.
      setmaxnreg_dec<kProducerRegs>();
      if (threadIdx.x == 0) {
        int stage = 0;
        u32 phase = 0;
        for (int tile = cluster_id; tile < args.num_tiles; tile += num_clusters) {
          int mb, nb, batch, kb_begin, kb_end;
          tile_coords(args, tile, mb, nb, batch, kb_begin, kb_end);
          const int m0 = (mb + rank) * kBlockM, n0 = nb * kBlockN;
          for (int kb = kb_begin; kb < kb_end; ++kb) {
            const int k0 = kb * kBlockK;
            mbar_wait(empty_bar(stage), phase ^ 1);
            // Own A + the whole B tile (half of it arrives from the peer CTA when clustered).
            mbar_arrive_expect_tx(full_bar(stage), kStageA + kStageB);
            if constexpr (kAMajorMN) {
#pragma unroll
              for (int c = 0; c < kBlockM / 64; ++c)
                tma_load_3d(smem_a(stage) + c * 8192, &args.tma_a, full_bar(stage), m0 + c * 64, k0,
                            batch);
            } else {
              tma_load_3d(smem_a(stage), &args.tma_a, full_bar(stage), k0, m0, batch);
            }
            if constexpr (kClusterM == 1) {
              if constexpr (kBMajorMN) {
#pragma unroll
                for (int c = 0; c < kBlockN / 64; ++c)
                  tma_load_3d(smem_b(stage) + c * 8192, &args.tma_b, full_bar(stage), n0 + c * 64, k0,
                              batch);
              } else {
                tma_load_3d(smem_b(stage), &args.tma_b, full_bar(stage), k0, n0, batch);
              }
            } else {
              const unsigned short mask = (1u << kClusterM) - 1;
              if constexpr (kBMajorMN) {
                constexpr int kBoxes = kBlockN / 64 / kClusterM;
#pragma unroll
                for (int c = 0; c < kBoxes; ++c) {
                  const int box = rank * kBoxes + c;
                  tma_load_3d_multicast(smem_b(stage) + box * 8192, &args.tma_b, full_bar(stage),
                                        n0 + box * 64, k0,
                                        batch, mask);
                }
              } else {
                constexpr int kRows = kBlockN / kClusterM;
                tma_load_3d_multicast(smem_b(stage) + rank * kRows * 128, &args.tma_b, full_bar(stage), k0,
                                      n0 + rank * kRows, batch, mask);
              }
            }
            if (++stage == kStages) { stage = 0; phase ^= 1; }
          }
        }
      }
    } else {
      setmaxnreg_inc<kConsumerRegs>();
      const int math_wg = warpgroup - 1;
      const int lane = threadIdx.x & 31;
      const int warp_in_wg = (threadIdx.x / 32) & 3;
      // A stage may be refilled once every consumer warp of the cluster has released it.
      auto release = [&](int s) {
        if (lane == 0) {
          if constexpr (kClusterM == 1) {
            mbar_arrive(empty_bar(s));
          } else {
#pragma unroll
            for (int r = 0; r < kClusterM; ++r) mbar_arrive_cluster(empty_bar(s), r);
          }
        }
      };
      float acc[kMAtoms][kAcc];
      int stage = 0;
      u32 phase = 0;
      for (int tile = cluster_id; tile < args.num_tiles; tile += num_clusters) {
        int mb, nb, batch, kb_begin, kb_end;
        tile_coords(args, tile, mb, nb, batch, kb_begin, kb_end);
#ifdef DGEMM_SM90_LATE_RELEASE
        int prev_stage = -1;
#endif
        for (int kb = kb_begin; kb < kb_end; ++kb) {
          mbar_wait(full_bar(stage), phase);
#pragma unroll
          for (int ma = 0; ma < kMAtoms; ++ma) fence_regs(acc[ma]);
          wgmma_fence();
#pragma unroll
          for (int k = 0; k < kBlockK / 16; ++k) {
            // K-major steps 32 bytes per 16 K inside the swizzled row; MN-major steps 16 rows.
            const u64 desc_b = kBMajorMN ? make_desc_sw128(smem_b(stage) + k * 2048, 8192, 1024)
                                         : make_desc_sw128(smem_b(stage) + k * 32, 16, 1024);
#pragma unroll
            for (int ma = 0; ma < kMAtoms; ++ma) {
              const int chunk = math_wg * kMAtoms + ma;  // which 64-row slice of the A stage
              const u64 desc_a = kAMajorMN ? make_desc_sw128(smem_a(stage) + chunk * 8192 + k * 2048, 8192, 1024)
                                           : make_desc_sw128(smem_a(stage) + chunk * 8192 + k * 32, 16, 1024);
              wgmma_m64k16<kBlockN, kF16, kAMajorMN, kBMajorMN>(acc[ma], desc_a, desc_b,
                                                                (kb != kb_begin) || (k != 0));
            }
          }
          wgmma_commit();
          // wait<0> measured faster than keeping one K block in flight with wait<1> (NOTES.md).
#ifdef DGEMM_SM90_WAIT1
          wgmma_wait<1>();
#else
          wgmma_wait<0>();
#endif
#pragma unroll
          for (int ma = 0; ma < kMAtoms; ++ma) fence_regs(acc[ma]);
#ifdef DGEMM_SM90_LATE_RELEASE
          // The earlier scheme (kept for A/B timing): a stage is released one K block late, so
          // only kStages - 2 loads are in flight.
          if (prev_stage >= 0) release(prev_stage);
          prev_stage = stage;
#else
          // wait<0> means this stage's reads are done: hand it back now, so the producer keeps
          // kStages - 1 loads in flight instead of kStages - 2.
          release(stage);
#endif
          if (++stage == kStages) { stage = 0; phase ^= 1; }
        }
#ifdef DGEMM_SM90_LATE_RELEASE
        wgmma_wait<0>();
#pragma unroll
        for (int ma = 0; ma < kMAtoms; ++ma) fence_regs(acc[ma]);
        if (prev_stage >= 0) release(prev_stage);
#endif

        // Epilogue from registers. wgmma's f32 accumulator layout: thread (warp w, lane l) holds,
        // for each 8-column group i, rows w*16 + l/4 (+8) and columns i*8 + (l%4)*2 (+1).
        const long long m = args.p.m, n = args.p.n;
        const long long row_base =
            (long long)(mb + rank) * kBlockM + math_wg * kWGRows + warp_in_wg * 16 + lane / 4;
        const long long col_base = (long long)nb * kBlockN + (lane % 4) * 2;
#ifdef DGEMM_SM90_SPLIT_K
        {
          // Split-K: the raw f32 partial sums go to the workspace, [split][batch][m][n]; the
          // reduce kernel below adds the splits and runs the epilogue.
          const int split = (kb_begin / ((args.num_k_blocks + args.split_k - 1) / args.split_k));
          float* part = static_cast<float*>(args.p.workspace) +
                        ((long long)split * args.p.batch_count + batch) * m * n;
#pragma unroll
          for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const long long row = row_base + ma * 64 + h * 8;
              if (row >= m) continue;
#pragma unroll
              for (int i = 0; i < kAcc / 4; ++i) {
                const long long col = col_base + i * 8;
                if (col >= n) continue;
                float* dst = part + row * n + col;
                const float v0 = acc[ma][i * 4 + h * 2], v1 = acc[ma][i * 4 + h * 2 + 1];
                if (col + 1 < n && (n % 2) == 0) {
                  struct alignas(8) F2 { float x, y; };
                  *reinterpret_cast<F2*>(dst) = F2{v0, v1};
                } else {
                  dst[0] = v0;
                  if (col + 1 < n) dst[1] = v1;
                }
              }
            }
          continue;
        }
#endif
        EpiOp epi;
        epi.init(args.p, batch);
        // Bias once per row and per column of the thread's fragment, not per element. Column
        // biases come in groups of 8 column pairs, the next group's loads issued before this
        // group's stores (a load after a store to D cannot be hoisted above it: they may alias).
        float rbias[kMAtoms][2];
#pragma unroll
        for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const long long row = row_base + ma * 64 + h * 8;
            rbias[ma][h] = row < m ? epi.row_bias(row) : 0.0f;
          }
        constexpr int kGroup = 8;
        static_assert((kAcc / 4) % kGroup == 0, "whole groups of 8 column pairs");
        float cbias[kGroup][2], next_cbias[kGroup][2];
        auto load_cbias = [&](int g, float (&out)[kGroup][2]) {
#pragma unroll
          for (int ii = 0; ii < kGroup; ++ii) {
            const long long col = col_base + (g * kGroup + ii) * 8;
            out[ii][0] = col < n ? epi.col_bias(col) : 0.0f;
            out[ii][1] = col + 1 < n ? epi.col_bias(col + 1) : 0.0f;
          }
        };
        load_cbias(0, cbias);
        // A tile wholly inside D with pair-aligned rows (the usual case) stores without bounds
        // checks, from one pointer per row plus compile-time offsets.
        const bool full_tile = (long long)(mb + rank + 1) * kBlockM <= m && (long long)(nb + 1) * kBlockN <= n &&
                               epi.pairs_aligned();
        if (full_tile) {
          typename EpiOp::DType* rowp[kMAtoms][2];
#pragma unroll
          for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
            for (int h = 0; h < 2; ++h) rowp[ma][h] = epi.row_ptr(row_base + ma * 64 + h * 8) + col_base;
#pragma unroll
          for (int g = 0; g < kAcc / 4 / kGroup; ++g) {
            if (g + 1 < kAcc / 4 / kGroup) load_cbias(g + 1, next_cbias);
#pragma unroll
            for (int ii = 0; ii < kGroup; ++ii) {
              const int i = g * kGroup + ii;
#pragma unroll
              for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
                for (int h = 0; h < 2; ++h)
                  epi.store_pair_aligned(rowp[ma][h] + i * 8, row_base + ma * 64 + h * 8, col_base + i * 8,
                                         acc[ma][i * 4 + h * 2], acc[ma][i * 4 + h * 2 + 1], rbias[ma][h],
                                         cbias[ii][0], cbias[ii][1]);
            }
            if (g + 1 < kAcc / 4 / kGroup) {
#pragma unroll
              for (int ii = 0; ii < kGroup; ++ii) {
                cbias[ii][0] = next_cbias[ii][0];
                cbias[ii][1] = next_cbias[ii][1];
              }
            }
          }
          continue;
        }
#pragma unroll
        for (int g = 0; g < kAcc / 4 / kGroup; ++g) {
          if (g + 1 < kAcc / 4 / kGroup) load_cbias(g + 1, next_cbias);
#pragma unroll
          for (int ii = 0; ii < kGroup; ++ii) {
            const int i = g * kGroup + ii;
            const long long col = col_base + i * 8;
            if (col < n) {
#pragma unroll
              for (int ma = 0; ma < kMAtoms; ++ma) {
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                  const long long row = row_base + ma * 64 + h * 8;
                  if (row < m)
                    epi.store_pair(row, col, acc[ma][i * 4 + h * 2], acc[ma][i * 4 + h * 2 + 1], col + 1 < n,
                                   rbias[ma][h], cbias[ii][0], cbias[ii][1]);
                }
              }
            }
          }
          if (g + 1 < kAcc / 4 / kGroup) {
#pragma unroll
            for (int ii = 0; ii < kGroup; ++ii) {
              cbias[ii][0] = next_cbias[ii][0];
              cbias[ii][1] = next_cbias[ii][1];
            }
          }
        }
      }
    }
    // A clustered CTA must outlive its peer's remote arrivals on (and multicasts into) its memory.
    if constexpr (kClusterM > 1) cluster_sync();
  }
};

}  // namespace dgemm_sm90

namespace dgemm_sm90 {

// Split-K's second kernel: D = epilogue(sum over splits of the f32 partials in p.workspace),
// one element per thread (memory-bound; the partials are usually still in L2).
template <class EpiOp>
__device__ void sm90_split_reduce(const DgemmParams& p, int split_k) {
  const long long mn = p.m * p.n, total = mn * p.batch_count;
  const float* part = static_cast<const float*>(p.workspace);
  for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
       idx += (long long)gridDim.x * blockDim.x) {
    const long long b = idx / mn, r = idx - b * mn;
    const long long row = r / p.n, col = r - row * p.n;
    float sum = 0.0f;
    for (int s = 0; s < split_k; ++s) sum += part[((long long)s * p.batch_count + b) * mn + r];
    EpiOp epi;
    epi.init(p, b);
    epi.store(row, col, sum);
  }
}

}  // namespace dgemm_sm90

#define DGEMM_SM90_DEFINE_SPLIT_REDUCE(NAME, EPI)                                                   \
  extern "C" __global__ void __launch_bounds__(256) NAME(const __grid_constant__ DgemmParams p, int split_k) { \
    dgemm_sm90::sm90_split_reduce<EPI>(p, split_k);                                              \
  }

// Defines the extern "C" kernel entry NAME for one instantiation GEMM (a Sm90Gemm<...>).
#define DGEMM_SM90_DEFINE_KERNEL(NAME, GEMM)                                                     \
  extern "C" __global__ void __launch_bounds__(GEMM::kThreads, 1)                                \
      NAME(const __grid_constant__ dgemm_sm90::Sm90GemmArgs args) {                              \
    GEMM::run(args);                                                                             \
  }

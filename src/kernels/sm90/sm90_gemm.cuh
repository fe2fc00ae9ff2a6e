// sm90 family: the Hopper GEMM kernel for f16/bf16 operands with f32 accumulation.
//
// Persistent grid: each CTA (or cluster) walks work units of the shared tile scheduler
// (common/scheduler.cuh). Warp specialization: warpgroup 0 is the producer (one thread issues TMA
// loads into a kStages ring of 128-byte-swizzled stages guarded by full/empty mbarriers); the
// consumer warpgroups (one for BLOCK_M = 64, two otherwise) issue wgmma.mma_async m64nNk16 with
// accumulators in registers and run the fused epilogue straight from registers. Tails in M, N and
// K come from TMA's out-of-bounds zero fill. Operands may be K-major or MN-major (wgmma's transpose
// bits). The kernel computes the launcher's view X = KA * KB of the problem (core/kernel_view.hpp):
// with swap-AB that is D^T, so a decode-sized M is wgmma's N (BLOCK_N down to 8) and the epilogue
// stores X transposed.
//
// Clusters (at most one kind per kernel):
//   kClusterM = 2: two CTAs take vertically adjacent tiles (same N block); each loads half of the
//     shared B tile and multicasts it to both, halving B's L2 -> SM traffic.
//   kClusterK = 2..8: the CTAs of a cluster split one tile's K blocks (so that few output tiles
//     still keep every SM streaming operands); each non-leader parks its f32 partial tile in its
//     own shared memory, the leader (rank 0) adds them through distributed shared memory and runs
//     the epilogue. One launch, no workspace.
//
// The JIT prelude instantiates Gemm<...> through DGEMM_SM90_DEFINE_KERNEL (bottom) so that the
// kernel has a stable extern "C" name.
#pragma once

#include "common/gemm_params.cuh"
#include "common/pipeline.cuh"
#include "common/scheduler.cuh"
#include "epilogue/epilogue.cuh"
#include "sm90/ptx_cluster.cuh"
#include "sm90/wgmma_atoms.cuh"

namespace dg {
namespace sm90 {

// The kernel's one parameter, passed as __grid_constant__ so the tensor maps stay in parameter
// space (TMA reads them from there; the host encodes them per call, on its stack).
struct GemmArgs {
  TensorMap tma_a;  // KA: K-major {K, rows, batch} box {64, BLOCK_M}, or MN-major {rows, K, batch} box {64, 64}
  TensorMap tma_b;  // KB: K-major {K, cols, batch} box {64, BLOCK_N / kClusterM}, or MN-major box {64, 64}
  DgemmParams p;    // the kernel's view: sizes, leading dimensions, pointers, epilogue values
  TileGrid tiles;   // what the scheduler walks (cluster_m = kClusterM, split_k = 1)
  int num_k_blocks;
};

template <int kBlockM, int kBlockN, int kStages, int kF16, bool kAKMajor, bool kBKMajor, int kClusterM, int kClusterK,
          class Epi, int kMinBlocks = 1>
struct Gemm {
  // CTAs meant to share an SM (__launch_bounds__' minimum): 2 for the one-warpgroup tiles whose
  // accumulators fit 128 registers, so that one CTA's prologue and epilogue overlap the other's
  // main loop.
  static constexpr int kBlocksPerSM = kMinBlocks;
  // Operands not K-major are MN-major: wgmma reads them with its transpose bit.
  static constexpr int kAMajorMN = kAKMajor ? 0 : 1;
  static constexpr int kBMajorMN = kBKMajor ? 0 : 1;
  static constexpr int kBlockK = 64;  // 64 16-bit elements = one 128-byte swizzle span
  static constexpr int kMathWGs = kBlockM >= 128 ? 2 : 1;
  static constexpr int kThreads = 128 * (kMathWGs + 1);
  static constexpr int kConsumers = 128 * kMathWGs;
  static constexpr int kWGRows = kBlockM / kMathWGs;
  static constexpr int kMAtoms = kWGRows / 64;  // m64 instructions per consumer warpgroup
  static constexpr int kAcc = kBlockN / 2;      // f32 accumulators per thread per m64 atom
  static constexpr int kClusterSize = kClusterM * kClusterK;
  static constexpr u32 kStageA = kBlockM * kBlockK * 2;
  static constexpr u32 kStageB = kBlockN * kBlockK * 2;
  // Split-K partial tile parked for the leader: [accumulator quad][consumer thread] of float4.
  static constexpr u32 kReduceBytes = kClusterK > 1 ? u32(kBlockM) * kBlockN * 4 : 0;
  static constexpr u32 kReduceOffset = kStages * (kStageA + kStageB);
  static constexpr u32 kBarrierOffset = kReduceOffset + kReduceBytes;
  static constexpr u32 kNumBarriers = 2 * kStages + 2;
  // +1024: the dynamic shared window is only 16-byte aligned; swizzled stages need 1024.
  static constexpr u32 kSmemBytes = kBarrierOffset + kNumBarriers * 8 + 1024;
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = 232;
  // Column biases are loaded kGroup column pairs ahead of the stores that use them.
  static constexpr int kPairs = kAcc / 4;  // 8-column groups per thread per atom
  static constexpr int kGroup = kPairs % 8 == 0 ? 8 : kPairs % 4 == 0 ? 4 : kPairs % 2 == 0 ? 2 : 1;

  static_assert(kBlockM == 64 || kBlockM == 128 || kBlockM == 256, "BLOCK_M is 64, 128 or 256");
  static_assert(kBlockN % 8 == 0 && kBlockN >= 8 && kBlockN <= 256, "BLOCK_N is a multiple of 8 up to 256");
  static_assert(!kBMajorMN || kBlockN % 64 == 0, "an MN-major B tile is made of 64-column boxes");
  static_assert(kMAtoms * kAcc <= 128, "accumulators must fit the consumer register budget");
  static_assert(kStages >= 2, "need at least two stages");
  static_assert(kMinBlocks == 1 || (kMathWGs == 1 && kAcc <= 64), "two CTAs per SM: one warpgroup, <= 64 accumulators");
  static_assert(kClusterM == 1 || kClusterK == 1, "a cluster either shares B or splits K");
  static_assert(kClusterM == 1 || kClusterM == 2, "clusters of 1 or 2 CTAs along M");
  static_assert(kClusterK >= 1 && kClusterK <= 8, "K split over at most 8 CTAs (a portable cluster)");
  static_assert(kClusterM == 1 || !kBMajorMN || (kBlockN / 64) % kClusterM == 0,
                "an N-major B tile splits into whole 64-column boxes per CTA");
  static_assert(kClusterM == 1 || kBMajorMN || (kBlockN / kClusterM) % 8 == 0, "B box rows per CTA");

  __device__ static void run(const GemmArgs& args) {
    extern __shared__ unsigned char smem_raw[];
    const u32 raw = smem_addr(smem_raw);
    const u32 base = (raw + 1023u) & ~1023u;
    auto smem_a = [&](int s) { return base + s * kStageA; };
    auto smem_b = [&](int s) { return base + kStages * kStageA + s * kStageB; };
    auto full_bar = [&](int s) { return base + kBarrierOffset + s * 8; };
    auto empty_bar = [&](int s) { return base + kBarrierOffset + (kStages + s) * 8; };
    const u32 reduce_full_bar = base + kBarrierOffset + 2 * kStages * 8;   // leader: partials parked
    const u32 reduce_empty_bar = reduce_full_bar + 8;                      // non-leader: partials taken

    const u32 rank = kClusterSize > 1 ? cluster_ctarank() : 0;
    const u32 rank_m = kClusterM > 1 ? rank : 0, rank_k = kClusterK > 1 ? rank : 0;
    const int cluster_id = blockIdx.x / kClusterSize;
    const int num_clusters = gridDim.x / kClusterSize;
    const int warpgroup = threadIdx.x / 128;
    const TileScheduler sched{args.tiles};
    const int num_units = sched.num_units();
    if (threadIdx.x == 0) {
      tma_prefetch_map(&args.tma_a);
      tma_prefetch_map(&args.tma_b);
      for (int s = 0; s < kStages; ++s) {
        mbar_init(full_bar(s), 1);                                // the local producer's arrive.expect_tx
        mbar_init(empty_bar(s), kClusterM * kMathWGs * 4);        // every consumer warp sharing the stage
      }
      if constexpr (kClusterK > 1) {
        mbar_init(reduce_full_bar, (kClusterK - 1) * kConsumers / 32);  // every non-leader consumer warp
        mbar_init(reduce_empty_bar, kConsumers / 32);                   // every leader consumer warp
      }
      mbar_fence_init();
    }
    if constexpr (kClusterSize > 1) cluster_sync();
    else __syncthreads();
    // Programmatic dependent launch: everything above (launch, shared-memory carve-out, barrier
    // set-up) may overlap the previous kernel on the stream; no global memory is touched before
    // that kernel has finished and its writes are visible. Without a programmatic predecessor
    // this returns at once.
    grid_dependency_wait();
    // The next kernel may start launching now: its CTAs take SMs only as this grid's CTAs leave,
    // and it waits in its own grid_dependency_wait until this grid has completed.
    grid_dependents_launch();

    if (warpgroup == 0) {
      // Producer warpgroup: registers go to the consumers; one thread drives the TMA ring.
      if constexpr (kMathWGs == 2) setmaxnreg_dec<kProducerRegs>();
      if (threadIdx.x == 0) {
        PipelineState<kStages> ps;
        for (int unit = cluster_id; unit < num_units; unit += num_clusters) {
          const TileCoord t = sched.coords(unit);
          int kb_begin, kb_end;
          TileScheduler::k_range(args.num_k_blocks, kClusterK, int(rank_k), kb_begin, kb_end);
          const int m0 = (t.m_block + int(rank_m)) * kBlockM, n0 = t.n_block * kBlockN;
          for (int kb = kb_begin; kb < kb_end; ++kb, ps.advance()) {
            const int k0 = kb * kBlockK;
            mbar_wait(empty_bar(ps.stage), ps.phase ^ 1);
            // Own A + the whole B tile (half of it arrives from the peer CTA when multicast).
            mbar_arrive_expect_tx(full_bar(ps.stage), kStageA + kStageB);
            load_a(args, smem_a(ps.stage), full_bar(ps.stage), m0, k0, t.batch);
            load_b(args, smem_b(ps.stage), full_bar(ps.stage), n0, k0, t.batch, rank_m);
          }
        }
      }
    } else {
      if constexpr (kMathWGs == 2) setmaxnreg_inc<kConsumerRegs>();
      const int math_wg = warpgroup - 1;
      const int ctid = threadIdx.x - 128;  // consumer thread index
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
      PipelineState<kStages> ps;
      u32 reduce_phase = 0;
      for (int unit = cluster_id; unit < num_units; unit += num_clusters) {
        const TileCoord t = sched.coords(unit);
        int kb_begin, kb_end;
        TileScheduler::k_range(args.num_k_blocks, kClusterK, int(rank_k), kb_begin, kb_end);
        if (kb_begin == kb_end) {
          // More CTAs than K blocks in the cluster: this one's share of the sum is zero.
#pragma unroll
          for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
            for (int i = 0; i < kAcc; ++i) acc[ma][i] = 0.0f;
        }
        for (int kb = kb_begin; kb < kb_end; ++kb, ps.advance()) {
          mbar_wait(full_bar(ps.stage), ps.phase);
#pragma unroll
          for (int ma = 0; ma < kMAtoms; ++ma) fence_regs(acc[ma]);
          wgmma_fence();
#pragma unroll
          for (int k = 0; k < kBlockK / 16; ++k) {
            // K-major steps 32 bytes per 16 K inside the swizzled row; MN-major steps 16 rows.
            const u64 desc_b = kBMajorMN ? make_desc_sw128(smem_b(ps.stage) + k * 2048, 8192, 1024)
                                         : make_desc_sw128(smem_b(ps.stage) + k * 32, 16, 1024);
#pragma unroll
            for (int ma = 0; ma < kMAtoms; ++ma) {
              const int chunk = math_wg * kMAtoms + ma;  // which 64-row slice of the A stage
              const u64 desc_a = kAMajorMN ? make_desc_sw128(smem_a(ps.stage) + chunk * 8192 + k * 2048, 8192, 1024)
                                           : make_desc_sw128(smem_a(ps.stage) + chunk * 8192 + k * 32, 16, 1024);
              wgmma_m64k16<kBlockN, kF16, kAMajorMN, kBMajorMN>(acc[ma], desc_a, desc_b,
                                                               (kb != kb_begin) || (k != 0));
            }
          }
          wgmma_commit();
          // wait<0> measured as fast as keeping one K block in flight (sm90/NOTES.md), and it
          // means this stage's reads are done: hand it back now (kStages - 1 loads in flight).
          wgmma_wait<0>();
#pragma unroll
          for (int ma = 0; ma < kMAtoms; ++ma) fence_regs(acc[ma]);
          release(ps.stage);
        }

        if constexpr (kClusterK > 1) {
          // Split-K inside the cluster: partial tiles meet in the leader's registers.
          const u32 park = base + kReduceOffset;
          constexpr int kQuads = kMAtoms * kAcc / 4;
          if (rank != 0) {
            mbar_wait_acquire_cluster(reduce_empty_bar, reduce_phase ^ 1);  // the leader took the last one
#pragma unroll
            for (int q = 0; q < kQuads; ++q) {
              const int ma = q / (kAcc / 4), i = (q % (kAcc / 4)) * 4;
              st_shared_f4(park + (q * kConsumers + ctid) * 16, acc[ma][i], acc[ma][i + 1], acc[ma][i + 2],
                           acc[ma][i + 3]);
            }
            // One arrive per warp: the warp barrier orders every lane's stores before lane 0's
            // release, which the leader's acquire then observes.
            __syncwarp();
            if (lane == 0) mbar_arrive_release_cluster(reduce_full_bar, 0);
            reduce_phase ^= 1;
            continue;  // the leader runs the epilogue
          }
          mbar_wait_acquire_cluster(reduce_full_bar, reduce_phase);
#pragma unroll 1
          for (int r = 1; r < kClusterK; ++r) {
            const u32 peer = map_to_rank(park, r);
#pragma unroll
            for (int q = 0; q < kQuads; ++q) {
              const int ma = q / (kAcc / 4), i = (q % (kAcc / 4)) * 4;
              const float4 v = ld_shared_cluster_f4(peer + (q * kConsumers + ctid) * 16);
              acc[ma][i] += v.x;
              acc[ma][i + 1] += v.y;
              acc[ma][i + 2] += v.z;
              acc[ma][i + 3] += v.w;
            }
          }
          __syncwarp();
          if (lane == 0) {
#pragma unroll 1
            for (int r = 1; r < kClusterK; ++r) mbar_arrive_release_cluster(reduce_empty_bar, r);
          }
          reduce_phase ^= 1;
        }

        epilogue(args, t, rank_m, math_wg, warp_in_wg, lane, acc);
      }
    }
    // A clustered CTA must outlive its peers' remote arrivals on (and multicasts into, and reads
    // of) its shared memory.
    if constexpr (kClusterSize > 1) cluster_sync();
  }

  __device__ static void load_a(const GemmArgs& args, u32 dst, u32 bar, int m0, int k0, int batch) {
    if constexpr (kAMajorMN) {
#pragma unroll
      for (int c = 0; c < kBlockM / 64; ++c) tma_load_3d(dst + c * 8192, &args.tma_a, bar, m0 + c * 64, k0, batch);
    } else {
      tma_load_3d(dst, &args.tma_a, bar, k0, m0, batch);
    }
  }

  __device__ static void load_b(const GemmArgs& args, u32 dst, u32 bar, int n0, int k0, int batch, u32 rank_m) {
    if constexpr (kClusterM == 1) {
      if constexpr (kBMajorMN) {
#pragma unroll
        for (int c = 0; c < kBlockN / 64; ++c) tma_load_3d(dst + c * 8192, &args.tma_b, bar, n0 + c * 64, k0, batch);
      } else {
        tma_load_3d(dst, &args.tma_b, bar, k0, n0, batch);
      }
    } else {
      const unsigned short mask = (1u << kClusterM) - 1;
      if constexpr (kBMajorMN) {
        constexpr int kBoxes = kBlockN / 64 / kClusterM;
#pragma unroll
        for (int c = 0; c < kBoxes; ++c) {
          const int box = int(rank_m) * kBoxes + c;
          tma_load_3d_multicast(dst + box * 8192, &args.tma_b, bar, n0 + box * 64, k0, batch, mask);
        }
      } else {
        constexpr int kRows = kBlockN / kClusterM;
        tma_load_3d_multicast(dst + rank_m * kRows * 128, &args.tma_b, bar, k0, n0 + int(rank_m) * kRows, batch, mask);
      }
    }
  }

  // The fused epilogue from registers. wgmma's f32 accumulator layout: thread (warp w, lane l)
  // holds, for each 8-column group i, rows w*16 + l/4 (+8) and columns i*8 + (l%4)*2 (+1).
  __device__ static void epilogue(const GemmArgs& args, const TileCoord& t, u32 rank_m, int math_wg, int warp_in_wg,
                                  int lane, float (&acc)[kMAtoms][kAcc]) {
    using Op = EpilogueOp<Epi>;
    const long long m = args.p.m, n = args.p.n;
    const long long row_base =
        (long long)(t.m_block + rank_m) * kBlockM + math_wg * kWGRows + warp_in_wg * 16 + lane / 4;
    const long long col_base = (long long)t.n_block * kBlockN + (lane % 4) * 2;
    Op epi;
    epi.init(args.p, t.batch);
    // Bias once per row and per column of the thread's fragment, not per element. Column biases
    // come kGroup column pairs at a time, the next group's loads issued before this group's
    // stores (a load after a store to D cannot be hoisted above it: they may alias).
    float rbias[kMAtoms][2];
#pragma unroll
    for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const long long row = row_base + ma * 64 + h * 8;
        rbias[ma][h] = row < m ? epi.row_bias(row) : 0.0f;
      }
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
    const bool full_tile = (long long)(t.m_block + rank_m + 1) * kBlockM <= m &&
                           (long long)(t.n_block + 1) * kBlockN <= n && epi.pairs_aligned();
    if (full_tile) {
      typename Op::DType* rowp[kMAtoms][2];
#pragma unroll
      for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
        for (int h = 0; h < 2; ++h) rowp[ma][h] = epi.row_ptr(row_base + ma * 64 + h * 8) + col_base;
#pragma unroll
      for (int g = 0; g < kPairs / kGroup; ++g) {
        if (g + 1 < kPairs / kGroup) load_cbias(g + 1, next_cbias);
#pragma unroll
        for (int ii = 0; ii < kGroup; ++ii) {
          const int i = g * kGroup + ii;
#pragma unroll
          for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              epi.store_pair_aligned(rowp[ma][h] + i * 8, row_base + ma * 64 + h * 8, col_base + i * 8,
                                     acc[ma][i * 4 + h * 2], acc[ma][i * 4 + h * 2 + 1], rbias[ma][h], cbias[ii][0],
                                     cbias[ii][1]);
        }
        if (g + 1 < kPairs / kGroup) {
#pragma unroll
          for (int ii = 0; ii < kGroup; ++ii) {
            cbias[ii][0] = next_cbias[ii][0];
            cbias[ii][1] = next_cbias[ii][1];
          }
        }
      }
      return;
    }
#pragma unroll
    for (int g = 0; g < kPairs / kGroup; ++g) {
      if (g + 1 < kPairs / kGroup) load_cbias(g + 1, next_cbias);
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
      if (g + 1 < kPairs / kGroup) {
#pragma unroll
        for (int ii = 0; ii < kGroup; ++ii) {
          cbias[ii][0] = next_cbias[ii][0];
          cbias[ii][1] = next_cbias[ii][1];
        }
      }
    }
  }
};

}  // namespace sm90
}  // namespace dg

// Defines the extern "C" kernel entry NAME for one instantiation GEMM (a dg::sm90::Gemm<...>).
#define DGEMM_SM90_DEFINE_KERNEL(NAME, GEMM)                                                     \
  extern "C" __global__ void __launch_bounds__(GEMM::kThreads, GEMM::kBlocksPerSM)               \
      NAME(const __grid_constant__ dg::sm90::GemmArgs args) {                                    \
    GEMM::run(args);                                                                             \
  }

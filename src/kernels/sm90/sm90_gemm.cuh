// sm90 family: the Hopper GEMM kernel for 16-bit (f16, bf16) and 8-bit (e4m3, e5m2, s8) operands.
//
// Persistent grid: each CTA (or cluster) walks work units of the shared tile scheduler
// (common/scheduler.cuh). Warp specialization: warpgroup 0 is the producer (one thread issues TMA
// loads into a kStages ring of 128-byte-swizzled stages guarded by full/empty mbarriers); the
// consumer warpgroups (one for BLOCK_M = 64, two otherwise) issue wgmma.mma_async with
// accumulators in registers and run the fused epilogue straight from registers. Tails in M, N and
// K come from TMA's out-of-bounds zero fill. The kernel computes the launcher's view X = KA * KB of
// the problem (core/kernel_view.hpp): with swap-AB that is D^T, so a decode-sized M is wgmma's N
// (BLOCK_N down to 8) and the epilogue stores X transposed.
//
// Operands (kType): a stage row is 128 bytes whatever the element size, so BLOCK_K is 64 for 16-bit
// and 128 for 8-bit operands, and one stage is four m64nNk16 (16-bit) or m64nNk32 (8-bit) MMAs.
// 16-bit operands may be K-major or MN-major (wgmma's transpose bits); 8-bit ones must be K-major.
// s8 accumulates exactly in s32; fp8 in f32.
//
// Input scales (DGEMM_1.1) that vary along K multiply inside the sum (kAScale, kBScale), so each
// stage's MMAs accumulate a fresh partial tile that is then "promoted": acc += partial * sa * sb,
// in f32 (the fp8 tensor-core accumulation is narrower than f32: promoting every 128 of K keeps
// the result accurate). Per stage, BLOCK_K = 128 = one scale block:
//   kScaleVec128: one f32 per row of the tile's operand, loaded by TMA with the stage;
//   kScaleBlk128: one f32 per 128 x 128 block: the tile's K row of them is copied to shared memory
//                 at the start of each tile. A tile's rows lie in one 128-block; its columns lie
//                 in one, or (BLOCK_N not dividing 128, e.g. 192) in two, the boundary between
//                 them falling on an 8-column group (kBSpan2).
// Scales that do not vary along K (per tensor, per row or column) are applied by the epilogue.
//
// Clusters (one kind per kernel, but for one combination below):
//   kClusterM = 2: two CTAs take vertically adjacent tiles (same N block); each loads half of the
//     shared B tile and multicasts it to both, halving B's L2 -> SM traffic.
//   kClusterN = 2: two CTAs take horizontally adjacent tiles (same M block); each loads half of the
//     shared A tile and multicasts it to both, halving A's L2 -> SM traffic (the larger operand
//     of a 128x64 or 128x128 tile). The host halves the scheduler's N blocks (TileGrid), so a
//     work unit is a pair of N blocks; a pair's second tile past N computes zeros, stores nothing.
//   kClusterK = 2..8: the CTAs of a cluster split one tile's K blocks (so that few output tiles
//     still keep every SM streaming operands); each non-leader parks its f32 partial tile in its
//     own shared memory, the leader (rank 0) adds them through distributed shared memory and runs
//     the epilogue. One launch, no workspace.
//   The one combination: 64-row tiles of a block-scaled D^T in pairs along M (kPairAmax, which
//   share nothing but their column maxima) may split K as well, 2 x kClusterK CTAs.
//
// Grouped problems (kGrouped, src/kernels/GROUPED.md): the batches are the groups of a
// mixture-of-experts layer, whose rows the kernel reads from the caller's device array as it runs
// (common/group_walk.cuh): the persistent walk covers each group's own M tiles, a tile's rows past
// its group's end are loaded (they are inside A, or zero-filled) but never stored, and the
// epilogue's vectors are the group's. One CTA per tile. Block scales are the group's tensors
// (GroupArgs' strides): a kScaleVec128 map gains the group as a third coordinate, a kScaleBlk128
// tensor is read g * stride further; a contiguous A's are indexed by its shared rows.
//
// The JIT prelude instantiates Gemm<...> through DGEMM_SM90_DEFINE_KERNEL (bottom) so that the
// kernel has a stable extern "C" name.
#pragma once

#include "common/gemm_params.cuh"
#include "common/group_walk.cuh"
#include "common/pipeline.cuh"
#include "common/scheduler.cuh"
#include "common/stream_k_split.cuh"
#include "common/stream_k_walk.cuh"
#include "epilogue/epilogue.cuh"
#include "sm90/ptx_cluster.cuh"
#include "sm90/wgmma_atoms.cuh"

namespace dg {
namespace sm90 {

// A compile-time bool as a value (for generic lambdas that are instantiated twice).
template <bool B>
struct BoolTag {
  static constexpr bool value = B;
};

// Operand kinds (kType), numbered as the launcher writes them.
enum : int { kOpBF16 = 0, kOpF16 = 1, kOpE4M3E4M3 = 2, kOpE4M3E5M2 = 3, kOpE5M2E4M3 = 4, kOpE5M2E5M2 = 5, kOpS8 = 6 };
// How an operand's input scale enters the main loop.
enum : int { kScaleNone = 0, kScaleVec128 = 1, kScaleBlk128 = 2 };
// Or'ed into kAScale / kBScale: the scales are UE8M0 bytes (2^(e - 127), 0xFF = NaN), not f32.
enum : int { kScaleUE8M0 = 4 };


// The kernel's one parameter, passed as __grid_constant__ so the tensor maps stay in parameter
// space (TMA reads them from there; the host encodes them per call, on its stack).
struct GemmArgs {
  TensorMap tma_a;   // KA: K-major {K, rows, batch} box {BLOCK_K, BLOCK_M / kClusterN}, or MN-major {rows, K, batch} box {64, 64}
  TensorMap tma_b;   // KB: K-major {K, cols, batch} box {BLOCK_K, BLOCK_N / kClusterM}, or MN-major box {64, 64}
  TensorMap tma_sa;  // kScaleVec128 scales of KA: f32 {rows, K blocks} box {BLOCK_M, 1} (grouped: {.., groups} box {.., 1})
  TensorMap tma_sb;  // kScaleVec128 scales of KB: f32 {cols, K blocks} box {BLOCK_N, 1} (grouped: as KA's)
  TensorMap tma_d;   // kStoreChunks: X (16-bit, row-major) {cols, rows, batch} box {64, 64}, 128B swizzle
  DgemmParams p;     // the kernel's view: sizes, leading dimensions, pointers, epilogue values
  TileGrid tiles;    // what the scheduler walks (cluster_m = kClusterM, split_k = 1; kClusterN: N blocks counted in pairs)
  int num_k_blocks;
  int store_d;  // kStoreChunks > 0 and 1: the epilogue stores through tma_d (else from registers)
  const void* sa_blk;  // kScaleBlk128 scales of KA (f32 or UE8M0): element (row block, K block) at r * ld + c ...
  const void* sb_blk;  // ... or r + c * ld when the tensor is MN-major (ld < 0 encodes that)
  long long sa_ld, sb_ld;
  // The batch coordinate of KA's and KB's tensor maps is batch * step: 0 for an operand every
  // batch (or group) shares (its map then has one batch), 1 otherwise.
  int a_batch_step, b_batch_step;
  GroupArgs groups;  // kGrouped: the per-group rows (common/group_walk.cuh)
  // A block-scaled FP8 D (the epilogue's kOutBlockScale): its scale of row r, column block cb, batch
  // b at d_scale[b * ds_batch + r * ds_row + cb * ds_col] (f32 or UE8M0 bytes).
  void* d_scale;
  long long ds_row, ds_col, ds_batch;
  // kStreamK (core/stream_k.hpp): the last sk_tiles work units are shared out by K blocks, ranges of
  // sk_iters over the first sk_ctas CTAs. A CTA whose range starts inside a tile leaves its partial
  // tile in slot blockIdx.x of sk_partials (BLOCK_M x BLOCK_N f32 or s32) and sets its warps' flags
  // to sk_token; the CTA holding the tile's first K block waits for them, adds the partials and
  // clears the flags (so that a replay of the same launch finds them cleared).
  // kPairGlobal (a swapped block-scaled D on 64-row tiles without a cluster): sk_flags holds one
  // flag per tile and sk_partials BLOCK_N column maxima per tile, with sk_token as above.
  int sk_tiles, sk_ctas, sk_iters;
  int sk_split;  // > 0: each shared tile is cut into sk_split even pieces (CTA c: tile c / sk_split)
  unsigned long long sk_token;
  unsigned long long* sk_flags;  // [slot][consumer warpgroup part][warp]
  float* sk_partials;            // [slot][BLOCK_M x BLOCK_N]
  // The bytes of a stage's boxes that are not loaded: a K-major operand (not multicast, not
  // grouped) whose rows end inside the first tile (KA's M, or KB's N: a swapped small M) has a box
  // of exactly its rows, not the tile's (TMA's zero fill of the rest cost like a load); the
  // stage's rows past the box keep stale data, which reaches only accumulator rows or columns that
  // are never stored.
  int box_short_bytes;
  // The scheduler's multiply-and-shift divisors of `tiles` (TileScheduler::coords_fast).
  TileDivs tile_divs;
};

// One work unit as the loops see it: the tile's first row of X and the end of the rows it may
// store (m, or its group's end), its N block, the batch of its operands and output, its group.
struct Work {
  long long row0, row_end;
  int n_block, batch, group;
  // kStreamK: 0 = a whole tile; -1 = a piece whose partial tile goes to this CTA's workspace slot;
  // p > 0 = the first piece of a tile, which adds the partials of slots blockIdx.x + 1 .. p - 1.
  int sk;
  // Not grouped, not stream-K: this is the CTA's last unit (its producer loads nothing after it).
  bool last;
};

template <int kBlockM, int kBlockN, int kStages, int kType, bool kAKMajor, bool kBKMajor, int kClusterM,
          int kClusterK, class Epi, int kMinBlocks = 1, int kAScale = kScaleNone, int kBScale = kScaleNone,
          int kGrouped = kGroupNone, int kStoreChunks = 0, int kClusterN = 1, int kPingPong = 0, int kStreamK = 0>
struct Gemm {
  // Operands not K-major are MN-major: wgmma reads them with its transpose bit (16-bit only).
  static constexpr int kAMajorMN = kAKMajor ? 0 : 1;
  static constexpr int kBMajorMN = kBKMajor ? 0 : 1;
  static constexpr bool k8Bit = kType >= kOpE4M3E4M3;
  static constexpr bool kIntAcc = kType == kOpS8;
  using Acc = typename Select<kIntAcc, int, float>::type;
  // CTAs meant to share an SM (__launch_bounds__' minimum): 2 for the one-warpgroup tiles whose
  // accumulators fit 128 registers, so that one CTA's prologue and epilogue overlap the other's
  // main loop.
  static constexpr int kBlocksPerSM = kMinBlocks;
  static constexpr int kBlockK = k8Bit ? 128 : 64;  // one 128-byte swizzle span
  static constexpr int kMathWGs = kBlockM >= 128 ? 2 : 1;
  static constexpr int kThreads = 128 * (kMathWGs + 1);
  static constexpr int kConsumers = 128 * kMathWGs;
  // kPingPong: each consumer warpgroup owns whole tiles (all BLOCK_M rows, every m64 atom) and the
  // two take a CTA's tiles in turn. The stage ring is filled tile after tile, so their main loops
  // run one after the other and one warpgroup's epilogue overlaps the other's main loop (what
  // cuBLAS's non-cooperative 128x64 kernel and CUTLASS's ping-pong kernel do).
  static constexpr int kWGRows = kPingPong ? kBlockM : kBlockM / kMathWGs;
  static constexpr int kMAtoms = kWGRows / 64;  // m64 instructions per consumer warpgroup
  static constexpr int kAcc = kBlockN / 2;      // accumulators per thread per m64 atom
  // Units decoded by the host's multiply-and-shift divisors (TileScheduler::coords_fast) instead
  // of `/`: the first one is on the way from griddepcontrol.wait to the first TMA load, where five
  // integer divisions cost ~0.3 us a launch (bench/RESULTS.md, 2026-12-06 session 14). Not in
  // the ping-pong kernels nor the swapped (transposed X) ones with 128 accumulators a thread
  // (128x256 swap): at the 168-register cap the multipliers held across their tile loop spilled
  // 4-12 bytes (test_sm90_compile), and they run problems where 0.3 us is noise.
  static constexpr bool kFastDecode =
      !kPingPong && (kMathWGs == 1 || kMAtoms * kAcc < 128 || !EpilogueOp<Epi>::kTrans);
  // The CTA's first unit decoded before griddepcontrol.wait (it reads only parameters and
  // blockIdx): the parameters' first constant-bank misses then overlap the previous kernel instead
  // of sitting between the wait and the first TMA load (~1000 cycles there, session 14 call 6).
  // Grouped walks read the group rows from device memory, and stream-K its own walk: not those;
  // nor the two-warpgroup tiles with more than 64 accumulators a thread, where the unit held
  // across the warpgroups' setmaxnreg made ptxas spill (128x200 swap 6 bytes, 128x256 c2 76).
  static constexpr bool kHoistFirst =
      kFastDecode && kGrouped == kGroupNone && !kStreamK && (kMathWGs == 1 || kMAtoms * kAcc <= 64);
  static constexpr int kQuads = kMAtoms * kAcc / 4;  // a thread's accumulators as float4s (K splits)
  static constexpr int kClusterSize = kClusterM * kClusterN * kClusterK;
  // A block-scaled D of a transposed view (epilogue_block_scaled_t): D's blocks run down X's
  // columns. 64-row tiles take them in clusters of two along M (kPairAmax: the pair's 128 rows are
  // one block; each CTA's column maxima go to the other through distributed shared memory), and
  // such a pair does not share B (a swapped small M's activations: a few rows, each CTA loads
  // them whole) - the cluster is only for the exchange. Such a pair may also split K (a cluster of
  // 2 x kClusterK, ranks M fastest): each K leader (rank_k 0) adds its non-leaders' partial tiles
  // as any split-K cluster does, and the two leaders then exchange their maxima.
  static constexpr bool kColAmax = EpilogueOp<Epi>::kOutBlock != 0 && EpilogueOp<Epi>::kTrans;
  static constexpr bool kPairAmax = kColAmax && kClusterM == 2;
  // ... or, without a cluster (kPairGlobal), through global memory: each 64-row tile publishes its
  // column maxima and a flag in the workspace and waits for its partner's (the tile of M block
  // m ^ 1), as stream-K's pieces do; the CTAs stay spread over the SMs as the grid places them.
  static constexpr bool kPairGlobal = kColAmax && kBlockM == 64 && kClusterSize == 1;
  static constexpr bool kShareB = kClusterM > 1 && !kColAmax;
  static constexpr int kClusterMN = (kShareB ? kClusterM : 1) * kClusterN;  // CTAs sharing each stage by multicast
  // How each operand's scale enters the main loop (kScaleNone / kScaleVec128 / kScaleBlk128), and
  // whether its scales are UE8M0 bytes.
  static constexpr int kAMode = kAScale & 3, kBMode = kBScale & 3;
  static constexpr bool kAU8 = (kAScale & kScaleUE8M0) != 0, kBU8 = (kBScale & kScaleUE8M0) != 0;
  static constexpr bool kPromote = kAMode != kScaleNone || kBMode != kScaleNone;
  // Main loop without promotion: keep one K block of MMAs in flight (wait<1>) instead of draining
  // the tensor core after every stage (wait<0>), where nothing else feeds it during the drain: one
  // consumer warpgroup and one CTA per SM, or a 64-column tile (four m64n64k16 per stage and
  // warpgroup: the drain is a large share of a stage). Measured A/B, 2026-12-02 (bench/RESULTS.md
  // run N): swap-AB and one-warpgroup tiles 1-3 % faster on every decode row and up to 15 % on
  // batched ones (64x1024x1024 5.98 -> 5.11 us), 128x64 1024^3 6.58 -> 6.33 us; slower with two
  // warpgroups on 128-256 columns (1536^3 128x192 14.7 -> 16.9 us, 8192^3 +1.7 %), with two CTAs
  // per SM (64x128 b2 +1.3 %) and for 128x64 split over a cluster (ck2 +2-6 %).
  static constexpr bool kMmaLag =
      !kPromote && ((kMathWGs == 1 && kMinBlocks == 1) || (kBlockN <= 64 && kClusterK == 1) || kPingPong);
  // Warpgroups that consume (and release) each stage.
  static constexpr int kStageConsumerWGs = kPingPong ? 1 : kMathWGs;
  // A tile's columns straddle two 128 x 128 scale blocks of KB (BLOCK_N does not divide 128).
  static constexpr bool kBSpan2 = kBMode == kScaleBlk128 && 128 % kBlockN != 0;
  // The K-row scale rows kept per tile: KA's, then KB's one or two.
  static constexpr int kBlkRows = 1 + (kBSpan2 ? 2 : 1);
  static constexpr u32 kStageA = kBlockM * 128;
  static constexpr u32 kStageB = kBlockN * 128;
  // Per-stage scale slots (kScaleVec128), 128-byte aligned, after the operand ring.
  static constexpr u32 kScaleA = kAMode == kScaleVec128 ? (kBlockM * (kAU8 ? 1 : 4) + 127) / 128 * 128 : 0;
  static constexpr u32 kScaleB = kBMode == kScaleVec128 ? (kBlockN * (kBU8 ? 1 : 4) + 127) / 128 * 128 : 0;
  static constexpr u32 kScaleOffset = kStages * (kStageA + kStageB);
  // Split-K partial tile parked for the leader: [accumulator quad][consumer thread] of float4.
  static constexpr u32 kReduceBytes = kClusterK > 1 ? u32(kBlockM) * kBlockN * 4 : 0;
  static constexpr u32 kReduceOffset = kScaleOffset + kStages * (kScaleA + kScaleB);
  // The epilogue's staging buffer (kStoreChunks > 0): per consumer warpgroup, kStoreChunks boxes of
  // 64 rows x 64 columns of a 16-bit X, 128B-swizzled (1024-aligned), stored by TMA.
  static constexpr u32 kStoreBox = 64 * 128;
  static constexpr u32 kStoreOffset = (kReduceOffset + kReduceBytes + 1023) / 1024 * 1024;
  // A block-scaled D of a transposed view (epilogue_block_scaled_t): each consumer warp's maximum
  // of every tile column, [warp][column] floats; kPairAmax: then two slots of the peer CTA's
  // column maxima, [tile parity][column], each with its own barrier (after the others).
  static constexpr u32 kColAmaxOffset =
      kStoreChunks > 0 ? kStoreOffset + kMathWGs * kStoreChunks * kStoreBox : kReduceOffset + kReduceBytes;
  static constexpr u32 kPairOffset = kColAmaxOffset + u32(kConsumers / 32) * kBlockN * 4;
  static constexpr u32 kColAmaxBytes =
      kColAmax ? u32(kConsumers / 32 + (kPairAmax ? 2 : 0) + (kPairGlobal ? 1 : 0)) * kBlockN * 4 : 0;
  static constexpr u32 kBarrierOffset = kColAmaxOffset + kColAmaxBytes;
  static constexpr u32 kNumBarriers = 2 * kStages + 2 + (kPairAmax ? 2 : 0);
  // After the barriers (16-byte aligned): the tile's K row of kScaleBlk128 scales, sized by the
  // launcher at run time (num_k_blocks floats per blocked operand, each rounded up to 4).
  static constexpr u32 kBlkOffset = kBarrierOffset + (kNumBarriers * 8 + 15) / 16 * 16;
  // +1024: the dynamic shared window is only 16-byte aligned; swizzled stages need 1024.
  static constexpr u32 kSmemBytes = kBlkOffset + 1024;
  static constexpr int kProducerRegs = 40;
  static constexpr int kConsumerRegs = 232;
  // Column biases are loaded kGroup column pairs ahead of the stores that use them. Two CTAs per
  // SM (128 registers a thread) with 64 accumulators take 2: the 64x128 b2 register epilogue with
  // a bias and GELU spilled 180 bytes at 8 (ptxas; 0 at 2, 28 at 4). So do stream-K tiles with
  // 128 accumulators a thread (128x256 with a column bias spilled 58 bytes at 8).
  static constexpr int kPairs = kAcc / 4;  // 8-column groups per thread per atom
  static constexpr int kGroup = kMinBlocks > 1 && kAcc >= 64       ? 2
                                : kStreamK && kMAtoms * kAcc >= 128 ? 2
                                : kPairs % 8 == 0                   ? 8
                                : kPairs % 4 == 0                   ? 4
                                : kPairs % 2 == 0                   ? 2
                                                                    : 1;

  static_assert(kBlockM == 64 || kBlockM == 128 || kBlockM == 256, "BLOCK_M is 64, 128 or 256");
  static_assert(kBlockN % 8 == 0 && kBlockN >= 8 && kBlockN <= 256, "BLOCK_N is a multiple of 8 up to 256");
  static_assert(!kIntAcc || kBlockN == 8 || kBlockN == 16 || kBlockN == 24 || kBlockN % 16 == 0,
                "s8 wgmma: N = 8, 16, 24 or a multiple of 16");
  static_assert(!k8Bit || (kAKMajor && kBKMajor), "8-bit wgmma reads K-major operands only");
  static_assert(!kBMajorMN || kBlockN % 64 == 0, "an MN-major B tile is made of 64-column boxes");
  // Promoting tiles whose three sets (the sum and two stages' partials) fit 192 registers keep the
  // next stage's MMAs running while they promote the current one (kPipePromote; 128x128, 64x128).
  static constexpr bool kPipePromote = kPromote && kMinBlocks == 1 && kMAtoms * kAcc * 3 <= 192;
  // Promoting tiles hold two or three sets: up to 192 of the 232 consumer registers (no spills,
  // checked by tests/test_sm90_compile).
  static_assert(kMAtoms * kAcc * (kPipePromote ? 3 : kPromote ? 2 : 1) <= (kPromote ? 192 : 128),
                "accumulators must fit the consumer register budget");
  static_assert(!kPromote || !kIntAcc, "block scales are for fp8 operands");
  static_assert(kAMode != kScaleBlk128 || kBlockM <= 128, "a tile's rows lie in one 128 x 128 scale block");
  static constexpr int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }
  // A tile starts at a multiple of gcd(BLOCK_N, 128) inside its first block: it reaches into at
  // most one more block when BLOCK_N <= 128 + gcd (192: yes; 152: no).
  static_assert(kBMode != kScaleBlk128 || kBlockN <= 128 + gcd(kBlockN, 128),
                "a tile's columns lie in at most two 128 x 128 scale blocks");
  static_assert(kStages >= 2, "need at least two stages");
  static_assert(kMinBlocks == 1 || (kMathWGs == 1 && kAcc * (kPromote ? 2 : 1) <= 64),
                "two CTAs per SM: one warpgroup, <= 64 accumulator registers");
  static_assert(kMinBlocks <= 2 || (!kPromote && kAcc <= 16),
                "three or four CTAs per SM (64 or 80 registers a thread): <= 16 accumulator registers");
  static_assert(kClusterM == 1 || kClusterK == 1 || kPairAmax, "a cluster either shares B or splits K (pairs exchanging maxima may split K)");
  static_assert(kClusterN == 1 || (kClusterM == 1 && kClusterK == 1), "a cluster sharing A does nothing else");
  static_assert(kClusterN == 1 || kClusterN == 2, "clusters of 1 or 2 CTAs along N");
  static_assert(kClusterN == 1 || (kAKMajor ? (kBlockM / kClusterN) % 8 == 0 : (kBlockM / 64) % kClusterN == 0),
                "A box rows (K-major) or 64-row boxes (M-major) per CTA");
  static_assert(kClusterM == 1 || kClusterM == 2, "clusters of 1 or 2 CTAs along M");
  static_assert(kClusterK >= 1 && kClusterK <= 8, "K split over at most 8 CTAs (a portable cluster)");
  static_assert(!kShareB || !kBMajorMN || (kBlockN / 64) % kClusterM == 0,
                "an N-major B tile splits into whole 64-column boxes per CTA");
  static_assert(!kShareB || kBMajorMN || (kBlockN / kClusterM) % 8 == 0, "B box rows per CTA");
  static_assert(!kColAmax || (kBlockM == 128 && kClusterSize == kClusterK) ||
                    (kBlockM == 64 && kPairAmax && kClusterN == 1 && kClusterK <= 4) ||
                    (kPairGlobal && !kStreamK && kMinBlocks == 1),
                "a transposed block-scaled D: 128-row tiles, or 64-row tiles in pairs along M (a cluster of two, "
                "times a K split of at most four, or one CTA each without stream-K)");
  // Grouped only over contiguous groups aligned to BLOCK_M (the launcher asks it; `_ts` kernels):
  // TMA cannot stop at a group's last row, which such a group's tiles never cross. Masked groups
  // can end inside a tile, and a grouped kernel with both epilogues (TMA for the tiles inside a
  // group, registers for the rest) spilled 188 bytes at 128x256 masked (ptxas, 2026-12-01).
  // A staging box is 64 rows of 128 bytes: 64 columns of a 16-bit D, 128 of an FP8 one.
  static constexpr int kBoxCols = 128 / int(sizeof(typename EpilogueOp<Epi>::DType));
  // A 16-bit D of a transposed view (X(row, col) at D[col * ldd + row]: the swap-AB tiles) stored
  // through shared memory and TMA on the CTA's last tile (epilogue_tma_t): the stage ring is idle
  // then, and each consumer warpgroup's 64 rows of A's stages (8 KB a stage, read by its own
  // MMAs only) become its staging slots, one 64-column chunk of the tile each. A box is 64 X rows
  // (128 bytes of a D row) by kTBox X columns (D rows), kTBox the largest of 64, 32, 16, 8 that
  // divides BLOCK_N, so that no box reaches into the next tile's columns. Not in clusters along M
  // (the `_c2_swap` pairs, measuring only: 8 bytes spilled at 64x256 and 128x208 with a full
  // epilogue, ptxas sm_90a), nor on 8-column tiles, whose 4 values a thread the registers store
  // sooner (H100 A/B: 64x8 swap 1-3.5 % slower this way, 64x16 even to 1 % faster; 64x32-128x200
  // 1-18 % faster, bench/RESULTS.md 2026-12-06 session 13).
  static constexpr bool kTransStage = EpilogueOp<Epi>::kTrans && kBoxCols == 64 && EpilogueOp<Epi>::kOutBlock == 0 &&
                                      kMAtoms == 1 && !kPingPong && kGrouped == kGroupNone && !kStreamK &&
                                      kClusterM == 1 && kBlockN >= 16;
  static constexpr int kTBox = kBlockN % 64 == 0 ? 64 : kBlockN % 32 == 0 ? 32 : kBlockN % 16 == 0 ? 16 : 8;
  static constexpr int kTChunks = (kBlockN + 63) / 64;
  static constexpr int kTSlots = kStages < kTChunks ? kStages : kTChunks;
  static_assert(!kTransStage || (kStoreChunks == 0 && kStageA % 1024 == 0),
                "the transposed staged epilogue uses A's stages (1024-aligned) as its slots");
  static_assert(kStoreChunks == 0 ||
                    ((kMAtoms == 1 || (kPingPong && (kBoxCols == 64 || (kIntAcc && EpilogueOp<Epi>::kExactInt)))) &&
                     kBlockN % kBoxCols == 0 &&
                     (kBlockN / kBoxCols) % kStoreChunks == 0 &&
                     (kGrouped == kGroupNone || (kGrouped == kGroupContiguous && kBoxCols == 64 && !kPingPong)) &&
                     (kBoxCols == 64 || EpilogueOp<Epi>::kOutBlock != 0 || (kIntAcc && EpilogueOp<Epi>::kExactInt))),
                "TMA-stored epilogue: 64 rows per warpgroup (ping-pong: a 16-bit or exact i32 D, 64 at a time), "
                "whole boxes, grouped only contiguous with a 16-bit D; a 16-bit, block-scaled FP8 or exact i32 D");
  // No clusters: ping-pong 128x128 in clusters of two along M or N (multicast, as cuBLAS's INT8
  // kernel) ran correctly but no faster for i8 and fp8 (2026-12-04 call 2, kernels/sm90/NOTES.md),
  // and spilled 8 bytes with 16-bit operands.
  static_assert(!kPingPong || (kMathWGs == 2 && kClusterSize == 1 && !kPromote && kGrouped == kGroupNone &&
                               kMAtoms * kAcc <= 128),
                "ping-pong: two consumer warpgroups each holding a whole tile, no cluster, no promoted block scales");
  static_assert(!kPingPong || EpilogueOp<Epi>::kOutBlock == 0, "ping-pong: not with a block-scaled D");
  static_assert(kGrouped == kGroupNone || (kClusterSize == 1 && EpilogueOp<Epi>::kOutBlock == 0),
                "grouped: one CTA per tile (a cluster's tiles could straddle groups), no block-scaled D");
  static_assert(!kStreamK || kClusterSize == 1, "stream-K: one CTA per work unit");

  // The work unit `unit`, or false past the last one. Grouped walks scan the group rows (each
  // walker keeps its own cursor; units only increase).
  // kFast: the unit's coordinates by the host's multiply-and-shift divisors (TileScheduler::coords_fast).
  template <bool kFast>
  __device__ __forceinline__ static bool next_work(const GemmArgs& args, const TileScheduler& sched, int num_units,
                                                   GroupWalk<kGrouped, kBlockM>& walk, int unit, u32 rank_m, u32 rank_n,
                                                   Work& w) {
    if constexpr (kGrouped != kGroupNone) {
      if (!walk.seek(unit)) return false;
      walk.tile(unit, w.row0, w.n_block);
      w.row_end = walk.end;
      w.batch = walk.group;
      w.group = walk.group;
    } else {
      if (unit >= num_units) return false;
      TileCoord t;
      if constexpr (kFast) t = sched.coords_fast(unit);
      else t = sched.coords(unit);
      w.row0 = (long long)(t.m_block + int(rank_m)) * kBlockM;
      w.row_end = args.p.m;
      w.n_block = t.n_block * kClusterN + int(rank_n);  // kClusterN: the scheduler walks pairs
      w.batch = t.batch;
      w.group = 0;
      w.last = unit + int(gridDim.x) / kClusterSize >= num_units;
    }
    return true;
  }

  // Stream-K's split as the walk (common/stream_k_walk.cuh) reads it: the launcher's, from the
  // arguments; or, for a grouped launch, recomputed where used from the units the walkers counted
  // (holding its fields across the walk spilled 64 bytes at 128x256, recomputing 16; ptxas sm_90a).
  struct StreamKSource {
    const GemmArgs& a;
    int n;
    __device__ __forceinline__ DgStreamKSplit split() const {
      return dg_stream_k_split_grouped(n, int(gridDim.x), a.num_k_blocks);
    }
    __device__ __forceinline__ int units() const { return n; }
    __device__ __forceinline__ int sk_tiles() const {
      if constexpr (kGrouped != kGroupNone) return int(split().sk_tiles);
      else return a.sk_tiles;
    }
    __device__ __forceinline__ int sk_ctas() const {
      if constexpr (kGrouped != kGroupNone) return int(split().sk_ctas);
      else return a.sk_ctas;
    }
    __device__ __forceinline__ int sk_iters() const {
      if constexpr (kGrouped != kGroupNone) return int(split().sk_iters);
      else return a.sk_iters;
    }
    __device__ __forceinline__ int sk_split() const {
      if constexpr (kGrouped != kGroupNone) return split().split;
      else return a.sk_split;
    }
  };

  // Calls body(w, kb_begin, kb_end) for each work unit of this CTA's cluster, in the order the
  // producer and the consumers must agree on (each side walks the same units on its own).
  template <class Body>
  __device__ __forceinline__ static void for_each_work(const GemmArgs& args, u32 rank_m, u32 rank_n, u32 rank_k,
                                                       const Work& first, bool first_valid, Body&& body) {
    const TileScheduler sched{args.tiles, args.tile_divs};
    const int num_units = kFastDecode ? sched.num_units_fast() : sched.num_units();
    const int num_clusters = gridDim.x / kClusterSize;
    GroupWalk<kGrouped, kBlockM> walk;
    if constexpr (kGrouped != kGroupNone) walk.start(args.groups, args.p.m, args.tiles.num_n_blocks);
    Work w;
    if constexpr (kStreamK) {
      // The walk (common/stream_k_walk.cuh), in two loops: the whole units in a plain loop, then
      // the shared pieces (one counter live across them, every other value read from `src`). One
      // loop for both, with one call of body, compiled the whole units' K loop and epilogue worse:
      // their stage descriptors and bounds left the uniform datapath (SASS of e4m3 128x128 s6:
      // K loop 63 instructions for 4 QGMMA with R2UR against 45 in the kernel without stream-K,
      // 48 with the loops apart; unit loop 2447 / 2000 / 2086), a candidate cause of the ~7 %
      // whole-tile slowdown (sm90 NOTES -3). The cost is code size (54 -> 91 KB there), so only
      // the cooperative tiles (two warpgroups on one tile) walk in two loops: the one-warpgroup
      // and ping-pong kernels' K loops build descriptors in vector registers either way (as
      // their kernels without stream-K do), and the rules that choose their twins were measured
      // with one loop.
      // A grouped launch learns its units only here: every walker counts them from the group rows
      // (one pass; seeking past the end leaves the total in walk.first) and splits them by the
      // launcher's rule (common/stream_k_split.cuh) before walking from the start again. Plain
      // launches read the launcher's split from the arguments (parameter space, no registers).
      int units = num_units;
      if constexpr (kGrouped != kGroupNone) {
        walk.seek(0x7fffffffffffffffll);
        units = int(walk.first);
        walk.start(args.groups, args.p.m, args.tiles.num_n_blocks);
      }
      const StreamKSource src{args, units};
      const int cta = int(blockIdx.x);
      constexpr bool kWholeApart = kMathWGs == 2 && !kPingPong;
      if constexpr (kWholeApart) {
        const int whole_end = dg_stream_k_whole_end(src);
        for (int unit = cta; unit < whole_end; unit += int(gridDim.x)) {
          next_work<false>(args, sched, num_units, walk, unit, 0, 0, w);
          w.sk = 0;
          body(w, 0, args.num_k_blocks);
        }
      }
      int it = kWholeApart ? kDgStreamKShared : dg_stream_k_begin(src, cta, int(gridDim.x));
      DgStreamKPiece piece;
      while (dg_stream_k_next(src, cta, int(gridDim.x), args.num_k_blocks, it, piece)) {
        // One decoding of the unit (its divisions and the code for them once, not per branch).
        next_work<false>(args, sched, num_units, walk, piece.unit, 0, 0, w);
        w.sk = piece.sk;
        body(w, piece.kb0, piece.kb1);
      }
    } else if constexpr (kHoistFirst) {
      // The first unit came decoded (first_unit, before griddepcontrol.wait).
      w = first;
      for (int unit = blockIdx.x / kClusterSize; first_valid;) {
        int kb_begin, kb_end;
        TileScheduler::k_range(args.num_k_blocks, kClusterK, int(rank_k), kb_begin, kb_end);
        body(w, kb_begin, kb_end);
        unit += num_clusters;
        first_valid = next_work<kFastDecode>(args, sched, num_units, walk, unit, rank_m, rank_n, w);
      }
    } else {
      (void)first;
      for (int unit = blockIdx.x / kClusterSize;
           next_work<kFastDecode>(args, sched, num_units, walk, unit, rank_m, rank_n, w); unit += num_clusters) {
        int kb_begin, kb_end;
        TileScheduler::k_range(args.num_k_blocks, kClusterK, int(rank_k), kb_begin, kb_end);
        body(w, kb_begin, kb_end);
      }
    }
  }

  // kHoistFirst: the CTA's first unit (valid = false: the CTA has none), before griddepcontrol.wait.
  __device__ __forceinline__ static bool first_unit(const GemmArgs& args, u32 rank_m, u32 rank_n, Work& w) {
    const TileScheduler sched{args.tiles, args.tile_divs};
    GroupWalk<kGrouped, kBlockM> walk;
    return next_work<kFastDecode>(args, sched, sched.num_units_fast(), walk, int(blockIdx.x / kClusterSize), rank_m,
                                  rank_n, w);
  }

  // The MMA of one K step (16 of 16-bit or 32 of 8-bit elements) into one m64 accumulator atom.
  __device__ __forceinline__ static void mma(Acc (&d)[kAcc], u64 desc_a, u64 desc_b, int scale_d) {
    if constexpr (kType == kOpBF16 || kType == kOpF16)
      wgmma_m64k16<kBlockN, kType == kOpF16 ? 1 : 0, kAMajorMN, kBMajorMN>(d, desc_a, desc_b, scale_d);
    else if constexpr (kIntAcc)
      wgmma_m64k32_s8<kBlockN>(d, desc_a, desc_b, scale_d);
    else
      wgmma_m64k32_fp8<kBlockN, (kType == kOpE5M2E4M3 || kType == kOpE5M2E5M2) ? 1 : 0,
                       (kType == kOpE4M3E5M2 || kType == kOpE5M2E5M2) ? 1 : 0>(d, desc_a, desc_b, scale_d);
  }

  __device__ static void run(const GemmArgs& args) {
    extern __shared__ unsigned char smem_raw[];
    const u32 raw = smem_addr(smem_raw);
    const u32 base = (raw + 1023u) & ~1023u;
    auto smem_a = [&](int s) { return base + s * kStageA; };
    auto smem_b = [&](int s) { return base + kStages * kStageA + s * kStageB; };
    auto scale_a = [&](int s) { return base + kScaleOffset + s * kScaleA; };
    auto scale_b = [&](int s) { return base + kScaleOffset + kStages * kScaleA + s * kScaleB; };
    auto full_bar = [&](int s) { return base + kBarrierOffset + s * 8; };
    auto empty_bar = [&](int s) { return base + kBarrierOffset + (kStages + s) * 8; };
    const u32 reduce_full_bar = base + kBarrierOffset + 2 * kStages * 8;   // leader: partials parked
    const u32 reduce_empty_bar = reduce_full_bar + 8;                      // non-leader: partials taken
    // Generic pointers into the aligned window, for data the consumers read with plain loads.
    auto generic = [&](u32 addr) { return reinterpret_cast<float*>(smem_raw + (addr - raw)); };
    // The tile's K row of kScaleBlk128 scales (KA's first, then KB's).
    float* blk_scales = generic(base + kBlkOffset);
    const int blk_stride = (args.num_k_blocks + 3) / 4 * 4;

    const u32 rank = kClusterSize > 1 ? cluster_ctarank() : 0;
    // A cluster's ranks: M fastest, then K (a pair along M may split K too: kPairAmax).
    const u32 rank_m = kClusterM > 1 ? rank % kClusterM : 0, rank_n = kClusterN > 1 ? rank : 0,
              rank_k = kClusterK > 1 ? rank / kClusterM : 0;
    const int warpgroup = threadIdx.x / 128;
    if (threadIdx.x == 0) {
      tma_prefetch_map(&args.tma_a);
      tma_prefetch_map(&args.tma_b);
      if constexpr (kAMode == kScaleVec128) tma_prefetch_map(&args.tma_sa);
      if constexpr (kBMode == kScaleVec128) tma_prefetch_map(&args.tma_sb);
      if constexpr (kStoreChunks > 0 || kTransStage)
        if (args.store_d) tma_prefetch_map(&args.tma_d);
      for (int s = 0; s < kStages; ++s) {
        mbar_init(full_bar(s), 1);                                // the local producer's arrive.expect_tx
        mbar_init(empty_bar(s), kClusterMN * kStageConsumerWGs * 4);  // every consumer warp sharing the stage
      }
      if constexpr (kClusterK > 1) {
        mbar_init(reduce_full_bar, (kClusterK - 1) * kConsumers / 32);  // every non-leader consumer warp
        mbar_init(reduce_empty_bar, kConsumers / 32);                   // every leader consumer warp
      }
      if constexpr (kPairAmax) {
        mbar_init(reduce_empty_bar + 8, 1);   // slot 0 of the peer's column maxima: its one arrive
        mbar_init(reduce_empty_bar + 16, 1);  // slot 1
      }
      mbar_fence_init();
    }
    // A cluster's start orders only the barrier initialisation before any peer's remote arrive or
    // multicast (fence.mbarrier_init above does the releasing; a relaxed arrive, no MEMBAR.ALL.GPU).
    // Its end has no cluster barrier: each CTA waits instead for the last remote access into its
    // own shared memory (below: the producer's tail for a shared operand ring, a split-K
    // non-leader's wait for the leader's read; pairs exchanging column maxima leave once their
    // last exchange has landed and write none into the peer after).
    if constexpr (kClusterSize > 1) cluster_sync_relaxed();
    else __syncthreads();
    Work first{};
    bool first_valid = false;
    if constexpr (kHoistFirst) first_valid = first_unit(args, rank_m, rank_n, first);
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
        constexpr u32 kStageBytes = kStageA + kStageB + (kAMode == kScaleVec128 ? kBlockM * (kAU8 ? 1 : 4) : 0) +
                                    (kBMode == kScaleVec128 ? kBlockN * (kBU8 ? 1 : 4) : 0);
        PipelineState<kStages> ps;
        for_each_work(args, rank_m, rank_n, rank_k, first, first_valid, [&](const Work& w, int kb_begin, int kb_end) {
          const int m0 = int(w.row0), n0 = w.n_block * kBlockN;
          const int a_batch = w.batch * args.a_batch_step, b_batch = w.batch * args.b_batch_step;
          // Grouped: the group's scale tensors (the map's third coordinate; 0 when they are shared).
          [[maybe_unused]] const int sa_group = args.groups.row_scale_stride != 0 ? w.group : 0;
          [[maybe_unused]] const int sb_group = args.groups.col_scale_stride != 0 ? w.group : 0;
          for (int kb = kb_begin; kb < kb_end; ++kb, ps.advance()) {
            const int k0 = kb * kBlockK;
            mbar_wait(empty_bar(ps.stage), ps.phase ^ 1);
            // The whole A and B tiles (half of the shared one arrives from the peer CTA when multicast).
            mbar_arrive_expect_tx(full_bar(ps.stage), kStageBytes - u32(args.box_short_bytes));
            load_a(args, smem_a(ps.stage), full_bar(ps.stage), m0, k0, a_batch, rank_n);
            load_b(args, smem_b(ps.stage), full_bar(ps.stage), n0, k0, b_batch, rank_m);
            if constexpr (kAMode == kScaleVec128) {
              if constexpr (kGrouped != kGroupNone)
                tma_load_3d(scale_a(ps.stage), &args.tma_sa, full_bar(ps.stage), m0, kb, sa_group);
              else
                tma_load_2d(scale_a(ps.stage), &args.tma_sa, full_bar(ps.stage), m0, kb);
            }
            if constexpr (kBMode == kScaleVec128) {
              if constexpr (kGrouped != kGroupNone)
                tma_load_3d(scale_b(ps.stage), &args.tma_sb, full_bar(ps.stage), n0, kb, sb_group);
              else
                tma_load_2d(scale_b(ps.stage), &args.tma_sb, full_bar(ps.stage), n0, kb);
            }
          }
        });
        // A ring shared by multicast: this CTA's barriers take the peers' consumer arrivals, and
        // every stage it fed (the multicast halves included) is released only once each peer's
        // consumers have read it. Waiting for every stage to be released again (the waits the
        // next kStages loads would make) therefore outlives every remote access into this CTA's
        // shared memory: the CTA may then exit without a cluster barrier (as CUTLASS's load tail).
        if constexpr (kClusterMN > 1) {
#pragma unroll 1
          for (int s = 0; s < kStages; ++s, ps.advance()) mbar_wait(empty_bar(ps.stage), ps.phase ^ 1);
        }
      }
      // Grouped: one thread of the grid (an idle producer warp's) reports the raw values' status.
      if constexpr (kGrouped != kGroupNone)
        if (blockIdx.x == 0 && threadIdx.x == 32) write_group_status<kGrouped>(args.groups, args.p.m);
    } else {
      if constexpr (kMathWGs == 2) setmaxnreg_inc<kConsumerRegs>();
      // Broadcast from lane 0 so the compiler knows the value is warp-uniform (the A descriptor's
      // offset is derived from it).
      const int math_wg = __shfl_sync(0xffffffffu, warpgroup - 1, 0);
      const int ctid = threadIdx.x - 128;  // consumer thread index
      const int lane = threadIdx.x & 31;
      const int warp_in_wg = (threadIdx.x / 32) & 3;
      // A stage may be refilled once every consumer warp of the cluster has released it.
      auto release = [&](int s) {
        if (lane == 0) {
          if constexpr (kClusterMN == 1) {
            mbar_arrive(empty_bar(s));
          } else {
#pragma unroll
            for (int r = 0; r < kClusterMN; ++r) mbar_arrive_cluster(empty_bar(s), r);
          }
        }
      };
      // With promotion, `acc` holds the f32 sum and `part` the current stage's MMA result
      // (kPipePromote: `part` and `part2` take turns, one promoted while the other is computed).
      Acc acc[kMAtoms][kAcc];
      Acc part[kPromote ? kMAtoms : 1][kPromote ? kAcc : 1];
      Acc part2[kPipePromote ? kMAtoms : 1][kPipePromote ? kAcc : 1];
      PipelineState<kStages> ps;
      u32 reduce_phase = 0;
      u32 pair_tiles = 0;  // kPairAmax: the tiles exchanged so far (slot = parity, phase = the next bit)
      int turn = 0;  // kPingPong: the CTA's tiles so far (even ones are warpgroup 0's)
      // The warpgroup's first row of the tile (and of A's stage): ping-pong warpgroups hold them all.
      const int wg_part = kPingPong ? 0 : math_wg;
      for_each_work(args, rank_m, rank_n, rank_k, first, first_valid, [&](const Work& w, int kb_begin, int kb_end) {
        if constexpr (kPingPong) {
          // The other warpgroup's tile: its stages go by (that warpgroup waits for and releases them).
          if ((turn & 1) != math_wg) {
            ++turn;
            for (int kb = kb_begin; kb < kb_end; ++kb) ps.advance();
            return;
          }
          // Main loops in tile order: wait until the other warpgroup has waited for every stage of
          // the tile before this one (named barrier 5 + this warpgroup). Without it this
          // warpgroup's stage parities could run more than one ring ahead of the barriers' phases
          // (a hang at 512 x 4096 x 4096, 64 K blocks on 8 stages; 2026-12-03 run 8).
          if (turn > 0) named_barrier_sync(5 + math_wg, 256);
          ++turn;
        }
        const int m0 = int(w.row0), n0 = w.n_block * kBlockN;
        // kBSpan2: the 8-column groups of the tile in KB's first scale block (128 - n0 % 128 is a
        // multiple of gcd(BLOCK_N, 128) >= 8, so no group straddles the boundary).
        const int b_split = kBSpan2 ? (128 - n0 % 128) / 8 : 0;
        if constexpr (kAMode == kScaleBlk128 || kBMode == kScaleBlk128)
          load_blk_scales(args, blk_scales, blk_stride, m0, n0, w.group, kb_begin, kb_end, ctid);
        [[maybe_unused]] bool handed_over = false;  // kPingPong: the next tile's warpgroup was let go (named barrier)
        if (kPromote || kb_begin == kb_end) {
          // Promotion adds into a zeroed sum; a CTA with no K blocks contributes zero.
#pragma unroll
          for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
            for (int i = 0; i < kAcc; ++i) acc[ma][i] = Acc(0);
        }
        // Promoting with two consumer warpgroups: warpgroup 1 issues each tile's first MMAs
        // after warpgroup 0's (a rendezvous on named barrier 4 that warpgroup 0 reaches once its
        // first stage is issued). The tensor core then finishes warpgroup 0's stage first, and
        // each warpgroup's promotion runs while the other's MMAs do; in lock step both promoted
        // at once with the tensor core idle (block-scaled 128x128 took 1.43-1.46x the time of
        // the unscaled kernel of the same tile, 2026-12-01).
        constexpr bool kSkew = kPromote && kMathWGs == 2 && !kPipePromote;
        if constexpr (kSkew)
          if (math_wg == 1 || kb_begin == kb_end) named_barrier_sync(4, 256);
        // Waits for stage `st` and issues its four MMAs into dst (`first`: overwrite dst).
        auto issue = [&](Acc(&dst)[kMAtoms][kAcc], const PipelineState<kStages>& st, bool first) {
          mbar_wait(full_bar(st.stage), st.phase);
#pragma unroll
          for (int ma = 0; ma < kMAtoms; ++ma) fence_regs(dst[ma]);
          wgmma_fence();
          // The stage's two descriptors are built once; each MMA adds its byte offset (>> 4) to
          // the 14-bit start-address field, which cannot carry below 256 KB of shared memory.
          // One MMA covers 32 bytes of K: K-major steps 32 bytes inside the swizzled row;
          // MN-major (16-bit) steps 16 K rows. Chunk ma is the warpgroup's ma-th 64-row slice of A.
          const u64 desc_b0 = make_desc_sw128(smem_b(st.stage), kBMajorMN ? 8192 : 16, 1024);
          const u64 desc_a0 = make_desc_sw128(smem_a(st.stage) + wg_part * kMAtoms * 8192, kAMajorMN ? 8192 : 16, 1024);
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            const u64 desc_b = desc_b0 + u64((kBMajorMN ? k * 2048 : k * 32) >> 4);
#pragma unroll
            for (int ma = 0; ma < kMAtoms; ++ma) {
              const u64 desc_a = desc_a0 + u64((ma * 8192 + (kAMajorMN ? k * 2048 : k * 32)) >> 4);
              mma(dst[ma], desc_a, desc_b, (!first) || (k != 0));
            }
          }
          wgmma_commit();
        };
        if constexpr (kPipePromote) {
          // Stage kb + 1's MMAs are issued before stage kb's partial is promoted, so the tensor
          // core has work while this warpgroup runs the FMAs (wait<1>: all but the newest group).
          // Promotes `cur` (stage kb, complete once the wait returns).
          auto finish = [&](Acc(&cur)[kMAtoms][kAcc], const PromoteScales& sc) {
#pragma unroll
            for (int ma = 0; ma < kMAtoms; ++ma) fence_regs(cur[ma]);
            if constexpr (kBMode != kScaleVec128) release(ps.stage);
            promote(acc, cur, sc, generic(scale_b(ps.stage)), b_split, lane);
            if constexpr (kBMode == kScaleVec128) release(ps.stage);
            ps.advance();
          };
          auto scales = [&](int kb) {
            return promote_scales(generic(scale_a(ps.stage)), blk_scales, blk_stride, kb - kb_begin, math_wg,
                                  warp_in_wg, lane);
          };
          auto ahead = [&] {
            PipelineState<kStages> nx = ps;
            nx.advance();
            return nx;
          };
          // Two stages per turn, written out: the partial sets are registers (no run-time index),
          // and each wait must follow its issue on a straight path (see the loop comment above).
          if (kb_begin < kb_end) {
            issue(part, ps, true);
            for (int kb = kb_begin;; kb += 2) {
              PromoteScales sc = scales(kb);
              if (kb + 1 == kb_end) {
                wgmma_wait<0>();
                finish(part, sc);
                break;
              }
              issue(part2, ahead(), true);
              wgmma_wait<1>();
              finish(part, sc);
              sc = scales(kb + 1);
              if (kb + 2 == kb_end) {
                wgmma_wait<0>();
                finish(part2, sc);
                break;
              }
              issue(part, ahead(), true);
              wgmma_wait<1>();
              finish(part2, sc);
            }
          }
        } else if constexpr (kMmaLag) {
          // One K block of MMAs stays in flight: stage kb + 1's MMAs are issued before stage kb's
          // are waited for (wait<1>), so the tensor core does not drain between K blocks while
          // the warpgroup waits for the next full barrier; stage kb is released one step later.
          if (kb_begin < kb_end) {
            issue(acc, ps, true);
            int held = ps.stage;
            ps.advance();
            for (int kb = kb_begin + 1; kb < kb_end; ++kb, ps.advance()) {
              issue(acc, ps, false);
              wgmma_wait<1>();
              release(held);
              held = ps.stage;
            }
            // Ping-pong: every stage of the tile is waited for and its MMAs issued, so the other
            // warpgroup may start its main loop now, while these MMAs drain (handing over after
            // the wait below left the tensor pipe idle at each tile's end, as CUTLASS's ping-pong
            // kernel avoids by arriving before its MMA tail).
            if constexpr (kPingPong) {
              named_barrier_arrive(5 + (1 - math_wg), 256);
              handed_over = true;
            }
            wgmma_wait<0>();
#pragma unroll
            for (int ma = 0; ma < kMAtoms; ++ma) fence_regs(acc[ma]);
            release(held);
          }
        } else {
          for (int kb = kb_begin; kb < kb_end; ++kb, ps.advance()) {
            // Without promotion the first MMA of the tile overwrites; with it, each stage's.
            auto& dst = select_acc(acc, part);
            issue(dst, ps, kPromote || kb == kb_begin);
            if constexpr (kSkew)
              if (math_wg == 0 && kb == kb_begin) named_barrier_sync(4, 256);
            // The promotion's row scales, read while the MMAs run.
            PromoteScales sc;
            if constexpr (kPromote)
              sc = promote_scales(generic(scale_a(ps.stage)), blk_scales, blk_stride, kb - kb_begin, math_wg,
                                  warp_in_wg, lane);
            // wait<0> (tiles left out of kMmaLag above, and promotion, which reads the partial at
            // once) means this stage's reads are done: hand it back (kStages - 1 loads in flight);
            // per column scales (kScaleVec128 of KB) are read by the promotion, so then after it.
            wgmma_wait<0>();
#pragma unroll
            for (int ma = 0; ma < kMAtoms; ++ma) fence_regs(dst[ma]);
            if constexpr (kBMode != kScaleVec128) release(ps.stage);
            if constexpr (kPromote) promote(acc, part, sc, generic(scale_b(ps.stage)), b_split, lane);
            if constexpr (kBMode == kScaleVec128) release(ps.stage);
          }
        }

        // Ping-pong: the other warpgroup may start its main loop (this one waited for all of its
        // stages), unless the main loop handed over already.
        if constexpr (kPingPong)
          if (!handed_over) named_barrier_arrive(5 + (1 - math_wg), 256);

        if constexpr (kStreamK) {
          if (w.sk != 0) {
            if (stream_k_reduce(args, w, wg_part, warp_in_wg, lane, ctid % 128, acc)) return;
          }
        }

        if constexpr (kClusterK > 1) {
          // Split-K inside the cluster: partial tiles meet in the leader's registers.
          const u32 park = base + kReduceOffset;
          if (rank_k != 0) {
            mbar_wait_acquire_cluster(reduce_empty_bar, reduce_phase ^ 1);  // the leader took the last one
#pragma unroll
            for (int q = 0; q < kQuads; ++q) {
              const float4 v = quad(acc, q);
              st_shared_f4(park + (q * kConsumers + ctid) * 16, v.x, v.y, v.z, v.w);
            }
            // One arrive per warp: the warp barrier orders every lane's stores before lane 0's
            // release, which the leader's acquire then observes.
            __syncwarp();
            if (lane == 0) mbar_arrive_release_cluster(reduce_full_bar, rank_m);  // the leader: rank_k 0
            reduce_phase ^= 1;
            return;  // the leader runs the epilogue
          }
          mbar_wait_acquire_cluster(reduce_full_bar, reduce_phase);
#pragma unroll 1
          for (int r = 1; r < kClusterK; ++r) {
            const u32 peer = map_to_rank(park, rank_m + r * kClusterM);
#pragma unroll
            for (int q = 0; q < kQuads; ++q) add_quad(acc, q, ld_shared_cluster_f4(peer + (q * kConsumers + ctid) * 16));
          }
          __syncwarp();
          if (lane == 0) {
#pragma unroll 1
            for (int r = 1; r < kClusterK; ++r) mbar_arrive_release_cluster(reduce_empty_bar, rank_m + r * kClusterM);
          }
          reduce_phase ^= 1;
        }

        if constexpr (kIntAcc && EpilogueOp<Epi>::kExactInt) {
          // The sums themselves only when alpha is 1 (it may come with the call, or from device
          // memory): otherwise through float as any epilogue, as the oracle computes it.
          const float alpha = args.p.alpha_ptr ? *args.p.alpha_ptr : args.p.alpha;
          // The register paths address rows by wg_part (ping-pong: the whole tile); the staged one
          // stages into the warpgroup's own buffer and barrier (math_wg).
          if (alpha != 1.0f)
            epilogue(args, w, wg_part, warp_in_wg, lane, acc);
          else if (kStoreChunks > 0 && args.store_d)
            epilogue_tma_exact(args, w, math_wg, lane, warp_in_wg, acc,
                               base + kStoreOffset + math_wg * kStoreChunks * kStoreBox);
          else
            epilogue_exact(args, w, wg_part, warp_in_wg, lane, acc);
        } else if constexpr (kColAmax) {
          epilogue_block_scaled_t(args, w, math_wg, warp_in_wg, lane, acc, generic(base + kColAmaxOffset),
                                  base + kPairOffset, reduce_empty_bar + 8, rank_m, pair_tiles);
        } else if constexpr (EpilogueOp<Epi>::kOutBlock != 0) {
          const u32 buf = base + kStoreOffset + math_wg * kStoreChunks * kStoreBox;
          if constexpr (kStoreChunks > 0) {
            if (args.store_d && whole_tile(args, w))
              epilogue_block_scaled<true>(args, w, math_wg, warp_in_wg, lane, acc, buf);
            else
              epilogue_block_scaled<false>(args, w, math_wg, warp_in_wg, lane, acc, buf);
          } else {
            epilogue_block_scaled<false>(args, w, math_wg, warp_in_wg, lane, acc, buf);
          }
        } else if constexpr (kTransStage) {
          if (args.store_d && w.last) {
            if (whole_tile(args, w))
              epilogue_tma_t<true>(args, w, math_wg, warp_in_wg, lane, acc, base);
            else
              epilogue_tma_t<false>(args, w, math_wg, warp_in_wg, lane, acc, base);
          } else {
            epilogue(args, w, wg_part, warp_in_wg, lane, acc);
          }
        } else if constexpr (kStoreChunks > 0) {
          if (args.store_d) {
            const u32 buf = base + kStoreOffset + math_wg * kStoreChunks * kStoreBox;
            if (whole_tile(args, w))
              epilogue_tma<true>(args, w, math_wg, warp_in_wg, lane, acc, buf);
            else
              epilogue_tma<false>(args, w, math_wg, warp_in_wg, lane, acc, buf);
          } else {
            epilogue(args, w, wg_part, warp_in_wg, lane, acc);  // the register path: rows by wg_part
          }
        } else {
          epilogue(args, w, wg_part, warp_in_wg, lane, acc);
        }
        (void)m0;
        (void)n0;
      });
      // Ping-pong: the warpgroup that did not own the CTA's last tile takes that tile's arrival,
      // so that every named-barrier arrive has its sync.
      if constexpr (kPingPong)
        if (turn > 0 && ((turn - 1) & 1) != math_wg) named_barrier_sync(5 + math_wg, 256);
      // The last tile's stores must have read the staging buffer before the CTA's shared memory
      // goes away; their writes need not have landed (the grid completes only once they have, and
      // a dependent grid's griddepcontrol.wait waits for that), so the CTA exits without waiting
      // out the write latency (as CUTLASS's epilogues end with a read wait).
      if constexpr (kStoreChunks > 0 || kTransStage)
        if (args.store_d && ctid % 128 == 0) bulk_wait_read<0>();
      // Split-K non-leader: its last parked partial tile must outlive the leader's reads of it
      // (the leader's release arrive on reduce_empty_bar follows them); the leader's own shared
      // memory takes no remote access after its last reduce_full_bar wait. Nothing parked: the
      // fresh barrier's parity passes at once.
      if constexpr (kClusterK > 1)
        if (rank_k != 0) mbar_wait_acquire_cluster(reduce_empty_bar, reduce_phase ^ 1);
    }
    // Split-K clusters still end on a cluster barrier, relaxed (no MEMBAR.ALL.GPU behind the D
    // stores; the wait above already orders the leader's reads before a non-leader's exit):
    // compute-sanitizer's racecheck tracks a CTA's lifetime only through cluster barriers and
    // reports every read of a parked tile as a read of a CTA that "might have already exited"
    // without it (1616 reports at 128x512x1024, 2026-12-05 session 8 call 4). Its cost is the
    // leader's own arrive, its peers having arrived long before.
    if constexpr (kClusterK > 1) cluster_sync_relaxed();
  }

  // Stream-K: leaves this unit's partial tile in its workspace slot and returns true (no
  // epilogue), or adds the partials of the CTAs holding the rest of the tile, in slot order (a
  // fixed order: the same sums at every run), and returns false. Each warp signals and waits for
  // its own rows: [quad][thread of the warpgroup] float4s per warpgroup part, one flag per warp.
  __device__ __forceinline__ static bool stream_k_reduce(const GemmArgs& args, const Work& w, int wg_part,
                                                         int warp_in_wg, int lane, int tid, Acc (&acc)[kMAtoms][kAcc]) {
    constexpr long long kSlot = (long long)kBlockM * kBlockN / 4;  // float4s per slot
    auto part = [&](int slot) {
      return reinterpret_cast<float4*>(args.sk_partials) + slot * kSlot + wg_part * (kQuads * 128) + tid;
    };
    auto flag = [&](int slot) { return args.sk_flags + (slot * 2 + wg_part) * 4 + warp_in_wg; };
    if (w.sk < 0) {
      float4* dst = part(int(blockIdx.x));
#pragma unroll
      for (int q = 0; q < kQuads; ++q) dst[q * 128] = quad(acc, q);
      // The warp barrier orders every lane's stores before lane 0's fence and flag (as CUTLASS's
      // stream-K barrier: a CTA barrier, then one thread's fence and relaxed store).
      __syncwarp();
      if (lane == 0) {
        __threadfence();
        st_relaxed_gpu_u64(flag(int(blockIdx.x)), args.sk_token);
      }
      return true;
    }
#pragma unroll 1
    for (int peer = int(blockIdx.x) + 1; peer < w.sk; ++peer) {
      unsigned long long* f = flag(peer);
      while (ld_acquire_gpu_u64(f) != args.sk_token) __nanosleep(32);
      const float4* src = part(peer);
#pragma unroll
      for (int q = 0; q < kQuads; ++q) add_quad(acc, q, __ldcg(src + q * 128));
      __syncwarp();
      if (lane == 0) st_relaxed_gpu_u64(f, 0ull);
    }
    return false;
  }

  // The MMAs' destination: the sum itself, or the stage's partial tile when promoting.
  __device__ __forceinline__ static Acc (&select_acc(Acc (&acc)[kMAtoms][kAcc],
                                                    Acc (&part)[kPromote ? kMAtoms : 1][kPromote ? kAcc : 1]))[kMAtoms][kAcc] {
    if constexpr (kPromote) return part;
    else return acc;
  }

  // Integer sums cross distributed shared memory and the workspace as their bit patterns (exact).
  __device__ __forceinline__ static float as_float(float x) { return x; }
  __device__ __forceinline__ static float as_float(int x) { return __int_as_float(x); }
  __device__ __forceinline__ static void add_float(float& a, float x) { a += x; }
  __device__ __forceinline__ static void add_float(int& a, float x) { a += __float_as_int(x); }
  // Quad q of a thread's accumulators (atom q / (kAcc / 4), four in a row) as the float4 a K split
  // moves between CTAs, and its sum into them.
  __device__ __forceinline__ static float4 quad(const Acc (&acc)[kMAtoms][kAcc], int q) {
    const int ma = q / (kAcc / 4), i = (q % (kAcc / 4)) * 4;
    return make_float4(as_float(acc[ma][i]), as_float(acc[ma][i + 1]), as_float(acc[ma][i + 2]), as_float(acc[ma][i + 3]));
  }
  __device__ __forceinline__ static void add_quad(Acc (&acc)[kMAtoms][kAcc], int q, float4 v) {
    const int ma = q / (kAcc / 4), i = (q % (kAcc / 4)) * 4;
    add_float(acc[ma][i], v.x);
    add_float(acc[ma][i + 1], v.y);
    add_float(acc[ma][i + 2], v.z);
    add_float(acc[ma][i + 3], v.w);
  }

  // Element i of a scale array: f32, or a UE8M0 byte decoded exactly: 2^(e - 127) (e = 0 is the
  // subnormal 2^-127, which must not be flushed), NaN for 0xFF.
  template <bool kU8>
  __device__ __forceinline__ static float scale_at(const void* p, long long i) {
    if constexpr (kU8) {
      const unsigned e = static_cast<const unsigned char*>(p)[i];
      return e == 0xFFu ? __int_as_float(0x7fc00000) : e == 0u ? __int_as_float(0x00400000) : __int_as_float(int(e << 23));
    } else {
      return static_cast<const float*>(p)[i];
    }
  }

  // A stage's scales per accumulator row (rows h * 8 of each m64 atom): r for the columns in KB's
  // first 128 x 128 scale block (or every column), r2 for those in the second (kBSpan2).
  struct PromoteScales {
    float r[kMAtoms][2], r2[kMAtoms][2];
  };
  __device__ __forceinline__ static PromoteScales promote_scales(const float* sa_smem, const float* blk, int blk_stride,
                                                                 int kb_in_tile, int math_wg, int warp_in_wg, int lane) {
    PromoteScales sc;
    float t = 1.0f, t2 = 1.0f;
    if constexpr (kAMode == kScaleBlk128) t *= blk[kb_in_tile];
    if constexpr (kBMode == kScaleBlk128) {
      t2 = t;
      t *= blk[blk_stride + kb_in_tile];
      if constexpr (kBSpan2) t2 *= blk[2 * blk_stride + kb_in_tile];
    }
    const int row0 = math_wg * kWGRows + warp_in_wg * 16 + lane / 4;  // within the tile
#pragma unroll
    for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float a = kAMode == kScaleVec128 ? scale_at<kAU8>(sa_smem, row0 + ma * 64 + h * 8) : 1.0f;
        sc.r[ma][h] = t * a;
        sc.r2[ma][h] = t2 * a;
      }
    return sc;
  }

  // acc += part * (scale of the row) * (scale of the column) for this stage's K block; `split`:
  // the 8-column groups in KB's first scale block (kBSpan2).
  __device__ __forceinline__ static void promote(Acc (&acc)[kMAtoms][kAcc],
                                                 Acc (&part)[kPromote ? kMAtoms : 1][kPromote ? kAcc : 1],
                                                 const PromoteScales& sc, const float* sb_smem, int split, int lane) {
    if constexpr (kPromote) {
      const int col0 = (lane % 4) * 2;
#pragma unroll
      for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int i = 0; i < kAcc / 4; ++i)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              float s = sc.r[ma][h];
              if constexpr (kBSpan2) s = i < split ? sc.r[ma][h] : sc.r2[ma][h];
              if constexpr (kBMode == kScaleVec128) s *= scale_at<kBU8>(sb_smem, col0 + i * 8 + e);
              const int idx = i * 4 + h * 2 + e;
              acc[ma][idx] = fmaf(part[ma][idx], s, acc[ma][idx]);
            }
    }
  }

  // The tile's row of 128 x 128 block scales for its K blocks, into shared memory (after every
  // consumer has finished the previous tile, which read the same slots). Grouped: the group's
  // tensors, g * stride further (a contiguous A's rows are already the shared ones).
  __device__ static void load_blk_scales(const GemmArgs& args, float* blk, int blk_stride, int m0, int n0, int group,
                                         int kb_begin, int kb_end, int ctid) {
    asm volatile("bar.sync 1, %0;" ::"n"(kConsumers) : "memory");
    long long a_off = 0, b_off = 0;
    if constexpr (kGrouped != kGroupNone) {
      a_off = group * args.groups.row_scale_stride;
      b_off = group * args.groups.col_scale_stride;
    }
    for (int c = ctid; c < kb_end - kb_begin; c += kConsumers) {
      const long long kb = kb_begin + c;
      if constexpr (kAMode == kScaleBlk128) {
        const long long r = m0 / 128, ld = args.sa_ld;
        blk[c] = scale_at<kAU8>(args.sa_blk, a_off + (ld > 0 ? r * ld + kb : r + kb * -ld));
      }
      if constexpr (kBMode == kScaleBlk128) {
        const long long r = n0 / 128, ld = args.sb_ld;
        blk[blk_stride + c] = scale_at<kBU8>(args.sb_blk, b_off + (ld > 0 ? r * ld + kb : r + kb * -ld));
        // The next block's scales, where it exists (a tile at N's end may reach past the last
        // block: those columns are never stored).
        if constexpr (kBSpan2)
          blk[2 * blk_stride + c] = (r + 1) * 128 >= args.p.n ? 0.0f
                                    : scale_at<kBU8>(args.sb_blk, b_off + (ld > 0 ? (r + 1) * ld + kb : r + 1 + kb * -ld));
      }
    }
    asm volatile("bar.sync 1, %0;" ::"n"(kConsumers) : "memory");
  }

  __device__ static void load_a(const GemmArgs& args, u32 dst, u32 bar, int m0, int k0, int batch, u32 rank_n) {
    if constexpr (kClusterN == 1) {
      if constexpr (kAMajorMN) {
#pragma unroll
        for (int c = 0; c < kBlockM / 64; ++c) tma_load_3d(dst + c * 8192, &args.tma_a, bar, m0 + c * 64, k0, batch);
      } else {
        tma_load_3d(dst, &args.tma_a, bar, k0, m0, batch);
      }
    } else {
      // Each CTA loads its share of the A tile both CTAs need, into both (same offsets).
      const unsigned short mask = (1u << kClusterN) - 1;
      if constexpr (kAMajorMN) {
        constexpr int kBoxes = kBlockM / 64 / kClusterN;
#pragma unroll
        for (int c = 0; c < kBoxes; ++c) {
          const int box = int(rank_n) * kBoxes + c;
          tma_load_3d_multicast(dst + box * 8192, &args.tma_a, bar, m0 + box * 64, k0, batch, mask);
        }
      } else {
        constexpr int kRows = kBlockM / kClusterN;
        tma_load_3d_multicast(dst + rank_n * kRows * 128, &args.tma_a, bar, k0, m0 + int(rank_n) * kRows, batch, mask);
      }
    }
  }

  __device__ static void load_b(const GemmArgs& args, u32 dst, u32 bar, int n0, int k0, int batch, u32 rank_m) {
    if constexpr (!kShareB) {
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

  // The epilogue of an integer product stored as i32 with nothing applied: the sums themselves,
  // exactly (float would round sums beyond 2^24).
  __device__ static void epilogue_exact(const GemmArgs& args, const Work& w, int math_wg, int warp_in_wg, int lane,
                                        Acc (&acc)[kMAtoms][kAcc]) {
    const long long m = w.row_end, n = args.p.n;
    const long long row_base = w.row0 + math_wg * kWGRows + warp_in_wg * 16 + lane / 4;
    const long long col_base = (long long)w.n_block * kBlockN + (lane % 4) * 2;
    EpilogueOp<Epi> epi;
    epi.init(args.p, w.batch);
    if (w.row0 + kBlockM <= m && (long long)(w.n_block + 1) * kBlockN <= n && epi.pairs_aligned()) {
      // A full tile, D row-major and pair-aligned: each column pair as one 8-byte store, so a
      // warp's store fills whole 32-byte sectors (single 4-byte stores wrote each sector in two
      // halves: i8 4096^3 ran 1.24x the time of fp8 with the same tile, run 14).
#pragma unroll
      for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          int2* rowp = reinterpret_cast<int2*>(epi.row_ptr(row_base + ma * 64 + h * 8) + col_base);
#pragma unroll
          for (int i = 0; i < kPairs; ++i)
            rowp[i * 4] = make_int2(int(acc[ma][i * 4 + h * 2]), int(acc[ma][i * 4 + h * 2 + 1]));
        }
      return;
    }
#pragma unroll
    for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const long long row = row_base + ma * 64 + h * 8;
        if (row >= m) continue;
#pragma unroll
        for (int i = 0; i < kPairs; ++i)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const long long col = col_base + i * 8 + e;
            if (col < n) epi.store_exact(row, col, int(acc[ma][i * 4 + h * 2 + e]));
          }
      }
  }

  // Whether the unit's tile lies wholly inside D (its last row and column exist): the epilogues'
  // unchecked instantiations.
  __device__ __forceinline__ static bool whole_tile(const GemmArgs& args, const Work& w) {
    return w.row0 + kBlockM <= w.row_end && (long long)(w.n_block + 1) * kBlockN <= args.p.n;
  }

  // The staging buffer's protocol, shared by the TMA-stored epilogues: a warpgroup writes its 64
  // rows of the tile kSlots boxes (64 rows x 128 bytes, kBoxCols columns) at a time. Before the
  // first slot of a round, the previous round's boxes must have left the buffer
  // (staging_acquire); after the last one, the writes are made visible to the TMA engine and one
  // thread stores the round's boxes, first_box onwards, which drain while the warpgroup goes on
  // (staging_flush).
  static constexpr int kSlots = kStoreChunks > 0 ? kStoreChunks : 1;
  __device__ __forceinline__ static void staging_acquire(bool issuer, int bar_id) {
    if (issuer) bulk_wait_read<0>();
    named_barrier_sync(bar_id, 128);
  }
  __device__ __forceinline__ static void staging_flush(const GemmArgs& args, const Work& w, int box_row, bool issuer,
                                                       int bar_id, u32 buf, int first_box) {
    fence_proxy_async_shared();
    named_barrier_sync(bar_id, 128);
    if (issuer) {
#pragma unroll
      for (int b = 0; b < kSlots; ++b)
        tma_store_3d(&args.tma_d, buf + b * kStoreBox, w.n_block * kBlockN + (first_box + b) * kBoxCols,
                     int(w.row0) + box_row, kGrouped == kGroupContiguous ? 0 : w.batch);  // one D the groups share
      bulk_commit();
    }
  }

  // A block-scaled D's scale of D row `row`, column block `block` (f32, or its UE8M0 byte), and
  // the factor its values are quantized with: z / s as z * (1 / s), exact for UE8M0 (a power of
  // two), within an f32 ulp of the quotient for f32 scales, before the rounding to FP8. |z / s| <=
  // fp8_max by the choice of s, so the hardware's saturating conversion (two values at once) is the
  // plain one; a NaN scale (non-finite block) gives NaN.
  __device__ __forceinline__ static void write_block_scale(const GemmArgs& args, long long batch, long long row,
                                                           long long block, float sc, unsigned char bits) {
    const long long at = batch * args.ds_batch + row * args.ds_row + block * args.ds_col;
    if constexpr (EpilogueOp<Epi>::kOutBlock == 1) static_cast<float*>(args.d_scale)[at] = sc;
    else static_cast<unsigned char*>(args.d_scale)[at] = bits;
  }
  __device__ __forceinline__ static float block_inverse(float sc, unsigned char bits) {
    return EpilogueOp<Epi>::kOutBlock == 1 ? __frcp_rn(sc)
           : bits == 0xFFu                 ? __int_as_float(0x7fc00000)
                                           : ldexpf(1.0f, 127 - int(bits));
  }

  // A block-scaled FP8 D (kOutBlock): for each row and block of 128 columns, z = the epilogue's
  // value, amax = max |z| over the block (NaN if any z is), its scale s (EpilogueOp::
  // out_block_scale), D = convert(z / s), and s stored by the first lane of the row's quad. The
  // four lanes of a quad hold a row's columns of the tile (wgmma's accumulator layout: lane l has
  // columns 8i + 2(l % 4) and + 1), so a block's amax is the max over the thread's 32 values of
  // it, then over the quad by two shuffles. Tiles start on a 128-column block (BLOCK_N % 128 == 0)
  // and D is not transposed (the planner asks both).
  // Staged (kStoreChunks > 0 and args.store_d; `buf` the warpgroup's staging slots): each block is
  // one TMA box of the warpgroup's 64 rows x 128 bytes, written in the 128B-swizzled layout (the
  // 16-byte chunk j / 2 of row r at chunk (j / 2) ^ (r % 8), so a warp's 2-byte stores of one
  // 8-column group hit 8 different chunks) and stored by one thread while the warpgroup goes on,
  // as in epilogue_tma; TMA clips the box at D's bounds. Unstaged: 2-byte stores from registers
  // (each warp store then touches 8 rows: 1.21x the bf16-output GEMM's time at 4096^3, run F).
  // kFast: a whole tile (no element, row or block needs a bounds check) stored through the staging
  // buffer, the common case, compiled without either decision; every other tile decides both per
  // element. (With them, every value and amax sat behind its own branch and every 2-byte store
  // behind a staged-or-not branch, ~14 instructions a column pair, and the fused output cost
  // 1.04-1.21x the bf16-output GEMM, whose whole tiles have neither: 2026-12-05 session 4 call 9,
  // H100. A third instantiation, unstaged with the checks, made the 128x256 tiles spill.)
  template <bool kFast>
  __device__ static void epilogue_block_scaled(const GemmArgs& args, const Work& w, int math_wg, int warp_in_wg,
                                               int lane, Acc (&acc)[kMAtoms][kAcc], u32 buf) {
    using Op = EpilogueOp<Epi>;
    using DType = typename Op::DType;
    static_assert(kBlockN % 128 == 0 && !Op::kTrans && sizeof(DType) == 1, "block-scaled D: 128-column blocks, FP8");
    const long long m = w.row_end, n = args.p.n;
    const int r_local = warp_in_wg * 16 + lane / 4;  // this thread's first row in the warpgroup's 64
    const long long row_base = w.row0 + math_wg * kWGRows + r_local;
    const long long col_base = (long long)w.n_block * kBlockN + (lane % 4) * 2;
    Op epi;
    epi.init(args.p, w.batch);
    const bool pairs = epi.pairs_aligned();
    const bool staged = kFast || (kStoreChunks > 0 && args.store_d != 0);
    static_assert(!kFast || kStoreChunks > 0, "the staged block-scaled D needs the staging buffer");
    const int bar_id = 2 + math_wg;  // as epilogue_tma
    const bool issuer = warp_in_wg == 0 && lane == 0;
    // Block by block, the block's 32 column biases of this thread loaded once for its rows (loaded
    // per element, the compiler kept the whole tile's live across rows and spilled).
#pragma unroll
    for (int blk = 0; blk < kBlockN / 128; ++blk) {
      const int cc = blk % kSlots;  // the box's staging slot
      if (staged && cc == 0) staging_acquire(issuer, bar_id);
      float cbias[32];
#pragma unroll
      for (int j = 0; j < 16; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const long long col = col_base + (blk * 16 + j) * 8 + e;
          cbias[j * 2 + e] = kFast || col < n ? epi.col_bias(col) : 0.0f;
        }
#pragma unroll
      for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const long long row = row_base + ma * 64 + h * 8;
          const bool row_in = kFast || row < m;
          const float rb = row_in ? epi.row_bias(row) : 0.0f;
          // z replaces the accumulator it came from (no second set of registers).
          // Four partial maxima (the max is associative, NaN included): a chain of 8, not 32.
          float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
          for (int j = 0; j < 16; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              Acc& a = acc[ma][(blk * 16 + j) * 4 + h * 2 + e];
              const long long col = col_base + (blk * 16 + j) * 8 + e;
              const bool in = kFast || (row_in && col < n);
              const float z = in ? epi.value(row, col, float(a), rb, cbias[j * 2 + e]) : 0.0f;
              a = Acc(z);
              if (in) part[(j & 1) * 2 + e] = max_nan(part[(j & 1) * 2 + e], fabsf(z));
            }
          float amax = max_nan(max_nan(part[0], part[1]), max_nan(part[2], part[3]));
          // Every lane takes part in the shuffles (rows past D's end contribute 0 and store nothing).
          amax = max_nan(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
          amax = max_nan(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
          unsigned char bits;
          const float sc = Op::out_block_scale(amax, &bits);
          const long long cb = (long long)w.n_block * (kBlockN / 128) + blk;
          if (row_in && lane % 4 == 0 && (kFast || cb * 128 < n)) write_block_scale(args, w.batch, row, cb, sc, bits);
          const float r = block_inverse(sc, bits);
          const int rr = r_local + ma * 64 + h * 8;  // the row within the warpgroup's box
          // The box row's address with its swizzle and the thread's column pair folded in: the row
          // starts on 128 bytes (buf is 1024-aligned), so chunk (j / 2) ^ (rr % 8) of it is one XOR
          // of (j / 2) << 4 away, and (j % 2) * 8 an immediate offset.
          const u32 srow = ((buf + cc * kStoreBox + rr * 128) | ((rr & 7) << 4)) + (lane % 4) * 2;
#pragma unroll
          for (int j = 0; j < 16; ++j) {
            const long long col = col_base + (blk * 16 + j) * 8;
            const int i = (blk * 16 + j) * 4 + h * 2;
            const unsigned short two = cvt_fp8x2<DType>(float(acc[ma][i]) * r, float(acc[ma][i + 1]) * r);
            if (staged) {
              st_shared_u16((srow ^ u32((j >> 1) << 4)) + (j & 1) * 8, two);
            } else if (row_in) {
              unsigned char* rowp = reinterpret_cast<unsigned char*>(epi.row_ptr(row));
              if ((kFast || col + 1 < n) && pairs) {
                *reinterpret_cast<unsigned short*>(rowp + col) = two;
              } else {
                if (col < n) rowp[col] = (unsigned char)(two & 0xFFu);
                if (col + 1 < n) rowp[col + 1] = (unsigned char)(two >> 8);
              }
            }
          }
        }
      if (staged && cc == kSlots - 1) staging_flush(args, w, math_wg * kWGRows, issuer, bar_id, buf, blk + 1 - kSlots);
    }
    epi.flush_amax();
  }

  // The block-scaled FP8 D of a transposed view (kTrans: X = D^T, swap-AB at small M): a 1 x 128
  // block of D's row is 128 rows of one X column. The tiles' first rows are multiples of 128 (the
  // planner asks it): a 128-row tile (two consumer warpgroups, one m64 atom each) holds whole
  // blocks; a 64-row tile holds half of one and its cluster peer along M (kPairAmax) the other.
  // A column's amax is the max over the thread's two rows (r, r + 8), the warp's eight row groups
  // (three shuffles), and the consumer warps through shared memory (`amax_buf`, [warp][column];
  // the second barrier keeps the next tile's epilogue from overwriting it early). kPairAmax: then
  // warp 0 writes the CTA's column maxima into the peer's slot (`pair_buf`, slot = the parity of
  // the tiles exchanged so far, so that a peer one tile ahead writes the other slot) through
  // distributed shared memory with st.async, whose bytes complete the transactions the peer's
  // barrier of that slot expects; every consumer thread waits on its own and takes the max of
  // both (kPairGlobal: the same through the workspace, as stream-K's pieces). Then
  // each column's scale, its values times the scale's inverse (as epilogue_block_scaled), one byte
  // each at D[col * ldd + row]: a swapped D has few rows (M), so its stores are a small part of the
  // tile. The pair's first CTA writes the block's scale.
  __device__ static void epilogue_block_scaled_t(const GemmArgs& args, const Work& w, int math_wg, int warp_in_wg,
                                                 int lane, Acc (&acc)[kMAtoms][kAcc], float* amax_buf,
                                                 [[maybe_unused]] u32 pair_buf, [[maybe_unused]] u32 pair_bar,
                                                 [[maybe_unused]] u32 rank_m, [[maybe_unused]] u32& pair_tiles) {
    using Op = EpilogueOp<Epi>;
    using DType = typename Op::DType;
    static_assert(kMAtoms == 1 && !kPingPong && Op::kTrans && sizeof(DType) == 1 && kGrouped == kGroupNone,
                  "transposed block-scaled D: one m64 atom per warpgroup, FP8, not grouped");
    constexpr int kBarAmax = 7;  // 0: __syncthreads, 1: load_blk_scales, 2-3: staging, 4: skew, 5-6: ping-pong
    constexpr int kWarps = kConsumers / 32;
    const long long m = w.row_end, n = args.p.n;
    const long long row_base = w.row0 + math_wg * 64 + warp_in_wg * 16 + lane / 4;
    const long long col_base = (long long)w.n_block * kBlockN + (lane % 4) * 2;
    const int warp = math_wg * 4 + warp_in_wg;
    Op epi;
    epi.init(args.p, w.batch);
    float rb[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) rb[h] = row_base + h * 8 < m ? epi.row_bias(row_base + h * 8) : 0.0f;
    // z replaces the accumulator it came from; the warp's maximum of each column to amax_buf.
#pragma unroll
    for (int jj = 0; jj < kAcc / 4; ++jj)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const long long col = col_base + jj * 8 + e;
        const float cb = col < n ? epi.col_bias(col) : 0.0f;
        float part = 0.0f;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const long long row = row_base + h * 8;
          const bool in = row < m && col < n;
          Acc& a = acc[0][jj * 4 + h * 2 + e];
          const float z = in ? epi.value(row, col, float(a), rb[h], cb) : 0.0f;
          a = Acc(z);
          if (in) part = max_nan(part, fabsf(z));
        }
        // Every lane takes part (rows and columns past D's end contribute 0).
        part = max_nan(part, __shfl_xor_sync(0xffffffffu, part, 4));
        part = max_nan(part, __shfl_xor_sync(0xffffffffu, part, 8));
        part = max_nan(part, __shfl_xor_sync(0xffffffffu, part, 16));
        if (lane < 4) amax_buf[warp * kBlockN + jj * 8 + lane * 2 + e] = part;
      }
    named_barrier_sync(kBarAmax, kConsumers);
    // The CTA's maximum of each of the thread's columns.
    float amax[kAcc / 2];
#pragma unroll
    for (int jj = 0; jj < kAcc / 4; ++jj)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int c = jj * 8 + (lane % 4) * 2 + e;
        float v = amax_buf[c];
#pragma unroll
        for (int wv = 1; wv < kWarps; ++wv) v = max_nan(v, amax_buf[wv * kBlockN + c]);
        amax[jj * 2 + e] = v;
      }
    if constexpr (kPairAmax) {
      const u32 slot = pair_tiles & 1, phase = (pair_tiles >> 1) & 1;
      ++pair_tiles;
      if (warp == 0) {
        const u32 peer = rank_m ^ 1;
        // This CTA's slot expects the peer's BLOCK_N floats (the one arrival of its phase); the
        // peer's may have come already (the transaction count then goes below zero meanwhile).
        if (lane == 0) mbar_arrive_expect_tx(pair_bar + slot * 8, kBlockN * 4);
        const u32 dst = map_to_rank(pair_buf + slot * kBlockN * 4, peer);
        const u32 bar = map_to_rank(pair_bar + slot * 8, peer);
        if (lane < 4) {
#pragma unroll
          for (int jj = 0; jj < kAcc / 4; ++jj)
#pragma unroll
            for (int e = 0; e < 2; ++e) st_async_cluster_f32(dst + (jj * 8 + lane * 2 + e) * 4, amax[jj * 2 + e], bar);
        }
      }
      mbar_wait(pair_bar + slot * 8, phase);
      const float* theirs = reinterpret_cast<const float*>(amax_buf + (kWarps + slot) * kBlockN);
#pragma unroll
      for (int jj = 0; jj < kAcc / 4; ++jj)
#pragma unroll
        for (int e = 0; e < 2; ++e) amax[jj * 2 + e] = max_nan(amax[jj * 2 + e], theirs[jj * 8 + (lane % 4) * 2 + e]);
    }
    [[maybe_unused]] bool first_of_pair = true;
    if constexpr (kPairGlobal) {
      // The tile's slot and its partner's: (batch, M block, N block) in the workspace.
      const int mb = int(w.row0 / 64), nmb = args.tiles.num_m_blocks, nnb = args.tiles.num_n_blocks;
      first_of_pair = (mb & 1) == 0;
      if ((mb ^ 1) < nmb) {  // uniform over the CTA: a last odd tile has no partner (no rows there)
        const long long mine = ((long long)w.batch * nmb + mb) * nnb + w.n_block;
        const long long theirs = ((long long)w.batch * nmb + (mb ^ 1)) * nnb + w.n_block;
        if (warp == 0) {
          float* dst = args.sk_partials + mine * kBlockN;
          if (lane < 4) {
#pragma unroll
            for (int jj = 0; jj < kAcc / 4; ++jj)
#pragma unroll
              for (int e = 0; e < 2; ++e) dst[jj * 8 + lane * 2 + e] = amax[jj * 2 + e];
          }
          // As stream_k_reduce: the warp barrier orders the lanes' stores before lane 0's fence and
          // flag; the partner's flag is read with acquire, its maxima past the L1, and cleared after.
          __syncwarp();
          if (lane == 0) {
            __threadfence();
            st_relaxed_gpu_u64(args.sk_flags + mine, args.sk_token);
          }
          if (lane < 4) {
            while (ld_acquire_gpu_u64(args.sk_flags + theirs) != args.sk_token) __nanosleep(32);
            const float* src = args.sk_partials + theirs * kBlockN;
#pragma unroll
            for (int jj = 0; jj < kAcc / 4; ++jj)
#pragma unroll
              for (int e = 0; e < 2; ++e) {
                const int c = jj * 8 + lane * 2 + e;
                amax_buf[kWarps * kBlockN + c] = max_nan(amax[jj * 2 + e], __ldcg(src + c));
              }
          }
          __syncwarp();
          if (lane == 0) st_relaxed_gpu_u64(args.sk_flags + theirs, 0ull);
        }
        named_barrier_sync(kBarAmax, kConsumers);
#pragma unroll
        for (int jj = 0; jj < kAcc / 4; ++jj)
#pragma unroll
          for (int e = 0; e < 2; ++e) amax[jj * 2 + e] = amax_buf[kWarps * kBlockN + jj * 8 + (lane % 4) * 2 + e];
      }
    }
    const long long cb_index = w.row0 / 128;  // the block of D's columns (X's rows) this tile is in
    const bool writes_scale = warp == 0 && lane < 4 && (!kPairAmax || rank_m == 0) && first_of_pair;
#pragma unroll
    for (int jj = 0; jj < kAcc / 4; ++jj)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        unsigned char bits;
        const float sc = Op::out_block_scale(amax[jj * 2 + e], &bits);
        const long long col = col_base + jj * 8 + e;  // D's row
        if (col < n) {
          if (writes_scale) write_block_scale(args, w.batch, col, cb_index, sc, bits);
          const float r = block_inverse(sc, bits);
          // The thread's two rows (r, r + 8) of the column at once; each byte to its own row.
          const unsigned short two =
              cvt_fp8x2<DType>(float(acc[0][jj * 4 + e]) * r, float(acc[0][jj * 4 + 2 + e]) * r);
          unsigned char* dcol = reinterpret_cast<unsigned char*>(epi.d) + col * epi.ldd;
          if (row_base < m) dcol[row_base] = (unsigned char)(two & 0xFFu);
          if (row_base + 8 < m) dcol[row_base + 8] = (unsigned char)(two >> 8);
        }
      }
    named_barrier_sync(kBarAmax, kConsumers);
    epi.flush_amax();
  }

  // The exact i32 sums through the staging buffer and TMA stores (kStoreChunks > 0, args.store_d):
  // boxes of the warpgroup's 64 rows x 32 columns (128 bytes), the thread's column pair of each
  // 8-column group as one 8-byte store at 16-byte chunk (2 (i % 4) + (l % 4) / 2) ^ (r % 8) of
  // row r, half (l % 2); stored asynchronously while the warpgroup goes on, as epilogue_tma
  // (TMA clips the boxes at X's bounds). From registers, a full tile's 8-byte stores each touched
  // 8 rows and the epilogue did not overlap the next tile (i8 4096^3 1.07x the fp8 kernel's time
  // with the same tile, run C).
  __device__ static void epilogue_tma_exact(const GemmArgs& args, const Work& w, int math_wg, int lane, int warp_in_wg,
                                            Acc (&acc)[kMAtoms][kAcc], u32 buf) {
    constexpr int kBoxes = kBlockN / kBoxCols;  // 32-column boxes
    const int r_local = warp_in_wg * 16 + lane / 4;
    const int bar_id = 2 + math_wg;  // as epilogue_tma
    const bool issuer = warp_in_wg == 0 && lane == 0;
    // The warpgroup's rows of the tile, one m64 atom at a time (ping-pong: both atoms, from row 0).
    const int wg_row = kPingPong ? 0 : math_wg * kWGRows;
#pragma unroll
    for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
      for (int box = 0; box < kBoxes; ++box) {
        const int cc = box % kSlots;  // the box's staging slot
        if (cc == 0) staging_acquire(issuer, bar_id);
#pragma unroll
        for (int ii = 0; ii < 4; ++ii) {
          const int i = box * 4 + ii;  // the accumulators' 8-column group
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = r_local + h * 8;
            st_shared_v2_u32(buf + cc * kStoreBox + r * 128 + (((2 * ii + (lane % 4) / 2) ^ (r & 7)) << 4) + (lane % 2) * 8,
                             u32(acc[ma][i * 4 + h * 2]), u32(acc[ma][i * 4 + h * 2 + 1]));
          }
        }
        if (cc == kSlots - 1) staging_flush(args, w, wg_row + ma * 64, issuer, bar_id, buf, box + 1 - kSlots);
      }
  }

  // X(row, col) and X(row, col + 1) of a 16-bit output as one 32-bit word (the first in the low
  // half); an element outside X (in0 / in1 false) is 0 and reads nothing (no C, no vectors).
  template <class Op>
  __device__ __forceinline__ static u32 pair_bits(const Op& epi, long long row, long long col, float acc0, float acc1,
                                                  bool in0, bool in1, float rb, float cb0, float cb1) {
    const u32 lo = in0 ? epi.convert(row, col, epi.value(row, col, acc0, rb, cb0)).bits : 0u;
    const u32 hi = in1 ? epi.convert(row, col + 1, epi.value(row, col + 1, acc1, rb, cb1)).bits : 0u;
    return lo | (hi << 16);
  }

  // The fused epilogue through shared memory and TMA stores (kStoreChunks > 0, args.store_d): each
  // consumer warpgroup writes its 64 rows of the tile, kStoreChunks 64-column boxes at a time, into
  // its staging buffer in the 128B-swizzled layout of tma_d's box, and one thread stores the boxes.
  // The stores run asynchronously while the warpgroup goes on to its next tile; the buffer is
  // reused once they have read it. TMA clips the boxes at X's bounds, so edge tiles need no checks
  // beyond not reading C or the epilogue vectors outside X; a tile wholly inside X (kFull) has no
  // checks at all (with them, each element's activation sat behind its own branch: bias + GELU
  // cost 1.19x the plain epilogue's GEMM, run 8).
  // A thread's two accumulator rows of an m64 atom (row_base and row_base + 8, X rows below m):
  // whether each is inside X and its row bias (0 outside), for the TMA-stored epilogues.
  template <bool kFull, class Op>
  __device__ __forceinline__ static void thread_rows(const Op& epi, long long row_base, long long m, bool (&row_in)[2],
                                                     float (&rbias)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      row_in[h] = kFull || row_base + h * 8 < m;
      rbias[h] = row_in[h] ? epi.row_bias(row_base + h * 8) : 0.0f;
    }
  }

  template <bool kFull>
  __device__ static void epilogue_tma(const GemmArgs& args, const Work& w, int math_wg, int warp_in_wg, int lane,
                                      Acc (&acc)[kMAtoms][kAcc], u32 buf) {
    using Op = EpilogueOp<Epi>;
    static_assert(sizeof(typename Op::DType) == 2 && !Op::kTrans, "TMA-stored epilogue: 16-bit, row-major X");
    constexpr int kChunks = kBlockN / 64;
    const long long m = w.row_end, n = args.p.n;
    const int r_local = warp_in_wg * 16 + lane / 4;  // this thread's first row in each 64-row atom
    // The warpgroup's rows of the tile: its half (cooperative) or all of them (ping-pong, whose
    // warpgroups still stage into their own buffers and barriers, by math_wg).
    const int wg_row = kPingPong ? 0 : math_wg * kWGRows;
    const long long col_base = (long long)w.n_block * kBlockN + (lane % 4) * 2;
    const int bar_id = 2 + math_wg;  // 0: __syncthreads, 1: load_blk_scales, 4: the promotion skew
    const bool issuer = warp_in_wg == 0 && lane == 0;
    Op epi;
    epi.init(args.p, w.batch);
    if constexpr (kGrouped != kGroupNone)  // contiguous groups aligned to BLOCK_M (static_assert above)
      epi.select_group(w.group, args.p.m, n, false, args.groups.row_scale_stride, args.groups.col_scale_stride);
    // Column biases a half box (32 columns) ahead of the columns being written: the stores to
    // shared memory do not order them, and their latency would otherwise be paid per 8 columns.
    constexpr int kHalf = 4;  // 8-column groups per bias load batch
    float cbias[kHalf][2], next_cbias[kHalf][2];
    auto load_cbias = [&](int group, float (&out)[kHalf][2]) {
#pragma unroll
      for (int j = 0; j < kHalf; ++j) {
        const long long col = col_base + (group * kHalf + j) * 8;
        out[j][0] = kFull || col < n ? epi.col_bias(col) : 0.0f;
        out[j][1] = kFull || col + 1 < n ? epi.col_bias(col + 1) : 0.0f;
      }
    };
#pragma unroll
    for (int ma = 0; ma < kMAtoms; ++ma) {
      const long long row_base = w.row0 + wg_row + ma * 64 + r_local;
      bool row_in[2];
      float rbias[2];
      thread_rows<kFull>(epi, row_base, m, row_in, rbias);
      load_cbias(0, cbias);
#pragma unroll
      for (int chunk = 0; chunk < kChunks; ++chunk) {
        const int cc = chunk % kSlots;  // the box's slot in the staging buffer (kChunks % kSlots == 0)
        if (cc == 0) staging_acquire(issuer, bar_id);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int group = chunk * 2 + half;
          if (group + 1 < kChunks * 2) load_cbias(group + 1, next_cbias);
#pragma unroll
          for (int jj = 0; jj < kHalf; ++jj) {
            const int j = half * kHalf + jj;  // the 8-column group within the box
            const int i = chunk * 8 + j;      // the accumulators' 8-column group
            const long long col = col_base + i * 8;
            const bool in0 = kFull || col < n, in1 = kFull || col + 1 < n;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int r = r_local + h * 8;
              // 128B swizzle: the 16-byte chunk j of row r sits at chunk j ^ (r % 8) (r % 8 = lane / 4),
              // so a warp's 32 stores hit 32 different banks.
              st_shared_u32(buf + cc * kStoreBox + r * 128 + ((j ^ (r & 7)) << 4) + (lane % 4) * 4,
                            pair_bits(epi, row_base + h * 8, col, float(acc[ma][i * 4 + h * 2]),
                                      float(acc[ma][i * 4 + h * 2 + 1]), row_in[h] && in0, row_in[h] && in1, rbias[h],
                                      cbias[jj][0], cbias[jj][1]));
            }
          }
          if (group + 1 < kChunks * 2) {
#pragma unroll
            for (int jj = 0; jj < kHalf; ++jj) {
              cbias[jj][0] = next_cbias[jj][0];
              cbias[jj][1] = next_cbias[jj][1];
            }
          }
        }
        if (cc == kSlots - 1) staging_flush(args, w, wg_row + ma * 64, issuer, bar_id, buf, chunk + 1 - kSlots);
      }
    }
    epi.flush_amax();
  }

  // kTransStage: the fused epilogue of a 16-bit X = D^T on the CTA's last tile, through the idle
  // stage ring and TMA stores. X(row, col) is D[col * ldd + row], so a D row holds consecutive X
  // rows: each 8 x 8 block of the accumulators (8 X rows of the warp, 8 X columns) goes to shared
  // memory transposed by one stmatrix .trans, as 8 rows (X columns) of 16 bytes (8 X rows) in the
  // 128B-swizzled layout of tma_d's box (a row of 128 bytes is the warpgroup's 64 X rows; its
  // 16-byte chunk j sits at j ^ (row % 8)). Slot c (chunk c of 64 X columns) is A's stage c, the
  // warpgroup's 64-row half; with more chunks than stages the slots are reused once the previous
  // round's stores have read them. From registers instead (epilogue()) a thread wrote each
  // element alone, 2 bytes of a 32-byte sector, with its own address arithmetic (ncu, H100,
  // 200x16384x1024 on 128x200 swap: 2.17x the instructions of cuBLAS's kernel of the same tile,
  // half of each stored sector unused). TMA clips the boxes at D's bounds; elements outside X
  // read nothing (pair_bits).
  template <bool kFull>
  __device__ static void epilogue_tma_t(const GemmArgs& args, const Work& w, int math_wg, int warp_in_wg, int lane,
                                        Acc (&acc)[kMAtoms][kAcc], u32 ring) {
    using Op = EpilogueOp<Epi>;
    static_assert(kTransStage, "epilogue_tma_t: a 16-bit transposed X, one m64 atom per warpgroup");
    const long long m = w.row_end, n = args.p.n;
    const int row0 = int(w.row0) + math_wg * 64;  // the warpgroup's first X row (a D column)
    const long long row_base = row0 + warp_in_wg * 16 + lane / 4;
    const long long col_base = (long long)w.n_block * kBlockN + (lane % 4) * 2;
    const int bar_id = 2 + math_wg;  // 0: __syncthreads, 1: load_blk_scales, 4: the promotion skew
    const bool issuer = warp_in_wg == 0 && lane == 0;
    Op epi;
    epi.init(args.p, w.batch);
    bool row_in[2];
    float rbias[2];
    thread_rows<kFull>(epi, row_base, m, row_in, rbias);
    // stmatrix addresses: lanes 0-7 the rows of the block of X rows +0..7 (h = 0), lanes 8-15
    // those of +8..15 (h = 1); the block's stored row k is X column 8 j + k of the chunk.
    const int k = lane & 7, hh = (lane >> 3) & 1;
    const u32 lane_off = u32(k * 128 + (((warp_in_wg * 2 + hh) ^ k) << 4));
    // The ring was last read by this warpgroup's MMAs (the async proxy; complete at their wait).
    fence_proxy_async_shared();
#pragma unroll
    for (int chunk = 0; chunk < kTChunks; ++chunk) {
      const int slot = chunk % kTSlots;
      if (slot == 0 && chunk > 0) staging_acquire(issuer, bar_id);
      const u32 buf = ring + u32(slot) * kStageA + u32(math_wg) * 8192u;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int i = chunk * 8 + j;  // the accumulators' 8-column group
        if (i < kBlockN / 8) {
          const long long col = col_base + i * 8;
          const bool in0 = kFull || col < n, in1 = kFull || col + 1 < n;
          const float cb0 = in0 ? epi.col_bias(col) : 0.0f, cb1 = in1 ? epi.col_bias(col + 1) : 0.0f;
          const u32 r0 = pair_bits(epi, row_base, col, float(acc[0][i * 4]), float(acc[0][i * 4 + 1]),
                                   row_in[0] && in0, row_in[0] && in1, rbias[0], cb0, cb1);
          const u32 r1 = pair_bits(epi, row_base + 8, col, float(acc[0][i * 4 + 2]), float(acc[0][i * 4 + 3]),
                                   row_in[1] && in0, row_in[1] && in1, rbias[1], cb0, cb1);
          stmatrix_x2_trans(buf + u32(j) * 1024u + lane_off, r0, r1);
        }
      }
      if (slot == kTSlots - 1 || chunk == kTChunks - 1) {
        fence_proxy_async_shared();
        named_barrier_sync(bar_id, 128);
        if (issuer) {
#pragma unroll
          for (int c = chunk - slot; c <= chunk; ++c) {
            const int cols = kBlockN - c * 64 < 64 ? kBlockN - c * 64 : 64;
            const u32 src = ring + u32(c % kTSlots) * kStageA + u32(math_wg) * 8192u;
#pragma unroll
            for (int b = 0; b < cols / kTBox; ++b)
              tma_store_3d(&args.tma_d, src + u32(b * kTBox) * 128u, row0, w.n_block * kBlockN + c * 64 + b * kTBox,
                           w.batch);
          }
          bulk_commit();
        }
      }
    }
    epi.flush_amax();
  }

  // The fused epilogue from registers. wgmma's accumulator layout: thread (warp w, lane l) holds,
  // for each 8-column group i, rows w*16 + l/4 (+8) and columns i*8 + (l%4)*2 (+1).
  // Rows at or past w.row_end (D's end, or the group's) are not stored.
  __device__ static void epilogue(const GemmArgs& args, const Work& w, int math_wg, int warp_in_wg, int lane,
                                  Acc (&acc)[kMAtoms][kAcc]) {
    using Op = EpilogueOp<Epi>;
    const long long m = w.row_end, n = args.p.n;
    const long long row_base = w.row0 + math_wg * kWGRows + warp_in_wg * 16 + lane / 4;
    const long long col_base = (long long)w.n_block * kBlockN + (lane % 4) * 2;
    Op epi;
    epi.init(args.p, w.batch);
    if constexpr (kGrouped != kGroupNone)
      epi.select_group(w.group, args.p.m, n, kGrouped == kGroupMasked, args.groups.row_scale_stride,
                       args.groups.col_scale_stride);
    // Bias and input scale once per row and per column of the thread's fragment, not per element.
    // Column biases come kGroup column pairs at a time, the next group's loads issued before this
    // group's stores (a load after a store to D cannot be hoisted above it: they may alias); so do
    // the column input scales where the registers allow it (kInAhead), else at the start of their
    // own group. Left inside value(), the input scales were reloaded for every element after the
    // previous element's store: 3 dependent global loads per column pair, a chain of 32 load
    // latencies per thread and 128x128 tile (row-wise grouped FP8 5-29 % slower than block-scaled).
    float rbias[kMAtoms][2], rin[kMAtoms][2];
#pragma unroll
    for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const long long row = row_base + ma * 64 + h * 8;
        rbias[ma][h] = row < m ? epi.row_bias(row) : 0.0f;
        rin[ma][h] = Op::kRowInScale == 1 || row < m ? epi.row_in_scale(row) : 1.0f;  // per tensor: one load
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
    // Column input scales of group g (kFull: every column is inside D, no checks).
    float cin[kGroup][2], next_cin[kGroup][2];
    auto load_cin = [&](auto full, int g, float (&out)[kGroup][2]) {
      constexpr bool kFull = decltype(full)::value;
#pragma unroll
      for (int ii = 0; ii < kGroup; ++ii) {
        const long long col = col_base + (g * kGroup + ii) * 8;
        out[ii][0] = kFull || Op::kColInScale == 1 || col < n ? epi.col_in_scale(col) : 1.0f;
        out[ii][1] = kFull || Op::kColInScale == 1 || col + 1 < n ? epi.col_in_scale(col + 1) : 1.0f;
      }
    };
    // Where the registers allow it (ptxas sm_90a, grouped row-wise FP8, 2026-12-05): one CTA per SM,
    // no stream-K, and 64 accumulators a thread (the next group's scales loaded with its biases) or
    // no column bias (each group's scales at its start; 128x256, 64x256 and 128x192 with GELU, a
    // row bias and SiLU or a column output scale: no spills). Elsewhere the input scales stay where
    // they were, loaded by value() for each element: hoisted, 64x128 b2 spilled 148-212 bytes, and
    // with a column bias and GELU 128x256 80, 64x256 48-76, 128x192 32, the 128x128 stream-K twin
    // 12-40 (4-28 without).
    // Grouped kernels only, for now (no GPU was lent that day): the one place measured slow (their
    // epilogue is always this one; a plain kernel with a 16-bit D stages it and loads the scales
    // once), and the only SASS this changes (checked: non-grouped and bf16 grouped builds are
    // instruction for instruction the same) until test_grouped_gemm's FP8 cases have run it.
    constexpr bool kInHoist = kMinBlocks == 1 && kGrouped != kGroupNone && !kStreamK &&
                              (kMAtoms * kAcc <= 64 || Epi::kBiasMode != kVecPerColumn);
    constexpr bool kInAhead = kInHoist && kMAtoms * kAcc <= 64;
    // After group g's stores: the next group's column biases and input scales (loaded ahead) move in.
    auto next_group = [&](int g) {
      if (g + 1 < kPairs / kGroup) {
#pragma unroll
        for (int ii = 0; ii < kGroup; ++ii) {
          cbias[ii][0] = next_cbias[ii][0];
          cbias[ii][1] = next_cbias[ii][1];
          if constexpr (kInAhead) {
            cin[ii][0] = next_cin[ii][0];
            cin[ii][1] = next_cin[ii][1];
          }
        }
      }
    };
    // A tile wholly inside D with pair-aligned rows (the usual case) stores without bounds
    // checks (kFull), from one pointer per row plus compile-time offsets.
    auto store_tile = [&](auto full) {
      constexpr bool kFull = decltype(full)::value;
      typename Op::DType* rowp[kMAtoms][2];
      if constexpr (kFull) {
#pragma unroll
        for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
          for (int h = 0; h < 2; ++h) rowp[ma][h] = epi.row_ptr(row_base + ma * 64 + h * 8) + col_base;
      }
      if constexpr (kInAhead) load_cin(full, 0, cin);
      (void)load_cin;
#pragma unroll
      for (int g = 0; g < kPairs / kGroup; ++g) {
        if (g + 1 < kPairs / kGroup) {
          load_cbias(g + 1, next_cbias);
          if constexpr (kInAhead) load_cin(full, g + 1, next_cin);
        }
        if constexpr (kInHoist && !kInAhead) load_cin(full, g, cin);
#pragma unroll
        for (int ii = 0; ii < kGroup; ++ii) {
          const int i = g * kGroup + ii;
          const long long col = col_base + i * 8;
          if (!kFull && col >= n) continue;
#pragma unroll
          for (int ma = 0; ma < kMAtoms; ++ma)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const long long row = row_base + ma * 64 + h * 8;
              const float v0 = float(acc[ma][i * 4 + h * 2]), v1 = float(acc[ma][i * 4 + h * 2 + 1]);
              if constexpr (kFull && kInHoist)
                epi.store_pair_aligned(rowp[ma][h] + i * 8, row, col, v0, v1, rbias[ma][h], cbias[ii][0], cbias[ii][1],
                                       rin[ma][h], cin[ii][0], cin[ii][1]);
              else if constexpr (kFull)  // the input scales loaded by value(), per element
                epi.store_pair_aligned(rowp[ma][h] + i * 8, row, col, v0, v1, rbias[ma][h], cbias[ii][0], cbias[ii][1]);
              else if (row < m) {
                if constexpr (kInHoist)
                  epi.store_pair(row, col, v0, v1, col + 1 < n, rbias[ma][h], cbias[ii][0], cbias[ii][1], rin[ma][h],
                                 cin[ii][0], cin[ii][1]);
                else
                  epi.store_pair(row, col, v0, v1, col + 1 < n, rbias[ma][h], cbias[ii][0], cbias[ii][1]);
              }
            }
        }
        next_group(g);
      }
    };
    // A whole tile of a 16-bit D with 16-byte aligned rows (kSectorStores, sectors_aligned()): a quad
    // of lanes holds two rows x 16 columns of two adjacent 8-column atoms, as 4 words of 2 values a
    // lane; a 4 x 4 exchange of those words inside the quad (two rounds of shuffles) leaves each
    // lane 8 consecutive columns of one row, stored as one 16-byte access. A warp's store then
    // writes whole 32-byte sectors (16 rows x 32 bytes) where the pairs wrote half sectors (8 rows x
    // 16 bytes, four times as many stores): sm90 NOTES Next -19. Tiles whose BLOCK_N is not a
    // multiple of 16 (an odd number of atoms) keep the pairs, and so do stream-K tiles with 128
    // accumulators a thread (the 128x128 ping-pong twin spilled 8 bytes: ptxas sm_90a).
    constexpr bool kSectorStores = Op::kPackedPairs && kGroup % 2 == 0 && !(kStreamK && kMAtoms * kAcc >= 128);
    auto store_tile_sectors = [&]() {
      if constexpr (kSectorStores) {
        const int q = lane % 4;
        const bool odd_q = q & 1, high_q = q & 2;
        // The row and first column this lane stores: row h = q % 2 of its pair, atom a = q / 2 of two.
        typename Op::DType* rowq[kMAtoms];
#pragma unroll
        for (int ma = 0; ma < kMAtoms; ++ma)
          rowq[ma] = epi.row_ptr(row_base + ma * 64 + (q % 2) * 8) + (long long)w.n_block * kBlockN + (q / 2) * 8;
        if constexpr (kInAhead) load_cin(BoolTag<true>{}, 0, cin);
#pragma unroll
        for (int g = 0; g < kPairs / kGroup; ++g) {
          if (g + 1 < kPairs / kGroup) {
            load_cbias(g + 1, next_cbias);
            if constexpr (kInAhead) load_cin(BoolTag<true>{}, g + 1, next_cin);
          }
          if constexpr (kInHoist && !kInAhead) load_cin(BoolTag<true>{}, g, cin);
#pragma unroll
          for (int ii = 0; ii < kGroup; ii += 2) {
            const int i = g * kGroup + ii;
#pragma unroll
            for (int ma = 0; ma < kMAtoms; ++ma) {
              unsigned x[4];  // x[a * 2 + h]: atom i + a, row h, this lane's column pair
#pragma unroll
              for (int a = 0; a < 2; ++a)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                  const long long row = row_base + ma * 64 + h * 8, col = col_base + (i + a) * 8;
                  const float v0 = float(acc[ma][(i + a) * 4 + h * 2]), v1 = float(acc[ma][(i + a) * 4 + h * 2 + 1]);
                  if constexpr (kInHoist)
                    x[a * 2 + h] = epi.pack_pair(row, col, v0, v1, rbias[ma][h], cbias[ii + a][0], cbias[ii + a][1],
                                                 rin[ma][h], cin[ii + a][0], cin[ii + a][1]);
                  else
                    x[a * 2 + h] = epi.pack_pair(row, col, v0, v1, rbias[ma][h], cbias[ii + a][0], cbias[ii + a][1]);
                }
              // Word j of lane q goes to lane j as its word q: swap the lane's bit 0 with the word's
              // (partner lane q ^ 1), then bit 1 (partner q ^ 2).
#pragma unroll
              for (int hi = 0; hi < 2; ++hi) {
                const unsigned send = odd_q ? x[hi * 2] : x[hi * 2 + 1];
                const unsigned got = __shfl_xor_sync(0xffffffffu, send, 1);
                if (odd_q) x[hi * 2] = got;
                else x[hi * 2 + 1] = got;
              }
#pragma unroll
              for (int lo = 0; lo < 2; ++lo) {
                const unsigned send = high_q ? x[lo] : x[2 + lo];
                const unsigned got = __shfl_xor_sync(0xffffffffu, send, 2);
                if (high_q) x[lo] = got;
                else x[2 + lo] = got;
              }
              // One 16-byte store (a plain C++ store of an aligned struct became four 4-byte ones at the
              // first atom pair: nvcc 12, PTX).
              asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(rowq[ma] + i * 8), "r"(x[0]), "r"(x[1]),
                           "r"(x[2]), "r"(x[3])
                           : "memory");
            }
          }
          next_group(g);
        }
      }
    };
    const bool whole = w.row0 + kBlockM <= m && (long long)(w.n_block + 1) * kBlockN <= n;
    if constexpr (kSectorStores) {
      if (whole && epi.sectors_aligned()) {
        store_tile_sectors();
        epi.flush_amax();
        return;
      }
    }
    (void)store_tile_sectors;
    if (whole && epi.pairs_aligned())
      store_tile(BoolTag<true>{});
    else
      store_tile(BoolTag<false>{});
    epi.flush_amax();
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

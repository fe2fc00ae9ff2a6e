// Planner model of the sm90 family (TMA + wgmma, warp-specialized, persistent; src/kernels/sm90):
// its tile menu, feasibility (sm_90a with wgmma and TMA, f16/bf16 operands, f32 compute, the TMA
// layout rules) and cost through the shared model.
//
// Two kinds of candidates:
//   - the square menu (BLOCK_M 128/256 x BLOCK_N 64..256, two consumer warpgroups, optional 2-CTA
//     clusters sharing B by multicast), for problems with many output tiles;
//   - skinny tiles, for a kernel view whose columns are few (decode and batched decode, where the
//     problem's M is small, computed as D^T with swap-AB so that M is wgmma's N; or a column-major
//     problem with a small M, whose natural view already has M as its columns): BLOCK_N is M
//     rounded up to 8, 16, 32, 64, 128, 192 or 256, BLOCK_M 64 or 128, as many stages as fit, and
//     K split over the CTAs of a cluster (reduced in distributed shared memory) so that even a few
//     output tiles keep every SM streaming the weights. Also mid-size problems get K-split
//     versions of the square menu (fewer tiles than SMs).
//
// Register count: every thread of a 384-thread kernel starts at the __launch_bounds__(384, 1) cap
// of 168; setmaxnreg then moves registers from the producer warpgroup (40) to the consumers
// (232). 256-thread kernels (BLOCK_M = 64) keep 255 for everyone. Math efficiencies of the square
// menu are what the kernels measured on the H200 (src/kernels/sm90/NOTES.md): ~0.68 of the bf16
// peak for N = 256 tiles at 4096^3.
//
// Leading dimensions or batch strides that break TMA's 16-byte rule do not reject the family:
// its candidates then pack those operands into the workspace (KernelConfig::pack_a / pack_b; the
// cost model charges the copy), and the planner weighs that against the sm80 family.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "core/kernel_view.hpp"
#include "core/scaling.hpp"
#include "core/stream_k.hpp"
#include "core/tma_rules.hpp"
#include "plan/cost_model.hpp"
#include "plan/families.hpp"

namespace dgemm {

namespace {

struct Sm90Tile {
  int block_m, block_n, stages, cluster_m, cluster_k;
  double efficiency;  // measured (square menu) or estimated fraction of the wgmma peak in the main loop
  int blocks = 1;     // CTAs built to share an SM (one-warpgroup tiles with <= 64 accumulators: 2)
  bool measuring = false;  // offered for measuring only (force_kernel, bench --force-kernel)
  int cluster_n = 1;       // 2: a cluster of two horizontally adjacent tiles sharing (multicasting) A
  int variant = 0;         // 1: ping-pong consumer warpgroups (each owns whole tiles; sm90_gemm.cuh kPingPong)
  bool stream_k = false;   // the tiles of a partial last wave shared out by K blocks (core/stream_k.hpp)
  bool tma_store = false;  // grouped: the TMA-stored epilogue (KernelConfig::tma_store, `_ts`)
};
// Main-loop efficiency of a 128x64 tile (two consumer warpgroups of 64x64). 0.50 was a guess
// between 128x128's 0.60 and the skinny tiles; on the H200 the 128x64 kernels ran ~20 % faster
// relative to the other tiles of their rows than that predicts (2026-12-01 run E: 512x2112x7168
// 128x64 s8 29.9 us where the 0.50 model's math alone was 31.3 us; 128x7168x2048 11.3 us, the
// fastest of its row). Fitted with the L2 rate and the K-split reduction (cost_model.cpp) by
// bench/offline_regret.py: 0.62-0.64 give the same choices both offline (h200.yaml) and with the
// detected device's peak; 0.61 moves two fp8 rows back to a slower K split, 0.67 moves rows to
// unmeasured tiles.
constexpr double kEff128x64 = 0.63;
// Main-loop efficiency of the ping-pong 128x128 for i8 sums stored exactly (Sm90Family::
// enumerate: where it is chosen): above 128x256's 0.68, so that it wins from a wave of tiles up
// as measured (4096^3 i8: 95.9 us against 103.9 for 128x256).
constexpr double kEffPingPongI8 = 0.71;
constexpr double kL2RatePingPongI8 = 1.35;
// The 64x128 tile at one CTA per SM with 16-bit operands: one consumer warpgroup issues one
// m64n128k16 wgmma per K slice where 128x64 issues two m64n64k16 from two warpgroups, reading a
// quarter less from shared memory per MMA (6 KB against 8 KB; ncu at 1024x1024x8192: tensor pipe
// 66.6 % of elapsed cycles against 45.9 %, 5.95 M L2 sectors read against 8.26 M, 45 % fewer
// instructions). H200, 2026-12-04 call 1 (bench/RESULTS.md): 1024x1024x{1024, 2048, 4096} 5.84 /
// 8.92 / 16.98 us against 6.00 / 9.16 / 18.01 for the kernels chosen before, 256x1024x1024 5.01
// against 5.30; slower at 128 rows (128x4096x4096 15.10 against 14.03 for 128x64 ck2) and beyond a
// wave. Chosen from 256 rows up at most a wave of tiles, costed with these two factors (fitted by
// bench/offline_regret.py on that run: mid-64x128 regret 2.5 % -> 0.7 %).
constexpr double kEff64x128One = 0.65;
constexpr double kL2Rate64x128One = 1.3;
// A stream-K kernel's main loop against the same tile without it (Sm90Family::enumerate).
constexpr double kEffStreamK = 0.93;

// The square menu: 128x256 for big problems, 256x128 for tall ones, 128x192 where N = 256 would
// leave a partial wave or a mostly empty last column of tiles (e.g. N = 2112), 128x128 and 128x64
// so that mid-sized problems fill 132 SMs. Clusters of 2 along M share (multicast) the B tile;
// clusters along K split the tiles of problems with fewer tiles than SMs (K-split entries are
// considered only then).
constexpr Sm90Tile kMenu[] = {
    {128, 256, 4, 2, 1, 0.68}, {128, 256, 4, 1, 1, 0.68}, {128, 192, 5, 2, 1, 0.64}, {128, 192, 5, 1, 1, 0.64},
    {256, 128, 4, 2, 1, 0.64}, {256, 128, 4, 1, 1, 0.64}, {128, 128, 6, 2, 1, 0.60}, {128, 128, 6, 1, 1, 0.60},
    {128, 64, 8, 2, 1, kEff128x64},  {128, 64, 8, 1, 1, kEff128x64},
    {128, 128, 4, 1, 2, 0.60}, {128, 128, 4, 1, 4, 0.60}, {128, 64, 6, 1, 2, kEff128x64}, {128, 64, 6, 1, 4, kEff128x64},
    {128, 192, 3, 1, 2, 0.62},
    // One consumer warpgroup, two CTAs per SM (one's prologue and epilogue overlap the other's
    // main loop), for mid-size problems; and 64x256 at one CTA per SM.
    {64, 128, 4, 1, 1, 0.50, 2}, {64, 128, 4, 1, 2, 0.50, 2}, {64, 256, 4, 1, 1, 0.55, 1},
    // 64x128 at one CTA per SM, for a block-scaled FP8 D from 8-bit operands at small M
    // (Sm90Family::enumerate: offered only there, chosen by a measured rule): such a D is written
    // from the unswapped view, its promoted block-scaled inputs need two or three accumulator sets
    // (not two CTAs per SM), and the 128-row tiles it had computed half-empty rows at M = 64
    // (64x7168x16384: 49.3 us against 36.7 with a bf16 D).
    {64, 128, 8, 1, 1, 0.50, 1, true}, {64, 128, 7, 1, 2, 0.50, 1, true},
    // ... and K over four (measuring only: 17 column tiles at M = 64 x 2112 are 34 CTAs over two).
    {64, 128, 7, 1, 4, 0.50, 1, true},
    // The 64x128 one-CTA tile in clusters of two sharing B (c2) or A (cn2), and with six and
    // seven stages: measuring only here; the planner's rules choose s7 alone and s8 in c2.
    {64, 128, 8, 2, 1, 0.50, 1, true}, {64, 128, 8, 1, 1, 0.50, 1, true, 2},
    {64, 128, 6, 1, 1, 0.50, 1, true}, {64, 128, 7, 1, 1, 0.50, 1, true}, {64, 128, 6, 2, 1, 0.50, 1, true},
    // Measuring only: 128x256 with three stages, whose free shared memory stages the whole tile for
    // the TMA-stored epilogue in one round (four stages: two rounds of half the tile).
    {128, 256, 3, 2, 1, 0.68, 1, true},
    // Measuring only: 128x64 with six and seven stages. At 1024 x 1024 x 4096 and x 8192 they ran
    // 9-12 % faster than eight (16.6 / 32.9 against 18.3 / 37.3 us; 2026-12-03 run 3), not in
    // isolated launches under ncu (34.2 against 34.8 us) and not on the rows the planner gives
    // 128x64 (an A/B of the whole menu entry at s7: geomean 0.998, 512x2112x7168 nn 6 % slower;
    // run 4). Kept for the planner refit that would choose them where they win.
    {128, 64, 6, 1, 1, kEff128x64, 1, true}, {128, 64, 7, 1, 1, kEff128x64, 1, true},
    // Measuring only: ping-pong consumer warpgroups (`_v1`), each owning whole tiles in turn, so one
    // warpgroup's epilogue runs during the other's main loop; cuBLAS runs 1024 x 1024 x 8192 with a
    // non-cooperative 128x64 kernel at 1.4x our speed (2026-12-03 run 1). The TMA-stored epilogue,
    // one box at a time (kernels/sm90/NOTES.md: 4096^3 128x128 at 89.8 % tensor-active under ncu,
    // still ~2 % behind the cooperative 128x256 in graph replays).
    {128, 64, 8, 1, 1, kEff128x64, 1, true, 1, 1}, {128, 128, 6, 1, 1, 0.60, 1, true, 1, 1},
    // Clusters of two tiles along N sharing A, the larger operand of these tiles: per K block a
    // 128x64 CTA pulls 16 + 8 KB through L2, 8 + 8 KB with A shared. Below a wave of tiles the
    // H200 runs these problems at the L2's rate (2026-12-01 probe: 1024^3 128x64 6.6 us, 1024 x
    // 1024 x 1000 11.4 us with A and B rows off the 32-byte sectors; cuBLAS 5.2 / 7.1 us with a
    // 128x64 tile in clusters of 1x2).
    {128, 64, 8, 1, 1, kEff128x64, 1, false, 2}, {128, 128, 6, 1, 1, 0.60, 1, false, 2},
    {256, 128, 4, 1, 1, 0.64, 1, false, 2},
};
constexpr int kRegsAtEntry384 = 168;
constexpr int kRegsAtEntry256 = 255;  // one CTA per SM; two CTAs per SM cap it at 128
// Skinny tiles: BLOCK_N buckets for a view with few columns, and the K splits offered.
constexpr int kSkinnyN[] = {8, 16, 32, 64, 128, 192, 256};
constexpr int kClusterKs[] = {1, 2, 4, 8};
// K splits over more than two CTAs stay measurable (force_kernel, bench --candidates) but are
// not chosen: on the H200 (2026-12-01, bench/RESULTS.md) every ck4 and ck8 kernel ran 1.3-2.3x
// the time of the same tile with ck2 or none, at every shape of the decode, batched and fp8 sets
// (128x4096x4096: 128x128 ck4 33.7 us, 128x64 ck2 14.9 us), which the model does not explain.
constexpr int kMaxChosenClusterK = 2;
constexpr int kMaxStages = 12;

int threads_for(int block_m) { return 128 + (block_m >= 128 ? 256 : 128); }

// The 64x128 tile at one CTA per SM, unswapped (one consumer warpgroup): what the measured rules
// of Sm90Family::enumerate choose among.
bool one_cta_64x128(const KernelConfig& c) {
  return c.block_m == 64 && c.block_n == 128 && c.blocks_per_sm == 1 && !c.swap_ab;
}

// A tile as wide as `cols` columns: rounded up to wgmma's N step (8; s8 takes 16, 24 or multiples
// of 16, so 16 for i8).
int exact_width(DType a_type, int64_t cols) {
  const int64_t step = a_type == DType::I8 ? 16 : 8;
  return int((cols + step - 1) / step * step);
}

// Columns cut to fill one wave of `sms` SMs: for a view of `block_m`-row tiles with more columns
// than a skinny tile takes, the width that makes the tiles one wave or just under, or 0 where that
// width is a menu tile's (64, 128, 192, 256), under 48 or past 256, or the rows of tiles alone
// exceed a wave.
int wave_fit_width(const KernelView& v, DType a_type, long sms, int block_m) {
  const long row_tiles = long((v.rows + block_m - 1) / block_m);
  if (v.cols <= 256 || row_tiles < 1) return 0;
  const long per_row = sms / row_tiles;  // (no rows, or fewer SMs than rows of tiles: none)
  if (per_row < 1) return 0;
  const int width = exact_width(a_type, (v.cols + per_row - 1) / per_row);
  return width < 48 || width > 256 || width % 64 == 0 ? 0 : width;
}

// Shared memory the kernel needs beyond the operand ring: split-K parking, barriers, alignment;
// with block input scales, the per-stage scale vectors and the tile's K row of 128 x 128 scales
// (src/backend/cuda/sm90_gemm.cpp, sm90_smem_bytes, is the exact count).
long smem_extra(const KernelConfig& c, const KernelView& v, int64_t k, bool col_amax) {
  long extra = (c.cluster_k > 1 ? long(c.block_m) * c.block_n * 4 : 0L) + long(2 * c.stages + 2) * 8 + 1024;
  // A transposed block-scaled D: every consumer warp's column maxima (64-row tiles in pairs: and
  // two slots of the peer's, with two barriers).
  if (col_amax) {
    const bool single = c.block_m == 64 && c.cluster_m == 1 && c.cluster_n == 1 && c.cluster_k == 1;  // through the workspace
    extra += ((c.block_m >= 128 ? 8L : 4L) + (c.cluster_m == 2 ? 2L : 0L) + (single ? 1L : 0L)) * c.block_n * 4 +
             (c.cluster_m == 2 ? 16L : 0L);
  }
  const long sa = long(scale_type_size(v.a_scale.type)), sb = long(scale_type_size(v.b_scale.type));
  if (v.a_scale.mode == ScaleMode::Vec128) extra += long(c.stages) * ((c.block_m * sa + 127) / 128 * 128);
  if (v.b_scale.mode == ScaleMode::Vec128) extra += long(c.stages) * ((c.block_n * sb + 127) / 128 * 128);
  if (v.a_scale.mode == ScaleMode::Blk128x128 || v.b_scale.mode == ScaleMode::Blk128x128) {
    const bool b_span2 = v.b_scale.mode == ScaleMode::Blk128x128 && 128 % c.block_n != 0;
    extra += (b_span2 ? 3 : 2) * ((k + 127) / 128 + 3) / 4 * 16;
  }
  return extra;
}

// The operand pairs the kernel takes: both 16-bit of one type, any two fp8 types, or i8 x i8, with
// the matching compute type.
std::string operand_problem(const GemmProblem& p) {
  const bool sixteen = p.a_type == p.b_type && (p.a_type == DType::F16 || p.a_type == DType::BF16);
  const bool fp8 = dtype_is_fp8(p.a_type) && dtype_is_fp8(p.b_type);
  const bool i8 = p.a_type == DType::I8 && p.b_type == DType::I8;
  if (!sixteen && !fp8 && !i8)
    return std::string("takes f16, bf16, fp8 (e4m3/e5m2) or i8 A and B (got ") + dtype_name(p.a_type) + ", " +
           dtype_name(p.b_type) + ")";
  const DType compute = i8 ? DType::I32 : DType::F32;
  if (p.compute_type != compute)
    return std::string("computes ") + dtype_name(p.a_type) + " in " + dtype_name(compute) + " only (compute_type " +
           dtype_name(p.compute_type) + ")";
  return "";
}

// Why a tile cannot apply the view's input scales ("" when it can): block scales are promoted per
// 128 of K (8-bit operands) into a second set of accumulators, f32 or UE8M0; scales applied in the
// epilogue (per tensor, per row / column) f32 only.
std::string scale_problem(const KernelConfig& c, const KernelView& v) {
  for (int op = 0; op < 2; ++op) {
    const ScaleDesc& s = op == 0 ? v.a_scale : v.b_scale;
    if (!s.active()) continue;
    const char* name = op == 0 ? "A" : "B";
    if (!s.blocked()) {
      if (s.type != ScaleType::F32)
        return std::string("UE8M0 per-tensor / per-row-column scales of the kernel's ") + name +
               " (the epilogue reads f32 only so far)";
      continue;
    }
    if (dtype_size(v.a_type) != 1) return "block scales need 8-bit operands (one scale block per stage)";
    // TMA: rows of 16-byte multiples, and a box of the tile's rows that is too.
    const int per_16 = s.type == ScaleType::F32 ? 4 : 16;
    if (s.mode == ScaleMode::Vec128 && (s.layout != ScaleLayout::MnMajor || s.ld % per_16 != 0))
      return std::string("VEC128 scales of the kernel's ") + name + " are read with TMA: MN-major with ld a multiple of " +
             std::to_string(per_16) + " (got " + scale_layout_name(s.layout) + ", ld " + std::to_string(s.ld) + ")";
    if (s.mode == ScaleMode::Vec128 && (op == 0 ? c.block_m : c.block_n) % per_16 != 0)
      return std::string("VEC128 ") + scale_type_name(s.type) + " scales of the kernel's " + name +
             " come by TMA in boxes of 16-byte multiples (BLOCK " + std::to_string(op == 0 ? c.block_m : c.block_n) + ")";
    if (s.mode == ScaleMode::Blk128x128 && op == 0 && c.block_m > 128)
      return "a 128 x 128 block scale per tile needs BLOCK_M <= 128";
    // A tile starting at a multiple of gcd(BLOCK_N, 128) inside a block reaches at most one more.
    if (s.mode == ScaleMode::Blk128x128 && op == 1 && c.block_n > 128 + std::gcd(c.block_n, 128))
      return "128 x 128 block scales: a tile of BLOCK_N " + std::to_string(c.block_n) +
             " would straddle more than two scale blocks";
  }
  const bool promote = v.a_scale.blocked() || v.b_scale.blocked();
  const int consumers = c.block_m >= 128 ? 256 : 128;
  if (promote && 2L * c.block_m * c.block_n / consumers > 192)
    return "promoted block scales keep two accumulator sets: BLOCK_M x BLOCK_N too large (at most 192 registers)";
  if (promote && c.blocks_per_sm > 1 && 2L * c.block_m * c.block_n / consumers > 64)
    return "promoted block scales at two CTAs per SM: two accumulator sets exceed 64 registers";
  if (promote && c.blocks_per_sm > 2) return "promoted block scales at three or more CTAs per SM: not built";
  return "";
}

// Whether a promoting tile keeps the next stage's MMAs running while it promotes (the kernel's
// kPipePromote): one CTA per SM and three accumulator sets within 192 registers per thread.
bool pipelines_promotion(int block_m, int block_n, int blocks_per_sm) {
  const int consumers = block_m >= 128 ? 256 : 128;
  return blocks_per_sm == 1 && 3L * block_m * block_n / consumers <= 192;
}

// Why a tile cannot write a block-scaled FP8 D ("" when it can): the epilogue reduces each 1 x 128
// block of D's rows within a tile, so tiles hold whole blocks. Unswapped (X = D), a block is 128
// columns of a tile row (kernels/sm90, epilogue_block_scaled): BLOCK_N a multiple of 128.
// Swap-AB of a row-major D (X = D^T, stored transposed), it is 128 rows of a tile column
// (epilogue_block_scaled_t): 128-row tiles of two cooperative warpgroups.
std::string out_scale_problem(const KernelConfig& c, const KernelView& v) {
  if (v.swap_operands && v.out_transposed) {
    const bool whole = c.block_m == 128 && c.cluster_m == 1 && c.variant == 0;
    // 64-row tiles in pairs: a cluster of two along M (which may split K too, up to four ways), or
    // one CTA each exchanging through the workspace (no K split, no stream-K, one CTA per SM).
    const bool pair = c.block_m == 64 && c.cluster_n == 1 && c.blocks_per_sm == 1 && !c.stream_k &&
                      (c.cluster_k == 1 || (c.cluster_m == 2 && c.cluster_k <= 4));
    if (!whole && !pair)
      return "a swapped block-scaled D needs 128-row cooperative tiles or 64-row tiles in pairs along M (" + c.name() + ")";
    return "";
  }
  if (v.swap_operands || v.out_transposed)
    return "a block-scaled D is written from D's row-major view or, swapped, from D^T stored transposed";
  if (c.block_n % 128 != 0)
    return "a block-scaled D needs BLOCK_N a multiple of 128 (BLOCK_N " + std::to_string(c.block_n) + ")";
  return "";
}

// Main-loop efficiency of a skinny tile: the wgmma N is small, so the tensor pipe idles more per
// byte; these tiles are chosen where the weights' bytes, not the math, set the time.
double skinny_efficiency(int block_m, int block_n) {
  if (block_m >= 128 && block_n == 64) return kEff128x64;  // the menu's 128x64, swapped
  const double by_n = block_n >= 256 ? 0.68 : block_n >= 128 ? 0.60 : block_n >= 64 ? 0.50 : block_n >= 32 ? 0.40 : 0.30;
  return block_m >= 128 ? by_n : 0.9 * by_n;
}

class Sm90Family final : public FamilyModel {
 public:
  Family family() const override { return Family::Sm90; }
  bool uses_tma(const KernelConfig&) const override { return true; }
  // DGEMM_1.1 input scales: f32 (UE8M0 too for the block modes), block modes with 8-bit operands
  // and one batch (per candidate: scale_problem); a block-scaled FP8 D (f32 or UE8M0 scales) from
  // float operands (per candidate: out_scale_problem); the amax of D. Grouped problems:
  // grouping_problem.
  std::string unsupported_features(const GemmProblem& p, const Epilogue& e) const override {
    const std::string grouping = p.grouping.grouped() ? grouping_problem(p, e) : per_batch_scales(p);
    const std::string why = missing_features(p, e, runs_scaling(p, e), true);
    return why.empty() || grouping.empty() ? why + grouping : why + "; " + grouping;
  }
  // A strided batch whose input scales differ per batch (stride != 0): the kernels read the scale
  // tensors of batch 0 for every batch (only grouped launches step them, GroupArgs), so they are
  // refused rather than run wrong. "" when the scales are shared or there is one batch.
  static std::string per_batch_scales(const GemmProblem& p) {
    if (p.batch_count <= 1) return "";
    for (const ScaleDesc* s : {&p.a_scale, &p.b_scale})
      if (s->active() && s->stride != 0)
        return std::string("sm90 kernels read one ") + (s == &p.a_scale ? "a_scale" : "b_scale") +
               " tensor for every batch of a strided batch (stride = " + std::to_string(s->stride) +
               ": per-batch scales are not built; a grouped problem steps them)";
    return "";
  }
  // The grouped problems the kernel runs (kGrouped, kernels/GROUPED.md): 16-bit operands, or FP8
  // ones with input scales (each group's tensor at g * stride): per tensor and per row / column in
  // the epilogue, 1 x 128 (VEC128) and 128 x 128 blocks in the promoted main loop; row-major D
  // (the kernel's rows are the groups' rows), no block-scaled D, no amax; "" when it runs this one.
  static std::string grouping_problem(const GemmProblem& p, const Epilogue& e) {
    const bool fp8 = dtype_is_fp8(p.a_type) && dtype_is_fp8(p.b_type);
    if (!fp8 && (dtype_size(p.a_type) != 2 || p.a_type != p.b_type))
      return std::string("sm90 grouped kernels take f16, bf16, e4m3 or e5m2 A and B, not ") + dtype_name(p.a_type) +
             " and " + dtype_name(p.b_type);
    if (p.order != Order::RowMajor) return "sm90 grouped kernels store row-major D (order = col)";
    if (e.d_scale.active() || e.amax_d) return "sm90 grouped kernels write no block-scaled D and no amax of D";
    // A VEC128 tensor per group is the third dimension of a TMA map: 16-byte group strides.
    for (const ScaleDesc* s : {&p.a_scale, &p.b_scale}) {
      const int64_t es = int64_t(scale_type_size(s->type));
      // (stride % 16) first: a caller's stride may be anything, and stride * es could overflow.
      if (s->mode == ScaleMode::Vec128 && (s->stride % 16) * es % 16 != 0)
        return std::string("sm90 grouped kernels read VEC128 scales of ") + (s == &p.a_scale ? "A" : "B") +
               " per group with TMA: the group stride must be a multiple of 16 bytes (" + std::to_string(16 / es) +
               " " + scale_type_name(s->type) + " scales; got " + std::to_string(s->stride) + ")";
    }
    // A TMA load's innermost coordinate must fall on 16 bytes (otherwise the load is an illegal
    // instruction: H200, 2026-12-05, the first contiguous group at row 3 of a 1 x 128 A scale map).
    // A contiguous group's tiles start at its first row, which m_alignment is all that bounds: so
    // where rows are the innermost dimension (A's VEC128 scales, and an MN-major op(A)), the
    // alignment must cover 16 bytes of them. Masked slots and all other maps start tiles on
    // multiples of the tile.
    if (p.grouping.contiguous()) {
      const int64_t align = p.grouping.m_alignment;
      auto first_rows = [&](const char* load, int64_t row_bytes, const std::string& unit) -> std::string {
        if (align * row_bytes % 16 == 0) return "";
        return std::string("sm90 grouped kernels ") + load + " with TMA from each tile's first row, which must start on "
               "16 bytes: a contiguous m_alignment that is a multiple of " + std::to_string(16 / row_bytes) + " for " +
               unit + " (got " + std::to_string(align) + ")";
      };
      std::string why;
      if (p.a_scale.mode == ScaleMode::Vec128)
        why = first_rows("read A's 1 x 128 scales", int64_t(scale_type_size(p.a_scale.type)),
                         std::string(scale_type_name(p.a_scale.type)) + " scales");
      if (why.empty() && p.op_a == Op::T)
        why = first_rows("load an MN-major op(A) (op_a = T)", int64_t(dtype_size(p.a_type)), dtype_name(p.a_type));
      if (!why.empty()) return why;
    }
    // A tile's rows must lie in one of A's 128 x 128 blocks: contiguous groups must start on one.
    if (p.a_scale.mode == ScaleMode::Blk128x128 && p.grouping.contiguous() && p.grouping.m_alignment % 128 != 0)
      return "sm90 grouped kernels with 128 x 128 block scales of A need a contiguous m_alignment that is a multiple "
             "of 128 (got " + std::to_string(p.grouping.m_alignment) + "), so that no tile straddles two blocks";
    return "";
  }
  // Grouped problems with 1 x 128 / 128 x 128 input scales plan only the tiles whose grouped
  // block-scaled GPU test has passed (test_grouped_gemm fp8_block_scaled_vs_oracle, H200,
  // 2026-12-05: every case's D against the oracle, memcheck clean); other tiles are offered by
  // name only (force_kernel) until that test runs them.
  // The same for grouped 8-bit problems with scales that do not vary along K (per tensor, row or
  // column: test_grouped_gemm fp8_scaled_vs_oracle, H200, 2026-12-05, on the three tiles below).
  // Before expected_m the planner chose only 128x256 there; hinted masked rows would choose
  // 64x256 or 128x192, which the next device call's test runs first.
  static bool grouped_8bit_verified(const KernelConfig& c, bool block_scaled) {
    static const char* const kBlockPassed[] = {"sm90_128x128x128_s6_t384_p", "sm90_64x128x128_s8_t256_p",
                                               "sm90_128x192x128_s5_t384_p", "sm90_128x128x128_s6_t384_p_streamk",
                                               "sm90_64x128x128_s7_t256_p_streamk"};
    static const char* const kScaledPassed[] = {"sm90_128x128x128_s6_t384_p", "sm90_128x256x128_s4_t384_p",
                                                "sm90_128x128x128_s6_t384_p_streamk"};
    const std::string name = c.name();
    auto listed = [&](const auto& passed) {
      return std::any_of(std::begin(passed), std::end(passed), [&](const char* n) { return name == n; });
    };
    return block_scaled ? listed(kBlockPassed) : listed(kScaledPassed);
  }
  static bool runs_scaling(const GemmProblem& p, const Epilogue& e) {
    if (e.d_scale.active() && p.a_type == DType::I8) return false;
    for (const ScaleDesc* s : {&p.a_scale, &p.b_scale}) {
      if (!s->active()) continue;
      if (s->type != ScaleType::F32 && !s->blocked()) return false;
      if (s->blocked() && (dtype_size(p.a_type) != 1 || (p.batch_count > 1 && !p.grouping.grouped()))) return false;
    }
    return true;
  }

  std::vector<Candidate> enumerate(const GemmProblem& problem, const Epilogue& e, const HardwareDesc& hw) const override {
    std::vector<Candidate> out;
    const GemmProblem p = canonical_operands(problem);  // as the launcher will see it
    std::string why;
    if (hw.vendor != Vendor::Nvidia) why = "needs an NVIDIA GPU (this is " + hw.name + ")";
    else if (!hw.has_wgmma || !hw.has_tma)
      why = "needs sm_90a (wgmma and TMA); device is compute capability " + std::to_string(hw.cc());
    else if (!(why = operand_problem(p)).empty()) {
    } else if (p.m < 1 || p.n < 1 || p.k < 1)
      why = "needs m, n, k >= 1 (k = 0 is the epilogue alone; a zero-sized TMA box cannot be described)";
    else
      why = tma_layout_problem(p);
    // Rows that break TMA's 16-byte rule: the candidates pack those operands into the workspace
    // first (the cost model charges the copy), and the planner weighs that against sm80.
    bool pack_a = false, pack_b = false;
    const bool eight_bit = dtype_size(p.a_type) == 1;
    if (!why.empty() && tma_problem_is_alignment(why) && eight_bit) {
      why += " (8-bit operands are not packed)";
    } else if (!why.empty() && tma_problem_is_alignment(why)) {
      pack_a = tma_operand_needs_pack(p, 0);
      pack_b = tma_operand_needs_pack(p, 1);
      const std::string packed_why = tma_layout_problem(packed_problem(p, pack_a, pack_b));
      why = packed_why.empty() ? "" : why + "; packed: " + packed_why;
    }
    const GemmProblem kp = packed_problem(p, pack_a, pack_b);

    // The configuration of a tile of the menu or the skinny loop, swapped or not.
    auto config_of = [&](const Sm90Tile& t, bool swap) {
      KernelConfig c;
      c.family = Family::Sm90;
      c.block_m = t.block_m;
      c.block_n = t.block_n;
      c.block_k = eight_bit ? 128 : 64;  // 128 bytes of K per stage
      c.stages = t.stages;
      c.threads = threads_for(t.block_m);
      c.blocks_per_sm = t.blocks;
      c.cluster_m = t.cluster_m;
      c.cluster_n = t.cluster_n;
      c.cluster_k = t.cluster_k;
      c.swap_ab = swap;
      c.swizzle_bytes = 128;
      c.raster_group = 8;
      c.persistent = true;
      c.pack_a = pack_a;
      c.pack_b = pack_b;
      c.variant = t.variant;
      c.stream_k = t.stream_k;
      c.tma_store = t.tma_store;
      return c;
    };
    // Whether a configuration of this name was already offered (the loops below can reach one twice).
    auto already_offered = [&](const Sm90Tile& t, bool swap) {
      const std::string name = config_of(t, swap).name();
      return std::any_of(out.begin(), out.end(), [&](const Candidate& c) { return c.config.name() == name; });
    };
    auto add = [&](const Sm90Tile& t, bool swap, bool measuring_only, int b_readers = 0, double extra_us = 0,
                   double l2_rate_factor = 1.0) {
      const KernelConfig c = config_of(t, swap);
      std::string tile_why = why;
      const KernelView v = kernel_view(kp, swap);
      if (tile_why.empty() && eight_bit && !(v.a_kmajor && v.b_kmajor))
        tile_why = std::string("8-bit wgmma needs both operands K-major (the kernel's A is ") +
                   (v.a_kmajor ? "K" : "MN") + "-major, B " + (v.b_kmajor ? "K" : "MN") + "-major)";
      if (tile_why.empty() && p.a_type == DType::I8 && !(t.block_n <= 24 || t.block_n % 16 == 0))
        tile_why = "s8 wgmma takes N = 8, 16, 24 or a multiple of 16 (BLOCK_N " + std::to_string(t.block_n) + ")";
      if (tile_why.empty()) tile_why = scale_problem(c, v);
      if (tile_why.empty() && e.d_scale.active()) tile_why = out_scale_problem(c, v);
      if (tile_why.empty() && p.grouping.grouped() && (c.cluster_m > 1 || c.cluster_n > 1 || c.cluster_k > 1 || swap))
        tile_why = "grouped: one CTA per tile (a cluster's tiles could straddle two groups) and no swap-AB";
      if (tile_why.empty() && t.variant == 1 &&
          (v.a_scale.blocked() || v.b_scale.blocked() || p.grouping.grouped() || e.d_scale.active()))
        tile_why = "ping-pong warpgroups: no block-scaled inputs (promoted in the main loop), not grouped, not a "
                   "block-scaled D";
      // 128 accumulators a thread (128x256, ping-pong 128x128) and a block-scaled D's epilogue
      // spilled 732 bytes with stream-K's scheduling and reduction (ptxas, test_sm90_compile).
      if (tile_why.empty() && t.stream_k && e.d_scale.active() &&
          t.block_m * t.block_n / (t.variant == 1 ? 128 : 256) >= 128)
        tile_why = "stream-K with 128 accumulators a thread cannot also quantize a block-scaled D (register spills)";
      if (tile_why.empty() && !v.b_kmajor && t.block_n % 64 != 0)
        tile_why = "an N-major B tile is made of 64-column boxes (BLOCK_N " + std::to_string(t.block_n) + ")";
      // A cluster splits an N-major B tile into whole 64-column boxes, one set per CTA.
      if (tile_why.empty() && t.cluster_m > 1 && !v.b_kmajor && (t.block_n / 64) % t.cluster_m != 0)
        tile_why = "a cluster of " + std::to_string(t.cluster_m) + " cannot split an N-major B tile of " +
                   std::to_string(t.block_n) + " columns into 64-column boxes";
      // ... and a cluster sharing A splits an M-major A tile the same way.
      if (tile_why.empty() && t.cluster_n > 1 && !v.a_kmajor && (t.block_m / 64) % t.cluster_n != 0)
        tile_why = "a cluster of " + std::to_string(t.cluster_n) + " cannot split an M-major A tile of " +
                   std::to_string(t.block_m) + " rows into 64-row boxes";
      const long k_blocks = long((p.k + c.block_k - 1) / c.block_k);
      if (tile_why.empty() && t.cluster_k > 1 && k_blocks < 2L * t.cluster_k)
        tile_why = "a K split over " + std::to_string(t.cluster_k) + " CTAs needs >= 2 K blocks each (k = " +
                   std::to_string(p.k) + ")";
      Candidate cand;
      cand.config = c;
      // A swapped block-scaled D only where a measured rule chooses it: the model cannot see its
      // 128-row tiles' cost (128x24576x1536 fp8q: the model's 128x128 swap 36.6 us against 17.2
      // for 64x128 s8; H100, 2026-12-05 session 7 call 2).
      if (swap && e.d_scale.active()) measuring_only = true;
      cand.measuring_only = measuring_only;
      if (!tile_why.empty()) {
        cand.feasible = false;
        cand.reject_reason = tile_why;
        out.push_back(cand);
        return;
      }
      CostInput in;
      in.config = c;
      in.math = MathInstr::Wgmma;
      in.consumer_threads = c.threads - 128;
      // n CTAs of 256 threads per SM: 65536 / (256 n) registers, in whole allocation units of 8.
      in.regs_per_thread =
          c.threads == 384 ? kRegsAtEntry384 : t.blocks > 1 ? 65536 / (256 * t.blocks) / 8 * 8 : kRegsAtEntry256;
      in.smem_extra_bytes = smem_extra(c, v, p.k, e.d_scale.active() && v.out_transposed);
      in.math_efficiency = t.efficiency;
      in.b_readers = b_readers;
      in.extra_fixed_us = extra_us;
      in.l2_rate_factor = l2_rate_factor;
      GemmProblem view = p;  // tile counts follow the kernel's (row-major) view
      view.m = v.rows;
      view.n = v.cols;
      if (p.grouping.grouped() && (p.grouping.contiguous() || p.grouping.expected_m > 0)) {
        view.batch_count = 1;
        view.m = grouped_cost_rows(p.grouping, p.m, p.batch_count, c.block_m);
        in.b_copies = p.stride_b == 0 ? 1 : p.batch_count;
      }
      Candidate made = make_candidate(c, estimate_cost(view, e, hw, in));
      made.measuring_only = measuring_only;
      out.push_back(made);
    };

    const KernelView plain = kernel_view(kp, false);
    const long sms = std::max(1, hw.sm_count);
    // Output tiles of the unswapped view, batches included.
    auto tile_count = [&](int block_m, int block_n) {
      return long((plain.rows + block_m - 1) / block_m) * long((plain.cols + block_n - 1) / block_n) *
             long(std::max<int64_t>(1, p.batch_count));
    };
    // i8 sums stored as they are: an i32 D with nothing applied (the kernel's exact epilogue).
    const bool exact_i32 = p.a_type == DType::I8 && p.d_type == DType::I32 && e.is_identity() && !e.d_scale.active() &&
                           !e.amax_d && !p.a_scale.active() && !p.b_scale.active();
    for (const Sm90Tile& t : kMenu) {
      // K splits are for problems with fewer output tiles than SMs; elsewhere they stay measurable.
      const long tiles = tile_count(t.block_m, t.block_n);
      // A 16-bit output (which the kernel stages and stores with TMA): the same tile without the
      // 2-CTA cluster ran faster side by side in one process at every tile count measured (H200,
      // bench/results: run 10 bf16 0.5-1.3 % at 3072^3 ... 8192^3 and, below a wave, 1024^3
      // 12.8 %, 1536^3 3.7 %, 2048^3 2.5 %, 2048x2048x4096 1.9 %, 512x4096x4096 1.9 %; run 13 fp8
      // operands with a bf16 output 0.7-2 % at M = 4096; the one exception, 1000^3, 6.5 %), so the
      // multicast cluster stays measurable but is not chosen. Below a wave the model costed the
      // twin as L2-bound (B read once per tile instead of once per pair) and then chose a K split
      // that ran slower still (1024^3: 128x128 ck2 9.4 us, the c2 7.3, the twin 6.4): measured,
      // the twin's second read of B costs nothing, so there (every tile resident at once, so
      // vertically adjacent tiles read the same B panel together) the twin is costed with B's
      // L2 traffic shared as its cluster would (b_readers), when it has a second row of tiles
      // to share with. Fitted on run 10 (bench/offline_regret.py over bench/results: mid regret
      // 5.5 % -> 0.9 %, square 2.9 % -> 0.1 %, the other sets unchanged; every choice that moved
      // is a c2 tile going to its twin, or nn 1000^3 / 1024^3 from a K split to 128x64).
      // An exact i32 output from a wave of tiles up too, since its full tiles store 8-byte pairs
      // (2026-12-01 run A: i8 at M = 4096, the non-cluster tile level or 0.6-1.9 % faster, 9.4 %
      // at 8192^3; with 4-byte stores it had been mixed); below a wave it keeps the cluster (not
      // measured). f32 outputs keep it: not measured. Block-scaled inputs (any output) from a
      // wave up too: the pipelined 128x128 ran 1.03-1.10x slower with the cluster at M = 4096
      // (2026-12-01 run D, the six fp8b rows, forced side by side in one call).
      // Block-scaled (promoted) problems: only tiles that pipeline the promotion (three
      // accumulator sets in 192 registers: the kernel's kPipePromote) are chosen. 128x192 (two
      // sets, the FMAs exposed) ran 1.12-1.26x the time of 128x128 at M = 4096 except N = 2112
      // (0.98x), and 128x160 1.17-1.39x (2026-12-01 run C; 160 is no longer offered).
      const bool promoted = p.a_scale.blocked() || p.b_scale.blocked();
      // Reduced before the multiply: a leading dimension near INT64_MAX is a valid plan-time value.
      const bool sector_misaligned = ((kp.lda % 32) * int64_t(dtype_size(kp.a_type))) % 32 != 0 ||
                                     ((kp.ldb % 32) * int64_t(dtype_size(kp.b_type))) % 32 != 0;
      const bool staged_out = p.d_type == DType::F16 || p.d_type == DType::BF16;
      const bool cluster_measuring =
          (t.cluster_m > 1 && (staged_out || ((p.d_type == DType::I32 || promoted) && tiles >= sms))) ||
          // Sharing A: chosen only below a wave of tiles whose operand rows start off the L2's
          // 32-byte sectors (every 128-byte TMA row then touches five sectors), where it was
          // measured faster (H200, 2026-12-01 run M: 1000^3 tn / nn 9.5 / 9.8 us against 11.6 /
          // 12.0 for 128x64 and 9.9 / 11.1 for 128x128; 1024x1024x1000 9.2 against 11.4). With
          // aligned rows it ran slower than the same tile without the cluster (1024^3 7.4 vs 6.5,
          // 1024x1024x4096 21.3 vs 20.0, 256x4096x4096 21.9 vs 20.2, 32x8192x8192 84 vs 37 us):
          // measuring only there, and from a wave up and with block scales (not measured).
          (t.cluster_n > 1 && (tiles >= sms || promoted || !sector_misaligned));
      const bool promotion_exposed = promoted && !pipelines_promotion(t.block_m, t.block_n, t.blocks);
      const bool has_twin = std::any_of(std::begin(kMenu), std::end(kMenu), [&](const Sm90Tile& c) {
        return c.block_m == t.block_m && c.block_n == t.block_n && c.stages == t.stages && c.cluster_m == 2 &&
               c.cluster_k == 1 && !c.measuring;
      });
      const bool shares_b = staged_out && tiles < sms && t.cluster_m == 1 && t.cluster_n == 1 && t.cluster_k == 1 &&
                            !t.measuring &&
                            has_twin && (plain.rows + t.block_m - 1) / t.block_m >= 2;
      // i8 sums stored as they are (an i32 D, nothing applied: the kernel's exact epilogue) from a
      // wave of tiles up: the ping-pong 128x128 (one warpgroup's epilogue under the other's main
      // loop, as cuBLAS's INT8 kernel) is chosen, costed a little above 128x256's main loop. H200,
      // 2026-12-04 (bench/RESULTS.md, calls 1-2, separate processes alternated): 1.6-8.4 % faster
      // than the cooperative 128x256 at 4096^3, 4096x14336x4096, 4096x4096x2048, 2048x2048x4096,
      // equal at 8192^3 (ncu: tensor pipe 91.6 % of elapsed cycles against 87.8 %); its clusters
      // (c2, cn2) were not faster. Other outputs and fp8 operands (0.96-1.01x) are not measured
      // faster: measuring only there. The model's L2 rate (fitted on the cooperative kernels)
      // would cost it as L2-bound at 130.7 us for 4096^3 (1074 MB at 8.2 TB/s); it moved that in
      // 95.9 us (11.2 TB/s), so its L2 term is charged at kL2RatePingPongI8 times the rate.
      const bool ping_pong_chosen =
          t.variant == 1 && t.block_n == 128 && t.cluster_m == 1 && t.cluster_n == 1 && exact_i32 && tiles >= sms;
      // The 64x128 one-CTA tiles: with 8-bit operands chosen only for a block-scaled D, without
      // clusters (above; the rule at the end chooses them), else measurable; for 16-bit ...
      const bool block_d_tile = t.block_m == 64 && t.block_n == 128 && t.blocks == 1;
      // (and, measuring only, in clusters of two sharing B: s8 c2)
      if (block_d_tile && eight_bit && e.d_scale.active() &&
          (t.cluster_n > 1 || (t.cluster_m > 1 && t.stages != 8) || (t.cluster_k == 1 && t.cluster_m == 1 && t.stages != 8)))
        continue;
      // ... and for 16-bit operands and D (an f32 D not measured), with seven stages, from 256 rows
      // up and at most a wave of tiles
      // (kEff64x128One; seven against eight, H200 2026-12-04 call 8, 3 rounds alternated, bf16
      // and f16, tn and nn: geomean 1.008 over 32 rows, 1024x1024x4096 tn 16.84 -> 15.86 us,
      // none slower by more than 1.1 %).
      const bool one_wg_chosen = block_d_tile && t.stages == 7 && t.cluster_k == 1 && t.cluster_m == 1 && t.cluster_n == 1 &&
                                 !eight_bit && staged_out && plain.rows >= 256 && plain.cols >= 128 && tiles <= sms;
      Sm90Tile chosen_t = t;
      if (ping_pong_chosen) chosen_t.efficiency = kEffPingPongI8;
      if (one_wg_chosen) chosen_t.efficiency = kEff64x128One;
      add(chosen_t, false,
          (t.measuring && !ping_pong_chosen && !one_wg_chosen) || cluster_measuring || (t.cluster_k > 1 && tiles >= sms) ||
              t.cluster_k > kMaxChosenClusterK || promotion_exposed,
          shares_b ? 2 : 0, 0, ping_pong_chosen ? kL2RatePingPongI8 : one_wg_chosen ? kL2Rate64x128One : 1.0);
      // Contiguous groups aligned to BLOCK_M (no tile crosses a group's end), a 16-bit D: the same
      // tile with the epilogue through shared memory and TMA stores (`_ts`), as every non-grouped
      // kernel with a 16-bit D has it. Grouped kernels store from registers, whose 4-byte stores
      // held the ping-pong kernel's MMAs up behind them (4096^3: 223 us against 185 staged, ncu
      // lg_throttle; sm90 NOTES) and cost the cooperative kernel ~6 % at 4096^3 before staging
      // (0.91 -> 0.96 of cuBLAS, run 7). Measuring only: not yet run on a GPU (2026-12-05). Not the
      // 64x256 tile (128 accumulators a thread: with an output scale, bias and GELU it spilled 28
      // bytes holding both epilogues, ptxas). 16-bit operands only, for now (8-bit ones not compiled).
      if (p.grouping.contiguous() && p.grouping.m_alignment % t.block_m == 0 && staged_out && !eight_bit &&
          t.cluster_m == 1 &&
          t.cluster_n == 1 && t.cluster_k == 1 && t.blocks == 1 && t.variant == 0 && t.block_n % 64 == 0 &&
          (t.block_m == 128 || (t.block_m == 64 && t.block_n <= 128))) {
        Sm90Tile ts = t;
        ts.tma_store = true;
        add(ts, false, true);
      }
    }
    // Stream-K twins (core/stream_k.hpp) of the one-CTA square tiles and the ping-pong 128x128,
    // where the tiles leave a partial last wave: measuring only. Measured on the H200 (2026-12-04,
    // calls 1-5, bench/RESULTS.md): the same kernel built with stream-K runs its whole tiles ~7 %
    // slower (ncu, i8 4096^3 ping-pong: 166.8k against 153.7k cycles, tensor pipe 76 % against
    // 83 %: more instructions executed, instruction-cache misses), so it can pay only where the
    // last wave is mostly empty, and there a 128x192 tile was faster still (i8 4096x2112x7168:
    // ping-pong 110 -> 103-106 us with stream-K, 128x192 100 us; bf16 193 against 202, fp8 95
    // against 117); every other row measured equal or slower. Costed with that factor on the main
    // loop (kEffStreamK), for a refit once the whole-tile slowdown is gone.
    // Grouped problems: their tile count is known only when the kernel runs, which splits the
    // units it finds by the same rule; offered for every tile, with the 64x128 s7 (the tile the
    // rules choose alone) among them.
    // A block-scaled D at small M, too: its rows cannot swap, and its 64x128 tile (the rule's
    // choice, K over two in a cluster) leaves most SMs idle below a wave (34 tiles at 128x2112:
    // 68 CTAs), where fp8b's 128x64 stream-K tile ran 1.39x faster (2026-12-05 call B, H100).
    for (const Sm90Tile& t : kMenu) {
      const bool twin_64x128 = (p.grouping.grouped() || e.d_scale.active()) && t.block_m == 64 && t.block_n == 128 &&
                               t.stages == 7;
      const bool ping_pong_128 = t.variant == 1 && t.block_n == 128;
      const bool offered = twin_64x128 || (t.block_m != 64 && (!t.measuring || ping_pong_128));
      if (t.cluster_m > 1 || t.cluster_n > 1 || t.cluster_k > 1 || t.blocks > 1 || !offered) continue;
      const long tiles = tile_count(t.block_m, t.block_n);
      if (tiles % sms == 0 && !p.grouping.grouped()) continue;
      const bool ping_pong_i8 = t.variant == 1 && t.block_n == 128 && exact_i32 && tiles >= sms;
      Sm90Tile sk = t;
      sk.stream_k = true;
      sk.efficiency = (ping_pong_i8 ? kEffPingPongI8 : t.efficiency) * kEffStreamK;
      add(sk, false, true, 0, 0, ping_pong_i8 ? kL2RatePingPongI8 : 1.0);
    }
    // Skinny tiles for whichever view has few columns (swap-AB turns a small M into the columns).
    for (bool swap : {false, true}) {
      const KernelView v = kernel_view(kp, swap);
      // The stages a skinny tile's shared memory holds: the opt-in maximum per CTA, or 1/blocks of
      // the SM's, less what the tile keeps beside its ring; 128 bytes of K per row a stage.
      auto skinny_stages = [&](const Sm90Tile& t, bool col_amax) {
        const long optin = hw.smem_per_block_optin > 0 ? hw.smem_per_block_optin : 232448;
        const long per_sm = hw.smem_per_sm > 0 ? hw.smem_per_sm : 233472;
        const long budget = t.blocks > 1 ? std::min(optin, per_sm / t.blocks - 1024) : optin;
        KernelConfig probe;
        probe.block_m = t.block_m;
        probe.block_n = t.block_n;
        probe.cluster_m = t.cluster_m;
        probe.cluster_n = t.cluster_n;
        probe.cluster_k = t.cluster_k;
        probe.stages = kMaxStages;
        const long stage = long(t.block_m + t.block_n) * 128;
        return int(std::min<long>(kMaxStages, (budget - smem_extra(probe, v, p.k, col_amax)) / stage));
      };
      // Columns cut to fill one wave, measuring only: unswapped, any rows of tiles and more
      // columns than a skinny tile takes, BLOCK_N = the columns over the tiles a wave holds per
      // row of tiles, rounded up to wgmma's N step. 128x14336 in 112-column tiles is 128 tiles on
      // 132 SMs, where 128-column ones (the choice, 0.85 wave) leave 20 SMs idle for the whole K
      // with the weights, most of the bytes, streamed by the rest; 128x7168 takes 56 columns, 128
      // tiles. 16-bit operands, a K-major B (an N-major tile is made of 64-column boxes), no
      // block-scaled D, one matrix; 48 columns or more (narrower, every CTA re-reading the whole
      // activation rows from the L2 would cost more than the idle SMs).
      // 64-row tiles up to 64 rows, else 128: two rows of 64-row tiles where one of 128 would do
      // lost to it everywhere (H100, 2026-12-06 session 12 call 14: 64x224 at 128x14336x4096 47.98
      // us against 128x112's 45.50; 64x112 at 128x7168 0.88-0.91 of 128x56).
      // Past two rows of tiles (session 15): cuBLAS's own tile at 1536^3 is 144 columns wide in 1x2
      // clusters (12 x 11 = 132 tiles, where the menu's 128x192 makes 96; ncu, H100); from
      // registers (not a multiple of 64 columns) 128x144 ran 0.86x the 128x192 choice there, 128x96
      // 1.05x at 1024x1536x4096 (bench/jobs/wave-fit-2d.jobs).
      if (!swap && !eight_bit && v.b_kmajor && !e.d_scale.active() && !p.grouping.grouped() && p.batch_count <= 1) {
        const int bm = v.rows <= 64 ? 64 : 128;
        const int width = wave_fit_width(v, p.a_type, sms, bm);
        if (width > 0) {
          Sm90Tile t{bm, width, 0, 1, 1, skinny_efficiency(bm, width), 1};
          t.stages = skinny_stages(t, false);
          if (t.stages >= 3 && !already_offered(t, swap)) add(t, swap, true);
        }
      }
      if (v.cols > 256 || (swap && plain.cols <= 256 && plain.cols <= v.cols)) continue;
      int bn = 256;
      for (int b : kSkinnyN)
        if (v.cols <= b) {
          bn = b;
          break;
        }
      if (!v.b_kmajor) bn = std::max(bn, 64);
      // Past 16 columns, also BLOCK_N = the columns rounded up to wgmma's N step (K-major B
      // only: an N-major B tile is made of 64-column boxes), without K splits, for measuring:
      // 200 columns in a 256-column tile compute 22 % padding (issue 10's 200x16384x1024).
      const int exact_bn = exact_width(p.a_type, v.cols);
      std::vector<int> widths{bn};
      if (v.b_kmajor && v.cols > 16 && exact_bn < bn) widths.push_back(exact_bn);
      for (const int tile_n : widths) {
        const bool exact = tile_n != bn;
        for (auto [bm, blocks] : {std::pair{64, 1}, std::pair{64, 2}, std::pair{64, 3}, std::pair{64, 4}, std::pair{128, 1}}) {
          if (blocks > 1 && tile_n > 128) continue;  // two CTAs per SM: <= 64 accumulators per thread
          if (blocks > 2 && tile_n > 32) continue;  // three or four: <= 16 accumulators per thread
          for (int ck : kClusterKs) {
            if (exact && (ck > 1 || blocks > 2)) continue;
            Sm90Tile t{bm, tile_n, 0, 1, ck, skinny_efficiency(bm, tile_n), blocks};
            t.stages = skinny_stages(t, e.d_scale.active() && v.out_transposed);
            if (t.stages < 3) continue;
            if (t.block_m * t.block_n / (t.block_m >= 128 ? 256 : 128) > 128) continue;  // accumulator budget
            // Three or four CTAs per SM are for measuring: a TMA streaming probe ran faster with more
            // CTAs per SM at the same 8 KB weight boxes (bench/RESULTS.md run S), but in the kernel
            // (runs U, X: correct, GPU sweep by name) b3 ck2 won only at x28672x8192 (114 against
            // 122 us) and lost 4-33 % at x14336x4096, x16384x16384 and x8192x8192.
            add(t, swap, exact || ck > kMaxChosenClusterK || blocks > 2);
            // A block-scaled D swapped: the 64-row tile in pairs along M (each pair one 128-row
            // block of D's columns; epilogue_block_scaled_t, kPairAmax), measuring only; with K
            // split two or four ways too (clusters of 4 or 8).
            if (swap && e.d_scale.active() && bm == 64 && blocks == 1 && ck <= 4 && !exact) {
              Sm90Tile pt = t;
              pt.cluster_m = 2;
              pt.stages = skinny_stages(pt, true);
              if (pt.stages >= 3) add(pt, swap, true);
            }
            // Any other D swapped (16-bit operands): pairs of vertically adjacent tiles (two blocks
            // of the weights' rows) sharing the activations' tile by TMA multicast (the kernel's
            // kShareB), measuring only. Swapped, every CTA reads the same few activation rows again
            // from the L2: at 200x16384x1024 (128 tiles of 128x200) that is 400 KB a CTA against
            // 256 KB of weights, 86 MB of L2 reads in all (the model's L2 term, 10.2 us of the 15.6
            // measured; cuBLAS 12.6 runs clusters of two). Each CTA loads half the rows, a multiple
            // of 8 (the kernel's B box): the width rounds up to 16. Measured not faster (H100,
            // 2026-12-06 session 11 call 1, 9 rows: within 1 % at best, 200x16384x1024 19.80 ->
            // 19.68 us, else 4-64 % slower): the activations stay in the L2, so halving their reads
            // saves little and the pair's shared stages cost.
            if (swap && !e.d_scale.active() && !eight_bit && v.b_kmajor && blocks == 1 && ck == 1 &&
                v.rows > bm && (exact || tile_n >= 16)) {
              Sm90Tile pt = t;
              pt.block_n = (tile_n + 15) / 16 * 16;
              pt.cluster_m = 2;
              pt.efficiency = skinny_efficiency(bm, pt.block_n);
              pt.stages = skinny_stages(pt, false);
              // (at most 256 columns: within the accumulator budget checked above for 64 and 128 rows)
              if (pt.stages >= 3 && !already_offered(pt, swap)) add(pt, swap, true);
            }
            if (exact) continue;
            // The stream-K twin (one or two CTAs per SM, no cluster) where the tiles leave a partial
            // last wave of resident CTAs: every CTA streams weights to the end (112 tiles of 64x64
            // at 64x7168x16384 leave 20 SMs idle for the whole K). Measuring only until measured.
            const long view_tiles = long((v.rows + bm - 1) / bm) * long((v.cols + tile_n - 1) / tile_n) *
                                    long(std::max<int64_t>(1, p.batch_count));
            if (ck == 1 && blocks <= 2 && !p.grouping.grouped() && view_tiles % (sms * blocks) != 0) {
              Sm90Tile sk = t;
              sk.stream_k = true;
              sk.efficiency = t.efficiency * kEffStreamK;
              add(sk, swap, true);
            }
          }
        }
      }
      // Narrower than the columns, measuring only: where the swapped view has few tiles (fewer
      // than half the SMs at the width above), 64-row tiles of 8-32 columns put more CTAs on the
      // weights (each column tile reads its rows' weights again, from the L2 after the first
      // reader) without a K split's reduction; in clusters of two along the columns (cn2) the
      // pair loads each weight tile once and multicasts it. cuBLAS runs 64x1024x1024 with a 64x8
      // tile in 1x2 clusters (3.5 us; ours, 64x64 with K over two on 32 CTAs, 4.6-4.9 us) and
      // 256x1024x1024 with 48x64 tiles in 4x2 (bench/RESULTS.md run L). One CTA per SM, whole K;
      // a K-major B (an N-major one is made of 64-column boxes), no block-scaled D.
      const long row_tiles64 = long((v.rows + 63) / 64) * long(std::max<int64_t>(1, p.batch_count));
      if (swap && v.b_kmajor && !e.d_scale.active() && !p.grouping.grouped() && v.cols > 8 &&
          2 * row_tiles64 * long((v.cols + bn - 1) / bn) < long(sms)) {
        for (int w : {8, 16, 32}) {
          if (w >= bn || w >= v.cols) continue;
          for (int cn : {1, 2}) {
            Sm90Tile t{64, w, 0, 1, 1, skinny_efficiency(64, w), 1};
            t.cluster_n = cn;
            t.stages = skinny_stages(t, false);
            if (t.stages >= 3) add(t, swap, true);
          }
        }
      }
    }
    // The big menu tiles swapped (D^T = op(B)^T op(A)^T): an N just past a multiple of the tile
    // (4097 = 16 x 256 + 1) leaves a column of nearly empty tiles that cost a full main loop each,
    // and a partial wave (4095 x 4097: 544 tiles of 128x256, 4.12 waves); swapped, the 1-column
    // remainder falls on the M side of a 128-row tile (33 x 16 = 528, 4.00 waves). The transposed
    // D goes through the register epilogue instead of the TMA store: 4096 x 4096 x 4093 ran 6 %
    // slower swapped (221.6 against 208.5 us, +13 us for 33.5 MB of D; H200, RESULTS.md run Y),
    // charged here at half that (D's bytes at 1.2x the HBM rate), since the model's 256x128 (the
    // other way around such an N) is ~5 % optimistic against 128x256: at the full charge 4095 x
    // 4097 x 4093 would go to 256x128, measured 264.7 us against 237.8 swapped. 16-bit operands
    // only (the only ones measured so); skipped where the skinny loop offered the configuration.
    const double transposed_epilogue_us =
        hw.mem_bandwidth_gbs > 0 ? double(p.m) * double(p.n) * double(dtype_size(p.d_type)) * double(std::max<int64_t>(1, p.batch_count)) /
                                       (1.2 * hw.mem_bandwidth_gbs * 1e3)
                                 : 0.0;
    for (const Sm90Tile& t : kMenu) {
      if (eight_bit || t.block_m != 128 || t.block_n < 128 || t.cluster_m > 1 || t.cluster_n > 1 || t.cluster_k > 1 ||
          t.measuring || t.blocks > 1)
        continue;
      if (!already_offered(t, true)) add(t, true, false, 0, transposed_epilogue_us);
    }
    // The measured rules below: where one holds and its configuration is feasible, every other
    // feasible candidate of the family is kept for measuring only.
    // keep_cost: the preferred configurations are costed no slower than the choice they replace,
    // where the model cannot see why they are faster (so that the row does not go to another
    // family on the model's word alone).
    // The model's choice among what is not (yet) kept for measuring only.
    auto model_choice = [&]() -> const Candidate* {
      const Candidate* best = nullptr;
      for (const Candidate& c : out)
        if (c.feasible && !c.measuring_only && (!best || c.predicted_us < best->predicted_us)) best = &c;
      return best;
    };
    auto prefer_only = [&](const char* rule, auto&& preferred, bool keep_cost = false) {
      auto chosen = [&](const Candidate& c) { return c.feasible && preferred(c.config); };
      if (!std::any_of(out.begin(), out.end(), chosen)) return;
      const Candidate* model = model_choice();
      const double replaced = model ? model->predicted_us : 0.0;
      for (Candidate& c : out)
        if (c.feasible) {
          c.measuring_only = !chosen(c);
          if (!c.measuring_only) c.rule = rule;
          if (keep_cost && !c.measuring_only && replaced > 0.0) c.predicted_us = std::min(c.predicted_us, replaced);
        }
    };
    // A block-scaled FP8 D up to a wave of 64x128 tiles: the 64-row one-CTA tiles, by measured
    // rules (the model prefers 128x128 with a K split, computing half-empty rows at M = 64, and
    // cannot cost the K split's cluster or stream-K's pieces). At M <= 64 (H200, 2026-12-04 call
    // 6, bench/RESULTS.md): below half a wave of 64x128 tiles the K split over 2 (64x4096x7168
    // 20.3 -> 14.7 us, 64x7168x16384 49.7 -> 37.5), else the whole K (64x24576x1536 20.6 -> 17.7).
    // From 65 rows (H100, 2026-12-05 session 6 calls 1-2, one process per kernel, rounds within
    // 1 %; not yet timed on an H200): where the K split over 2 would still leave a quarter of the
    // SMs idle (2 x tiles <= 3/4 of them), the tile's stream-K twin, which cuts each tile over up
    // to four CTAs (128x2112x7168 16.7 -> 13.6 us, 96x2112x7168 19.5 -> 14.9, 128x1536x7168 12.3
    // -> 11.3, 128x3072x7168 15.1 -> 14.5); with 64 tiles the K split stays (128x4096x7168 17.5
    // against the twin's 18.1); the twin lost at M <= 64 (0.91-0.97x) and past a wave (112
    // tiles: 0.62x). From 129 rows up to a wave of tiles, where the model chose 128x128 with K
    // over 2: the twin up to half a wave (256x1024x4096 12.4 -> 9.7, 512x1024x4096 12.8 -> 10.1),
    // else the whole K on one CTA (1024x1024x4096 14.0 -> 11.2, 512x2048x4096 14.1 -> 11.2); past
    // a wave the model's choice stays (1024x2048x4096: its 128x128 c2 16.0 against 21.0). The twin
    // only where a tile has 16 K blocks or more to cut (the measured rows: K >= 2048); these
    // conditions leave a partial wave, so the twin is offered (had it no feasible twin, prefer_only
    // would keep the model's choice). Every other candidate is then kept for measuring.
    // At M <= 32: D^T through 64-row swap tiles in pairs along M (each pair one 128-row block of
    // D's columns; epilogue_block_scaled_t sends each CTA's column maxima to its peer with st.async
    // into distributed shared memory; the whole-K pair needs no barrier at its end), by a measured
    // rule (H100, 2026-12-05 session 7 calls 2-8, forced, separate processes alternated; us, fp8b's
    // 64 x M swap tile of the same call in brackets): 1x4096x4096 13.13 -> 8.79 (7.95), 1x4096x8192
    // 18.80 -> 14.25 (13.39), 1x7168x2048 12.74 -> 7.84 (7.01), 1x28672x8192 84.81 -> 80.77 (80.34),
    // 16x2112x7168 14.22 -> 12.57 (8.82), 16x4096x7168 17.49 -> 13.31 (12.33), 32x4096x7168 17.55
    // -> 14.47 (12.98). The 128-row swap tile of the whole K (no exchange, half the CTAs) ran 9.60
    // at 1x4096x4096, the pair through the workspace instead of a cluster 9.95; K splits and
    // stream-K twins of the 128-row tile lost; at M = 64 every swap form lost to the 64x128 rules
    // below (64x2112x7168: the pair 18.06 against 14.10).
    // Where the pairs fill at most 3/4 of the clusters of four the SMs could hold, with K >= 16
    // blocks: each pair splits K over two as well (clusters of 2 x 2; H200, 2026-12-05 session 8
    // call 6): 16x2112x7168 (17 pairs) 12.68 -> 9.15 us (fp8b 8.06); with 32 pairs or more the
    // clusters of four ran 1.3-1.4x slower than the whole-K pair (1x4096x4096 11.83 against 8.42,
    // 16x4096x7168 16.99 / 12.86, 1x7168x2048 9.54 / 6.55: no longer one resident wave), K over four
    // (clusters of eight) slower still.
    bool swapped_d = false;
    if (e.d_scale.active() && eight_bit && plain.rows <= 32) {
      const long pairs = ((plain.cols + 63) / 64 + 1) / 2 * long(std::max<int64_t>(1, p.batch_count));
      const int pair_ck = 16 * pairs <= 3 * sms && p.k >= 16 * 128 ? 2 : 1;
      auto pair64 = [pair_ck](const KernelConfig& c) {
        return c.swap_ab && c.block_m == 64 && c.cluster_m == 2 && c.blocks_per_sm == 1 && c.cluster_k == pair_ck &&
               !c.stream_k && c.variant == 0;
      };
      swapped_d = std::any_of(out.begin(), out.end(), [&](const Candidate& c) { return c.feasible && pair64(c.config); });
      if (swapped_d)
        prefer_only(pair_ck == 1 ? "a block-scaled FP8 D at M <= 32: D^T through 64-row swap tiles in pairs along M, "
                                   "the whole K (H100, 2026-12-05 session 7)"
                                 : "a block-scaled FP8 D at M <= 32, pairs filling at most 3/4 of the clusters of four: "
                                   "D^T through 64-row swap tiles in pairs along M, K over two (H200, 2026-12-05 session 8)",
                    pair64);
    }
    if (e.d_scale.active() && eight_bit && !swapped_d) {
      const long tiles64 = tile_count(64, 128);  // batches included
      const bool long_k = p.k >= 16 * 128;  // 8-bit: 128 elements per K block
      auto twin = [](const KernelConfig& c) { return one_cta_64x128(c) && c.stream_k && c.cluster_k == 1; };
      auto plain_k = [](int ck) {
        return [ck](const KernelConfig& c) {
          return one_cta_64x128(c) && !c.stream_k && c.cluster_k == ck && c.cluster_m == 1 && c.cluster_n == 1;
        };
      };
      if (plain.rows <= 64) {
        const int want_ck = 2 * tiles64 < sms ? 2 : 1;
        // (enumerated above as two entries only: s8 whole K, s7 K over 2)
        prefer_only(want_ck == 2 ? "a block-scaled FP8 D at M <= 64 below half a wave of 64x128 tiles: 64x128 one CTA, "
                                   "K over two (H200, 2026-12-04 call 6)"
                                 : "a block-scaled FP8 D at M <= 64: 64x128 one CTA, the whole K (H200, 2026-12-04 call 6)",
                    plain_k(want_ck));
      } else if (plain.rows <= 128) {
        if (4 * 2 * tiles64 <= 3 * long(sms) && long_k)
          prefer_only("a block-scaled FP8 D at 65-128 rows where K over two would leave a quarter of the SMs idle: "
                      "the 64x128 tile's stream-K twin (H100, 2026-12-05 session 6)",
                      twin);
        else if (2 * tiles64 < sms)
          prefer_only("a block-scaled FP8 D at M <= 128 below half a wave of 64x128 tiles: 64x128 one CTA, "
                      "K over two (H200, 2026-12-04 call 6)",
                      plain_k(2));
      } else if (tiles64 <= sms) {
        if (2 * tiles64 <= sms && long_k)
          prefer_only("a block-scaled FP8 D from 129 rows, at most half a wave of 64x128 tiles: the tile's stream-K "
                      "twin (H100, 2026-12-05 session 6)",
                      twin);
        else
          prefer_only("a block-scaled FP8 D from 129 rows, at most a wave of 64x128 tiles: 64x128 one CTA, the whole K "
                      "(H100, 2026-12-05 session 6)",
                      plain_k(1));
      }
    }
    // 16-bit operands and D, 128 rows and up, more than half and at most a wave of 64x128 tiles,
    // and a B larger than half the L2 (weights streamed from HBM): the 64x128 one-CTA tile in
    // clusters of two along M sharing B (c2), by a measured rule (H200, 2026-12-04 call 2,
    // bench/RESULTS.md, tn / nn): 128x8192x8192 37.9 / 36.9 us against 40.9 / 40.0 for the model's
    // 128x128 ck2 (cuBLAS 37.1 / 35.1), 256x4096x4096 16.9 / 16.6 against 19.1 / 18.6,
    // 256x4096x14336 51.9 / 51.6 against 53.8 / 52.2. Where B stays in the L2 the cluster only
    // costs (1024x1024x{1024, 4096}: 6.6 / 18.5 against 5.8 / 17.0 without it; 1024x1024x8192, a
    // 16 MB B: 33.4 against 30.7 for 128x128 ck2; 128x7168x2048, 29 MB: 11.1 against 11.2, a tie),
    // and below half a wave a K split wins (128x4096x4096: 128x64 ck2 14.3, c2 16.4). The model
    // costs clusters without their synchronization, so it cannot tell these apart.
    // 8-bit operands (any output but a block-scaled D), 65-128 rows (one pair of 64-row tiles
    // covers them, so B is read once) and B larger than half the L2: the same cluster, from half
    // a wave up and past a wave too (call 5, fp8b / fp8t / i8 us): 128x7168x16384 38.2 / 35.8 /
    // 36.2 against 39.4 / 41.0 / 39.3; 128x24576x1536 15.8 / 14.3 / 15.5 against 22.5 / 17.0 /
    // 18.9; 128x24576x7168 57.6 / 50.7 / 53.1 against 72.5 / 48.8 / 59.3 (fp8t 4 % slower);
    // 128x28672x2048 24.9 / 21.8 / 23.3 against 27.4 / 21.9 / 24.1. At 256 rows the 128-row tiles
    // won past a wave (256x7168x16384 fp8t 59.5 against 50.3) and block-scaled inputs lost at
    // 256x4096x14336 (34.3 against 32.1).
    const bool sixteen = !eight_bit && (p.d_type == DType::BF16 || p.d_type == DType::F16);
    // Tile counts in double: the products of a problem's extents must not overflow at plan time.
    auto tiles_of = [&](int block_m, int block_n) {
      return double((plain.rows + block_m - 1) / block_m) * double((plain.cols + block_n - 1) / block_n) *
             double(std::max<int64_t>(1, p.batch_count));
    };
    const double tiles64x128 = tiles_of(64, 128);
    const double b_bytes = double(plain.cols) * double(p.k) * double(dtype_size(p.b_type));  // the view's B
    const bool c2_16 = sixteen && plain.rows >= 128 && tiles64x128 <= double(sms);
    // (A block-scaled D too, where its own rules above leave the choice: more than half a wave of
    // 64x128 tiles; H100, 2026-12-05 session 7 call 3, 2 rounds: 128x7168x16384 fp8q 48.73 ->
    // 45.83 us against the model's 128x128 ck2 (fp8b 45.77), 128x24576x1536 19.53 -> 19.05 against
    // 128x128 (fp8b 19.16; 64x128 s8 18.94); at 64 tiles K over two stays, 128x4096x7168 17.45
    // against c2's 17.80.)
    const bool c2_8 = eight_bit && plain.rows > 64 && plain.rows <= 128;
    const bool one_matrix = !p.grouping.grouped() && p.batch_count <= 1;
    if ((c2_16 || c2_8) && !p.grouping.grouped() && plain.cols >= 128 && 2 * tiles64x128 > double(sms) && hw.l2_bytes > 0 &&
        b_bytes > 0.5 * double(hw.l2_bytes)) {
      prefer_only("B larger than half the L2 over half to one wave of 64x128 tiles: 64x128 in clusters of two "
                  "sharing B (H200, 2026-12-04 evening)",
                  [](const KernelConfig& c) {
                    return one_cta_64x128(c) && c.cluster_m == 2 && c.cluster_n == 1 && c.cluster_k == 1 && c.stages == 8;
                  });
    }
    // 8-bit operands (any output but a block-scaled D, which has its rules above) at 33-64 rows
    // (measured at 48 and 64; at 32 and below the decode rules' swap tiles), one matrix: the
    // 64x128 tile at one CTA per SM with the whole K (s8), unswapped, where the model chose the
    // 64x64 swap tile or 64x128 at two CTAs per SM (b2), in the two regimes where it was faster
    // in every measurement: at least a wave of 64x128 tiles with K <= 2048, and K >= 16384 from
    // 0.4 of a wave. Forced against the choice, us (fp8b / fp8t / i8): 64x24576x1536 (1.45
    // waves) H200 2026-12-04 call 4 (--candidates, one run) 15.66 / 14.97 / 15.87 -> 13.94 /
    // 14.26 / 14.18, H100 2026-12-06 calls 1-2 (separate processes, 2 rounds) 18.52 / 17.83 /
    // 23.33 (sm80) -> 16.91 / 17.04 / 17.86; 64x7168x16384 (0.42 wave) H200 call 4 36.02 / 35.17 /
    // 35.07 -> 35.41 / 33.38 / 34.19, call 5 fp8t 35.92 -> 33.72, i8 34.89 -> 33.92, H100 fp8b
    // 46.22 -> 44.52, fp8t 45.51 -> 43.65; 48x16384x16384 H200 call 5 fp8t 71.44 -> 69.50, i8
    // 72.01 -> 68.09; 64x16384x16384 fp8t 67.93 -> 67.30, i8 68.69 -> 68.24. Between the two it
    // was mixed (H200 call 5: 64x14336x4096 fp8t 18.19 -> 18.74, i8 18.90 -> 19.59; 64x8192x8192
    // i8 20.09 -> 20.74, fp8t 20.54 -> 20.25; 64x28672x8192 fp8t 64.81 -> 65.16): not taken there;
    // below 0.4 of a wave it lost by 40-60 % (64x4096x7168, 32 tiles: fp8b 17.13 against 12.35).
    // 16-bit operands and D at exactly 64 rows (33-63 go to the exact-width swap tiles), in the
    // long-K regime only (the short one not measured): H200 call 5, 64x7168x16384 tn / nn 65.60 /
    // 64.91 -> 62.85 / 61.03 against the 64x64 swap tile; 64x16384x16384 against 64x128 b2 130.37
    // / 128.53 -> 129.15 / 128.80 (a tie); 48x16384x16384 ties the exact-width 128x48 swap tile
    // (129.7 against 128.7-131.2 over five runs), which its rule keeps. Up to K = 16384, the
    // longest measured (64x8192x28672 keeps its choice: this tile not timed there).
    const bool s8_wave_short_k = tiles64x128 >= double(sms) && p.k <= 2048;
    const bool s8_long_k = tiles64x128 >= 0.4 * double(sms) && p.k >= 16384;
    const bool s8_eight = eight_bit && !e.d_scale.active() && plain.rows > 32 && (s8_wave_short_k || s8_long_k);
    const bool s8_sixteen = sixteen && plain.rows == 64 && s8_long_k && p.k <= 16384;
    if ((s8_eight || s8_sixteen) && one_matrix && plain.rows <= 64 && plain.cols >= 128) {
      prefer_only("8-bit operands at 33-64 rows, a wave of 64x128 tiles at K <= 2048 or 0.4 of one at K >= 16384 "
                  "(16-bit: 64 rows, the latter): 64x128 one CTA, the whole K (H200, 2026-12-04 calls 4-5; H100, "
                  "2026-12-06 calls 1-2)",
                  [](const KernelConfig& c) {
                    return one_cta_64x128(c) && c.cluster_m == 1 && c.cluster_n == 1 && c.cluster_k == 1 &&
                           !c.stream_k && c.variant == 0 && c.stages == 8;
                  },
                  true);
    }
    // Masked groups the caller expects to hold at most 64 rows each (grouped->expected_m, as
    // DeepSeek's masked GEMM takes expected_m), 16-bit: the 64x128 s7 tile, whose 64-row tiles
    // compute no rows past a group's count that a 128-row tile would. Measured before the hint
    // existed, on the rows whose mean count is 64 (H200, bench/results/grouped, 2026-12-04 call 4
    // with eight stages and 2026-12-05 call 2 with seven, forced against the choice without a
    // hint, us): 4096x7168 G = 8
    // (m = 256) 134.4 / 133.4 against 177.9 / 176.9 for 128x256 (128x128 150.5 in call 2),
    // G = 32 521.4 / 521.1 against 525.7 / 521.4, 7168x2048 G = 8 (m = 128) 71.9 / 71.3 against
    // 73.5 / 73.6, G = 32 281.2 / 279.6 against 277.5 / 274.4 (1.9 % slower); geomean 1.077 in
    // call 2. From 256 rows a group it lost by 25 % (0.75x the loop of cuBLAS calls against
    // 1.02x for 128x128), so only with the hint. Without one, masked groups are costed as full
    // slots.
    if (p.grouping.masked() && p.grouping.expected_m > 0 && p.grouping.expected_m <= 64 && sixteen) {
      prefer_only("masked groups hinted at <= 64 rows (expected_m), 16-bit: 64x128 s7 (H200, 2026-12-04 call 4 and "
                  "2026-12-05 call 2)",
                  [](const KernelConfig& c) {
                    return one_cta_64x128(c) && c.stages == 7 && c.cluster_m == 1 && c.cluster_n == 1 &&
                           c.cluster_k == 1 && !c.stream_k && !c.swap_ab;
                  });
    }
    // 27-49 128x64 tiles (the range measured) from 65 rows up, and at least 48 K blocks (pieces of 12 or more):
    // a K split over two would leave a quarter of the SMs idle, and over four (ck4) runs
    // 1.3-2.3x slower for a reason not found, so the 128x64 stream-K twin, whose even pieces (up
    // to four per tile) occupy every SM, by a measured rule (H200, 2026-12-04 call 10,
    // bench/RESULTS.md): 128x2112x7168 bf16 17.60 -> 14.69 us, fp8b 11.94 -> 10.92, fp8t 11.43
    // -> 10.85, i8 11.58 -> 11.07 (112 / 56 K blocks); 256x1024x4096 bf16 11.46 -> 10.42 (64),
    // but 8-bit 2-5 % slower there (32 K blocks: not taken). From 64 tiles up (128x4096x{4096,
    // 7168, 14336}) the K split over two fills 128 SMs and stream-K ran equal or up to 6 % slower.
    const double tiles128x64 = tiles_of(128, 64);
    const double k_bytes = double(p.k) * double(dtype_size(p.a_type));  // 128 bytes of K per K block
    // 8-bit operands with whole 128-row tiles, up to half a wave (66 tiles): the same twin, where
    // the model chose one CTA per tile or c2 over half the SMs. A/B (H200, session 3 call 4, 3
    // rounds alternated, fp8b / fp8t / i8, 9 shapes): 1.056 geomean; 256x2112x7168 15.84 / 12.97 /
    // 15.40 -> 12.73 / 11.89 / 12.14 us, 384x1408x7168 15.71 / 12.84 / 22.55 -> 12.57 / 11.82 /
    // 12.05; where the K split over two filled 112-128 SMs (56-64 tiles) within 2.2 % either way.
    // Not with half-empty tiles (192x2112x7168: 13-27 % slower, call 2).
    const bool eight_bit_half_wave = eight_bit && plain.rows % 128 == 0 && 2 * tiles128x64 <= double(sms);
    if (!p.grouping.grouped() && plain.rows > 64 && plain.cols > 64 &&
        (8 * tiles128x64 < 3.0 * double(sms) || eight_bit_half_wave) && 5 * tiles128x64 >= double(sms) &&
        k_bytes >= 48 * 128 && !e.d_scale.active()) {
      prefer_only("a K split over two would leave SMs idle (27-49 128x64 tiles, 48+ K blocks): the 128x64 "
                  "stream-K twin (H200, 2026-12-04 call 10; 8-bit up to half a wave, session 3 call 4)",
                  [](const KernelConfig& c) {
                    return c.stream_k && c.block_m == 128 && c.block_n == 64 && c.variant == 0 && !c.swap_ab;
                  });
    }
    // The decode and exact-width rules below look at the swapped view (M is its columns), one
    // matrix, not grouped.
    const KernelView sv = kernel_view(kp, true);
    const double tiles64 = double((sv.rows + 63) / 64);  // the swapped view's 64-row tiles
    const double waves = tiles64 / double(sms);
    // The swapped tile of `rows` rows at one CTA per SM, whole tiles or their stream-K twin.
    auto swap_tile = [&sv](const KernelConfig& c, int rows, bool stream_k) {
      // (at least as wide as the columns: the narrower tiles, several to a view, are measuring only)
      return c.swap_ab && c.block_m == rows && c.blocks_per_sm == 1 && c.cluster_m == 1 && c.cluster_k == 1 &&
             c.cluster_n == 1 && c.block_n >= sv.cols && c.stream_k == stream_k;
    };
    // 16-bit decode (M <= 32: the swapped view's columns), one matrix, K-major weights (the
    // swapped view's A: B stored N x K, `tn`), more than a wave of the swapped 64-row tiles with
    // the last wave at most three quarters full: the 64-row swap tile's
    // stream-K twin (one CTA per SM), so that the CTAs left after the whole waves share the
    // remaining tiles' weights instead of a few of them streaming whole tiles while the other SMs
    // idle. Measured rule (H200, 2026-12-04 session 3, calls 1-2, bench/RESULTS.md, tn, µs):
    // 1x28672x8192 122.96 -> 114.83 (cuBLAS 110.91), 1x14336x8192 63.30 -> 60.16, 1x20480x8192
    // 89.08 -> 84.47, 1x12288x4096 31.04 -> 29.11, 16x20480x8192 88.12 -> 84.24, 32x28672x8192
    // 123.40 -> 118.27: 18 of 18 rows of M in {1, 16, 32} faster (1-7.5 %). Not where the last
    // wave is nearly full (24576 rows: 384 tiles, 2.91 waves, up to 2 % slower at M = 16, 32),
    // below a wave (1x8192x8192, 8x7168x2048, 64x7168x16384: 3-15 % slower; there HBM is as busy
    // with the idle SMs as without), nor at M = 64 (64x14336x8192 5.9 % slower than 64x128 b2).
    // A/B against the whole-tile choice (call 3, 2 rounds alternated, bf16 and f16): tn 54 rows
    // geomean 1.039, none slower by 2 %; with N-major weights (`nn`) the twin ran up to 17 %
    // slower (1x14336x8192 62.65 -> 75.47 us; 0.976 over 53 rows), so those keep the whole tiles.
    if (!eight_bit && one_matrix) {
      const double last = waves - std::floor(waves);
      // (The model costs these rows as HBM-bound whatever their last wave, the whole-tile kernel
      // 7 % optimistic at 1x28672x8192, and the twin at its stream-K factor: keep_cost.)
      if (sv.cols <= 32 && sv.a_kmajor && waves > 1.0 && last > 0.0 && last <= 0.75)
        prefer_only("16-bit decode (M <= 32), K-major weights, the last wave of swapped tiles at most 3/4 full: the "
                    "64-row swap tile's stream-K twin (H200, 2026-12-04 session 3, calls 1-3)",
                    [&](const KernelConfig& c) { return swap_tile(c, 64, true); }, true);
      // Just under half a wave (64 tiles: 0.48) to a wave of them at M <= 16, N-major weights (nn)
      // or K <= 4096: the whole K at one CTA per SM, not the K split over two the model prefers
      // (it costs 128 streaming CTAs as faster than 64). A/B against the split (H200, session 3
      // call 4, 3 rounds alternated, bf16): nn 1-16 x 4096 x 4096 11.59-11.71 -> 10.55-10.80 us,
      // x4096x7168 17.65-17.85 -> 16.78-17.20, x4096x14336 +1-2 %; tn x4096x4096 +0.2-2.3 %, but
      // x4096x7168 up to 1.3 % and x4096x14336 3-3.4 % slower (tn keeps the split from K > 4096).
      if (sv.cols <= 16 && (!sv.a_kmajor || p.k <= 4096) && waves > 0.45 && waves < 1.0)
        prefer_only("16-bit decode (M <= 16), N-major weights or K <= 4096, 0.45-1 wave of swapped tiles: the whole "
                    "K at one CTA per SM (H200, 2026-12-04 session 3 call 4)",
                    [&](const KernelConfig& c) { return swap_tile(c, 64, false); }, true);
    }
    // M not a multiple of 64 up to 208: the swap tile exactly as wide as M (exact_width), where
    // the menu's tiles compute up to 22 % padding rows; 64 rows (one warpgroup issuing one m64nW
    // wgmma per K slice) up to a wave of them, else 128. Measured (H200, session 3, forced, 2
    // rounds, tn, µs):
    // - 16-bit, 64 < M (call 6): 200x8192x8192 68.99 -> 44.07 (cuBLAS 41.10), 150x4096x4096 23.14
    //   -> 15.87 (16.43), 100x4096x4096 17.16 -> 14.15, 100x8192x8192 43.58 -> 38.27, 176x7168x2048
    //   14.33 -> 13.01, 200x4096x4096 22.14 -> 20.11; past a wave, 128 rows: 200x28672x4096 101.73
    //   -> 81.35, 150x14336x4096 46.04 -> 39.24, 200x16384x1024 17.27 -> 16.00, 96x14336x4096 38.07
    //   -> 36.58, 120x16384x2048 22.02 -> 21.95. Not at 224 (64x224 21.76 against 20.36 for 64x128
    //   c2 at 224x4096x4096).
    // - 16-bit, 33-63 rows, where half a wave of 64-row tiles or more stream their weights unsplit
    //   (call 8: 40x8192x8192 37.69 -> 35.35, 40x14336x4096 36.03 -> 34.10, 48x16384x16384 136.31
    //   -> 129.45; at 64 tiles the menu's K split over two stays: 56x4096x4096 12.43 against 12.64).
    // - 8-bit, 64 < M, up to a wave, not block-scaled inputs (whose promoted sums ran slower so)
    //   nor a block-scaled D (call 8): 200x8192x8192 fp8t 38.78 -> 26.67 (cuBLASLt 23.06), i8 31.66
    //   -> 25.39 (cuBLASLt 50.86); 150x4096x7168 fp8t 19.99 -> 15.98, i8 18.49 -> 14.60;
    //   100x7168x2048 fp8t 9.06 -> 8.67, i8 8.13 -> 7.58; block-scaled 150x4096x7168 20.70 -> 25.50.
    //   128-row tiles past a wave: not measured.
    // A/B of the three (calls 7, 9): 1.218 over 72 rows, 1.031 over 30, 1.220 over 24.
    const bool exact16 = !eight_bit && sv.cols > 32 && (sv.cols > 64 || 2 * tiles64 > double(sms));
    const bool exact8 = eight_bit && !p.a_scale.blocked() && !p.b_scale.blocked() && !e.d_scale.active() && sv.cols > 64 &&
                        tiles64 <= double(sms);
    if (one_matrix && (exact16 || exact8) && sv.cols <= 208 && sv.cols % 64 != 0) {
      const int width = exact_width(p.a_type, sv.cols);
      const int rows = tiles64 <= double(sms) ? 64 : 128;
      prefer_only("M not a multiple of 64 up to 208: the swap tile exactly as wide as M (H200, 2026-12-04 session 3, "
                  "calls 6-9)",
                  [&](const KernelConfig& c) { return swap_tile(c, rows, false) && c.block_n == width; }, true);
    }
    // 16-bit, 9-64 rows (the swapped view's columns), one matrix, 3/4 to one wave of swapped 64-row
    // tiles and K <= 2048, where the choice is the 64-row swap tile over the whole K at one CTA per
    // SM: its twin built for two CTAs per SM (`_b2_`: half the stages, 128 registers a thread),
    // which the model costs the same. Measured side by side in one process with
    // `deepgemm-bench --candidates` (each candidate checked against the reference first), H200,
    // every such row saved in bench/results (bench/offline_regret.py):
    // 16x7168x2048 (64x16: s12 10.16-10.37 us, b2 s11 9.45-9.63; cuBLAS 9.47-9.57), bf16 and f16,
    // tn and nn, 2026-12-01 runs 2 and 15, 2026-12-04 calls 6 and 9: faster on all 10 rows by
    // 1.06-1.08x; 64x7168x2048 (64x64: s12 11.32-11.44, b2 s6 10.07-10.50), bf16 tn and nn,
    // 2026-12-01 runs E and H: 1.08-1.14x. Not taken where it was not measured faster: M <= 8
    // (64x8 s12 already fits two CTAs per SM: equal), K = 8192 at 0.97 wave (64x8192x8192:
    // 0.97-1.03x over 9 rows), half a wave (16-64 x 4096 x 4096: 0.97-1.01x). Forced in separate
    // processes, 2 rounds (bench/jobs/swap-b2-short-k.jobs, session 9): H200 1.05-1.10 at 16-64 x
    // 7168 x 2048 (64x8192x2048, at the edge: 0.986), H100 1.02-1.05.
    if (!eight_bit && one_matrix && !e.d_scale.active() && sv.cols > 8 && sv.cols <= 64 && p.k <= 2048 &&
        tiles64 <= double(sms) && 4 * tiles64 > 3.0 * double(sms)) {
      const Candidate* cur = model_choice();
      if (cur && swap_tile(cur->config, 64, false) && cur->config.cluster_m == 1) {
        const KernelConfig chosen = cur->config;  // (prefer_only rewrites the candidates `cur` points into)
        prefer_only("16-bit, 9-64 rows, 3/4 to one wave of swapped 64-row tiles, K <= 2048: the swap tile's twin at two "
                    "CTAs per SM (H200, deepgemm-bench --candidates, 2026-12-01 runs 2, 15, E, H and 2026-12-04 calls "
                    "6, 9)",
                    [&](const KernelConfig& c) {
                      return c.swap_ab && c.block_m == 64 && c.block_n == chosen.block_n && c.blocks_per_sm == 2 &&
                             c.cluster_m == 1 && c.cluster_n == 1 && c.cluster_k == 1 && !c.stream_k &&
                             c.variant == chosen.variant && c.tma_store == chosen.tma_store && c.pack_a == chosen.pack_a &&
                             c.pack_b == chosen.pack_b;
                    },
                    true);
      }
    }
    // 16-bit, one matrix, a small problem whose swapped view has few tiles (fewer than half the
    // SMs at the tile that covers M): the swap tile narrower than M with the most column tiles that
    // still fit one wave of the SMs (64x8, 64x16 or 64x32; one CTA per SM, whole K, no cluster: cn2
    // ran the same), at K <= 1024, and at K <= 2048 from 65 rows. Measured on an H100 (2026-12-05
    // session 9): forced (call 1) 64x1024x1024 tn 4.69 -> 3.96 us (cuBLAS 3.54), 64x2048x1024 5.00
    // -> 4.27 (64x8, two waves: 5.15), 256x1024x1024 4.89 -> 4.56 (64x16, two waves: 6.69); A/B
    // against main in alternating processes (call B, 2 rounds, bf16 tn / nn, 20 shapes): K = 1024
    // 1.02-1.29 on all 18 rows (128x1024x1024 5.04 -> 3.98, 64x1024x1024 4.65 -> 3.93, 256x1024x1024
    // nn 5.10 -> 4.49), K = 2048 1.14-1.24 at 128 rows but 0.96-1.06 at 48-64 (64x1024x2048 5.90 ->
    // 6.16), K = 4096 0.81-0.91 at 64 rows (64x1024x4096 8.33 -> 10.24) and 0.99-1.00 at 256: more
    // CTAs pay where the split K or the 128-row tile they replace had little to stream. On the
    // H200 (call D-E, the final rule, same A/B): bf16 1.057 / f16 1.055 geomean over 40 rows each,
    // 64x1024x1024 0.75 -> 0.89x cuBLAS.
    // (The narrow tiles are offered only where the swapped view has few tiles: enumerate above.)
    if (!eight_bit && one_matrix && !e.d_scale.active() && (p.k <= 1024 || (p.k <= 2048 && sv.cols > 64))) {
      int width = 0;
      for (int w : {8, 16, 32})
        if (w < sv.cols && long(tiles64) * long((sv.cols + w - 1) / w) <= long(sms)) {
          width = w;
          break;
        }
      if (width > 0)
        prefer_only("16-bit, few swapped tiles, K <= 1024 (<= 2048 from 65 rows): the 64-row swap tile narrower than M "
                    "with the most column tiles in one wave (H100 and H200, 2026-12-05 session 9 calls 1, B, D, E)",
                    [&](const KernelConfig& c) {
                      return c.swap_ab && c.block_m == 64 && c.block_n == width && c.block_n < sv.cols &&
                             c.blocks_per_sm == 1 && c.cluster_m == 1 && c.cluster_n == 1 && c.cluster_k == 1 &&
                             !c.stream_k && c.variant == 0;
                    },
                    true);
    }
    // 16-bit, one matrix, a one-CTA 128-row square tile (128x128 / 128x192 / 128x256) chosen over
    // one to one and a half waves of tiles: its stream-K twin, which shares the tiles past the
    // first wave out by K blocks over every SM. The twin runs its whole tiles ~6 % slower (4096^3
    // 128x256, 3.88 waves: 183.8 against 173.6 us; 4096x2112x7168 fp8t 128x192, 2.67 waves: 5.5 %
    // slower; H200, 2026-12-05 call 1), so it pays only where the last wave is mostly empty.
    // Measured (H100, 2026-12-05 session 9 call C, forced, 2 rounds, us): 2048x2049x2048 128x192
    // (1.33 waves) tn 49.38 -> 47.14, nn (B packed) 67.13 -> 62.78. The twin of another tile than
    // the chosen one is not taken: 128x256's at 1.09 waves ran 55.68 there (11 pieces to each
    // shared tile), though at 2048x7168x2048 (3.39 waves, against 128x192's 4.61 chosen) 86.11
    // against 92.94 tn, 86.35 against 91.46 nn: a choice between the twins of several tiles is not
    // modelled yet. H200 A/B against main (call D, 2 rounds, bf16 tn / nn,
    // bench/shapes/streamk-ab.txt): 1.129 geomean over 16 rows, none slower (2048x2112x7168 109.4
    // -> 86.5 us, 2048x2049x2048 nn 60.9 -> 56.5).
    if (!eight_bit && one_matrix && !e.d_scale.active()) {
      const Candidate* cur = model_choice();
      if (cur) {
        const KernelConfig ch = cur->config;
        const bool square = ch.block_m == 128 && (ch.block_n == 128 || ch.block_n == 192 || ch.block_n == 256) &&
                            ch.blocks_per_sm == 1 && ch.cluster_m == 1 && ch.cluster_n == 1 && ch.cluster_k == 1 &&
                            !ch.stream_k && ch.variant == 0 && !ch.swap_ab && !ch.tma_store;
        const long tiles = square ? tile_count(ch.block_m, ch.block_n) : 0;
        if (square && tiles > long(sms) && 2 * tiles <= 3 * long(sms)) {
          const int bn = ch.block_n;
          prefer_only("16-bit, a 128-row square tile over one to one and a half waves: its stream-K twin (H100 "
                      "and H200, 2026-12-05 session 9 calls C-D)",
                      [&](const KernelConfig& c) {
                        return c.stream_k && c.block_m == 128 && c.block_n == bn && c.blocks_per_sm == 1 &&
                               c.cluster_m == 1 && c.cluster_n == 1 && c.cluster_k == 1 && c.variant == 0 && !c.swap_ab &&
                               c.pack_a == ch.pack_a && c.pack_b == ch.pack_b;
                      },
                      true);
        }
      }
    }
    // 16-bit operands, one row of tiles (32-128 rows), K <= 8192, a K-major B: the tile whose
    // columns fill one wave (wave_fit_width), 64 rows up to M = 64, else 128 rows at 96 columns or
    // more. H100, 2026-12-06 session 12 call 12, bench/forced.sh, 2 rounds, bf16 tn, us, the
    // choice -> the tile: 32x14336x4096 44.10 -> 42.26 (64x112), 40x14336x4096 43.60 -> 42.34,
    // 64x7168x8192 44.05 -> 42.00 (64x56), 64x7168x2048 13.07 -> 12.65, 64x12288x4096 37.72 ->
    // 36.79 (64x96), 96x14336x4096 46.22 -> 44.28 (128x112), 128x14336x4096 46.30 -> 45.48; ties
    // at 64x14336x4096 / x8192 (against 64x128 b2) and 64x7168x16384 (K past the rule). Not taken:
    // 128x56 at 128x7168 (0.925 at K = 2048, 0.967 at 16384), and two rows of tiles (150-256
    // rows: 0.70-0.92). Not yet timed on an H200.
    // (Offered only where the skinny loop's conditions hold: 16-bit, K-major B, no block-scaled D,
    // one matrix; prefer_only does nothing where it was not.)
    if (p.k <= 8192 && plain.rows >= 32 && plain.rows <= 128) {
      const int bm = plain.rows <= 64 ? 64 : 128;
      const int width = wave_fit_width(plain, p.a_type, sms, bm);
      if (width > 0 && (bm == 64 || width >= 96))
        prefer_only("16-bit, one row of tiles, K <= 8192: the tile whose columns fill one wave (H100, 2026-12-06 "
                    "session 12 call 12)",
                    [&](const KernelConfig& c) {
                      return !c.swap_ab && c.block_m == bm && c.block_n == width && c.cluster_m == 1 &&
                             c.cluster_n == 1 && c.cluster_k == 1 && c.blocks_per_sm == 1 && !c.stream_k &&
                             c.variant == 0;
                    },
                    true);
    }
    // 16-bit, one matrix, a 16-bit D, K-major activations, rows a multiple of 64 (128, 192) or
    // 209-224 (where the exact-width rule above stops), more than 0.35 and up to half a wave of
    // swapped 64-row tiles (N = 3072-4096 on 132 SMs), 2048 <= K <= 7168, the choice so far not
    // already a swap tile that wide (a K split of it): the 64-row swap tile as wide as M, whose one
    // tile a CTA now writes D^T through the idle stage ring and TMA (kTransStage). H100, 2026-12-06
    // session 13 call 9, bench/forced.sh, 2 rounds, bf16 nn / tn, us, the choice -> the tile:
    // 128x4096x4096 16.13 / 16.57 (128x64 ck2) -> 14.88 / 15.50, 128x4096x2048 9.14 / 9.39 (128x64)
    // -> 8.59 / 8.93, 128x3072x4096 14.22 / 14.20 (128x64 stream-K) -> 13.39 / 13.65, 128x4096x7168
    // 24.77 / 25.51 -> 23.82 / 25.07, 192x4096x4096 22.90 / 22.83 (64x128 c2) -> 17.50 / 18.35,
    // 224x4096x4096 21.90 / 21.70 -> 19.60 / 20.64, 224x4096x7168 36.16 / 36.09 -> 31.68 / 33.67.
    // Not taken: 32 or 40 tiles (128x2048x4096: 0.93; call 11, tn: 128x2560x4096 0.974,
    // 192x2560x4096 0.975), 72-80 (128x4608x4096 0.948, 128x5120x4096 0.98-0.99), K = 14336
    // (128x4096x14336 tn 0.96), 256 rows (256x4096x4096: 0.72, call 3), nor over the K split of
    // the same swap tile (192x3072x4096: 64x192 ck2 16.39 against 17.01 whole). Call 11 also:
    // 128x3584x4096 15.24 -> 14.41, 192x4096x2048 15.90 -> 10.42, 192x4096x7168 38.90 -> 29.98,
    // 224x3072x4096 25.33 -> 19.43, 224x4096x2048 13.99 -> 11.78. Before the staging the
    // H200 ran 64x224 slower than 64x128 c2 at 224x4096x4096 (21.76 against 20.36 us, session 3
    // call 6): not yet re-timed on an H200.
    {
      const bool rows_ok = sv.cols % 64 == 0 ? sv.cols >= 128 && sv.cols <= 192 : sv.cols > 208 && sv.cols <= 224;
      const int width = exact_width(p.a_type, sv.cols);
      const Candidate* cur = model_choice();
      const bool swap_already = cur && cur->config.swap_ab && cur->config.block_n == width;
      if (sixteen && one_matrix && !e.d_scale.active() && sv.b_kmajor && rows_ok && p.k >= 2048 &&
          p.k <= 7168 && tiles64 > 0.35 * double(sms) && tiles64 <= 0.5 * double(sms) && !swap_already) {
        prefer_only("16-bit, 128, 192 or 209-224 rows, 0.35-0.5 wave of swapped 64-row tiles, K 2048-7168: the 64-row "
                    "swap tile as wide as M, its D^T stored through TMA (H100, 2026-12-06 session 13 calls 9-11)",
                    [&](const KernelConfig& c) { return swap_tile(c, 64, false) && c.block_n == width; }, true);
      }
    }
    // Where the model takes 128x192 with K split over a cluster of two (three stages: the split's
    // reduction buffer costs the rest), the whole K in 128x128 tiles of six stages ran faster up to
    // K = 4096 (H100, 2026-12-06 session 16 calls 2-3, bench/jobs/mid-ck2.jobs, forced, two rounds,
    // tn, us): 512x3072x4096 26.21 -> 23.23, 768x1536x4096 24.11 -> 21.78, 768x2048x4096 26.77 ->
    // 23.52 (in pairs sharing B 22.73), 1024x1536x4096 25.00 -> 22.21, 1280x1024x4096 29.78 ->
    // 22.32; at K = 8192 the split stays (1024x1536x8192 41.60 against 45.27). With an N-major B
    // (nn, call 4): 512x3072x4096 25.76 -> 22.64, 768x1536x4096 23.91 -> 21.75, 1024x1536x4096
    // 24.51 -> 23.47, 1280x1024x4096 27.13 -> 22.56. The model prices the split's extra CTAs as
    // filling the idle SMs; it does not see the three stages' shallow pipeline. 16-bit, a K-major
    // A (tn and nn, the rows timed), one matrix. Not yet on an H200.
    {
      const Candidate* cur = model_choice();
      if (sixteen && one_matrix && !e.d_scale.active() && plain.a_kmajor && p.k <= 4096 && cur &&
          !cur->config.swap_ab && cur->config.block_m == 128 && cur->config.block_n == 192 &&
          cur->config.cluster_k == 2) {
        prefer_only("16-bit, where the model splits K of 128x192 over two, K <= 4096: 128x128 with the whole K (H100, "
                    "2026-12-06 session 16 calls 2-4)",
                    [](const KernelConfig& c) {
                      return c.block_m == 128 && c.block_n == 128 && c.stages == 6 && c.cluster_m == 1 &&
                             c.cluster_n == 1 && c.cluster_k == 1 && c.blocks_per_sm == 1 && c.variant == 0 &&
                             !c.swap_ab && !c.stream_k && !c.tma_store;
                    },
                    true);
      }
    }
    // The rows a group is planned to hold (contiguous: the padded total over the groups; masked:
    // the expected_m hint, else the slot), for the grouped rules below.
    auto grouped_rows_per_group = [&]() {
      return double(grouped_cost_rows(p.grouping, p.m, p.batch_count, 128)) / double(std::max<int64_t>(1, p.batch_count));
    };
    // Contiguous groups aligned to 128 rows, 16-bit operands and D, where the model's choice is the
    // 128x256 tile: its `_ts` twin (the same tile, D stored through shared memory by TMA instead of
    // 4-byte stores from registers; no tile crosses a group's end at that alignment). Measured rule
    // (NVIDIA H100 80GB, 2026-12-05 session 4 call 8, bench/RESULTS.md; test_grouped_gemm with
    // tma_store_vs_oracle and tma_store_many_tiles_vs_oracle passed in the same call): forced against
    // the planner's choice, 2 rounds alternated, deepgemm-bench --grouped --layout contiguous: 1.029-
    // 1.271x on the 10 rows where the choice was 128x256 (4096x7168 and 7168x2048, G = 8 and 32,
    // 64-1024 tokens an expert; 7168x2048 G = 8 t = 1024 438.3 -> 344.9 us, the cuBLAS loop 356.6);
    // where the choice was 128x192 the twin of 128x256 lost once (0.900), so only the 128x256 choice
    // moves. Not yet measured on the H200.
    // Where the choice is 128x192, its own `_ts` twin (H100, 2026-12-06 session 12 call 6, one round,
    // grouped_torch.py --groups 8,16,32 --tokens 128,256,512 forced per tile, us, 128x192 against
    // its `_ts`): 4096x7168 G = 8 t = 128 193.7 -> 187.2, t = 512 465.3 -> 426.7; 7168x2048 G = 8
    // t = 256 150.4 -> 129.2 (session 4 call 8 had 148.1 for 128x192 there and 131.5 for 128x256's
    // `_ts`). The twin of 128x192, not of 128x256, which lost that once.
    if (p.grouping.contiguous() && p.grouping.m_alignment % 128 == 0 && sixteen) {
      const Candidate* best = model_choice();
      const auto plain_128 = [](const KernelConfig& c, int block_n) {
        return c.block_m == 128 && c.block_n == block_n && c.cluster_m == 1 && c.cluster_n == 1 && c.cluster_k == 1 &&
               c.blocks_per_sm == 1 && c.variant == 0 && !c.stream_k && !c.swap_ab;
      };
      if (best && !best->config.tma_store && (plain_128(best->config, 256) || plain_128(best->config, 192))) {
        const int stages = best->config.stages;  // (prefer_only rewrites the candidates `best` points into)
        const int block_n = best->config.block_n;
        prefer_only(block_n == 256 ? "contiguous groups aligned to 128, 16-bit, the 128x256 tile chosen: its TMA-stored "
                                     "twin `_ts` (H100, 2026-12-05 session 4 call 8)"
                                   : "contiguous groups aligned to 128, 16-bit, the 128x192 tile chosen: its TMA-stored "
                                     "twin `_ts` (H100, 2026-12-06 session 12 call 6)",
                    [&](const KernelConfig& c) { return plain_128(c, block_n) && c.tma_store && c.stages == stages; },
                    true);
      }
    }
    // Grouped, 16-bit, K >= 4096 (64 K blocks a tile or more: long pieces to split), where the
    // rows the plan expects (contiguous: the padded total; masked: the expected_m hint, or every
    // slot row) make 1.5-3 waves of 128x256 tiles, or 1.5-9 waves masked (a masked D has no
    // `_ts` twin; its register epilogue is what the twin competes with): 128x256's stream-K
    // twin, whose pieces even out the partial last wave that the uneven groups leave. Measured
    // (H200, 2026-12-05 call 2, bench/results/grouped/h200-2026-12-05-call2-grouped-bf16-twins.json,
    // the twin against every other tile of the row, us): 4096x7168 G = 8 t = 256 contiguous
    // 216.5 against 227.8 (128x128) and the `_ts` twin's 231.3 (session 5 call A), masked 217.2
    // against 230.3; masked t = 1024 (8.2 waves expected) 699.2 against 772.2; where it lost:
    // contiguous at 1.1 waves (156.9 against 149.8 for 128x192) and from 4 waves against `_ts`
    // (G = 32 t = 64: 530.4 against 509.0; t = 1024 8.2 waves: 686.7 against 673.0), masked at
    // 9.7 waves (G = 32 t = 256: 924.4 against 913.3), and K = 2048 (7168x2048: 0.78-0.99 of the
    // best tile, short pieces). Masked groups hinted at <= 64 rows keep their 64x128 rule.
    // Only where the groups expect two 128-row tiles or more each (256 rows a group): at about
    // one a group it lost by a quarter (H100, 2026-12-06 call 2, one round, 4096x7168 G = 16 with
    // 128 tokens an expert, 2.9 / 1.9 waves expected: contiguous 456.4 against `_ts` 358.8 and
    // 128x256 372.5, masked 443.0 against 128x256 364.7), while the rows above held there (G = 8
    // t = 256 contiguous 240.0 against `_ts` 244.2, masked 237.3 against 258.2; masked G = 16
    // t = 256 496.0 against 549.3; masked G = 8 t = 1024 762.1 against 787.0).
    // Every loss above at <= 3 waves cut the shared units into K ranges, every win into even pieces
    // (the split of common/stream_k_split.cuh for the units the rows make); ranges cost a grouped
    // kernel its weights' L2 reuse, so it now takes whole units there (dg_stream_k_split_grouped)
    // and runs as the plain tile. Contiguous rows, whose units the plan knows (the padded total),
    // then keep `_ts` unless the split is even: 4096x7168 G = 8, 2688 rows (336 units, 72 shared,
    // ranges) ran the twin 314.3 us against `_ts` 245.7 (H100, 2026-12-06 session 12, 4 kernels
    // forced, bench/results/h100/grouped/h100-2026-12-06-s12call4-*). Masked groups' units come
    // from the counts at run time, so the plan cannot know; there the twin is at worst the tile.
    if (p.grouping.grouped() && sixteen && p.k >= 4096 && plain.cols >= 256 &&
        !(p.grouping.masked() && p.grouping.expected_m > 0 && p.grouping.expected_m <= 64)) {
      const double rows = double(grouped_cost_rows(p.grouping, p.m, p.batch_count, 128));
      const long units = long(std::ceil(rows / 128.0) * std::ceil(double(plain.cols) / 256.0));
      const double waves = double(units) / double(sms);
      const double rows_per_group = grouped_rows_per_group();
      const bool even_pieces = stream_k_split(units, sms, (p.k + 63) / 64, true).sk_tiles > 0;
      if (waves > 1.5 && waves <= (p.grouping.contiguous() ? 3.0 : 9.0) && rows_per_group >= 256.0 &&
          (even_pieces || !p.grouping.contiguous())) {
        prefer_only("grouped, 16-bit, K >= 4096, 1.5-3 waves of 128x256 tiles expected (masked 1.5-9), 256+ rows a "
                    "group, contiguous only where the last wave splits in even pieces: 128x256's stream-K twin "
                    "(H200, 2026-12-05 call 2; H100, 2026-12-06 sessions 11-12)",
                    [](const KernelConfig& c) {
                      return c.stream_k && c.block_m == 128 && c.block_n == 256 && c.cluster_m == 1 && c.cluster_n == 1 &&
                             c.cluster_k == 1 && c.blocks_per_sm == 1 && c.variant == 0 && !c.swap_ab && !c.tma_store;
                    },
                    true);
      }
    }
    // Contiguous groups of FP8 operands without block scales (per tensor, row or column), about one
    // 128-row tile a group (<= 160 padded rows a group: DeepSeek-V3's 64 tokens an expert): 128x128,
    // which the model costs the same as 128x256 there (both at the HBM floor) and which puts twice
    // the CTAs on the weights. H100, 2026-12-06 session 12 call 9, grouped_torch.py --dtype fp8,
    // row-wise scales, forced, one round, us, 128x256 -> 128x128: 4096x7168 G = 8 92.9 -> 90.8,
    // G = 32 377.3 -> 361.8; 7168x2048 G = 8 64.6 -> 61.1, G = 32 225.8 -> 205.6. At 256 tokens
    // an expert 128x256 was faster in all four rows (147.2 against 158.2 at 4096x7168 G = 8).
    if (p.grouping.contiguous() && dtype_is_fp8(p.a_type) && dtype_is_fp8(p.b_type) && !p.a_scale.blocked() &&
        !p.b_scale.blocked() && !e.d_scale.active()) {
      if (grouped_rows_per_group() <= 160.0)
        prefer_only("contiguous groups, FP8 without block scales, <= 160 rows a group: 128x128 (H100, 2026-12-06 "
                    "session 12 call 9)",
                    [](const KernelConfig& c) {
                      return c.block_m == 128 && c.block_n == 128 && c.cluster_m == 1 && c.cluster_n == 1 &&
                             c.cluster_k == 1 && c.blocks_per_sm == 1 && c.variant == 0 && !c.stream_k && !c.swap_ab &&
                             !c.tma_store && c.stages == 6;
                    },
                    true);
    }
    if (p.grouping.grouped() && eight_bit) {
      const bool block_scaled = p.a_scale.blocked() || p.b_scale.blocked();
      for (Candidate& c : out)
        if (!grouped_8bit_verified(c.config, block_scaled)) c.measuring_only = true;
    }
    // Transposed copies (KernelConfig::pack_a_t / pack_b_t): an MN-major operand that is packed
    // anyway can be copied K-major for the same bytes, so that the kernel reads it as a tn problem
    // does. Beside each feasible candidate that packs such an operand, costed as it. A measured
    // rule: where the plain copy leaves the kernel's B N-major (unswapped nn and its kin), the
    // transposed twin takes the candidate's place (H100, 2026-12-06 session 16 call 2, forced,
    // two rounds: 2048x2049x2048 nn 128x192 stream-K 62.66 -> 57.00 us bf16, 62.63 -> 57.23 f16;
    // the wgmma B operand N-major is the slow one); where it would only turn the kernel's A
    // K-major, the twin stays for measuring (the swapped 128x256 at 4095x4097x4093 nn 263.1 ->
    // 264.7, 4096x4097x4096 nn 242.9 -> 245.5: an M-major A costs the GEMM nothing, the transposing
    // copy a little). Not for grouped problems.
    const bool a_t = pack_a && tma_operand_mn_major(p, 0), b_t = pack_b && tma_operand_mn_major(p, 1);
    if ((a_t || b_t) && !p.grouping.grouped()) {
      const std::size_t offered = out.size();
      for (std::size_t i = 0; i < offered; ++i) {
        if (!out[i].feasible) continue;
        Candidate twin = out[i];
        twin.config.pack_a_t = a_t;
        twin.config.pack_b_t = b_t;
        const bool kb_fixed = !kernel_view(kp, twin.config.swap_ab).b_kmajor &&
                              kernel_view(packed_problem(p, twin.config), twin.config.swap_ab).b_kmajor;
        if (kb_fixed) {
          out[i].measuring_only = true;
          out[i].rule.clear();
          if (!twin.measuring_only)
            twin.rule = twin.rule.empty() ? "the kernel's B packed K-major (a transposed copy), not N-major (H100, "
                                            "2026-12-06 session 16 call 2)"
                                          : twin.rule + "; B packed K-major (a transposed copy)";
        } else {
          twin.measuring_only = true;
          twin.rule.clear();
        }
        out.push_back(twin);
      }
    }
    return out;
  }
};

}  // namespace

const FamilyModel& sm90_family_model() {
  static const Sm90Family model;
  return model;
}

}  // namespace dgemm

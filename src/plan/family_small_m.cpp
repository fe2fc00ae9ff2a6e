// Planner model of the small-M (decode) family (src/kernels/small_m): feasibility (m <= 16, sm_80+,
// f16/bf16 operands, f32 compute), its menu (columns per CTA, loads in flight, split-K) and a cost
// of its own, since the shared tile model (cost_model.cpp) assumes a shared-memory operand ring
// this family does not have. The time is the largest of
//   - HBM: bytes of B, A, C, D (+ split-K partials written and read back) at the bandwidth GEMM
//     streams reach;
//   - per-SM streaming: the busiest SM's weight bytes at what its resident CTAs keep in flight
//     (Little's law with the load latency), which is where too few CTAs (wave quantization) show;
//   - per-SM math: the busiest SM's f32 FMAs (the kernel computes all block_m rows of its bucket)
//     at the SIMT f32 peak times an issue efficiency (loads, conversions and FMAs share the issue);
// plus launch and first-load latency, and the reduction launch for split-K.
#include "plan/family_small_m.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "plan/cost_model.hpp"
#include "plan/families.hpp"

namespace dgemm {
namespace {

// Same constants as the shared model (cost_model.cpp): launch + first tile, loaded latency, and the
// share of peak bandwidth a stream reaches.
constexpr double kLaunchUs = 2.5;
constexpr double kLoadLatencyUs = 1.0;
constexpr double kHbmEfficiency = 0.88;
// Share of the f32 FMA peak the inner loop reaches, fitted to the H200 decode table
// (bench/shapes/decode.txt, 2026-11-29, bench/RESULTS.md): time grew by ~15 us per row bucket at
// 4096x7168 with K-major B (about 6% of the FMA peak) and ~33 us per row with N-major B beyond one
// row (about 2.5%), where the first guess (60%) had the planner choose this family up to m = 16 at
// 0.07-0.4x cuBLAS. The one-row N-major kernel keeps the first guess: it measured 23 us at
// 1x4096x4096, no slower than the alternatives measured there (sm80 split-4: 24 us).
double fma_efficiency(bool b_kmajor, int rows) {
  if (b_kmajor) return 0.06;
  return rows <= 1 ? 0.6 : 0.025;
}
// Registers per thread: the most ptxas reports (NVRTC 13.0, sm_80 and sm_90a, over the 16-byte,
// element and reduction kernels, with and without split-K; tests/cpu/test_small_m_compile.cpp prints
// them and fails when a kernel needs more than this table says), by layout, columns per CTA and row
// bucket (1, 2, 4, 8, 16). Only occupancy depends on them: <= 128 lets two CTAs share an SM.
int registers(bool b_kmajor, int block_n, int rows) {
  const int i = rows <= 1 ? 0 : rows <= 2 ? 1 : rows <= 4 ? 2 : rows <= 8 ? 3 : 4;
  static const int kK16[] = {104, 104, 168, 144, 168};
  static const int kK32[] = {176, 168, 184, 192, 255};
  static const int kN64[] = {112, 120, 144, 144, 232};
  if (!b_kmajor) return kN64[i];
  return block_n <= 16 ? kK16[i] : kK32[i];
}

struct Shape {
  int block_n, stages;
};

class SmallMFamily final : public FamilyModel {
 public:
  Family family() const override { return Family::SmallM; }
  std::vector<Candidate> enumerate(const GemmProblem& p, const Epilogue&, const HardwareDesc& hw) const override {
    std::vector<Candidate> out;
    std::string why;
    const int rows = small_m_rows(p.m);
    if (hw.vendor != Vendor::Nvidia) why = "needs an NVIDIA GPU (this is " + hw.name + ")";
    else if (hw.cc() < 80) why = "needs compute capability >= 8.0; device is " + std::to_string(hw.cc());
    else if (p.compute_type != DType::F32) why = "computes in f32 only (compute_type " + std::string(dtype_name(p.compute_type)) + ")";
    else if (p.a_type != p.b_type || (p.a_type != DType::F16 && p.a_type != DType::BF16))
      why = std::string("takes f16 or bf16 A and B (got ") + dtype_name(p.a_type) + ", " + dtype_name(p.b_type) + ")";
    else if (rows == 0) why = "m = " + std::to_string(p.m) + " > " + std::to_string(kSmallMMaxRows) + " (decode-sized M only)";
    const bool bk = small_m_b_kmajor(p);
    // B K-major: 4 columns per warp (32 per CTA) and 2 (16 per CTA, for more CTAs and, at 16 rows,
    // the only one that stays clear of 255 registers); fewer loads in flight at 8+ rows.
    const int unroll = rows >= 8 ? 2 : 4;
    const Shape kK[] = {{32, unroll}, {16, unroll}};
    const Shape kN[] = {{64, rows >= 8 ? 4 : 8}};
    const int count = bk ? (rows >= 16 ? 1 : 2) : 1;
    for (int si = 0; si < count; ++si) {
      const Shape& s = bk ? kK[rows >= 16 ? 1 : si] : kN[0];
      for (int split : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32}) {
        KernelConfig c;
        c.family = Family::SmallM;
        c.block_m = rows > 0 ? rows : int(kSmallMMaxRows);
        c.block_n = s.block_n;
        c.loads_in_flight = s.stages;
        c.threads = 256;
        c.split_k = split;
        // Column-major: the swapped view keeps the problem's rows as the kernel's (X stored transposed).
        c.swap_ab = p.order == Order::ColMajor;
        const int trip = (bk ? 256 : 32) * s.stages;  // K one CTA covers per trip
        Candidate cand;
        cand.config = c;
        if (!why.empty()) {
          cand.feasible = false;
          cand.reject_reason = why;
          out.push_back(cand);
          break;  // one reason per shape is enough
        }
        if (split > 1 && p.k < int64_t(split) * trip) {
          cand.feasible = false;
          cand.reject_reason = "split_k " + std::to_string(split) + " needs k >= " + std::to_string(split * trip) +
                               " (one trip of " + std::to_string(trip) + " per split)";
          out.push_back(cand);
          continue;
        }
        out.push_back(make_candidate(c, estimate(p, hw, c, bk)));
      }
    }
    return out;
  }

 private:
  static CostEstimate estimate(const GemmProblem& p, const HardwareDesc& hw, const KernelConfig& c, bool bk) {
    CostEstimate est;
    est.smem_bytes = bk ? 0 : long(8) * c.block_m * 64 * 4;  // the N-major mapping's cross-warp sums
    est.regs_per_thread = registers(bk, c.block_n, c.block_m);
    const int warps = c.threads / 32;
    const long regs_per_block = long((est.regs_per_thread * 32 + 255) / 256 * 256) * warps;
    long per_sm = std::min<long>(hw.max_blocks_per_sm, hw.max_warps_per_sm / warps);
    if (regs_per_block > 0) per_sm = std::min(per_sm, long(hw.regs_per_sm) / regs_per_block);
    if (est.smem_bytes > 0) per_sm = std::min(per_sm, hw.smem_per_sm / (est.smem_bytes + 1024));
    if (per_sm < 1) {
      est.feasible = false;
      est.reason = "no block fits on an SM (" + std::to_string(est.regs_per_thread) + " registers x 256 threads)";
      return est;
    }
    est.blocks_per_sm = int(per_sm);
    est.warps_per_sm = int(per_sm) * warps;
    const double batch = double(std::max<int64_t>(1, p.batch_count));
    const long blocks_n = long((p.n + c.block_n - 1) / c.block_n);
    est.tiles = long(double(blocks_n) * c.split_k * batch);
    const long sms = std::max(1, hw.sm_count);
    const long slots = sms * per_sm;
    const long full_waves = (est.tiles + slots - 1) / slots;
    est.waves = double(est.tiles) / double(slots);
    est.wave_efficiency = full_waves > 0 ? est.waves / double(full_waves) : 0;
    const long busiest = (est.tiles + sms - 1) / sms;  // CTAs the busiest SM runs
    const long resident = std::min<long>(per_sm, busiest);

    const double esz = double(dtype_size(p.a_type));
    const double k_split = std::ceil(double(p.k) / c.split_k);
    const double b_bytes = double(p.n) * p.k * esz * batch, a_bytes = double(p.m) * p.k * esz * batch;
    const double d_bytes = double(p.m) * p.n * dtype_size(p.d_type) * batch;
    const double partials = c.split_k > 1 ? 2.0 * c.split_k * double(p.m) * p.n * 4.0 * batch : 0.0;
    est.hbm_bytes = b_bytes + a_bytes + d_bytes + partials;
    // Every CTA reads its A rows from L2 (L1 shares them among its warps).
    est.l2_bytes = b_bytes + double(est.tiles) * double(p.m) * k_split * esz;
    const double hbm_bw = hw.mem_bandwidth_gbs * 1e3 * kHbmEfficiency;  // bytes per us
    est.hbm_us = hbm_bw > 0 ? est.hbm_bytes / hbm_bw : 0.0;

    // Bytes one CTA keeps in flight: each thread's kUnroll 16-byte loads per column group.
    const double in_flight = double(c.threads) * c.loads_in_flight * 16.0 * (bk ? c.block_n / 8 : 1);
    const double cta_bytes = double(c.block_n) * k_split * esz;
    est.latency_us = double(busiest) * cta_bytes / (double(resident) * in_flight / kLoadLatencyUs);
    const double sm_flops_per_us =
        hw.peak_tflops_f32 * 1e6 * fma_efficiency(bk, c.block_m) / double(sms);
    est.compute_us = sm_flops_per_us > 0 ? double(busiest) * 2.0 * c.block_m * c.block_n * k_split / sm_flops_per_us : 1e9;
    est.sm_us = std::max(est.latency_us, est.compute_us);
    est.overhead_us = kLaunchUs + kLoadLatencyUs;
    if (c.split_k > 1) est.overhead_us += kLaunchUs;
    const double body = std::max({est.hbm_us, est.sm_us});
    est.predicted_us = body + est.overhead_us;
    est.bound = body == est.hbm_us ? "hbm" : body == est.compute_us ? "compute" : "latency";
    return est;
  }
};

}  // namespace

const FamilyModel& small_m_family_model() {
  static const SmallMFamily model;
  return model;
}

}  // namespace dgemm

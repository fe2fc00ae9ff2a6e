// Planner model of the sm80 family (mma.sync m16n8k16 / m16n8k32 s8 + cp.async, src/kernels/sm80):
// its tile menus, feasibility (sm_80+, f16/bf16 operands in f32, or K-major i8 operands in i32:
// core/sm80_rules.hpp) and cost through the shared model (roofline + wave quantization). Register
// counts are those ptxas reports for the kernels (NVRTC 13.0, sm_80/sm_90a, tests/cpu/
// test_nvrtc_compile.cpp prints them), so occupancy is exact.
#include <sstream>
#include <utility>
#include <vector>

#include "core/sm80_rules.hpp"
#include "plan/cost_model.hpp"
#include "plan/families.hpp"

namespace dgemm {
namespace {

struct Sm80Tile {
  int block_m, block_n, block_k, stages, threads, regs;
  double efficiency;  // share of the mma.sync peak the main loop reaches (see kMenu)
  int split_k = 1;    // > 1: K divided among CTAs, f32 partials reduced by a second kernel
  int variant = 0;    // 1: fragment-pipelined main loop (kernels/sm80/sm80_gemm.cuh kPipelined)
};
// The default menu: configurations verified on a device (H200, 2026-11-29: test_sm80_gemm sweep,
// every menu tile in every layout, compute-sanitizer) and timed there (gpu-check's sm80 per-tile
// table, bench/RESULTS.md). Efficiency = share of the model's ~613 TFLOP/s mma.sync peak on H200,
// fitted to those times. The fragment-pipelined main loop (variant 1) won everywhere it was timed:
// 128x128 with 4 warps of 64x64 (two CTAs per SM) reached 423 TFLOP/s at 4096^3, 384 at 8192^3,
// 380 at 2048^3; 128x256 / 8 warps 396 / 375 / 358; split-K 4 of the former 258 TFLOP/s at
// 1024x1024x4096 (64 output tiles for 132 SMs otherwise). The small variant-0 tiles stay for
// problems too small to fill the SMs with 128-row tiles.
constexpr Sm80Tile kMenu[] = {
    {128, 128, 32, 4, 128, 255, 0.66, 1, 1},
    {128, 256, 32, 4, 256, 255, 0.63, 1, 1},
    {128, 128, 32, 4, 128, 255, 0.55, 4, 1},
    {128, 128, 64, 4, 256, 188, 0.55, 2, 1},
    {128, 64, 32, 4, 128, 168, 0.39},
    {64, 128, 32, 4, 128, 168, 0.39},
    {64, 64, 32, 4, 128, 128, 0.32},
};
// Candidates kept for comparison on a device (measuring only: chosen only when force_kernel names
// them; the sm80 GPU test's every-tile case covers them): the earlier variant-0 defaults (128x256
// s3 reached 324 TFLOP/s at 4096^3) and the variant-1 entries that lost to the ones above. All
// compile without spills (test_nvrtc_compile).
constexpr Sm80Tile kExtendedMenu[] = {
    {128, 256, 32, 3, 256, 244, 0.53},
    {128, 128, 32, 4, 256, 168, 0.46},
    {128, 128, 64, 4, 256, 193, 0.46},
    {128, 128, 32, 4, 256, 168, 0.46, 2},
    {128, 128, 32, 4, 256, 168, 0.46, 4},
    {128, 64, 32, 4, 128, 168, 0.39, 2},
    {128, 256, 32, 5, 256, 255, 0.62, 1, 1},
    {128, 128, 32, 4, 256, 168, 0.55, 1, 1},
    {128, 128, 32, 4, 256, 198, 0.55, 2, 1},
    {128, 64, 64, 4, 128, 202, 0.45, 2, 1},
    {128, 64, 32, 4, 128, 190, 0.45, 1, 1},
};

// i8 operands (mma.sync m16n8k32 s8, s32 accumulators; both operands K-major): the default
// menu's tiles with BLOCK_K doubled, i.e. the same bytes per K tile, shared-memory layout,
// fragments and accumulators as their 16-bit twins, so the twins' efficiencies (shares of the
// instruction's peak) stand in until measured; the model's peak for i8 is the description's
// (a100.yaml: 624 TOP/s, 2x its 16-bit rate; mma.sync on Hopper at 0.62 of it). Registers: the
// most ptxas reports for the i8 kernels (vector or element loads, i32 or requantized i8 D, sm_80
// or sm_90a; test_nvrtc_compile's sm80_i8_menu_compiles_without_spills prints them); no spills.
// tests/gpu/test_sm80_gemm's i8 cases (sm80_i8_*: 255 forced cases, 56 menu runs) passed on an
// H200 (2026-12-05), which released them to the planner (they were by name only until then).
constexpr Sm80Tile kI8Menu[] = {
    {128, 128, 64, 4, 128, 252, 0.66, 1, 1},
    {128, 256, 64, 4, 256, 255, 0.63, 1, 1},
    {128, 128, 64, 4, 128, 252, 0.55, 4, 1},
    {128, 128, 128, 4, 256, 192, 0.55, 2, 1},
    {128, 64, 64, 4, 128, 182, 0.39},
    {64, 128, 64, 4, 128, 182, 0.39},
    {64, 64, 64, 4, 128, 126, 0.32},
};

class Sm80Family final : public FamilyModel {
 public:
  Family family() const override { return Family::Sm80; }
  // DGEMM_1.1 input scales for i8 operands: per tensor and per row / column (f32), applied to the
  // s32 sums in the epilogue (kRowInScale / kColInScale), the same tensor for every batch. Nothing
  // else: 16-bit operands take no input scales here, and no block scales, block-scaled D or amax.
  std::string unsupported_features(const GemmProblem& p, const Epilogue& e) const override {
    if (p.a_type != DType::I8 || !needs_scaling(p, e)) return missing_features(p, e, false, false);
    const std::string why = i8_scaling_problem(p, e), grouping = missing_features(p, e, true, false);
    return why.empty() || grouping.empty() ? why + grouping : why + "; " + grouping;
  }
  static std::string i8_scaling_problem(const GemmProblem& p, const Epilogue& e) {
    if (e.d_scale.active() || e.amax_d) return "the sm80 family writes no block-scaled D and no amax of D";
    // k = 0 reads no input scale (deepgemm.h), but the epilogue would.
    if (p.k == 0) return "k = 0 with input scales (the sm80 epilogue would read the scales a k = 0 call need not pass)";
    for (const ScaleDesc* s : {&p.a_scale, &p.b_scale}) {
      if (!s->active()) continue;
      const std::string name = s == &p.a_scale ? "a_scale" : "b_scale";
      if (s->blocked())
        return name + " " + scale_mode_name(s->mode) +
               ": block scales multiply inside the K sum; the sm80 family applies per-tensor and per-row / per-column "
               "scales only (in the epilogue)";
      if (s->type != ScaleType::F32) return name + " UE8M0: the sm80 epilogue reads f32 input scales only";
      if (p.batch_count > 1 && s->stride != 0)
        return name + ".stride = " + std::to_string(s->stride) +
               " with batch_count > 1: the sm80 epilogue reads one scale tensor for every batch (stride 0)";
    }
    return "";
  }
  std::vector<Candidate> enumerate(const GemmProblem& p, const Epilogue&e, const HardwareDesc& hw) const override {
    std::vector<Candidate> out;
    std::string why;
    if (hw.vendor != Vendor::Nvidia) why = "needs an NVIDIA GPU (this is " + hw.name + ")";
    else if (hw.cc() < 80) why = "needs compute capability >= 8.0 (mma.sync bf16, cp.async); device is " + std::to_string(hw.cc());
    else why = sm80_operand_problem(p);
    std::vector<std::pair<Sm80Tile, bool>> menu;  // (tile, measuring only)
    if (p.a_type == DType::I8) {
      for (const Sm80Tile& t : kI8Menu) menu.emplace_back(t, false);
    } else {
      for (const Sm80Tile& t : kMenu) menu.emplace_back(t, false);
      for (const Sm80Tile& t : kExtendedMenu) menu.emplace_back(t, true);
    }
    for (const auto& [t, measuring_only] : menu) {
      KernelConfig c;
      c.family = Family::Sm80;
      c.block_m = t.block_m;
      c.block_n = t.block_n;
      c.block_k = t.block_k;
      c.stages = t.stages;
      c.threads = t.threads;
      c.swizzle_bytes = 128;
      c.raster_group = 8;
      c.split_k = t.split_k;
      c.variant = t.variant;
      if (!why.empty()) {
        Candidate r;
        r.config = c;
        r.feasible = false;
        r.reject_reason = why;
        out.push_back(r);
        continue;
      }
      if (t.split_k > 1 && why.empty() && p.k < int64_t(t.split_k) * 4 * t.block_k) {
        Candidate r;
        r.config = c;
        r.feasible = false;
        r.reject_reason = "split_k " + std::to_string(t.split_k) + " needs k >= " +
                          std::to_string(t.split_k * 4 * t.block_k) + " (4 K tiles per split)";
        out.push_back(r);
        continue;
      }
      CostInput in;
      in.config = c;
      if (t.split_k > 1) {
        // The reduction reads split_k f32 (i8: s32) partials and writes D once, plus its launch.
        const double bytes = double(p.batch_count) * double(p.m) * double(p.n) *
                             (4.0 * t.split_k + double(dtype_size(p.d_type)));
        in.extra_fixed_us = 2.0 + (hw.mem_bandwidth_gbs > 0 ? bytes / (hw.mem_bandwidth_gbs * 1e3) : 0.0);
      }
      in.math = MathInstr::MmaSync;  // the i8 peak for i8 operands (instruction_peak_tflops)
      in.regs_per_thread = t.regs;
      in.math_efficiency = t.efficiency;
      Candidate made = make_candidate(c, estimate_cost(p, e, hw, in));
      made.measuring_only = measuring_only;
      out.push_back(made);
    }
    return out;
  }
};

}  // namespace

const FamilyModel& sm80_family_model() {
  static const Sm80Family model;
  return model;
}

}  // namespace dgemm

// Planner model of the sm80 family (mma.sync m16n8k16 + cp.async, src/kernels/sm80): its tile
// menu, feasibility (sm_80+, f16/bf16 operands, f32 compute) and cost through the shared model
// (roofline + wave quantization). Register counts are those ptxas reports for the kernels
// (NVRTC 13.0, sm_80/sm_90a, tests/cpu/test_nvrtc_compile.cpp prints them), so occupancy is exact.
#include <sstream>

#include "plan/cost_model.hpp"
#include "plan/families.hpp"

namespace dgemm {
namespace {

struct Sm80Tile {
  int block_m, block_n, block_k, stages, threads, regs;
};
// The default menu. Big tiles for big problems (fewer bytes per flop), small ones so that small
// problems still fill the SMs.
constexpr Sm80Tile kMenu[] = {
    {128, 256, 32, 3, 256, 244},
    {128, 256, 64, 3, 256, 249},
    {256, 128, 64, 3, 256, 249},
    {128, 128, 32, 4, 256, 168},
    {128, 128, 64, 4, 256, 193},
    {128, 128, 32, 4, 128, 246},
    {128, 128, 64, 3, 128, 255},
    {128, 64, 32, 4, 128, 168},
    {64, 128, 32, 4, 128, 168},
    {64, 64, 32, 4, 128, 128},
};

class Sm80Family final : public FamilyModel {
 public:
  Family family() const override { return Family::Sm80; }
  std::vector<Candidate> enumerate(const GemmProblem& p, const Epilogue&e, const HardwareDesc& hw) const override {
    std::vector<Candidate> out;
    std::string why;
    if (hw.vendor != Vendor::Nvidia) why = "needs an NVIDIA GPU (this is " + hw.name + ")";
    else if (hw.cc() < 80) why = "needs compute capability >= 8.0 (mma.sync bf16, cp.async); device is " + std::to_string(hw.cc());
    else if (p.compute_type != DType::F32) why = "computes in f32 only (compute_type " + std::string(dtype_name(p.compute_type)) + ")";
    else if (p.a_type != p.b_type || (p.a_type != DType::F16 && p.a_type != DType::BF16))
      why = std::string("takes f16 or bf16 A and B (got ") + dtype_name(p.a_type) + ", " + dtype_name(p.b_type) + ")";
    for (const Sm80Tile& t : kMenu) {
      KernelConfig c;
      c.family = Family::Sm80;
      c.block_m = t.block_m;
      c.block_n = t.block_n;
      c.block_k = t.block_k;
      c.stages = t.stages;
      c.threads = t.threads;
      c.swizzle_bytes = 128;
      c.raster_group = 8;
      if (!why.empty()) {
        Candidate r;
        r.config = c;
        r.feasible = false;
        r.reject_reason = why;
        out.push_back(r);
        continue;
      }
      CostInput in;
      in.config = c;
      in.math = MathInstr::MmaSync;
      in.regs_per_thread = t.regs;
      out.push_back(make_candidate(c, estimate_cost(p, e, hw, in)));
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

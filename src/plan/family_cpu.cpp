// Planner model of the CPU reference backend: one candidate, costed from the machine's cores.
#include <sstream>

#include "plan/families.hpp"

namespace dgemm {
namespace {

class CpuFamily final : public FamilyModel {
 public:
  Family family() const override { return Family::Cpu; }
  // The reference runs every feature (it is the oracle of the kernels that do not yet), grouped
  // problems with scaling too: the groups are its batches, so each group's scale tensors are at
  // g * stride, and a contiguous problem's A and D scales are indexed by the shared row
  // (deepgemm.h, "grouped problems"), which is what the batch loop does with stride 0.
  std::string unsupported_features(const GemmProblem&, const Epilogue&) const override { return ""; }
  std::vector<Candidate> enumerate(const GemmProblem& p, const Epilogue&, const HardwareDesc& hw) const override {
    Candidate c;
    c.config.family = Family::Cpu;
    if (hw.vendor != Vendor::Cpu) {
      c.feasible = false;
      c.reject_reason = "the CPU backend runs only on host memory (this plan is for " + hw.name + ")";
      return {c};
    }
    // About 2 GFLOP/s per core for the f64-accumulating reference loop nest.
    double gflops = 2.0 * (hw.sm_count > 0 ? hw.sm_count : 1);
    c.predicted_us = p.flops() / (gflops * 1e3);
    std::ostringstream notes;
    notes << "f64 accumulation on " << hw.sm_count << " cores at ~" << gflops << " GFLOP/s";
    c.notes = notes.str();
    return {c};
  }
};

}  // namespace

const FamilyModel& cpu_family_model() {
  static const CpuFamily model;
  return model;
}

}  // namespace dgemm

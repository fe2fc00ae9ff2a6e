// The planner: enumerates candidate kernels for a problem on a machine, rejects the infeasible ones
// with a reason, predicts the time of the rest and picks the cheapest. It never launches anything.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/hardware.hpp"
#include "core/problem.hpp"
#include "plan/cost_model.hpp"
#include "plan/kernel_config.hpp"

namespace dgemm {

struct Candidate {
  KernelConfig config;
  bool feasible = true;
  std::string reject_reason;   // why it cannot run (when !feasible)
  double predicted_us = 0.0;   // model's time estimate (when feasible)
  std::string notes;           // short explanation of the estimate (bound, waves, conflicts, ...)
  bool has_cost = false;       // `cost` holds the shared cost model's terms (GPU families)
  CostEstimate cost;
};

// A candidate from the shared cost model's estimate: feasible with predicted_us and notes, or
// rejected with the estimate's reason.
Candidate make_candidate(const KernelConfig& config, const CostEstimate& estimate);

// One kernel family's knowledge for the planner: its candidates, their feasibility and cost.
// A new family adds one of these (src/plan/family_<name>.cpp) and registers it in families.cpp.
class FamilyModel {
 public:
  virtual ~FamilyModel() = default;
  virtual Family family() const = 0;
  // Every candidate of this family for the problem, each marked feasible (with predicted_us) or
  // not (with reject_reason). An empty list means the family does not apply at all.
  virtual std::vector<Candidate> enumerate(const GemmProblem& p, const Epilogue& e,
                                           const HardwareDesc& hw) const = 0;
};

struct PlanRequest {
  std::optional<Family> force;  // only this family may be chosen
};

struct PlanDecision {
  Candidate chosen;
  std::vector<Candidate> runners_up;  // best other feasible candidates, cheapest first
  std::vector<Candidate> rejected;    // a few infeasible ones with their reasons
  // JSON: problem, epilogue, hardware name, chosen (config, predicted time, notes), runners_up,
  // rejected.
  std::string to_json(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw) const;
};

// Throws Error(NotSupported) when no family can run the problem on this hardware.
PlanDecision choose_kernel(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw,
                           const PlanRequest& request);

// Escapes a string for inclusion in JSON (used by every to_json in the library).
std::string json_escape(const std::string& s);

}  // namespace dgemm

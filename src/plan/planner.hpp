// The planner: enumerates candidate kernels for a problem on a machine, rejects the infeasible ones
// with a reason, predicts the time of the rest and picks the cheapest. It never launches anything.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/hardware.hpp"
#include "core/kernel_config.hpp"
#include "core/problem.hpp"
#include "plan/cost_model.hpp"

namespace dgemm {

struct Candidate {
  KernelConfig config;
  bool feasible = true;
  std::string reject_reason;   // why it cannot run (when !feasible)
  double predicted_us = 0.0;   // model's time estimate (when feasible)
  std::string notes;           // short explanation of the estimate (bound, waves, conflicts, ...)
  bool has_cost = false;       // `cost` holds the shared cost model's terms (GPU families)
  CostEstimate cost;
  // A configuration kept for measuring against the default menu (on a device, by name): never
  // chosen unless PlanRequest::force_config names it.
  bool measuring_only = false;
  // The measured rule that chose this configuration over the model's ranking (the family's
  // model file says where it was measured), e.g. "masked groups hinted at <= 64 rows: 64x128 s7";
  // empty when the model's ranking did. Shown with the plan (dgemm_plan_describe's "rule").
  std::string rule;
};

// A candidate from the shared cost model's estimate: feasible with predicted_us (the planner writes
// the notes of the candidates it shows), or rejected with the estimate's reason.
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
  // Why this family cannot run the problem's DGEMM_1.1 features (scaling: needs_scaling; grouped
  // problems: GemmProblem::grouping), or "" when it can. The planner asks first and rejects a
  // family that gives a reason with one candidate carrying it. A feature added after 1.0 is
  // unsupported until a family overrides this to say otherwise (usually through
  // missing_features), so a new feature never reaches a kernel that ignores it: the default names
  // every such feature the problem uses.
  virtual std::string unsupported_features(const GemmProblem& p, const Epilogue& e) const {
    return missing_features(p, e, false, false);
  }
  // Whether the configuration loads A and B with TMA: its operands then need 16-byte aligned rows
  // (checked by the planner) and base pointers (checked at execute; a plan with such a
  // configuration carries a fallback configuration that takes any pointer, unless it packs both).
  virtual bool uses_tma(const KernelConfig& config) const {
    (void)config;
    return false;
  }

 protected:
  // The reason for each DGEMM_1.1 feature the problem uses that this family does not run, joined
  // by "; " ("" when none): runs_scaling / runs_grouping say whether it runs the problem's
  // scaling / grouping.
  std::string missing_features(const GemmProblem& p, const Epilogue& e, bool runs_scaling, bool runs_grouping) const;
};

// Whether a plan with `config` (of `model`'s family) needs a fallback for unaligned base pointers.
bool needs_pointer_fallback(const FamilyModel& model, const KernelConfig& config);

struct PlanRequest {
  std::optional<Family> force;  // only this family may be chosen
  // Only the configuration of this name (KernelConfig::name()) may be chosen, measuring-only ones
  // included: how a device run times one configuration against another through the public API
  // (dgemm_plan_options_t::force_kernel takes a family or a configuration name).
  std::string force_config;
  bool use_cache = true;        // reuse this process's decision for the same problem, epilogue, hardware
  // The key of everything in the request that can change a decision.
  std::string key() const;
};

struct PlanDecision {
  Candidate chosen;
  // For a chosen configuration that needs 16-byte aligned base pointers (TMA): the best candidate
  // of a family that takes any pointer, run at execute when the call's pointers break the rule.
  std::optional<Candidate> fallback;
  std::vector<Candidate> runners_up;  // best other feasible candidates, cheapest first
  std::vector<Candidate> rejected;    // a few infeasible ones with their reasons (distinct reasons first)
  int considered = 0;                 // candidates evaluated
  double plan_us = 0;                 // time the decision took (0 when it came from the cache)
  bool from_cache = false;
  // JSON: problem, epilogue, hardware name, the problem's roofline floors, chosen (config,
  // predicted time, the model's terms), runners_up, rejected.
  std::string to_json(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw) const;
};

// Throws Error(NotSupported) when no family can run the problem on this hardware; the message
// gives the reasons (a planning-only description such as MI300X says so).
PlanDecision choose_kernel(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw,
                           const PlanRequest& request);

// Every candidate of the given families, ranked, with the planner's own checks applied on top of
// the families' (shared memory and registers within the machine's limits, TMA paths only with
// 16-byte-aligned operand strides unless the operand is packed, nothing on a planning-only
// description). Never throws for "nothing runs": `deepgemm plan` prints this even then.
struct CandidateSet {
  std::vector<Candidate> feasible;  // cheapest first
  std::vector<Candidate> rejected;  // in enumeration order
  std::string why_none;             // when feasible is empty: the distinct reasons, joined
};
CandidateSet evaluate_candidates(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw,
                                 const PlanRequest& request, const std::vector<const FamilyModel*>& models);
// choose_kernel over an explicit list of families (tests use synthetic ones); never cached.
PlanDecision choose_kernel_from(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw,
                                const PlanRequest& request, const std::vector<const FamilyModel*>& models);

// The best-case time of the problem on the machine: FLOPs at the dtype's peak, and the bytes of
// A, B, C (when read) and D at the memory bandwidth. What no plan can beat.
struct Roofline {
  double flops = 0, min_bytes = 0;
  double compute_floor_us = 0, memory_floor_us = 0;
};
Roofline problem_roofline(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw);


// The per-process decision cache (choose_kernel with use_cache): entries and a reset for tests.
std::size_t plan_cache_size();
void clear_plan_cache();
// Everything in a description that can change a plan, as a cache-key string.
std::string hardware_key(const HardwareDesc& hw);

// One candidate as the plan's JSON shows it: config, predicted_us and the model's terms, or the
// reason it was rejected.
std::string candidate_to_json(const Candidate& c);

// Escapes a string for inclusion in JSON (used by every to_json in the library).
std::string json_escape(const std::string& s);

}  // namespace dgemm

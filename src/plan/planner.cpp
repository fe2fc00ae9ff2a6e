// Candidate enumeration over every registered family, ranking, and the plan's JSON explanation.
#include "plan/planner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>

#include "core/error.hpp"
#include "core/kernel_view.hpp"
#include "plan/families.hpp"

namespace dgemm {

std::string json_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

Candidate make_candidate(const KernelConfig& config, const CostEstimate& estimate) {
  Candidate c;
  c.config = config;
  c.feasible = estimate.feasible;
  c.has_cost = true;
  c.cost = estimate;
  if (estimate.feasible) {
    c.predicted_us = estimate.predicted_us;  // notes are written for the candidates a plan shows
  } else {
    c.reject_reason = estimate.reason;
  }
  return c;
}

std::string FamilyModel::missing_features(const GemmProblem& p, const Epilogue& e, bool runs_scaling,
                                          bool runs_grouping) const {
  std::string why;
  if (!runs_scaling && needs_scaling(p, e))
    why = std::string("no ") + family_name(family()) + " kernel for scaling yet (" + scaling_summary(p, e) + ")";
  if (!runs_grouping && p.grouping.grouped()) {
    if (!why.empty()) why += "; ";
    why += "grouped problems (DGEMM_EXT_GROUPED) are not implemented by this kernel family";
  }
  return why;
}

bool needs_pointer_fallback(const FamilyModel& model, const KernelConfig& config) {
  return model.uses_tma(config) && !(config.pack_a && config.pack_b);
}

std::string PlanRequest::key() const {
  return std::string(force ? family_name(*force) : "auto") + "|" + force_config;
}

Roofline problem_roofline(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw) {
  Roofline r;
  r.flops = p.flops();
  const double batch = double(std::max<int64_t>(1, p.batch_count));
  // Contiguous groups share A's, C's and D's m rows; each batch (group) has its own B unless
  // stride_b = 0.
  const double row_batches = p.grouping.contiguous() ? 1.0 : batch;
  const double b_batches = p.stride_b == 0 ? 1.0 : batch;
  r.min_bytes = row_batches * (double(p.m) * p.k * dtype_size(p.a_type) + double(p.m) * p.n * dtype_size(p.d_type) +
                               (e.reads_c() ? double(p.m) * p.n * dtype_size(p.c_type) : 0.0)) +
                b_batches * double(p.n) * p.k * dtype_size(p.b_type);
  const double peak = peak_tflops_for(hw, p.a_type);
  r.compute_floor_us = peak > 0 ? r.flops / (peak * 1e6) : 0.0;
  r.memory_floor_us = hw.mem_bandwidth_gbs > 0 ? r.min_bytes / (hw.mem_bandwidth_gbs * 1e3) : 0.0;
  return r;
}

std::string hardware_key(const HardwareDesc& hw) {
  std::ostringstream os;
  os.precision(17);
  os << hw.name << "|" << int(hw.vendor) << "|" << hw.cc_major << "." << hw.cc_minor << "|" << hw.sm_count << "|"
     << hw.warp_size << "|" << hw.max_warps_per_sm << "|" << hw.max_blocks_per_sm << "|" << hw.max_threads_per_block
     << "|" << hw.regs_per_sm << "|" << hw.max_regs_per_thread << "|" << hw.smem_per_sm << "|"
     << hw.smem_per_block_optin << "|" << hw.smem_banks << "|" << hw.smem_bank_bytes << "|" << hw.l1_bytes << "|"
     << hw.l2_bytes << "|" << hw.mem_bandwidth_gbs << "|" << hw.l2_bandwidth_gbs << "|" << hw.clock_mhz << "|"
     << hw.peak_tflops_f32 << "|" << hw.peak_tflops_f16 << "|" << hw.peak_tflops_bf16 << "|" << hw.peak_tflops_fp8
     << "|" << hw.peak_tops_i8 << "|" << hw.has_tma << hw.has_wgmma << hw.can_run_kernels;
  for (const MmaShape& s : hw.mma_shapes)
    os << "|" << int(s.a_type) << "," << int(s.acc_type) << "," << s.m << "," << s.n << "," << s.k << "," << s.instruction;
  return os.str();
}

namespace {

// The planner's checks on top of the families': a candidate a family calls feasible is still
// rejected when it breaks a limit of the machine. A family's bug must not become a launch failure.
void planner_checks(Candidate& c, const FamilyModel& model, const GemmProblem& problem, const HardwareDesc& hw,
                    const PlanRequest& request) {
  if (!c.feasible) return;
  const GemmProblem p = canonical_operands(problem);  // what a TMA kernel describes (kernel_view.hpp)
  std::ostringstream why;
  const bool tma = model.uses_tma(c.config);
  if (!request.force_config.empty() && c.config.name() != request.force_config) {
    why << "not the forced configuration " << request.force_config;
  } else if (c.measuring_only && request.force_config.empty()) {
    why << "kept for measuring only (choose it with force_kernel = \"" << c.config.name() << "\")";
  } else if (!hw.can_run_kernels) {
    why << hw.name << " is a planning-only description (can_run_kernels: false)";
  } else if (c.has_cost && c.cost.smem_bytes > hw.smem_per_block_optin) {
    why << "planner check: " << c.cost.smem_bytes << " B shared memory per block > smem_per_block_optin "
        << hw.smem_per_block_optin << " B";
  } else if (c.has_cost && c.cost.regs_per_thread > hw.max_regs_per_thread) {
    why << "planner check: " << c.cost.regs_per_thread << " registers/thread > max_regs_per_thread "
        << hw.max_regs_per_thread;
  } else if (c.config.threads > hw.max_threads_per_block) {
    why << "planner check: " << c.config.threads << " threads > max_threads_per_block " << hw.max_threads_per_block;
  } else if (tma && !c.config.pack_a && !rows_aligned(p.lda, p.stride_a, p.batch_count, p.a_type, 16)) {
    why << "TMA needs 16-byte-aligned strides of A (lda = " << p.lda << " x " << dtype_size(p.a_type)
        << " B) unless A is packed";
  } else if (tma && !c.config.pack_b && !rows_aligned(p.ldb, p.stride_b, p.batch_count, p.b_type, 16)) {
    why << "TMA needs 16-byte-aligned strides of B (ldb = " << p.ldb << " x " << dtype_size(p.b_type)
        << " B) unless B is packed";
  } else if (!(c.predicted_us >= 0.0) || !std::isfinite(c.predicted_us)) {
    why << "planner check: no usable time estimate (" << c.predicted_us << ")";
  } else {
    return;
  }
  c.feasible = false;
  c.reject_reason = why.str();
}

// Up to `limit` rejected candidates, distinct reasons first.
std::vector<Candidate> pick_rejected(const std::vector<Candidate>& rejected, std::size_t limit) {
  std::vector<bool> taken(rejected.size(), false);
  std::vector<Candidate> out;
  std::set<std::string> reasons;
  for (std::size_t i = 0; i < rejected.size() && out.size() < limit; ++i) {
    if (reasons.insert(rejected[i].reject_reason).second) {
      out.push_back(rejected[i]);
      taken[i] = true;
    }
  }
  for (std::size_t i = 0; i < rejected.size() && out.size() < limit; ++i)
    if (!taken[i]) out.push_back(rejected[i]);
  return out;
}

std::mutex g_cache_mutex;
std::unordered_map<std::string, PlanDecision> g_cache;
constexpr std::size_t kCacheLimit = 4096;  // a process planning more distinct problems starts over

}  // namespace

CandidateSet evaluate_candidates(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw,
                                 const PlanRequest& request, const std::vector<const FamilyModel*>& models) {
  CandidateSet set;
  for (const FamilyModel* model : models) {
    if (request.force && model->family() != *request.force) continue;
    if (std::string why = model->unsupported_features(p, e); !why.empty()) {
      Candidate c;
      c.config.family = model->family();
      c.feasible = false;
      c.reject_reason = std::move(why);
      set.rejected.push_back(std::move(c));
      continue;
    }
    for (Candidate& c : model->enumerate(p, e, hw)) {
      planner_checks(c, *model, p, hw, request);
      (c.feasible ? set.feasible : set.rejected).push_back(std::move(c));
    }
  }
  std::stable_sort(set.feasible.begin(), set.feasible.end(),
                   [](const Candidate& a, const Candidate& b) { return a.predicted_us < b.predicted_us; });
  if (set.feasible.empty()) {
    std::ostringstream why;
    if (!hw.can_run_kernels) {
      why << hw.name << " is a planning-only description (can_run_kernels: false): DeepGEMM has kernels only for "
          << "NVIDIA GPUs of compute capability 8.0 and newer, and the host CPU";
    } else if (set.rejected.empty()) {
      why << "no kernel family applies";
    } else {
      std::set<std::string> seen;
      for (const Candidate& c : set.rejected) {
        if (seen.size() >= 3) break;
        if (seen.insert(c.reject_reason).second)
          why << (seen.size() > 1 ? "; " : "") << family_name(c.config.family) << ": " << c.reject_reason;
      }
      // Configurations that would run it but are offered by name only (measuring, or not yet
      // checked on a GPU): say so, since the first reasons above may be about other ones.
      int by_name = 0;
      std::string example;
      for (const Candidate& c : set.rejected)
        if (c.measuring_only && c.reject_reason.rfind("kept for measuring only", 0) == 0 && by_name++ == 0)
          example = c.config.name();
      if (by_name > 0)
        why << "; " << by_name << (by_name > 1 ? " configurations run it" : " configuration runs it")
            << " by name only (force_kernel, e.g. \"" << example << "\"; deepgemm plan --all lists them)";
    }
    set.why_none = why.str();
  }
  return set;
}

PlanDecision choose_kernel_from(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw,
                                const PlanRequest& request, const std::vector<const FamilyModel*>& models) {
  const auto t0 = std::chrono::steady_clock::now();
  CandidateSet set = evaluate_candidates(p, e, hw, request, models);
  if (set.feasible.empty()) {
    if (request.force) {
      fail(Status::NotSupported, "force_kernel = \"", family_name(*request.force), "\" cannot run ",
           p.to_string(), " on ", hw.name, ": ", set.why_none);
    }
    fail(Status::NotSupported, "no kernel can run ", p.to_string(), " on ", hw.name, ": ", set.why_none);
  }
  PlanDecision d;
  d.considered = int(set.feasible.size() + set.rejected.size());
  d.chosen = set.feasible.front();
  const FamilyModel* chosen_model = nullptr;
  for (const FamilyModel* m : models)
    if (m->family() == d.chosen.config.family) chosen_model = m;
  if (chosen_model && needs_pointer_fallback(*chosen_model, d.chosen.config)) {
    // The best plan of a family that takes any pointer (whatever family the request forced).
    std::vector<const FamilyModel*> any_pointer;
    for (const FamilyModel* m : models)
      if (m->family() != Family::Cpu && m->family() != d.chosen.config.family) any_pointer.push_back(m);
    PlanRequest plain;
    CandidateSet fb = evaluate_candidates(p, e, hw, plain, any_pointer);
    for (const Candidate& c : fb.feasible) {
      const FamilyModel* m = nullptr;
      for (const FamilyModel* x : any_pointer)
        if (x->family() == c.config.family) m = x;
      if (m && !m->uses_tma(c.config)) {
        d.fallback = c;
        break;
      }
    }
    // (None found: calls whose pointers break the rule fail with INVALID_ARGUMENT at execute.)
  }
  constexpr std::size_t kShown = 4;
  for (std::size_t i = 1; i < set.feasible.size() && d.runners_up.size() < kShown; ++i)
    d.runners_up.push_back(set.feasible[i]);
  d.rejected = pick_rejected(set.rejected, kShown + 2);
  // Formatting is most of a candidate's cost: only the shown ones get their explanation.
  auto explain = [](Candidate& c) {
    if (c.has_cost && c.feasible && c.notes.empty()) c.notes = c.cost.notes();
  };
  explain(d.chosen);
  if (d.fallback) explain(*d.fallback);
  for (Candidate& c : d.runners_up) explain(c);
  d.plan_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  return d;
}

PlanDecision choose_kernel(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw,
                           const PlanRequest& request) {
  if (!request.use_cache) return choose_kernel_from(p, e, hw, request, family_models());
  const std::string key = p.to_string() + "|" + e.key() + "|" + request.key() + "|" + hardware_key(hw);
  {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    auto it = g_cache.find(key);
    if (it != g_cache.end()) {
      PlanDecision d = it->second;
      d.from_cache = true;
      d.plan_us = 0;
      return d;
    }
  }
  // Planned outside the lock: two threads may plan the same problem once each; both get the same
  // answer, since planning is deterministic.
  PlanDecision d = choose_kernel_from(p, e, hw, request, family_models());
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  if (g_cache.size() >= kCacheLimit) g_cache.clear();
  g_cache.emplace(key, d);
  return d;
}

std::size_t plan_cache_size() {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  return g_cache.size();
}

void clear_plan_cache() {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  g_cache.clear();
}

std::string candidate_to_json(const Candidate& c) {
  std::ostringstream os;
  os << "{\"config\":" << c.config.to_json();
  if (c.feasible) {
    os << ",\"predicted_us\":" << c.predicted_us;
  } else {
    os << ",\"reason\":\"" << json_escape(c.reject_reason) << "\"";
  }
  if (!c.notes.empty()) os << ",\"notes\":\"" << json_escape(c.notes) << "\"";
  if (!c.rule.empty()) os << ",\"rule\":\"" << json_escape(c.rule) << "\"";
  if (c.has_cost && c.feasible) os << ",\"model\":" << c.cost.to_json();
  os << "}";
  return os.str();
}

std::string PlanDecision::to_json(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw) const {
  std::ostringstream os;
  os << "{\"problem\":\"" << json_escape(p.to_string()) << "\",\"epilogue\":\"" << json_escape(e.to_string())
     << "\",\"hardware\":\"" << json_escape(hw.name) << "\",\"backend\":\""
     << (chosen.config.family == Family::Cpu ? "cpu" : "cuda") << "\",\"family\":\""
     << family_name(chosen.config.family) << "\"";
  const Roofline r = problem_roofline(p, e, hw);
  os << ",\"roofline\":{\"flops\":" << r.flops << ",\"min_bytes\":" << r.min_bytes
     << ",\"compute_floor_us\":" << r.compute_floor_us << ",\"memory_floor_us\":" << r.memory_floor_us << "}";
  os << ",\"considered\":" << considered << ",\"plan_us\":" << plan_us
     << ",\"from_cache\":" << (from_cache ? "true" : "false") << ",\"chosen\":";
  os << candidate_to_json(chosen);
  if (fallback) os << ",\"fallback\":" << candidate_to_json(*fallback);
  os << ",\"runners_up\":[";
  for (std::size_t i = 0; i < runners_up.size(); ++i) {
    if (i) os << ",";
    os << candidate_to_json(runners_up[i]);
  }
  os << "],\"rejected\":[";
  for (std::size_t i = 0; i < rejected.size(); ++i) {
    if (i) os << ",";
    os << candidate_to_json(rejected[i]);
  }
  os << "]}";
  return os.str();
}

}  // namespace dgemm

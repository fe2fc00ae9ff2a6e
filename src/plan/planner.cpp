// Candidate enumeration over every registered family, ranking, and the plan's JSON explanation.
#include "plan/planner.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/error.hpp"
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
    c.predicted_us = estimate.predicted_us;
    c.notes = estimate.notes();
  } else {
    c.reject_reason = estimate.reason;
  }
  return c;
}

PlanDecision choose_kernel(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw,
                           const PlanRequest& request) {
  std::vector<Candidate> feasible, rejected;
  for (const FamilyModel* model : family_models()) {
    if (request.force && model->family() != *request.force) continue;
    for (Candidate& c : model->enumerate(p, e, hw)) {
      (c.feasible ? feasible : rejected).push_back(std::move(c));
    }
  }
  if (feasible.empty()) {
    std::string why = rejected.empty() ? std::string("no kernel family applies") : rejected.front().reject_reason;
    if (request.force) {
      fail(Status::NotSupported, "force_kernel = \"", family_name(*request.force), "\" cannot run ",
           p.to_string(), " on ", hw.name, ": ", why);
    }
    fail(Status::NotSupported, "no kernel can run ", p.to_string(), " on ", hw.name, ": ", why);
  }
  std::stable_sort(feasible.begin(), feasible.end(),
                   [](const Candidate& a, const Candidate& b) { return a.predicted_us < b.predicted_us; });
  PlanDecision d;
  d.chosen = feasible.front();
  constexpr std::size_t kShown = 4;
  for (std::size_t i = 1; i < feasible.size() && d.runners_up.size() < kShown; ++i) d.runners_up.push_back(feasible[i]);
  for (std::size_t i = 0; i < rejected.size() && d.rejected.size() < kShown; ++i) d.rejected.push_back(rejected[i]);
  return d;
}

namespace {
void candidate_json(std::ostringstream& os, const Candidate& c) {
  os << "{\"config\":" << c.config.to_json();
  if (c.feasible) {
    os << ",\"predicted_us\":" << c.predicted_us;
  } else {
    os << ",\"reason\":\"" << json_escape(c.reject_reason) << "\"";
  }
  if (!c.notes.empty()) os << ",\"notes\":\"" << json_escape(c.notes) << "\"";
  if (c.has_cost && c.feasible) os << ",\"model\":" << c.cost.to_json();
  os << "}";
}
}  // namespace

std::string PlanDecision::to_json(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw) const {
  std::ostringstream os;
  os << "{\"problem\":\"" << json_escape(p.to_string()) << "\",\"epilogue\":\"" << json_escape(e.to_string())
     << "\",\"hardware\":\"" << json_escape(hw.name) << "\",\"backend\":\""
     << (chosen.config.family == Family::Cpu ? "cpu" : "cuda") << "\",\"family\":\""
     << family_name(chosen.config.family) << "\",\"chosen\":";
  candidate_json(os, chosen);
  os << ",\"runners_up\":[";
  for (std::size_t i = 0; i < runners_up.size(); ++i) {
    if (i) os << ",";
    candidate_json(os, runners_up[i]);
  }
  os << "],\"rejected\":[";
  for (std::size_t i = 0; i < rejected.size(); ++i) {
    if (i) os << ",";
    candidate_json(os, rejected[i]);
  }
  os << "]}";
  return os.str();
}

}  // namespace dgemm

// The per-handle plan cache (see plan_cache.hpp).
#include "compat/cublas/plan_cache.hpp"

#include <cstring>
#include <vector>

namespace dgemm_cublas {

CachedPlan::~CachedPlan() {
  // dgemm_destroy_plan leaves work already enqueued valid: a plan may go while its kernels run.
  if (plan) dgemm_destroy_plan(plan);
}

std::shared_ptr<const CachedPlan> PlanCache::find(const PlanKey& key) {
  auto it = map_.find(key);
  if (it == map_.end()) return nullptr;
  it->second.last_use = ++tick_;
  return it->second.plan;
}

std::shared_ptr<const CachedPlan> PlanCache::insert(const PlanKey& key, std::shared_ptr<const CachedPlan> plan,
                                                    std::size_t* evicted) {
  *evicted = 0;
  auto it = map_.find(key);
  if (it != map_.end()) {
    it->second.last_use = ++tick_;
    return it->second.plan;
  }
  while (map_.size() >= capacity_) {
    // A linear scan on the (cold) miss path keeps the hot path free of list bookkeeping.
    auto oldest = map_.begin();
    for (auto j = map_.begin(); j != map_.end(); ++j)
      if (j->second.last_use < oldest->second.last_use) oldest = j;
    map_.erase(oldest);
    ++*evicted;
  }
  map_.emplace(key, Slot{plan, ++tick_});
  return plan;
}

namespace {

// The chosen kernel's name from dgemm_plan_describe's JSON ("chosen":{"config":{"name":"...").
std::string kernel_name(dgemm_plan_t plan) {
  std::size_t need = 0;
  if (dgemm_plan_describe(plan, nullptr, 0, &need) != DGEMM_STATUS_SUCCESS || need == 0) return "";
  std::vector<char> json(need);
  if (dgemm_plan_describe(plan, json.data(), json.size(), nullptr) != DGEMM_STATUS_SUCCESS) return "";
  const char* chosen = std::strstr(json.data(), "\"chosen\":");
  const char* name = chosen ? std::strstr(chosen, "\"name\":\"") : nullptr;
  if (!name) return "";
  name += std::strlen("\"name\":\"");
  const char* end = std::strchr(name, '"');
  return end ? std::string(name, end) : std::string();
}

}  // namespace

std::shared_ptr<const CachedPlan> make_plan(dgemm_context_t ctx, const PlanKey& key) {
  auto out = std::make_shared<CachedPlan>();
  dgemm_problem_t problem;
  dgemm_epilogue_t epilogue;
  make_problem(key, &problem, &epilogue);
  dgemm_plan_t plan = nullptr;
  const dgemm_status_t st = dgemm_create_plan(ctx, &problem, &epilogue, nullptr, &plan);
  if (st != DGEMM_STATUS_SUCCESS) {
    out->detail = std::string(dgemm_status_string(st)) + ": " + dgemm_last_error();
    return out;
  }
  std::size_t ws = 0;
  if (dgemm_plan_workspace_size(plan, &ws) != DGEMM_STATUS_SUCCESS) {
    dgemm_destroy_plan(plan);
    out->detail = std::string("dgemm_plan_workspace_size: ") + dgemm_last_error();
    return out;
  }
  out->plan = plan;
  out->workspace = ws;
  out->detail = kernel_name(plan);
  return out;
}

}  // namespace dgemm_cublas

// A handle's plans, by exact key (route.hpp's PlanKey: shape, types, layout, beta = 0 or not,
// epilogue, device). Bounded: when full, the least recently used plan goes. A refused shape is
// remembered too (plan == nullptr), so that it costs one dgemm_create_plan, not one per call.
// Not thread-safe by itself: the owning handle's mutex guards it. Entries are shared_ptrs so that
// a plan evicted while another thread executes it stays alive until that call returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "compat/cublas/route.hpp"
#include "deepgemm/deepgemm.h"

namespace dgemm_cublas {

struct CachedPlan {
  dgemm_plan_t plan = nullptr;  // nullptr: dgemm_create_plan refused the shape
  std::size_t workspace = 0;    // bytes dgemm_execute needs
  std::string detail;           // kernel name (made) or dgemm_last_error (refused), for the log
  CachedPlan() = default;
  CachedPlan(const CachedPlan&) = delete;
  CachedPlan& operator=(const CachedPlan&) = delete;
  ~CachedPlan();
};

class PlanCache {
 public:
  explicit PlanCache(std::size_t capacity) : capacity_(capacity ? capacity : 1) {}

  // The plan for `key`, or nullptr; marks it used.
  std::shared_ptr<const CachedPlan> find(const PlanKey& key);

  // Adds `plan` under `key` unless another thread added one first (then that one is returned and
  // `plan` dropped). Evicts the least recently used entry when full; *evicted counts them.
  std::shared_ptr<const CachedPlan> insert(const PlanKey& key, std::shared_ptr<const CachedPlan> plan,
                                           std::size_t* evicted);

  std::size_t size() const { return map_.size(); }
  void clear() { map_.clear(); }

 private:
  struct Slot {
    std::shared_ptr<const CachedPlan> plan;
    uint64_t last_use;
  };
  std::unordered_map<PlanKey, Slot, PlanKeyHash> map_;
  uint64_t tick_ = 0;
  std::size_t capacity_;
};

// Makes the plan for `key` on `ctx` (the expensive part: planning, NVRTC or the kernel cache).
std::shared_ptr<const CachedPlan> make_plan(dgemm_context_t ctx, const PlanKey& key);

}  // namespace dgemm_cublas

// What the opaque C handles hold. Only src/api sees these structs.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "core/hardware.hpp"
#include "core/lru_cache.hpp"
#include "core/problem.hpp"
#include "plan/arch_file.hpp"
#include "core/kernel_config.hpp"

namespace dgemm {

// A prepared kernel and its explanation, shared by every plan of the same problem in a context.
struct PlanEntry {
  std::unique_ptr<Executable> executable;
  KernelConfig config;
  std::string description;  // JSON
};

}  // namespace dgemm

struct dgemm_context {
  // Plans the context remembers after they are destroyed (most recently made first), so that
  // re-creating a recent plan costs nothing; a live plan holds its own entry, whatever the cache
  // forgets. Bounded so that a service seeing endless distinct shapes keeps a bounded footprint.
  static constexpr std::size_t kPlanCacheCapacity = 256;
  static constexpr std::size_t kArchCacheCapacity = 16;

  std::unique_ptr<dgemm::Backend> backend;
  int device_index = 0;
  std::atomic<int> live_plans{0};
  std::mutex mutex;  // guards the caches below
  dgemm::LruCache<std::string, std::shared_ptr<const dgemm::PlanEntry>> plan_cache{kPlanCacheCapacity};
  // arch file path -> the backend's description overridden by it
  dgemm::LruCache<std::string, dgemm::HardwareDesc> arch_cache{kArchCacheCapacity};
};

struct dgemm_plan {
  dgemm_context* ctx = nullptr;
  dgemm::GemmProblem problem;
  dgemm::Epilogue epilogue;
  std::shared_ptr<const dgemm::PlanEntry> entry;
  // dgemm_create_plan_many: one plan per problem, owned by this one (each counted in
  // ctx->live_plans until this one is destroyed). Empty for every other plan.
  std::vector<dgemm_plan*> parts;

  dgemm_plan() = default;
  dgemm_plan(const dgemm_plan&) = delete;
  dgemm_plan& operator=(const dgemm_plan&) = delete;
  ~dgemm_plan() {
    for (dgemm_plan* part : parts) {
      part->ctx->live_plans.fetch_sub(1);
      delete part;
    }
  }
};

namespace dgemm {

// The description plans are made for: the backend's own, or it overridden by an arch file. A
// copy, since the cache may forget the entry as soon as the lock is released.
inline HardwareDesc hardware_for_plan(dgemm_context& ctx, const std::string& arch_file) {
  if (arch_file.empty()) return ctx.backend->hardware();
  std::lock_guard<std::mutex> lock(ctx.mutex);
  if (const HardwareDesc* hit = ctx.arch_cache.find(arch_file)) return *hit;
  return ctx.arch_cache.insert(arch_file, apply_arch_file(ctx.backend->hardware(), arch_file));
}

}  // namespace dgemm

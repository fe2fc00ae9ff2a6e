// The library's promises under concurrency, written to be run under ThreadSanitizer too (the
// sanitizer tier runs it with OMP_NUM_THREADS=1, so that only our own synchronization is checked,
// not libgomp's, which TSan cannot see): plans created and destroyed from many threads on one
// context (its plan and arch caches evicting under contention), one plan executed from many
// threads, the last-error message per thread, contexts created and destroyed concurrently.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "api/handles.hpp"
#include "common/cpu_api.hpp"
#include "deepgemm/deepgemm.h"

using dgemm_test::f32_problem;

namespace {

constexpr int kThreads = 4;

// Runs a plan on all-ones A (m x k) and B (k x n) with the plan's alpha: every element is alpha * k.
bool runs_correctly(dgemm_plan_t plan, int64_t m, int64_t n, int64_t k, float alpha) {
  // No Boost.Test assertion here: this runs on worker threads, and Boost.Test is not thread-safe.
  size_t ws_size = 0;
  if (dgemm_plan_workspace_size(plan, &ws_size) != DGEMM_STATUS_SUCCESS) return false;
  std::vector<unsigned char> ws(ws_size);
  std::vector<float> a(std::size_t(m * k), 1.0f), b(std::size_t(k * n), 1.0f), d(std::size_t(m * n), -1.0f);
  if (dgemm_execute(plan, a.data(), b.data(), nullptr, d.data(), nullptr, ws.data(), ws.size(), nullptr) !=
      DGEMM_STATUS_SUCCESS)
    return false;
  for (float v : d)
    if (v != alpha * float(k)) return false;
  return true;
}

template <class Body>
void in_threads(Body body) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(body, t);
  for (std::thread& th : threads) th.join();
}

}  // namespace

BOOST_AUTO_TEST_CASE(plans_made_from_many_threads_on_one_context) {
  dgemm_context_t ctx = nullptr;
  BOOST_REQUIRE(dgemm_context_create(DGEMM_DEVICE_CPU, 0, &ctx) == DGEMM_STATUS_SUCCESS);
  // More distinct problems than the cache holds, and each made by every thread: hits, misses and
  // evictions interleave. alpha varies in the last bit, so a wrong cache hit gives a wrong result.
  const int distinct = int(dgemm_context::kPlanCacheCapacity) + 40;
  std::atomic<int> wrong{0};
  in_threads([&](int t) {
    for (int i = 0; i < distinct; ++i) {
      const int which = (i * 7 + t * 13) % distinct;
      dgemm_problem_t p = f32_problem(1 + which % 5, 2 + which % 3, 3);
      dgemm_epilogue_t e;
      dgemm_epilogue_init(&e);
      e.alpha = 1.0f + float(which) * 1.1920929e-7f;  // 1 + which ulps
      dgemm_plan_t plan = nullptr;
      if (dgemm_create_plan(ctx, &p, &e, nullptr, &plan) != DGEMM_STATUS_SUCCESS ||
          !runs_correctly(plan, p.m, p.n, p.k, e.alpha))
        ++wrong;
      dgemm_destroy_plan(plan);
    }
  });
  BOOST_TEST(wrong.load() == 0);
  BOOST_TEST(ctx->plan_cache.size() <= dgemm_context::kPlanCacheCapacity);
  BOOST_TEST(dgemm_context_destroy(ctx) == DGEMM_STATUS_SUCCESS);
}

BOOST_AUTO_TEST_CASE(one_plan_executed_from_many_threads) {
  dgemm_context_t ctx = nullptr;
  BOOST_REQUIRE(dgemm_context_create(DGEMM_DEVICE_CPU, 0, &ctx) == DGEMM_STATUS_SUCCESS);
  dgemm_problem_t p = f32_problem(90, 300, 40);  // several tiles
  dgemm_epilogue_t e;
  dgemm_epilogue_init(&e);
  e.alpha = 0.5f;
  dgemm_plan_t plan = nullptr;
  BOOST_REQUIRE(dgemm_create_plan(ctx, &p, &e, nullptr, &plan) == DGEMM_STATUS_SUCCESS);
  std::atomic<int> wrong{0};
  in_threads([&](int) {
    for (int r = 0; r < 5; ++r)
      if (!runs_correctly(plan, p.m, p.n, p.k, e.alpha)) ++wrong;  // each call its own workspace
  });
  BOOST_TEST(wrong.load() == 0);
  dgemm_destroy_plan(plan);
  dgemm_context_destroy(ctx);
}

BOOST_AUTO_TEST_CASE(arch_descriptions_resolved_from_many_threads) {
  dgemm_context_t ctx = nullptr;
  BOOST_REQUIRE(dgemm_context_create(DGEMM_DEVICE_CPU, 0, &ctx) == DGEMM_STATUS_SUCCESS);
  const char* names[] = {"h100", "h200", "a100", "l40s", "mi300x", "H100", "H200", "A100", "L40S", "MI300X",
                         "h100.yaml", "h200.yaml", "a100.yaml", "l40s.yaml", "mi300x.yaml", "H100.yaml",
                         "H200.yaml", "A100.yaml", "L40S.yaml", "MI300X.yaml"};
  std::atomic<int> unexpected{0};
  in_threads([&](int t) {
    for (int i = 0; i < 40; ++i) {
      dgemm_problem_t p = f32_problem(2, 3, 4);
      dgemm_plan_options_t o;
      dgemm_plan_options_init(&o);
      o.arch_file = names[(i + t * 5) % 20];
      dgemm_plan_t plan = nullptr;
      // A CPU context has no kernel for these machines: the answer is NOT_SUPPORTED, every time.
      if (dgemm_create_plan(ctx, &p, nullptr, &o, &plan) != DGEMM_STATUS_NOT_SUPPORTED) ++unexpected;
    }
  });
  BOOST_TEST(unexpected.load() == 0);
  BOOST_TEST(ctx->arch_cache.size() <= dgemm_context::kArchCacheCapacity);
  dgemm_context_destroy(ctx);
}

BOOST_AUTO_TEST_CASE(each_thread_sees_its_own_last_error) {
  std::atomic<int> wrong{0};
  in_threads([&](int t) {
    for (int i = 0; i < 200; ++i) {
      dgemm_context_t ctx = nullptr;
      const int index = 10 + t;  // a CPU context with a non-zero index: refused, naming the index
      if (dgemm_context_create(DGEMM_DEVICE_CPU, index, &ctx) != DGEMM_STATUS_INVALID_ARGUMENT) ++wrong;
      if (std::string(dgemm_last_error()).find("device_index = " + std::to_string(index)) == std::string::npos)
        ++wrong;
      if (dgemm_context_create(DGEMM_DEVICE_CPU, 0, &ctx) != DGEMM_STATUS_SUCCESS) ++wrong;
      if (dgemm_last_error()[0] != '\0') ++wrong;  // success clears it
      dgemm_context_destroy(ctx);
    }
  });
  BOOST_TEST(wrong.load() == 0);
}

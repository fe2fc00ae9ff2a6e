// Promises of the C boundary that an outside tester (libFuzzer, UBSan, hostile inputs) found
// broken once, each pinned by a test: exact plan-cache keys, bounded caches, aligned execute-time
// vectors, forward-compatible struct sizes and enum fields read as integers.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "api/handles.hpp"
#include "deepgemm/deepgemm.h"

namespace {

struct CpuContext {
  dgemm_context_t ctx = nullptr;
  CpuContext() { BOOST_REQUIRE(dgemm_context_create(DGEMM_DEVICE_CPU, 0, &ctx) == DGEMM_STATUS_SUCCESS); }
  ~CpuContext() { dgemm_context_destroy(ctx); }
};

dgemm_problem_t f32_problem(int64_t m, int64_t n, int64_t k) {
  dgemm_problem_t p;
  dgemm_problem_init(&p);
  p.m = m;
  p.n = n;
  p.k = k;
  p.a_type = p.b_type = p.c_type = p.d_type = DGEMM_DTYPE_F32;
  return p;
}

// Workspace for a plan, as every caller of dgemm_execute provides it.
std::vector<unsigned char> workspace_for(dgemm_plan_t plan) {
  size_t bytes = 0;
  BOOST_REQUIRE(dgemm_plan_workspace_size(plan, &bytes) == DGEMM_STATUS_SUCCESS);
  return std::vector<unsigned char>(bytes);
}

// D of a 1x1x1 f32 plan with A = a, B = b and the epilogue's alpha.
float one_element(dgemm_context_t ctx, float alpha, float a, float b) {
  dgemm_problem_t p = f32_problem(1, 1, 1);
  dgemm_epilogue_t e;
  dgemm_epilogue_init(&e);
  e.alpha = alpha;
  dgemm_plan_t plan = nullptr;
  BOOST_REQUIRE_MESSAGE(dgemm_create_plan(ctx, &p, &e, nullptr, &plan) == DGEMM_STATUS_SUCCESS, dgemm_last_error());
  std::vector<unsigned char> ws = workspace_for(plan);
  float d = -1.0f;
  BOOST_REQUIRE_MESSAGE(dgemm_execute(plan, &a, &b, nullptr, &d, nullptr, ws.data(), ws.size(), nullptr) ==
                            DGEMM_STATUS_SUCCESS,
                        dgemm_last_error());
  dgemm_destroy_plan(plan);
  return d;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(plan_cache)

// The key printed alpha to 6 significant digits, so this plan reused alpha = 1's plan.
BOOST_FIXTURE_TEST_CASE(alpha_differing_in_the_last_bit_gets_its_own_plan, CpuContext) {
  const float alpha = 1.0000049f;
  BOOST_TEST(one_element(ctx, 1.0f, 1.0f, 1e6f) == 1e6f);
  BOOST_TEST(one_element(ctx, alpha, 1.0f, 1e6f) == alpha * 1e6f);
  BOOST_TEST(one_element(ctx, 1.0f, 1.0f, 1e6f) == 1e6f);
  // -0 and +0 are different bit patterns but compute the same: both are fine, neither may leak.
  BOOST_TEST(one_element(ctx, -0.0f, 1.0f, 1e6f) == 0.0f);
  BOOST_TEST(std::signbit(one_element(ctx, -0.0f, 1.0f, 1e6f)));
}

// Creating and destroying many distinct shapes must not grow the context without bound; a live
// plan whose cache entry was forgotten keeps working.
BOOST_FIXTURE_TEST_CASE(the_plan_cache_is_bounded_and_live_plans_survive_eviction, CpuContext) {
  const std::size_t capacity = dgemm_context::kPlanCacheCapacity;
  dgemm_problem_t p = f32_problem(2, 3, 4);
  dgemm_plan_t keep = nullptr;
  BOOST_REQUIRE(dgemm_create_plan(ctx, &p, nullptr, nullptr, &keep) == DGEMM_STATUS_SUCCESS);
  for (std::size_t i = 0; i < 3 * capacity; ++i) {
    dgemm_problem_t q = f32_problem(int64_t(10 + i), 5, 3);
    dgemm_plan_t plan = nullptr;
    BOOST_REQUIRE(dgemm_create_plan(ctx, &q, nullptr, nullptr, &plan) == DGEMM_STATUS_SUCCESS);
    dgemm_destroy_plan(plan);
    BOOST_REQUIRE_LE(ctx->plan_cache.size(), capacity);
  }
  BOOST_TEST(ctx->plan_cache.size() == capacity);
  std::vector<float> a(8, 1.0f), b(12, 2.0f), d(6, -1.0f);
  std::vector<unsigned char> ws = workspace_for(keep);
  BOOST_REQUIRE(dgemm_execute(keep, a.data(), b.data(), nullptr, d.data(), nullptr, ws.data(), ws.size(), nullptr) ==
                DGEMM_STATUS_SUCCESS);
  for (float v : d) BOOST_TEST(v == 8.0f);
  dgemm_destroy_plan(keep);
}

BOOST_FIXTURE_TEST_CASE(the_arch_file_cache_is_bounded, CpuContext) {
  dgemm_problem_t p = f32_problem(2, 3, 4);
  dgemm_plan_options_t o;
  dgemm_plan_options_init(&o);
  // Built-in names resolve without a file; each distinct spelling is a distinct cache entry.
  const char* names[] = {"h100", "h200", "a100", "l40s", "H100", "H200", "A100", "L40S",
                         "h100.yaml", "h200.yaml", "a100.yaml", "l40s.yaml", "H100.yaml", "H200.yaml",
                         "A100.yaml", "L40S.yaml", "h100.YAML", "h200.YAML", "a100.YAML", "l40s.YAML"};
  for (const char* name : names) {
    o.arch_file = name;
    dgemm_plan_t plan = nullptr;
    // A CPU context planning for a GPU description finds no kernel it can run: that is fine here.
    (void)dgemm_create_plan(ctx, &p, nullptr, &o, &plan);
    if (plan) dgemm_destroy_plan(plan);
    BOOST_REQUIRE_LE(ctx->arch_cache.size(), dgemm_context::kArchCacheCapacity);
  }
  BOOST_TEST(ctx->arch_cache.size() == dgemm_context::kArchCacheCapacity);
}

BOOST_AUTO_TEST_SUITE_END()

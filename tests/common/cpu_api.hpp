// Small helpers for tests that drive the public C API on the CPU backend.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <vector>

#include "deepgemm/deepgemm.h"

namespace dgemm_test {

// A CPU context for the length of a test (a Boost fixture).
struct CpuContext {
  dgemm_context_t ctx = nullptr;
  CpuContext() { BOOST_REQUIRE(dgemm_context_create(DGEMM_DEVICE_CPU, 0, &ctx) == DGEMM_STATUS_SUCCESS); }
  ~CpuContext() { dgemm_context_destroy(ctx); }
};

// A row-major f32 problem of m x n x k, packed.
inline dgemm_problem_t f32_problem(int64_t m, int64_t n, int64_t k) {
  dgemm_problem_t p;
  dgemm_problem_init(&p);
  p.m = m;
  p.n = n;
  p.k = k;
  p.a_type = p.b_type = p.c_type = p.d_type = DGEMM_DTYPE_F32;
  return p;
}

// The workspace a plan asks for, as every caller of dgemm_execute provides it (a CPU plan's
// scratch is workspace too: execute allocates nothing).
inline std::vector<unsigned char> workspace_for(dgemm_plan_t plan) {
  size_t bytes = 0;
  BOOST_REQUIRE(dgemm_plan_workspace_size(plan, &bytes) == DGEMM_STATUS_SUCCESS);
  return std::vector<unsigned char>(bytes);
}

}  // namespace dgemm_test

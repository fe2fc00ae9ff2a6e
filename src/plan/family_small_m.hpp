// The small-M family's planner helpers: which thread mapping a problem gets and the row bucket a
// plan compiles for. A KernelConfig encodes the kernel's compile-time choices
// (src/kernels/small_m/small_m_gemm.cuh) as:
//   block_m = rows the kernel holds accumulators for (1, 2, 4, 8, 16; the plan's m <= block_m)
//   block_n = columns per CTA (B K-major: 8 warps x columns per warp; B N-major: 64)
//   loads_in_flight = weight loads in flight per thread and column (the kernel's kUnroll)
//   split_k = CTAs per column block along K (> 1: f32 partials + the shared reduction kernel)
//   swap_ab = column-major problem (the kernel view whose rows are M, stored transposed)
#pragma once

#include <cstdint>

#include "core/problem.hpp"

namespace dgemm {

// The largest M the family handles.
inline constexpr int64_t kSmallMMaxRows = 16;

// True when B(k, j) is contiguous in k (weights stored N x K, e.g. a row-major NT problem).
inline bool small_m_b_kmajor(const GemmProblem& p) {
  return p.order == Order::RowMajor ? p.op_b == Op::T : p.op_b == Op::N;
}
// True when A(i, k) is contiguous in k.
inline bool small_m_a_kmajor(const GemmProblem& p) {
  return p.order == Order::RowMajor ? p.op_a == Op::N : p.op_a == Op::T;
}
// The row bucket a problem of m rows compiles for (a new m in the same bucket reuses the kernel).
inline int small_m_rows(int64_t m) {
  for (int r : {1, 2, 4, 8, 16})
    if (m <= r) return r;
  return 0;
}

}  // namespace dgemm

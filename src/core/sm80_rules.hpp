// The sm80 family's rules on operands (src/kernels/sm80/sm80_gemm.cuh): which types and storage
// layouts its mma.sync kernels read. What the planner refuses with the reason and the launcher
// relies on, in one place.
#pragma once

#include <cstdint>
#include <string>

#include "core/problem.hpp"

namespace dgemm {

// The most K terms of an i8 problem: |a b| <= 2^14, so the s32 sums (and split-K's s32 partials)
// of at most 2^17 - 1 products never overflow.
inline constexpr int64_t kSm80MaxI8K = (int64_t(1) << 17) - 1;

// Empty when the sm80 kernels take the problem's operands: f16 x f16 or bf16 x bf16 computed in
// f32 (any layout), or i8 x i8 computed in i32 with both operands K-contiguous and k within
// kSm80MaxI8K; otherwise why not, naming the values.
std::string sm80_operand_problem(const GemmProblem& p);

}  // namespace dgemm

// The CPU reference GEMM: every combination the API accepts, exact (f64 accumulation for float
// inputs, i64 for integer ones; one correctly rounded conversion to the output type). It is the
// numerical oracle of every GPU test and the no-GPU fallback.
#pragma once

#include <cstddef>

#include "core/problem.hpp"

namespace dgemm {

// Computes D for every batch. `args` holds host pointers. Scalars: ScalarMode::FromPlan uses
// e.alpha / e.beta, Host uses args.alpha / args.beta, Device reads *alpha_ptr / *beta_ptr (host
// memory here). Writes only the m x n elements of each D matrix; C may alias D (ldc == ldd).
//
// Decisions where the API text is silent:
//  - C is read, and beta * C added literally, whenever the plan reads C (e.beta != 0), even if
//    the run-time beta is 0 (so a NaN in C gives NaN, as 0 * NaN does).
//  - k = 0: the product contributes exactly nothing (not alpha * 0); A and B are not read.
//  - Integer outputs (i8, i32): NaN becomes 0; values beyond the range saturate, including an
//    i32 result of an integer problem whose exact sum leaves int32 (only possible for k > 2^17).
//  - A NaN stored to f16 / bf16 / fp8 is the positive quiet NaN pattern; with the saturate flag,
//    an infinite value stored to fp8 becomes the largest finite value of its sign.
//  - Scratch (packed panels, accumulator tiles) comes from args.workspace, at least
//    cpu_gemm_workspace_size(p) bytes at any alignment, so the call allocates nothing. Callers
//    inside the library that give less (the tests' oracle) get a buffer allocated for the call.
//  - DGEMM_1.1 scaling (deepgemm.h): block scales of A / B multiply each element as it is packed
//    (the sum over K of sa * sb * partial sums, regrouped per product); per-tensor and per-row /
//    column scales multiply the finished sum; D's block scales and amax follow the header's rule
//    exactly (core/scaling.cpp). args.a_scale / b_scale / d_scale / amax_d are host pointers.
// Grouped problems: batch b is group b; it computes the rows that resolve_group_rows gives for
// args.group_offsets / group_counts (host memory), applies one epilogue vector per group, and
// writes the status bits to *args.group_status when that is non-null.
void cpu_gemm(const GemmProblem& p, const Epilogue& e, const ExecArgs& args);

// The workspace cpu_gemm needs for `p`: one scratch slice per thread it will use (the OpenMP
// thread count now, or 1 for small problems), sized to the problem; 0 for an empty output.
std::size_t cpu_gemm_workspace_size(const GemmProblem& p);

}  // namespace dgemm

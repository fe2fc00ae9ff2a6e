// The CPU reference GEMM: every combination the API accepts, exact (f64 accumulation for float
// inputs, i64 for integer ones; one correctly rounded conversion to the output type). It is the
// numerical oracle of every GPU test and the no-GPU fallback.
#pragma once

#include "core/problem.hpp"

namespace dgemm {

// Computes D for every batch. `args` holds host pointers; scalars are resolved by the caller
// except in ScalarMode::Device, where *alpha_ptr / *beta_ptr are read (host memory here).
// Writes only the m x n elements of each D matrix.
void cpu_gemm(const GemmProblem& p, const Epilogue& e, const ExecArgs& args);

}  // namespace dgemm

// The sm90 family's plan-time rules that the launcher (src/backend/cuda/sm90_gemm.cpp) shares.
#pragma once

#include <string>

#include "core/problem.hpp"

namespace dgemm {

// Empty when the problem's layout satisfies the TMA rules the sm90 family needs at plan time
// (leading dimensions and batch strides multiples of 16 bytes, sizes within the tensor-map
// limits); otherwise why not, naming the values. Base pointers are checked at execute.
std::string sm90_tma_layout_problem(const GemmProblem& p);

}  // namespace dgemm

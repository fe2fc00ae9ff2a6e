// The sm90 family's plan-time rules that the launcher (src/backend/cuda/sm90_gemm.cpp) shares.
#pragma once

#include <string>

#include "core/problem.hpp"

namespace dgemm {

// Empty when the problem's layout satisfies the TMA rules the sm90 family needs at plan time
// (leading dimensions and batch strides multiples of 16 bytes, sizes within the tensor-map
// limits); otherwise why not, naming the values. Base pointers are checked at execute.
std::string sm90_tma_layout_problem(const GemmProblem& p);

// Packing (KernelConfig::pack_a / pack_b, in the problem's own A and B): an operand whose leading
// dimension or batch stride breaks TMA's 16-byte rule is first copied into the workspace with its
// contiguous rows padded to a multiple of 8 elements. The copy's shape, as the pack kernel sees it.
struct Sm90PackLayout {
  int64_t inner = 0, outer = 0;   // contiguous elements per stored row, stored rows per batch entry
  int64_t src_ld = 0, src_stride = 0;
  int64_t batch = 1;              // copies made: 1 for a broadcast operand (stride 0)
  int64_t dst_ld = 0, dst_stride = 0;
  int64_t bytes() const { return batch * outer * dst_ld * 2; }
};
// Whether A (which = 0) or B (which = 1) of p breaks the 16-byte rule for its rows / batch stride.
bool sm90_operand_needs_pack(const GemmProblem& p, int which);
Sm90PackLayout sm90_pack_layout(const GemmProblem& p, int which);
// p with the packed operands' leading dimensions and batch strides replaced by the copy's.
GemmProblem sm90_packed_problem(const GemmProblem& p, bool pack_a, bool pack_b);

}  // namespace dgemm

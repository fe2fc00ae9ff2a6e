// The Tensor Memory Accelerator's rules on operand layouts (cuTensorMapEncodeTiled: 16-byte
// aligned rows and batch steps, coordinates below 2^31, strides below 2^40), and the packing that
// makes an operand follow them: what the planner checks and the sm90 launcher relies on.
#pragma once

#include <string>

#include "core/kernel_config.hpp"
#include "core/problem.hpp"

namespace dgemm {

// Empty when the problem's A and B satisfy TMA's plan-time rules (leading dimensions and batch
// strides multiples of 16 bytes, sizes within the tensor-map limits); otherwise why not, naming
// the values. Base pointers are checked at execute.
std::string tma_layout_problem(const GemmProblem& p);
// True when the reason above is only about 16-byte rows / batch steps (packing fixes it).
bool tma_problem_is_alignment(const std::string& why);

// Packing (KernelConfig::pack_a / pack_b, in the problem's own A and B): an operand whose leading
// dimension or batch stride breaks the 16-byte rule is first copied into the workspace with its
// contiguous rows padded to a multiple of 16 bytes. The copy's shape, as the pack kernel sees it.
// A transposed copy (an MN-major operand packed K-major: KernelConfig::pack_a_t / pack_b_t) has
// `inner` rows of `outer` elements: the source's stored row r becomes column r of the copy.
struct PackLayout {
  int64_t inner = 0, outer = 0;   // contiguous elements per stored row, stored rows per batch entry
  int64_t src_ld = 0, src_stride = 0;
  int64_t batch = 1;              // copies made: 1 for a broadcast operand (stride 0)
  int64_t dst_ld = 0, dst_stride = 0;
  int64_t elem_bytes = 2;
  bool transposed = false;
  int64_t dst_rows() const { return transposed ? inner : outer; }
  int64_t bytes() const { return batch * dst_rows() * dst_ld * elem_bytes; }
};
// Whether A (which = 0) or B (which = 1) of p breaks the 16-byte rule for its rows / batch stride.
bool tma_operand_needs_pack(const GemmProblem& p, int which);
// Whether that operand is MN-major as stored (consecutive M of op(A), or N of op(B), adjacent): the
// operands a transposed copy turns K-major.
bool tma_operand_mn_major(const GemmProblem& p, int which);
PackLayout pack_layout(const GemmProblem& p, int which, bool transposed = false);
// p with the packed operands' leading dimensions and batch strides replaced by the copy's; a
// transposed copy also flips that operand's op (the copy of a stored K x N B is B^T, N x K: op T).
GemmProblem packed_problem(const GemmProblem& p, bool pack_a, bool pack_b, bool a_t = false, bool b_t = false);
// The problem a configuration's kernel reads (its pack_a / pack_b / pack_a_t / pack_b_t).
GemmProblem packed_problem(const GemmProblem& p, const KernelConfig& c);

}  // namespace dgemm

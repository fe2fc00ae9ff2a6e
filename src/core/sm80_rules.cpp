// The sm80 family's operand rules (see sm80_rules.hpp).
#include "core/sm80_rules.hpp"

#include "core/kernel_view.hpp"

namespace dgemm {

std::string sm80_operand_problem(const GemmProblem& p) {
  if (p.a_type != p.b_type || (p.a_type != DType::F16 && p.a_type != DType::BF16 && p.a_type != DType::I8))
    return std::string("takes f16, bf16 or i8 A and B (got ") + dtype_name(p.a_type) + ", " + dtype_name(p.b_type) + ")";
  const DType compute = p.a_type == DType::I8 ? DType::I32 : DType::F32;
  if (p.compute_type != compute)
    return std::string("computes ") + dtype_name(p.a_type) + " in " + dtype_name(compute) + " only (compute_type " +
           dtype_name(p.compute_type) + ")";
  if (p.a_type != DType::I8) return "";
  // ldmatrix.trans transposes 16-bit elements, so an MN-contiguous 8-bit operand would need a
  // transposing copy first (not built): the i8 kernel reads both operands K-major.
  const KernelView v = kernel_view(p, false);
  if (!v.a_kmajor || !v.b_kmajor)
    return std::string("8-bit mma.sync reads K-major operands only (ldmatrix transposes 16-bit elements): i8 needs ") +
           (p.order == Order::ColMajor ? "op_a = T and op_b = N (column-major)" : "op_a = N and op_b = T (row-major)") +
           ", got op_a = " + op_name(p.op_a) + ", op_b = " + op_name(p.op_b);
  if (p.k > kSm80MaxI8K)
    return "k = " + std::to_string(p.k) + ": i8 sums of more than " + std::to_string(kSm80MaxI8K) +
           " products could overflow the s32 accumulators";
  return "";
}

}  // namespace dgemm

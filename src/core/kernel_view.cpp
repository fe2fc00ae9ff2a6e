// The kernel's view of a problem (see kernel_view.hpp).
#include "core/kernel_view.hpp"

#include <algorithm>
#include <utility>

namespace dgemm {

bool problem_a_kcontiguous(const GemmProblem& p) {
  return p.order == Order::RowMajor ? p.op_a == Op::N : p.op_a == Op::T;
}
bool problem_b_kcontiguous(const GemmProblem& p) {
  return p.order == Order::RowMajor ? p.op_b == Op::T : p.op_b == Op::N;
}

GemmProblem canonical_operands(const GemmProblem& p) {
  GemmProblem q = p;
  // Any leading dimension >= k describes a single row; the one chosen is a multiple of 16 bytes.
  auto single_row_as_kmajor = [&](Op& op, int64_t& ld, DType t) {
    const int64_t per16 = 16 / int64_t(std::max<std::size_t>(1, dtype_size(t)));
    op = op == Op::N ? Op::T : Op::N;
    ld = std::max<int64_t>(1, (p.k + per16 - 1) / per16 * per16);
  };
  if (p.m == 1 && p.lda == 1 && p.k > 1 && !problem_a_kcontiguous(p)) single_row_as_kmajor(q.op_a, q.lda, p.a_type);
  if (p.n == 1 && p.ldb == 1 && p.k > 1 && !problem_b_kcontiguous(p)) single_row_as_kmajor(q.op_b, q.ldb, p.b_type);
  return q;
}

KernelView kernel_view(const GemmProblem& p, bool swap_ab) {
  KernelView v;
  // Column-major D is row-major D^T: its kernel computes op(B)^T op(A)^T unless swap-AB turns it
  // back; a row-major problem swaps only under swap-AB.
  v.swap_operands = (p.order == Order::ColMajor) != swap_ab;
  v.out_transposed = swap_ab;
  v.rows_are_m = !v.swap_operands;
  v.k = p.k;
  v.a_kmajor = problem_a_kcontiguous(p);
  v.b_kmajor = problem_b_kcontiguous(p);
  v.rows = p.m;
  v.cols = p.n;
  v.lda = p.lda;
  v.ldb = p.ldb;
  v.stride_a = p.stride_a;
  v.stride_b = p.stride_b;
  v.a_type = p.a_type;
  v.b_type = p.b_type;
  v.a_scale = p.a_scale;
  v.b_scale = p.b_scale;
  // Computing the transpose: KA is the problem's op(B)^T and KB its op(A)^T, every operand fact
  // exchanged with them.
  if (v.swap_operands) {
    std::swap(v.a_kmajor, v.b_kmajor);
    std::swap(v.rows, v.cols);
    std::swap(v.lda, v.ldb);
    std::swap(v.stride_a, v.stride_b);
    std::swap(v.a_type, v.b_type);
    std::swap(v.a_scale, v.b_scale);
  }
  return v;
}

VectorMode kernel_vector_mode(VectorMode mode, const KernelView& v) {
  if (v.rows_are_m) return mode;
  if (mode == VectorMode::PerRow) return VectorMode::PerColumn;
  if (mode == VectorMode::PerColumn) return VectorMode::PerRow;
  return mode;
}

bool rows_aligned(int64_t ld, int64_t batch_stride, int64_t batch_count, DType t, int bytes) {
  const int64_t esz = int64_t(dtype_size(t));
  if ((ld * esz) % bytes != 0) return false;
  return batch_count <= 1 || (batch_stride * esz) % bytes == 0;
}

}  // namespace dgemm

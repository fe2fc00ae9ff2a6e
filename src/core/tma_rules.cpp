// TMA layout rules and packing layouts (see tma_rules.hpp).
#include "core/tma_rules.hpp"

#include <sstream>

#include "core/kernel_view.hpp"

namespace dgemm {

namespace {
constexpr const char* kAlignmentPrefix = "TMA needs";
}

std::string tma_layout_problem(const GemmProblem& p) {
  const int64_t esize_a = int64_t(dtype_size(p.a_type)), esize_b = int64_t(dtype_size(p.b_type));
  const int64_t kLimit = int64_t(1) << 31, kStrideLimit = int64_t(1) << 40;
  std::ostringstream why;
  if ((p.lda * esize_a) % 16 != 0 || (p.ldb * esize_b) % 16 != 0) {
    why << kAlignmentPrefix << " leading dimensions that are multiples of 16 bytes (lda = " << p.lda
        << ", ldb = " << p.ldb << " elements of " << esize_a << " and " << esize_b << " bytes)";
  } else if (p.batch_count > 1 && ((p.stride_a * esize_a) % 16 != 0 || (p.stride_b * esize_b) % 16 != 0)) {
    why << kAlignmentPrefix << " batch strides that are multiples of 16 bytes (stride_a = " << p.stride_a
        << ", stride_b = " << p.stride_b << ")";
  } else if (p.m >= kLimit || p.n >= kLimit || p.k >= kLimit || p.batch_count >= kLimit) {
    why << "sizes beyond the tensor-map coordinate range (2^31)";
  } else if (p.lda * esize_a >= kStrideLimit || p.ldb * esize_b >= kStrideLimit ||
             p.stride_a * esize_a >= kStrideLimit || p.stride_b * esize_b >= kStrideLimit) {
    why << "strides beyond the tensor-map limit (2^40 bytes)";
  }
  return why.str();
}

bool tma_problem_is_alignment(const std::string& why) { return why.rfind(kAlignmentPrefix, 0) == 0; }

bool tma_operand_needs_pack(const GemmProblem& p, int which) {
  return which == 0 ? !rows_aligned(p.lda, p.stride_a, p.batch_count, p.a_type, 16)
                    : !rows_aligned(p.ldb, p.stride_b, p.batch_count, p.b_type, 16);
}

bool tma_operand_mn_major(const GemmProblem& p, int which) {
  return which == 0 ? !problem_a_kcontiguous(p) : !problem_b_kcontiguous(p);
}

PackLayout pack_layout(const GemmProblem& p, int which, bool transposed) {
  PackLayout l;
  const int64_t rows = which == 0 ? p.a_rows() : p.b_rows(), cols = which == 0 ? p.a_cols() : p.b_cols();
  // Row-major storage is contiguous along a row (cols elements), column-major along a column.
  l.inner = p.order == Order::RowMajor ? cols : rows;
  l.outer = p.order == Order::RowMajor ? rows : cols;
  l.src_ld = which == 0 ? p.lda : p.ldb;
  l.src_stride = which == 0 ? p.stride_a : p.stride_b;
  l.batch = p.batch_count > 1 && l.src_stride != 0 ? p.batch_count : 1;
  l.elem_bytes = int64_t(dtype_size(which == 0 ? p.a_type : p.b_type));
  const int64_t per16 = 16 / l.elem_bytes;
  l.transposed = transposed;
  l.dst_ld = ((transposed ? l.outer : l.inner) + per16 - 1) / per16 * per16;
  l.dst_stride = l.batch > 1 ? l.dst_rows() * l.dst_ld : 0;
  return l;
}

GemmProblem packed_problem(const GemmProblem& p, bool pack_a, bool pack_b, bool a_t, bool b_t) {
  GemmProblem q = p;
  const auto flip = [](Op o) { return o == Op::N ? Op::T : Op::N; };
  if (pack_a) {
    const PackLayout l = pack_layout(p, 0, a_t);
    q.lda = l.dst_ld;
    q.stride_a = l.dst_stride;
    if (a_t) q.op_a = flip(p.op_a);
  }
  if (pack_b) {
    const PackLayout l = pack_layout(p, 1, b_t);
    q.ldb = l.dst_ld;
    q.stride_b = l.dst_stride;
    if (b_t) q.op_b = flip(p.op_b);
  }
  return q;
}

GemmProblem packed_problem(const GemmProblem& p, const KernelConfig& c) {
  return packed_problem(p, c.pack_a, c.pack_b, c.pack_a_t, c.pack_b_t);
}

}  // namespace dgemm

// The problem as a kernel sees it. Every GPU kernel computes one row-major-indexed product
//     X (rows x cols) = KA (rows x K) * KB (K x cols)
// and the launcher maps the user's problem onto it once, here, instead of in every family:
//   - a column-major problem is the row-major problem D^T = op(B)^T op(A)^T (A and B swap);
//   - swap-AB (KernelConfig::swap_ab) computes D^T on purpose, so that a small M becomes the
//     kernel's column count (wgmma's N side), and swaps A and B once more;
//   - X is D itself, or D's transpose: X(i, j) is then stored at D + j * ldd + i (out_transposed).
// Per-row and per-column epilogue vectors follow X's rows and columns (rows_are_m says whether X's
// rows are the problem's rows). An operand is "K-major" when consecutive K of one row of KA (or
// one column of KB) are adjacent in memory; otherwise it is MN-major.
#pragma once

#include <cstdint>

#include "core/problem.hpp"
#include "core/scaling.hpp"

namespace dgemm {

struct KernelView {
  bool swap_operands = false;   // KA is the problem's op(B)^T and KB its op(A)^T
  bool out_transposed = false;  // X(i, j) lives at D[j * ldd + i] (C likewise)
  bool rows_are_m = true;       // X's rows are D's rows (else its columns): per-row vectors index rows
  bool a_kmajor = true, b_kmajor = true;
  int64_t rows = 0, cols = 0, k = 0;
  int64_t lda = 0, ldb = 0;            // leading dimensions of KA's and KB's storage
  int64_t stride_a = 0, stride_b = 0;  // batch strides of KA's and KB's storage
  DType a_type = DType::BF16, b_type = DType::BF16;
  // The DGEMM_1.1 input scales of KA and KB (the problem's A's and B's, swapped with them).
  ScaleDesc a_scale, b_scale;
};

// A single-row op(A) (m = 1) stored MN-contiguous with lda = 1 holds its K elements adjacent, as
// a K-contiguous operand does (likewise a single-column op(B)); the same memory described as
// K-contiguous, with a leading dimension that keeps TMA's 16-byte rule, lets tile kernels read it
// directly instead of packing it first. Results are identical: only the one row is ever read.
GemmProblem canonical_operands(const GemmProblem& p);

// Whether the problem's A (B) holds consecutive K of one row of op(A) (column of op(B)) adjacent.
bool problem_a_kcontiguous(const GemmProblem& p);
bool problem_b_kcontiguous(const GemmProblem& p);

KernelView kernel_view(const GemmProblem& p, bool swap_ab);

// The vector mode an epilogue vector (bias, output scale) of the problem has in the kernel's view.
VectorMode kernel_vector_mode(VectorMode mode, const KernelView& v);

// Whether a stored operand's rows and batch steps are multiples of `bytes` (16 for TMA and 16-byte
// loads): the plan-time half of an alignment rule (base pointers are checked at execute).
bool rows_aligned(int64_t ld, int64_t batch_stride, int64_t batch_count, DType t, int bytes);

}  // namespace dgemm

// The GEMM problem (shape, types, layout), its fused epilogue and the per-call values: plain value
// types shared by the planner, the backends and the tools. The C boundary converts the public
// structs into these; nothing here knows about C handles.
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.hpp"
#include "core/grouping.hpp"
#include "core/scaling.hpp"

namespace dgemm {

enum class Op : int { N = 0, T = 1 };
enum class Order : int { RowMajor = 0, ColMajor = 1 };
enum class Activation : int { None = 0, Relu = 1, GeluTanh = 2, GeluErf = 3, Silu = 4 };
enum class VectorMode : int { None = 0, PerTensor = 1, PerRow = 2, PerColumn = 3 };

const char* op_name(Op op);
const char* order_name(Order order);
const char* activation_name(Activation act);
const char* vector_mode_name(VectorMode mode);

// Shape, types and layout. Leading dimensions are always resolved (never 0) once validated.
struct GemmProblem {
  int64_t m = 1, n = 1, k = 1;
  DType a_type = DType::BF16, b_type = DType::BF16, c_type = DType::BF16, d_type = DType::BF16;
  DType compute_type = DType::F32;
  Op op_a = Op::N, op_b = Op::N;
  Order order = Order::RowMajor;
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  int64_t batch_count = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;
  // Grouped problems: the batches are the groups, whose rows are given at execute time
  // (ExecArgs::group_offsets / group_counts); m is their capacity (core/grouping.hpp).
  Grouping grouping;
  // DGEMM_1.1 input scaling (core/scaling.hpp): outer index i of op(A) / j of op(B), inner k.
  ScaleDesc a_scale, b_scale;

  // Rows and columns of each matrix as stored (A is k x m when op_a = T, and so on).
  int64_t a_rows() const { return op_a == Op::N ? m : k; }
  int64_t a_cols() const { return op_a == Op::N ? k : m; }
  int64_t b_rows() const { return op_b == Op::N ? k : n; }
  int64_t b_cols() const { return op_b == Op::N ? n : k; }

  // Element offset of (row, col) of a stored matrix with leading dimension ld in this order.
  int64_t offset(int64_t row, int64_t col, int64_t ld) const {
    return order == Order::RowMajor ? row * ld + col : row + col * ld;
  }
  // Smallest legal leading dimension of a stored rows x cols matrix.
  int64_t min_ld(int64_t rows, int64_t cols) const {
    int64_t inner = order == Order::RowMajor ? cols : rows;
    return inner > 1 ? inner : 1;
  }

  bool is_integer() const { return compute_type == DType::I32; }
  bool empty_output() const { return m == 0 || n == 0; }
  // At most (grouped problems: every row of the capacity computed once; contiguous groups share
  // the m rows instead of having m each).
  double flops() const {
    return 2.0 * double(m) * double(n) * double(k) * (grouping.contiguous() ? 1.0 : double(batch_count));
  }

  // Replaces zero leading dimensions with the packed value, then checks every field: sizes,
  // leading dimensions, overflow of every extent, the type combination. Throws Error naming the
  // field and its value (InvalidArgument, or NotSupported for a valid but unimplemented combination).
  void resolve_and_validate();

  // One line, e.g. "m=128 n=256 k=64 bf16*bf16->bf16 (f32) NT row lda=64 ...". Exact (every
  // field is an integer), so caches key on it.
  std::string to_string() const;
};

// The epilogue fixed at plan time.
struct Epilogue {
  float alpha = 1.0f;
  float beta = 0.0f;
  VectorMode bias_mode = VectorMode::None;
  DType bias_type = DType::F32;
  Activation activation = Activation::None;
  VectorMode scale_mode = VectorMode::None;
  bool saturate = true;     // FP8 outputs clamp to the largest finite value
  bool zero_point = false;  // I8 outputs add an int32 zero point
  // DGEMM_1.1: D quantized in 1 x 128 blocks with scales the epilogue computes (mode None or
  // Vec128; outer index i, inner n), and max |y| written to ExecArgs::amax_d.
  ScaleDesc d_scale;
  bool amax_d = false;

  bool reads_c() const { return beta != 0.0f; }
  bool is_identity() const {
    return alpha == 1.0f && beta == 0.0f && bias_mode == VectorMode::None &&
           activation == Activation::None && scale_mode == VectorMode::None;
  }
  // Checks the epilogue against the problem. Throws Error naming the field.
  void validate(const GemmProblem& p) const;
  // For people: alpha and beta rounded to 6 significant digits.
  std::string to_string() const;
  // For caches: every field, alpha and beta as their bit patterns. A key built from to_string()
  // would hand a plan for alpha = 1.0000049f the plan (and so the alpha) made for alpha = 1.
  std::string key() const;
};

// Scalars as the kernel sees them at execute time.
enum class ScalarMode : int { FromPlan = 0, Host = 1, Device = 2 };

// Everything dgemm_execute receives, already checked by the C boundary.
struct ExecArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  void* d = nullptr;
  float alpha = 1.0f, beta = 0.0f;  // resolved host values (when scalar_mode != Device)
  ScalarMode scalar_mode = ScalarMode::FromPlan;
  const float* alpha_ptr = nullptr;  // ScalarMode::Device
  const float* beta_ptr = nullptr;
  const void* bias = nullptr;
  const float* scale = nullptr;
  const int32_t* zero_point = nullptr;
  // Grouped plans: the per-group rows in the plan's device memory, read when the kernel runs.
  const int32_t* group_offsets = nullptr;  // contiguous: G + 1 row offsets
  const int32_t* group_counts = nullptr;   // masked: G valid-row counts
  uint32_t* group_status = nullptr;        // optional: receives the run's GroupStatus bits
  const void* a_scale = nullptr;  // DGEMM_1.1 scale tensors (types and layouts from the plan)
  const void* b_scale = nullptr;
  void* d_scale = nullptr;        // written: D's block scales
  float* amax_d = nullptr;        // written: max |y|
  void* workspace = nullptr;
  std::size_t workspace_size = 0;
  void* stream = nullptr;
};

// DGEMM_1.1 scaling of a problem (core/scaling.cpp): resolves the leading dimensions of the scale
// tensors and checks them and their combination with the types (block-scaled outputs need an FP8
// D). Throws Error naming the field ("a_scale.ld = ...").
void resolve_and_validate_scaling(GemmProblem& p, Epilogue& e);
// Whether a plan needs a kernel that implements DGEMM_1.1 scaling (input scales, block-scaled
// output or amax of D).
bool needs_scaling(const GemmProblem& p, const Epilogue& e);
// That scaling in a few words, for messages: "a_scale vec128, b_scale blk128x128, amax_d".
std::string scaling_summary(const GemmProblem& p, const Epilogue& e);

}  // namespace dgemm

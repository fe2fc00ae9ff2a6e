// Validation and printing of the problem and epilogue value types.
#include "core/problem.hpp"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>

#include "core/error.hpp"

namespace dgemm {

const char* op_name(Op op) { return op == Op::N ? "N" : "T"; }
const char* order_name(Order order) { return order == Order::RowMajor ? "row" : "col"; }

const char* activation_name(Activation act) {
  switch (act) {
    case Activation::None: return "none";
    case Activation::Relu: return "relu";
    case Activation::GeluTanh: return "gelu_tanh";
    case Activation::GeluErf: return "gelu_erf";
    case Activation::Silu: return "silu";
  }
  return "?";
}

const char* vector_mode_name(VectorMode mode) {
  switch (mode) {
    case VectorMode::None: return "none";
    case VectorMode::PerTensor: return "per_tensor";
    case VectorMode::PerRow: return "per_row";
    case VectorMode::PerColumn: return "per_column";
  }
  return "?";
}

bool dtype_from_name(const char* name, DType* out) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (std::strcmp(name, dtype_name(DType(i))) == 0) {
      *out = DType(i);
      return true;
    }
  }
  return false;
}

namespace {

// Number of elements spanned by `batch` matrices of rows x cols (rows, cols > 0) with leading
// dimension ld and batch stride; fails when any step overflows int64 (or the byte count does).
int64_t checked_extent(const GemmProblem& p, const char* name, int64_t rows, int64_t cols, int64_t ld,
                       int64_t stride, std::size_t elem_size) {
  int64_t last = 0, tmp = 0;
  int64_t outer = p.order == Order::RowMajor ? rows - 1 : cols - 1;
  int64_t inner = p.order == Order::RowMajor ? cols - 1 : rows - 1;
  bool overflow = __builtin_mul_overflow(outer, ld, &last) || __builtin_add_overflow(last, inner, &last);
  if (p.batch_count > 1) {
    overflow = overflow || __builtin_mul_overflow(p.batch_count - 1, stride, &tmp) ||
               __builtin_add_overflow(last, tmp, &last);
  }
  overflow = overflow || __builtin_add_overflow(last, int64_t(1), &last) ||
             __builtin_mul_overflow(last, int64_t(elem_size), &tmp);
  if (overflow) {
    fail(Status::InvalidArgument, "matrix ", name, " of ", rows, " x ", cols, " with ld", name, " = ", ld,
         ", batch_count = ", p.batch_count, " and stride_", name, " = ", stride,
         " spans more elements than a 64-bit index can address");
  }
  return last;
}

// A grouped problem's own rules (deepgemm.h, "grouped problems"); the batches are its groups.
void validate_grouping(const GemmProblem& p) {
  const Grouping& g = p.grouping;
  if (!g.contiguous() && !g.masked())
    fail(Status::InvalidArgument, "grouped->layout = ", int(g.layout), ": not a dgemm_group_layout_t");
  // The per-group arrays are int32.
  if (p.m > INT32_MAX)
    fail(Status::InvalidArgument, "m = ", p.m, ": a grouped problem's m must be < 2^31 (its row arrays are int32)");
  if (g.masked() && g.m_alignment != 1)
    fail(Status::InvalidArgument, "grouped->m_alignment = ", g.m_alignment, ": must be 1 for a masked layout");
  // The hint: a group's rows on average, within what the layout lets the groups hold together.
  const int64_t hint_cap = g.masked() ? p.m : p.m / std::max<int64_t>(1, p.batch_count);
  if (g.expected_m < 0 || g.expected_m > hint_cap)
    fail(Status::InvalidArgument, "grouped->expected_m = ", g.expected_m, ": must be in [0, ", hint_cap, "] (",
         g.masked() ? "m = " + std::to_string(p.m) + ", a slot's rows"
                    : "m / batch_count = " + std::to_string(p.m) + " / " + std::to_string(p.batch_count) +
                          ", the groups' rows on average",
         "; 0 = unknown)");
  if (!g.contiguous()) return;
  if (g.m_alignment < 1 || g.m_alignment > INT32_MAX)
    fail(Status::InvalidArgument, "grouped->m_alignment = ", g.m_alignment, ": must be in [1, 2^31)");
  if (p.m % g.m_alignment != 0)
    fail(Status::InvalidArgument, "m = ", p.m, ": not a multiple of grouped->m_alignment = ", g.m_alignment,
         " (the contiguous layout promises aligned offsets up to m)");
  for (auto [name, v] : {std::pair{"stride_a", p.stride_a}, std::pair{"stride_c", p.stride_c},
                         std::pair{"stride_d", p.stride_d}}) {
    if (v != 0)
      fail(Status::InvalidArgument, name, " = ", v, ": must be 0 for a contiguous grouped problem (A, C and D ",
           "are single matrices whose rows the groups share; only B has one matrix per group)");
  }
}

bool is_float_input(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16 || dtype_is_fp8(t); }

}  // namespace

void GemmProblem::resolve_and_validate() {
  for (auto [name, v] : {std::pair{"m", m}, std::pair{"n", n}, std::pair{"k", k}}) {
    if (v < 0) fail(Status::InvalidArgument, name, " = ", v, ": sizes must be >= 0");
  }
  if (batch_count < 1) fail(Status::InvalidArgument, "batch_count = ", batch_count, ": must be >= 1");
  // Kernels index batches and groups with int (as cuBLAS's batchCount), and planners and
  // backends multiply the count by tile and row counts: an unbounded one overflowed them
  // (fuzz_c_api_v11: the sm90 planner's tile count, the CPU backend's workspace size).
  if (batch_count > INT32_MAX)
    fail(Status::InvalidArgument, "batch_count = ", batch_count, ": must be < 2^31");

  // Leading dimensions: 0 means packed; anything else must cover the stored inner dimension.
  struct Ld { const char* name; int64_t* ld; int64_t rows, cols; };
  Ld lds[] = {{"lda", &lda, a_rows(), a_cols()}, {"ldb", &ldb, b_rows(), b_cols()},
              {"ldc", &ldc, m, n}, {"ldd", &ldd, m, n}};
  for (Ld& l : lds) {
    int64_t need = min_ld(l.rows, l.cols);
    if (*l.ld == 0) *l.ld = need;
    if (*l.ld < need) {
      fail(Status::InvalidArgument, l.name, " = ", *l.ld, ": must be >= ", need, " for a ", l.rows, " x ",
           l.cols, " ", order_name(order), "-major matrix");
    }
  }
  for (auto [name, v] : {std::pair{"stride_a", stride_a}, std::pair{"stride_b", stride_b},
                         std::pair{"stride_c", stride_c}, std::pair{"stride_d", stride_d}}) {
    if (v < 0) fail(Status::InvalidArgument, name, " = ", v, ": batch strides must be >= 0");
  }

  if (grouping.grouped()) validate_grouping(*this);

  // Type combination.
  for (auto [name, t] : {std::pair{"a_type", a_type}, std::pair{"b_type", b_type}, std::pair{"c_type", c_type},
                         std::pair{"d_type", d_type}, std::pair{"compute_type", compute_type}}) {
    if (int(t) < 0 || int(t) >= kNumDTypes) fail(Status::InvalidArgument, name, " = ", int(t), ": not a dgemm_dtype_t");
  }
  auto unsupported = [&](const char* why) {
    fail(Status::NotSupported, "type combination A=", dtype_name(a_type), " B=", dtype_name(b_type),
         " C=", dtype_name(c_type), " D=", dtype_name(d_type), " compute=", dtype_name(compute_type),
         " is not supported: ", why);
  };
  if (compute_type == DType::F32) {
    if (!is_float_input(a_type) || !is_float_input(b_type)) unsupported("f32 compute takes f32, f16, bf16 or fp8 inputs");
    if (a_type != b_type && !(dtype_is_fp8(a_type) && dtype_is_fp8(b_type)))
      unsupported("A and B must have the same type (except mixed e4m3/e5m2)");
    if (d_type == DType::I32) unsupported("i32 output needs i8 inputs with i32 compute");
    bool c_ok = c_type == DType::F32 || c_type == DType::F16 || c_type == DType::BF16 || c_type == d_type;
    if (!c_ok) unsupported("C must be f32, f16, bf16 or the type of D");
  } else if (compute_type == DType::I32) {
    if (a_type != DType::I8 || b_type != DType::I8) unsupported("i32 compute takes i8 A and B");
    if (dtype_is_fp8(d_type)) unsupported("i32 compute writes i32, i8, f32, f16 or bf16");
    bool c_ok = c_type == DType::I32 || c_type == DType::F32 || c_type == DType::F16 || c_type == DType::BF16 ||
                c_type == d_type;
    if (!c_ok) unsupported("C must be i32, f32, f16, bf16 or the type of D");
  } else {
    unsupported("compute_type must be f32 (float inputs) or i32 (i8 inputs)");
  }

  // Contiguous groups share D (and own disjoint rows of it).
  const bool d_per_batch = batch_count > 1 && !grouping.contiguous();
  if (d_per_batch && stride_d == 0 && !empty_output()) {
    fail(Status::InvalidArgument, "stride_d = 0 with batch_count = ", batch_count,
         ": batches would overwrite each other's D");
  }
  if (empty_output()) return;

  // Every extent must be addressable; D's batches must not overlap.
  int64_t one_d = checked_extent(*this, "d", m, n, ldd, 0, dtype_size(d_type));
  // Contiguous groups share D, so its extent does not bound batch_count x m x n, which a strided
  // batch's does and which tile counts (batches x row tiles x column tiles) rely on.
  int64_t capacity = 0;
  if (__builtin_mul_overflow(m, n, &capacity) || __builtin_mul_overflow(capacity, batch_count, &capacity))
    fail(Status::InvalidArgument, "batch_count = ", batch_count, " with m = ", m, " and n = ", n,
         ": batch_count x m x n exceeds a 64-bit index");
  checked_extent(*this, "d", m, n, ldd, stride_d, dtype_size(d_type));
  checked_extent(*this, "c", m, n, ldc, stride_c, dtype_size(c_type));
  if (k > 0) {
    checked_extent(*this, "a", a_rows(), a_cols(), lda, stride_a, dtype_size(a_type));
    checked_extent(*this, "b", b_rows(), b_cols(), ldb, stride_b, dtype_size(b_type));
  }
  if (d_per_batch && stride_d < one_d) {
    fail(Status::InvalidArgument, "stride_d = ", stride_d, ": smaller than one D matrix (", one_d,
         " elements), so batches would overlap");
  }
}

std::string GemmProblem::to_string() const {
  std::ostringstream os;
  os << "m=" << m << " n=" << n << " k=" << k << " " << dtype_name(a_type) << "*" << dtype_name(b_type) << "+"
     << dtype_name(c_type) << "->" << dtype_name(d_type) << " (" << dtype_name(compute_type) << ") "
     << op_name(op_a) << op_name(op_b) << " " << order_name(order) << " lda=" << lda << " ldb=" << ldb
     << " ldc=" << ldc << " ldd=" << ldd;
  if (batch_count > 1) {
    os << " batch=" << batch_count << " strides=" << stride_a << "," << stride_b << "," << stride_c << ","
       << stride_d;
  }
  os << grouping.to_string();
  if (a_scale.active()) os << " a_scale=" << a_scale.to_string();
  if (b_scale.active()) os << " b_scale=" << b_scale.to_string();
  return os.str();
}

void Epilogue::validate(const GemmProblem& p) const {
  if (int(bias_mode) < 0 || int(bias_mode) > 3)
    fail(Status::InvalidArgument, "bias_mode = ", int(bias_mode), ": not a dgemm_vector_mode_t");
  if (bias_mode == VectorMode::PerTensor)
    fail(Status::InvalidArgument, "bias_mode = PER_TENSOR (1): a bias is per row or per column");
  if (int(bias_type) < 0 || int(bias_type) >= kNumDTypes)
    fail(Status::InvalidArgument, "bias_type = ", int(bias_type), ": not a dgemm_dtype_t");
  if (bias_mode != VectorMode::None && bias_type != DType::F32 && bias_type != DType::F16 &&
      bias_type != DType::BF16)
    fail(Status::NotSupported, "bias_type = ", dtype_name(bias_type), ": bias must be f32, f16 or bf16");
  if (int(activation) < 0 || int(activation) > 4)
    fail(Status::InvalidArgument, "activation = ", int(activation), ": not a dgemm_activation_t");
  if (int(scale_mode) < 0 || int(scale_mode) > 3)
    fail(Status::InvalidArgument, "scale_mode = ", int(scale_mode), ": not a dgemm_vector_mode_t");
  if (zero_point && p.d_type != DType::I8)
    fail(Status::NotSupported, "flags has DGEMM_EPILOGUE_ZERO_POINT with d_type = ", dtype_name(p.d_type),
         ": a zero point applies to i8 outputs only");
  if (zero_point && scale_mode == VectorMode::None)
    fail(Status::InvalidArgument, "flags has DGEMM_EPILOGUE_ZERO_POINT with scale_mode = NONE: the zero point "
         "is given per scale entry, so a scale mode is required");
}

namespace {
// Every field but alpha and beta, exactly (no floats): shared by to_string and key, so that a
// field added here is part of every cache key too.
std::string epilogue_modes(const Epilogue& e) {
  std::ostringstream os;
  os << " bias=" << vector_mode_name(e.bias_mode);
  if (e.bias_mode != VectorMode::None) os << "(" << dtype_name(e.bias_type) << ")";
  os << " act=" << activation_name(e.activation) << " scale=" << vector_mode_name(e.scale_mode)
     << (e.saturate ? " satfinite" : "") << (e.zero_point ? " zero_point" : "");
  if (e.d_scale.active()) os << " d_scale=" << e.d_scale.to_string();
  if (e.amax_d) os << " amax_d";
  return os.str();
}
}  // namespace

std::string Epilogue::to_string() const {
  std::ostringstream os;
  os << "alpha=" << alpha << " beta=" << beta << epilogue_modes(*this);
  return os.str();
}

std::string Epilogue::key() const {
  auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
  };
  std::ostringstream os;
  os << std::hex << "alpha=0x" << bits(alpha) << " beta=0x" << bits(beta) << epilogue_modes(*this);
  return os.str();
}

}  // namespace dgemm

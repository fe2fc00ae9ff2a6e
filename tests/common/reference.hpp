// An INDEPENDENT naive reference for GEMM tests: one output element at a time, a plain loop over
// k in double, its own addressing and epilogue, written apart from src/backend/cpu so that it can
// catch that code's bugs. It shares only the element decoders/encoders of core/float_convert,
// which test_float_convert checks exhaustively on their own.
//
// It returns the exact-ish value before the final rounding (z) and a bound on how far a correct
// double-precision implementation may be from it (tol), so that a test can accept exactly the
// outputs that a correct rounding of some value in [z - tol, z + tol] produces.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/float_convert.hpp"
#include "core/problem.hpp"

namespace dgemm_test {

using dgemm::DType;
using dgemm::Epilogue;
using dgemm::ExecArgs;
using dgemm::GemmProblem;

// Offset of stored element (row, col) in a matrix with leading dimension ld.
inline int64_t ref_offset(const GemmProblem& p, int64_t row, int64_t col, int64_t ld) {
  return p.order == dgemm::Order::RowMajor ? row * ld + col : col * ld + row;
}

inline double ref_activation(dgemm::Activation act, double x) {
  switch (act) {
    case dgemm::Activation::None: return x;
    case dgemm::Activation::Relu: return std::isnan(x) ? x : std::fmax(x, 0.0);
    case dgemm::Activation::GeluTanh:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * std::pow(x, 3))));
    case dgemm::Activation::GeluErf: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case dgemm::Activation::Silu: return x * (1.0 / (1.0 + std::exp(-x)));
  }
  return x;
}

struct RefValue {
  double z;    // value before the final conversion (zero point not yet added)
  double tol;  // how far a correct implementation's z may be from this one
};

namespace detail {
// a + b, and whether the double result is exact (TwoSum error term zero).
inline double add_tracking(double a, double b, bool* exact) {
  double s = a + b;
  double bb = s - a;
  double err = (a - (s - bb)) + (b - bb);
  if (err != 0 || !std::isfinite(s)) *exact = false;
  return s;
}
inline double mul_tracking(double a, double b, bool* exact) {
  double p = a * b;
  if (!std::isfinite(p) || std::fma(a, b, -p) != 0) *exact = false;
  return p;
}
}  // namespace detail

// alpha and beta are the resolved run-time scalars.
inline RefValue reference_element(const GemmProblem& p, const Epilogue& e, const ExecArgs& args, double alpha,
                                  double beta, int64_t batch, int64_t i, int64_t j) {
  double sum = 0, mag = 0;
  // Integer problems sum exactly in double (|sum| < 2^53); while every later step is exact too,
  // any correct implementation must produce this very value, and tol stays 0 (so exact ties,
  // e.g. x.5 before an i8 rounding, are checked exactly).
  bool exact = p.is_integer();
  if (p.k > 0) {
    for (int64_t kk = 0; kk < p.k; ++kk) {
      int64_t a_off = p.op_a == dgemm::Op::N ? ref_offset(p, i, kk, p.lda) : ref_offset(p, kk, i, p.lda);
      int64_t b_off = p.op_b == dgemm::Op::N ? ref_offset(p, kk, j, p.ldb) : ref_offset(p, j, kk, p.ldb);
      double a = dgemm::load_as_double(p.a_type, args.a, batch * p.stride_a + a_off);
      double b = dgemm::load_as_double(p.b_type, args.b, batch * p.stride_b + b_off);
      sum += a * b;
      mag += std::fabs(a * b);
    }
    sum = detail::mul_tracking(alpha, sum, &exact);
    mag *= std::fabs(alpha);
  }
  double x = sum;
  if (e.beta != 0.0f) {
    double c = detail::mul_tracking(
        beta, dgemm::load_as_double(p.c_type, args.c, batch * p.stride_c + ref_offset(p, i, j, p.ldc)), &exact);
    x = detail::add_tracking(x, c, &exact);
    mag += std::fabs(c);
  }
  if (e.bias_mode == dgemm::VectorMode::PerRow || e.bias_mode == dgemm::VectorMode::PerColumn) {
    double bias = dgemm::load_as_double(e.bias_type, args.bias, e.bias_mode == dgemm::VectorMode::PerRow ? i : j);
    x = detail::add_tracking(x, bias, &exact);
    mag += std::fabs(bias);
  }
  // Two double accumulations of k + 3 terms differ by at most about 2 (k + 3) eps of the sum of
  // magnitudes.
  double tol = exact ? 0.0 : 2.0 * double(p.k + 4) * 1.2e-16 * mag;
  double y = ref_activation(e.activation, x);
  if (e.activation != dgemm::Activation::None && e.activation != dgemm::Activation::Relu) {
    // Every activation here has slope at most 1.2; formulas evaluated in a different order
    // differ by a few ulps of their terms.
    tol = tol * 1.2 + 8e-16 * (std::fabs(x) + std::fabs(y)) + 1e-300;
  }
  if (e.scale_mode != dgemm::VectorMode::None) {
    int64_t s = e.scale_mode == dgemm::VectorMode::PerTensor ? 0 : e.scale_mode == dgemm::VectorMode::PerRow ? i : j;
    double scale = double(args.scale[s]);
    bool scale_exact = true;
    y = detail::mul_tracking(y, scale, &scale_exact);
    tol = tol * std::fabs(scale) + (scale_exact ? 0.0 : 2.3e-16 * std::fabs(y));
  }
  return {y, tol};
}

// The output a correct implementation stores for the pre-rounding value z, as a double.
inline double reference_quantize(const GemmProblem& p, const Epilogue& e, const ExecArgs& args, int64_t i, int64_t j,
                                 double z) {
  if (e.zero_point) {
    int64_t s = e.scale_mode == dgemm::VectorMode::PerTensor ? 0 : e.scale_mode == dgemm::VectorMode::PerRow ? i : j;
    if (std::isnan(z)) return 0.0;
    double r = std::nearbyint(z) + double(args.zero_point[s]);
    return r < -128 ? -128 : r > 127 ? 127 : r;
  }
  return dgemm::round_to_dtype(p.d_type, z, e.saturate);
}

}  // namespace dgemm_test

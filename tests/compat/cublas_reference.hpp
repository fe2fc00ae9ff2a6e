// What the cuBLAS-facing compat tests share: host encodings of f16/bf16, a column-major (or
// row-major) reference GEMM in double with cuBLASLt's epilogues, random test values, the relative
// Frobenius error and the per-type thresholds. Written against the cuBLAS API's conventions only
// (cudaDataType numbers), like the programs that use it, and apart from src/ so that it can
// catch the library's mistakes.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace compat_test {

// cudaDataType values (library_types.h), repeated here so that this header needs no CUDA header.
enum Type : int { kF32 = 0, kF16 = 2, kBF16 = 14 };

inline int type_bytes(int t) { return t == kF32 ? 4 : 2; }
inline const char* type_name(int t) { return t == kF32 ? "f32" : t == kF16 ? "f16" : "bf16"; }

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// float -> binary16, round to nearest even (overflow to inf, NaN kept).
inline uint16_t to_f16(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  const double a = std::fabs(double(f));
  if (a >= 65520.0) return uint16_t(sign | 0x7c00u);
  // Scale so that the half's last mantissa bit is 1, round to nearest even in double.
  int e;
  std::frexp(a, &e);                       // a = m * 2^e, m in [0.5, 1)
  const int exp_half = e - 1 < -14 ? -14 : e - 1;  // subnormals share exponent -14
  const double q = std::nearbyint(std::ldexp(a, 10 - exp_half));  // FE_TONEAREST: ties to even
  if (q == 0) return sign;
  const uint32_t mant = uint32_t(q);
  if (exp_half == -14 && mant < 1024) return uint16_t(sign | mant);  // subnormal
  // mant in [1024, 2048]; 2048 carries into the exponent.
  int biased = exp_half + 15;
  uint32_t m = mant;
  if (m == 2048) {
    m = 1024;
    ++biased;
  }
  if (biased >= 31) return uint16_t(sign | 0x7c00u);
  return uint16_t(sign | (uint32_t(biased) << 10) | (m - 1024));
}

inline float from_f16(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const int exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));
  const double v = exp == 0 ? std::ldexp(double(mant), -24) : std::ldexp(double(mant | 0x400u), exp - 25);
  return float(sign ? -v : v);
}

inline uint16_t to_bf16(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline float from_bf16(uint16_t b) { return bits_float(uint32_t(b) << 16); }

// A host matrix of any of the three types, stored as bytes, with float access.
struct HostMatrix {
  int type = kF32;
  std::vector<unsigned char> bytes;
  HostMatrix() = default;
  HostMatrix(int t, std::size_t elements) : type(t), bytes(elements * std::size_t(type_bytes(t))) {}
  std::size_t size() const { return bytes.size() / std::size_t(type_bytes(type)); }
  float get(std::size_t i) const {
    if (type == kF32) {
      float f;
      std::memcpy(&f, &bytes[i * 4], 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, &bytes[i * 2], 2);
    return type == kF16 ? from_f16(h) : from_bf16(h);
  }
  void set(std::size_t i, float v) {
    if (type == kF32) {
      std::memcpy(&bytes[i * 4], &v, 4);
      return;
    }
    const uint16_t h = type == kF16 ? to_f16(v) : to_bf16(v);
    std::memcpy(&bytes[i * 2], &h, 2);
  }
  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }
};

// Random values that every type holds exactly (multiples of 1/8 in [-2, 2]): the reference then
// sees exactly what the GEMM sees. Fresh for every case.
inline void fill_random(HostMatrix& m, std::mt19937& rng) {
  std::uniform_int_distribution<int> dist(-16, 16);
  for (std::size_t i = 0; i < m.size(); ++i) m.set(i, float(dist(rng)) / 8.0f);
}
inline void fill_value(HostMatrix& m, float v) {
  for (std::size_t i = 0; i < m.size(); ++i) m.set(i, v);
}

enum Act { kNone = 0, kRelu = 1, kGeluTanh = 2, kGeluErf = 3 };
inline double activation(int act, double x) {
  if (act == kRelu) return x > 0 ? x : 0;
  if (act == kGeluTanh) return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  if (act == kGeluErf) return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  return x;
}

// One GEMM as cuBLAS(Lt) defines it, for batch b:
//   D = act(alpha * op(A) op(B) + beta * C + bias[row])
// col_major: element (i, j) at i + j * ld, else at i * ld + j. beta == 0 never reads C.
struct RefProblem {
  int64_t m, n, k;
  bool trans_a, trans_b, col_major = true;
  int64_t lda, ldb, ldc, ldd;
  int64_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;
  double alpha = 1, beta = 0;
  int act = kNone;
  const HostMatrix* bias = nullptr;  // length m (cuBLASLt's per-row bias)
};

inline int64_t at(const RefProblem& p, int64_t i, int64_t j, int64_t ld) { return p.col_major ? i + j * ld : i * ld + j; }

// Returns the reference D (double) for every batch, packed as [b][j][i].
inline std::vector<double> reference(const RefProblem& p, const HostMatrix& A, const HostMatrix& B, const HostMatrix& C) {
  std::vector<double> out(std::size_t(p.batch * p.m * p.n));
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t i = 0; i < p.m; ++i) {
        double acc = 0;
        for (int64_t l = 0; l < p.k; ++l) {
          const double a = A.get(std::size_t(b * p.stride_a + (p.trans_a ? at(p, l, i, p.lda) : at(p, i, l, p.lda))));
          const double bb = B.get(std::size_t(b * p.stride_b + (p.trans_b ? at(p, j, l, p.ldb) : at(p, l, j, p.ldb))));
          acc += a * bb;
        }
        double x = p.alpha * acc;
        if (p.beta != 0) x += p.beta * double(C.get(std::size_t(b * p.stride_c + at(p, i, j, p.ldc))));
        if (p.bias) x += p.bias->get(std::size_t(i));
        out[std::size_t((b * p.n + j) * p.m + i)] = activation(p.act, x);
      }
  return out;
}

// ||D - ref|| / ||ref|| over every batch; NaN if D holds a NaN or an infinity.
inline double rel_error(const RefProblem& p, const HostMatrix& D, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t i = 0; i < p.m; ++i) {
        const double d = D.get(std::size_t(b * p.stride_d + at(p, i, j, p.ldd)));
        if (!std::isfinite(d)) return NAN;
        const double r = ref[std::size_t((b * p.n + j) * p.m + i)];
        num += (d - r) * (d - r);
        den += r * r;
      }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// The output type's rounding (and a little accumulation-order slack) bounds a correct result.
inline double threshold(int out_type) { return out_type == kF32 ? 2e-5 : out_type == kF16 ? 3e-3 : 1.5e-2; }

}  // namespace compat_test

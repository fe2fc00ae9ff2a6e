// Conversions between double and every element type of the library: decoding f16 / bf16 / fp8
// bit patterns, correctly rounded (round to nearest even) encoding of a double into them, and
// saturating integer stores. Used by the CPU reference backend, the tests and the tools, so that
// there is exactly one definition of "what value does this element hold" in the project.
//
// Every small float format here is described by its exponent and mantissa widths (bias
// 2^(e-1) - 1) and whether it has infinities: f16 (5, 10, inf), bf16 (8, 7, inf),
// e4m3 (4, 3, no inf: the all-ones pattern S.1111.111 is NaN and S.1111.110 = 448 is the largest
// finite value), e5m2 (5, 2, inf). One generic encoder and one generic decoder serve all four.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/dtype.hpp"

namespace dgemm {

struct SmallFloatFormat {
  int exp_bits;
  int man_bits;
  bool has_inf;  // false: OCP e4m3 style, the top exponent holds numbers and only all-ones is NaN
};

inline constexpr SmallFloatFormat kF16Format{5, 10, true};
inline constexpr SmallFloatFormat kBF16Format{8, 7, true};
inline constexpr SmallFloatFormat kE4M3Format{4, 3, false};
inline constexpr SmallFloatFormat kE5M2Format{5, 2, true};

// Largest finite magnitudes, for tests and saturation checks.
inline constexpr double kF16Max = 65504.0;
inline constexpr double kBF16Max = 3.3895313892515355e38;
inline constexpr double kE4M3Max = 448.0;
inline constexpr double kE5M2Max = 57344.0;

namespace detail {

inline double bits_to_double(uint64_t bits) {
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}
inline uint64_t double_to_bits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}
// 2^e for -1022 <= e <= 1023, exactly.
inline double pow2(int e) { return bits_to_double(uint64_t(e + 1023) << 52); }

}  // namespace detail

// Value of a bit pattern of format f (the low 1 + exp_bits + man_bits bits of `bits`). Exact.
inline double decode_small_float(uint32_t bits, SmallFloatFormat f) {
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const uint32_t exp_all = (1u << f.exp_bits) - 1;
  const uint32_t man_all = (1u << f.man_bits) - 1;
  const uint64_t sign = uint64_t((bits >> (f.exp_bits + f.man_bits)) & 1u) << 63;
  const uint32_t exp = (bits >> f.man_bits) & exp_all;
  const uint32_t man = bits & man_all;
  if (exp == exp_all && (f.has_inf || man == man_all)) {
    if (f.has_inf && man == 0) return detail::bits_to_double(sign | 0x7ff0000000000000ull);
    return detail::bits_to_double(sign | 0x7ff8000000000000ull);
  }
  if (exp == 0) {
    // Subnormal: man * 2^(1 - bias - man_bits); the product of a small integer and a power of two
    // is exact in double.
    double v = double(man) * detail::pow2(1 - bias - f.man_bits);
    return sign ? -v : v;
  }
  // Normal: move the fields into a double's layout (every target exponent fits double's range).
  return detail::bits_to_double(sign | (uint64_t(int(exp) - bias + 1023) << 52) |
                                (uint64_t(man) << (52 - f.man_bits)));
}

// The bit pattern of format f nearest to v, ties to even. Values that round beyond the largest
// finite value overflow: to the largest finite value when `saturate`, else to infinity (formats
// with inf) or NaN (e4m3). Infinite inputs follow the same rule (saturate clamps them, like PTX's
// .satfinite). NaN gives the positive quiet NaN pattern. Subnormals are rounded like any other
// value (the quantum below the smallest normal is 2^(1 - bias - man_bits)).
uint32_t encode_small_float(double v, SmallFloatFormat f, bool saturate);

// ---- Per-type helpers -------------------------------------------------------------------------

inline double f16_to_double(uint16_t bits) { return decode_small_float(bits, kF16Format); }
inline double bf16_to_double(uint16_t bits) {
  // bf16 is the top half of an f32: widening is exact and cheaper than the generic decoder.
  uint32_t w = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &w, sizeof f);
  return double(f);
}
inline double e4m3_to_double(uint8_t bits) { return decode_small_float(bits, kE4M3Format); }
inline double e5m2_to_double(uint8_t bits) { return decode_small_float(bits, kE5M2Format); }

inline uint16_t double_to_f16(double v) { return uint16_t(encode_small_float(v, kF16Format, false)); }
inline uint16_t double_to_bf16(double v) { return uint16_t(encode_small_float(v, kBF16Format, false)); }
inline uint8_t double_to_e4m3(double v, bool saturate) { return uint8_t(encode_small_float(v, kE4M3Format, saturate)); }
inline uint8_t double_to_e5m2(double v, bool saturate) { return uint8_t(encode_small_float(v, kE5M2Format, saturate)); }

// Integers: round to nearest even, then clamp to the type's range; NaN gives 0.
int8_t double_to_i8(double v);
int32_t double_to_i32(double v);

// Element `index` of an array of type t, as a double (exact for every type).
template <DType T>
inline double load_elem(const void* base, int64_t index) {
  if constexpr (T == DType::F32) {
    float v;
    std::memcpy(&v, static_cast<const char*>(base) + index * 4, 4);
    return double(v);
  } else if constexpr (T == DType::F16 || T == DType::BF16) {
    uint16_t v;
    std::memcpy(&v, static_cast<const char*>(base) + index * 2, 2);
    return T == DType::F16 ? f16_to_double(v) : bf16_to_double(v);
  } else if constexpr (T == DType::F8E4M3) {
    return e4m3_to_double(static_cast<const uint8_t*>(base)[index]);
  } else if constexpr (T == DType::F8E5M2) {
    return e5m2_to_double(static_cast<const uint8_t*>(base)[index]);
  } else if constexpr (T == DType::I8) {
    return double(static_cast<const int8_t*>(base)[index]);
  } else {
    int32_t v;
    std::memcpy(&v, static_cast<const char*>(base) + index * 4, 4);
    return double(v);
  }
}

// Calls f(std::integral_constant<DType, T>{}) for the runtime type t, so that loops can be
// instantiated per element type.
template <class F>
decltype(auto) dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::F32: return f(std::integral_constant<DType, DType::F32>{});
    case DType::F16: return f(std::integral_constant<DType, DType::F16>{});
    case DType::BF16: return f(std::integral_constant<DType, DType::BF16>{});
    case DType::F8E4M3: return f(std::integral_constant<DType, DType::F8E4M3>{});
    case DType::F8E5M2: return f(std::integral_constant<DType, DType::F8E5M2>{});
    case DType::I8: return f(std::integral_constant<DType, DType::I8>{});
    case DType::I32: break;
  }
  return f(std::integral_constant<DType, DType::I32>{});
}

double load_as_double(DType t, const void* base, int64_t index);

// Stores v into element `index` of an array of type t with one correct rounding: f32 by the
// hardware conversion (nearest even), f16/bf16/fp8 by encode_small_float (`saturate` applies to
// fp8 only, as in the epilogue), i8/i32 by double_to_i8/i32.
void store_from_double(DType t, void* base, int64_t index, double v, bool saturate);

// The value store_from_double would store, as a double (what a reader of D will see).
double round_to_dtype(DType t, double v, bool saturate);

}  // namespace dgemm

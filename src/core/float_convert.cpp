// Correctly rounded conversions from double to the library's element types (see float_convert.hpp).
#include "core/float_convert.hpp"

#include <cmath>

namespace dgemm {

uint32_t encode_small_float(double v, SmallFloatFormat f, bool saturate) {
  const int M = f.man_bits;
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const int emin = 1 - bias;  // exponent of the smallest normal
  const uint32_t exp_all = (1u << f.exp_bits) - 1;
  const uint32_t man_all = (1u << M) - 1;
  const uint32_t nan_code = f.has_inf ? (exp_all << M) | (1u << (M - 1)) : (exp_all << M) | man_all;
  const uint32_t max_code = f.has_inf ? ((exp_all - 1) << M) | man_all : (exp_all << M) | (man_all - 1);
  // Largest exponent field a finite value may use (e4m3 keeps the top exponent for numbers).
  const uint32_t max_exp_field = f.has_inf ? exp_all - 1 : exp_all;

  const uint64_t d = detail::double_to_bits(v);
  const uint32_t sign = uint32_t(d >> 63) << (f.exp_bits + M);
  const int dexp = int((d >> 52) & 0x7ff);
  const uint64_t frac = d & ((uint64_t(1) << 52) - 1);
  const uint32_t overflow_code = sign | (saturate ? max_code : f.has_inf ? exp_all << M : nan_code);

  if (dexp == 0x7ff) return frac != 0 ? nan_code : overflow_code;
  // Zero, and double subnormals (< 2^-1022), lie far below half of every target's smallest
  // subnormal (>= 2^-134 for bf16), so they round to a signed zero.
  if (dexp == 0) return sign;

  int e = dexp - 1023;
  const uint64_t mant = frac | (uint64_t(1) << 52);  // v = mant * 2^(e - 52)
  // The target's quantum (value of its last mantissa bit) at this magnitude is 2^(qexp); below the
  // smallest normal it is fixed, which is what makes subnormals come out right.
  const int qexp = (e < emin ? emin : e) - M;
  const int shift = qexp - (e - 52);  // low bits of mant below the quantum; >= 52 - M > 0
  if (shift > 53) return sign;         // v < half a quantum: rounds to zero (a tie needs shift <= 53)
  uint64_t q = mant >> shift;
  const uint64_t rem = mant & ((uint64_t(1) << shift) - 1);
  const uint64_t half = uint64_t(1) << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;

  if (e < emin) {
    // Subnormal range: q <= 2^M, and q == 2^M is exactly the pattern of the smallest normal.
    return sign | uint32_t(q);
  }
  if (q == (uint64_t(1) << (M + 1))) {  // rounding carried into the next binade
    q >>= 1;
    ++e;
  }
  const int exp_field = e + bias;
  if (exp_field > int(max_exp_field)) return overflow_code;
  const uint32_t code = (uint32_t(exp_field) << M) | (uint32_t(q) & man_all);
  if (!f.has_inf && code == ((exp_all << M) | man_all)) return overflow_code;  // e4m3's NaN slot
  return sign | code;
}

int8_t double_to_i8(double v) {
  if (std::isnan(v)) return 0;
  double r = std::nearbyint(v);  // the default rounding mode: nearest even
  if (r < -128.0) return -128;
  if (r > 127.0) return 127;
  return int8_t(r);
}

int32_t double_to_i32(double v) {
  if (std::isnan(v)) return 0;
  double r = std::nearbyint(v);
  if (r < -2147483648.0) return INT32_MIN;
  if (r > 2147483647.0) return INT32_MAX;
  return int32_t(r);
}

double load_as_double(DType t, const void* base, int64_t index) {
  return dispatch_dtype(t, [&](auto tag) { return load_elem<decltype(tag)::value>(base, index); });
}

void store_from_double(DType t, void* base, int64_t index, double v, bool saturate) {
  char* p = static_cast<char*>(base);
  switch (t) {
    case DType::F32: {
      float f = float(v);
      std::memcpy(p + index * 4, &f, 4);
      return;
    }
    case DType::F16: {
      uint16_t h = double_to_f16(v);
      std::memcpy(p + index * 2, &h, 2);
      return;
    }
    case DType::BF16: {
      uint16_t h = double_to_bf16(v);
      std::memcpy(p + index * 2, &h, 2);
      return;
    }
    case DType::F8E4M3: reinterpret_cast<uint8_t*>(p)[index] = double_to_e4m3(v, saturate); return;
    case DType::F8E5M2: reinterpret_cast<uint8_t*>(p)[index] = double_to_e5m2(v, saturate); return;
    case DType::I8: reinterpret_cast<int8_t*>(p)[index] = double_to_i8(v); return;
    case DType::I32: {
      int32_t i = double_to_i32(v);
      std::memcpy(p + index * 4, &i, 4);
      return;
    }
  }
}

double round_to_dtype(DType t, double v, bool saturate) {
  alignas(8) unsigned char buf[8];
  store_from_double(t, buf, 0, v, saturate);
  return load_as_double(t, buf, 0);
}

}  // namespace dgemm

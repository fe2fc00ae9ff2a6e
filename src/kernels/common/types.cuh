// Device-side element types and their conversions for JIT kernels. Written with bit operations and
// inline PTX only, so that NVRTC needs no toolkit header (<cuda_fp16.h> etc.) on its include path.
// Every conversion to a narrower type rounds to nearest even, as the CPU oracle does.
#pragma once

#include "common/gemm_params.cuh"

namespace dg {

// Storage types: plain bits, so they can live in shared memory and kernel parameters unchanged.
struct f16 { unsigned short bits; };
struct bf16 { unsigned short bits; };
struct e4m3 { unsigned char bits; };
struct e5m2 { unsigned char bits; };

template <class T> struct IsBf16 { static constexpr bool value = false; };
template <> struct IsBf16<bf16> { static constexpr bool value = true; };

__device__ __forceinline__ float f32_from_bits(unsigned u) { return __uint_as_float(u); }
__device__ __forceinline__ unsigned bits_from_f32(float f) { return __float_as_uint(f); }

// ---- to float -----------------------------------------------------------------------------
__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(int x) { return float(x); }
__device__ __forceinline__ float to_float(signed char x) { return float(x); }
__device__ __forceinline__ float to_float(f16 x) {
  float f;
  asm("{ .reg .b16 h; mov.b16 h, %1; cvt.f32.f16 %0, h; }" : "=f"(f) : "h"(x.bits));
  return f;
}
__device__ __forceinline__ float to_float(bf16 x) { return f32_from_bits(unsigned(x.bits) << 16); }
// FP8 decoding by bit manipulation (exact: every fp8 value is a float).
__device__ __forceinline__ float to_float(e4m3 x) {
  unsigned s = (x.bits >> 7) & 1u, e = (x.bits >> 3) & 0xfu, m = x.bits & 7u;
  float v;
  if (e == 0xfu && m == 7u) v = __int_as_float(0x7fc00000);      // NaN (E4M3 has no inf)
  else if (e == 0) v = float(m) * 0.001953125f;                    // subnormal: m * 2^-9
  else v = f32_from_bits(((e + 120u) << 23) | (m << 20));          // bias 7 -> 127
  return s ? -v : v;
}
__device__ __forceinline__ float to_float(e5m2 x) {
  // E5M2 is the upper byte of an IEEE half.
  f16 h;
  h.bits = (unsigned short)(unsigned(x.bits) << 8);
  return to_float(h);
}

// ---- from float (round to nearest even) ------------------------------------------------------
template <class T> struct Convert;
template <> struct Convert<float> {
  __device__ __forceinline__ static float from(float x, bool) { return x; }
};
template <> struct Convert<f16> {
  __device__ __forceinline__ static f16 from(float x, bool) {
    f16 r;
    asm("{ .reg .b16 h; cvt.rn.f16.f32 h, %1; mov.b16 %0, h; }" : "=h"(r.bits) : "f"(x));
    return r;
  }
};
template <> struct Convert<bf16> {
  __device__ __forceinline__ static bf16 from(float x, bool) {
    bf16 r;
    asm("{ .reg .b16 h; cvt.rn.bf16.f32 h, %1; mov.b16 %0, h; }" : "=h"(r.bits) : "f"(x));
    return r;
  }
};

// FP8 encoding in software (sm_80 has no fp8 cvt): round to nearest even on the magnitude's bits.
// kMant mantissa bits, kBias exponent bias, kMaxBits the largest finite magnitude's bit pattern,
// kOverflowBits what an overflow becomes when not saturating (NaN for E4M3, inf for E5M2).
template <int kMant, int kBias, unsigned kMaxBits, unsigned kOverflowBits, unsigned kNanBits>
__device__ __forceinline__ unsigned char encode_fp8(float x, bool saturate) {
  unsigned u = bits_from_f32(x);
  unsigned sign = (u >> 24) & 0x80u;
  unsigned a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (unsigned char)(sign | kNanBits);
  float ax = f32_from_bits(a);
  // Smallest normal exponent of the target: 1 - kBias. Below it the spacing is fixed.
  const int kMinExp = 1 - kBias;
  int e = int(a >> 23) - 127;
  unsigned mag;
  if (e < kMinExp) {
    // Subnormal target: value / 2^(kMinExp - kMant) rounded to an integer (RNE).
    float q = ax * f32_from_bits(unsigned(127 - (kMinExp - kMant)) << 23);
    mag = unsigned(__float2uint_rn(q));  // may round up into the first normal: still right bits
  } else {
    // Round the float's 23-bit mantissa to kMant bits, RNE; a carry bumps the exponent.
    unsigned shift = 23 - kMant;
    unsigned rounded = a + ((1u << (shift - 1)) - 1u) + ((a >> shift) & 1u);
    rounded >>= shift;  // exponent and mantissa, float bias
    int exp_field = int(rounded >> kMant) - 127 + kBias;
    mag = (unsigned(exp_field) << kMant) | (rounded & ((1u << kMant) - 1u));
    if (exp_field > int(kMaxBits >> kMant) || mag > kMaxBits) mag = 0xffffffffu;  // overflow
  }
  if (mag > kMaxBits) mag = saturate ? kMaxBits : kOverflowBits;
  return (unsigned char)(sign | mag);
}
template <> struct Convert<e4m3> {
  __device__ __forceinline__ static e4m3 from(float x, bool saturate) {
    e4m3 r;
    r.bits = encode_fp8<3, 7, 0x7eu, 0x7fu, 0x7fu>(x, saturate);
    return r;
  }
};
template <> struct Convert<e5m2> {
  __device__ __forceinline__ static e5m2 from(float x, bool saturate) {
    e5m2 r;
    r.bits = encode_fp8<2, 15, 0x7bu, 0x7cu, 0x7eu>(x, saturate);
    return r;
  }
};
template <> struct Convert<signed char> {
  // Round to nearest even, then clamp; the zero point is added by the epilogue before this.
  __device__ __forceinline__ static signed char from(float x, bool) {
    float r = rintf(x);
    r = fminf(fmaxf(r, -128.0f), 127.0f);
    return (signed char)int(r);
  }
};
template <> struct Convert<int> {
  __device__ __forceinline__ static int from(float x, bool) {
    float r = rintf(x);
    if (!(r == r)) return 0;
    r = fminf(fmaxf(r, -2147483648.0f), 2147483520.0f);
    return int(r);
  }
};

template <class T>
__device__ __forceinline__ T from_float(float x, bool saturate = true) { return Convert<T>::from(x, saturate); }

// Type selection without <type_traits> (NVRTC compiles these sources without toolkit headers).
template <bool kFirst, class A, class B>
struct Select { using type = A; };
template <class A, class B>
struct Select<false, A, B> { using type = B; };
template <class A, class B> struct IsSame { static constexpr bool value = false; };
template <class A> struct IsSame<A, A> { static constexpr bool value = true; };

}  // namespace dg

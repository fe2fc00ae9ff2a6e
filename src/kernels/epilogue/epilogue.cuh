// The fused epilogue every kernel family shares:
//   D = convert( act( alpha*acc + beta*C + bias ) * scale (+ zero point) )
// specialised at compile time by a configuration struct the generated prelude defines:
//
//   struct Epi {
//     using CType = ...; using DType = ...; using BiasType = ...;   // dg::f16, dg::bf16, float, ...
//     static constexpr bool kHasC = ...;        // beta != 0 at plan time: read C
//     static constexpr int  kBiasMode = ...;    // 0 none, 2 per row, 3 per column (VectorMode numbers)
//     static constexpr int  kActivation = ...;  // 0 none, 1 relu, 2 gelu_tanh, 3 gelu_erf, 4 silu
//     static constexpr int  kScaleMode = ...;   // 0 none, 1 per tensor, 2 per row, 3 per column
//     static constexpr bool kZeroPoint = ...;   // i8 output adds zero_point[scale index]
//     static constexpr bool kSaturate = ...;    // fp8 outputs clamp to the largest finite value
//     static constexpr bool kTransposedOut = ...;  // the kernel's X(row, col) is D[col * ldd + row]
//     static constexpr int  kRowInScale = ...;  // input scale outside the K sum, per row of X:
//     static constexpr int  kColInScale = ...;  //   0 none, 1 one per tensor, 2 one per row / column
//     static constexpr int  kOutBlockScale = ...;  // FP8 D quantized per 1 x 128 block of a row with
//                                                  // its own scales: 0 none, 1 f32, 2 UE8M0
//   };
// (The input-scale and output-block members are optional: configurations without them have none.)
//
// Rows and columns are those of the kernel's own output X (core/kernel_view.hpp): the launcher
// swaps per-row and per-column modes when X's rows are D's columns, and sets kTransposedOut when X
// is stored transposed (column-major problems under swap-AB, or row-major ones run as D^T).
//
// Math: f32 and integer outputs use the accurate IEEE functions (erff, tanhf, expf: the JIT is not
// run with --use_fast_math), so they match the f64 oracle to ~1e-6. 16-bit and FP8 outputs use the
// hardware tanh.approx.f32 for GELU (tanh form) and a fast exp and divide for SiLU: tanh.approx's
// error is ~2^-11 of |tanh|, so GELU's absolute error is <= 2^-12 |x|, below a 16-bit output's own
// rounding wherever |GELU(x)| is comparable to |x|; only in the negative tail, where GELU(x) is
// tiny, is it larger than that element's rounding. The fast forms keep the epilogue from showing
// in the GEMM's time (measured: bias + GELU 1.17x -> 1.03-1.08x the plain time at 4096^3, sm90).
#pragma once

#include "common/gemm_params.cuh"
#include "common/types.cuh"

namespace dg {

enum : int { kActNone = 0, kActRelu = 1, kActGeluTanh = 2, kActGeluErf = 3, kActSilu = 4 };
enum : int { kVecNone = 0, kVecPerTensor = 1, kVecPerRow = 2, kVecPerColumn = 3 };

__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

template <int kAct, bool kFast = false>
__device__ __forceinline__ float activation(float x) {
  if (kAct == kActRelu) return fmaxf(x, 0.0f);
  if (kAct == kActGeluTanh) {
    const float kSqrt2OverPi = 0.7978845608028654f;
    if (kFast) {
      const float half_x = 0.5f * x;
      const float t = tanh_approx(kSqrt2OverPi * x * fmaf(0.044715f, x * x, 1.0f));
      return fmaf(half_x, t, half_x);
    }
    return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
  }
  if (kAct == kActGeluErf) return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
  if (kAct == kActSilu) return kFast ? __fdividef(x, 1.0f + __expf(-x)) : x / (1.0f + expf(-x));
  return x;
}

// The optional input-scale members of an epilogue configuration (0 when the struct has none).
template <class Epi, class = void>
struct InScales {
  static constexpr int kRow = 0, kCol = 0;
};
template <class Epi>
struct InScales<Epi, decltype(void(Epi::kRowInScale), void(Epi::kColInScale))> {
  static constexpr int kRow = Epi::kRowInScale, kCol = Epi::kColInScale;
};

// The optional kOutBlockScale member (0 when the struct has none).
template <class Epi, class = void>
struct OutBlockScale {
  static constexpr int kMode = 0;
};
template <class Epi>
struct OutBlockScale<Epi, decltype(void(Epi::kOutBlockScale))> {
  static constexpr int kMode = Epi::kOutBlockScale;
};

// The optional kAmaxD member (false when the struct has none): the epilogue keeps max |y|.
template <class Epi, class = void>
struct AmaxD {
  static constexpr bool kOn = false;
};
template <class Epi>
struct AmaxD<Epi, decltype(void(Epi::kAmaxD))> {
  static constexpr bool kOn = Epi::kAmaxD;
};

// Two floats to FP8 (round to nearest even, saturating to the largest finite value; NaN stays NaN)
// in one instruction: lo in the low byte.
template <class T>
__device__ __forceinline__ unsigned short cvt_fp8x2(float lo, float hi) {
  unsigned short r;
  if constexpr (IsSame<T, e4m3>::value)
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}

// max(a, b) that returns NaN when either is NaN (the amax of a block with a NaN is NaN).
__device__ __forceinline__ float max_nan(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

template <class T> struct IsHalfFloat { static constexpr bool value = false; };
template <> struct IsHalfFloat<f16> { static constexpr bool value = true; };
template <> struct IsHalfFloat<bf16> { static constexpr bool value = true; };
template <class T> struct IsFp8 { static constexpr bool value = false; };
template <> struct IsFp8<e4m3> { static constexpr bool value = true; };
template <> struct IsFp8<e5m2> { static constexpr bool value = true; };

// Per-CTA view of the epilogue operands for one batch, and the per-element math.
template <class Epi>
struct EpilogueOp {
  using CType = typename Epi::CType;
  using DType = typename Epi::DType;
  using BiasType = typename Epi::BiasType;
  static constexpr bool kTrans = Epi::kTransposedOut;
  static constexpr bool kFastAct = IsHalfFloat<DType>::value || IsFp8<DType>::value;
  static constexpr int kRowInScale = InScales<Epi>::kRow, kColInScale = InScales<Epi>::kCol;
  static constexpr int kOutBlock = OutBlockScale<Epi>::kMode;
  // amax of D (DGEMM_SCALING_AMAX_D): value() keeps max |y| of the elements it computes, after the
  // activation and before the output scale (deepgemm.h), and flush_amax() adds it to the launch's.
  static constexpr bool kAmax = AmaxD<Epi>::kOn;
  // An integer product stored as i32 with nothing applied: kernels with integer accumulators
  // store them exactly (store_exact) instead of through float.
  static constexpr bool kExactInt = IsSame<DType, int>::value && !Epi::kHasC && Epi::kBiasMode == kVecNone &&
                                    Epi::kActivation == kActNone && Epi::kScaleMode == kVecNone &&
                                    kRowInScale == 0 && kColInScale == 0 && !kAmax;

  float alpha, beta;
  const CType* c;
  DType* d;
  long long ldc, ldd;
  const BiasType* bias;
  const float* scale;
  const int* zero_point;
  const float* row_scale;
  const float* col_scale;
  unsigned* amax_d;
  mutable float amax_y;  // kAmax: max |y| over this thread's elements so far (NaN once one is)

  __device__ __forceinline__ void init(const DgemmParams& p, long long batch) {
    // Device scalars are read when the kernel runs (DGEMM_SCALARS_DEVICE), else the host values.
    alpha = p.alpha_ptr ? *p.alpha_ptr : p.alpha;
    beta = 0.0f;
    if (Epi::kHasC) beta = p.beta_ptr ? *p.beta_ptr : p.beta;
    c = static_cast<const CType*>(p.c) + (Epi::kHasC ? batch * p.stride_c : 0);
    d = static_cast<DType*>(p.d) + batch * p.stride_d;
    ldc = p.ldc;
    ldd = p.ldd;
    bias = static_cast<const BiasType*>(p.bias);
    scale = p.scale;
    zero_point = p.zero_point;
    row_scale = p.row_scale;
    col_scale = p.col_scale;
    amax_d = p.amax_d;
    amax_y = 0.0f;
  }

  // Grouped problems (kernels/GROUPED.md): after init(p, g), group g's vectors. Per column they
  // start at g * n, a per-tensor scale and zero point is element g, and a per-row vector is
  // g * m + row for a masked group (contiguous groups share D's rows: the row is already its index).
  // Input scales (row_scale / col_scale) are the caller's tensors, group g's at g * their stride.
  __device__ __forceinline__ void select_group(long long g, long long m, long long n, bool masked,
                                               long long row_scale_stride, long long col_scale_stride) {
    if (kRowInScale != 0) row_scale += g * row_scale_stride;
    if (kColInScale != 0) col_scale += g * col_scale_stride;
    if (Epi::kBiasMode == kVecPerColumn) bias += g * n;
    if (Epi::kBiasMode == kVecPerRow && masked) bias += g * m;
    const long long s = Epi::kScaleMode == kVecPerTensor   ? g
                        : Epi::kScaleMode == kVecPerColumn ? g * n
                        : Epi::kScaleMode == kVecPerRow && masked ? g * m
                                                                  : 0;
    if (Epi::kScaleMode != kVecNone) scale += s;
    if (Epi::kZeroPoint) zero_point += s;
  }

  // Where X(row, col) lives in D and C.
  __device__ __forceinline__ long long d_offset(long long row, long long col) const {
    return kTrans ? col * ldd + row : row * ldd + col;
  }
  __device__ __forceinline__ long long c_offset(long long row, long long col) const {
    return kTrans ? col * ldc + row : row * ldc + col;
  }

  // The bias of row `row` (per-row mode) and of column `col` (per-column mode); 0 otherwise. A
  // kernel may load them once per row / column of its fragment and pass them to value().
  __device__ __forceinline__ float row_bias(long long row) const {
    if (Epi::kBiasMode == kVecPerRow) return to_float(bias[row]);
    return 0.0f;
  }
  __device__ __forceinline__ float col_bias(long long col) const {
    if (Epi::kBiasMode == kVecPerColumn) return to_float(bias[col]);
    return 0.0f;
  }

  // The input scale (kRowInScale / kColInScale) of row `row` and of column `col`; 1 without one.
  // A kernel that stores D from registers loads them once per row / column of its fragment, as
  // the biases, and passes them to value(): read inside value(), after a store to D that may
  // alias them, every element reloaded them, each load waiting for the previous element's store
  // (the grouped register epilogue: 96 dependent global loads per thread and 128x128 tile).
  __device__ __forceinline__ float row_in_scale(long long row) const {
    if (kRowInScale == 1) return row_scale[0];
    if (kRowInScale == 2) return row_scale[row];
    return 1.0f;
  }
  __device__ __forceinline__ float col_in_scale(long long col) const {
    if (kColInScale == 1) return col_scale[0];
    if (kColInScale == 2) return col_scale[col];
    return 1.0f;
  }

  // Everything up to the conversion: the value to store at (row, col), in float, given that row's
  // and column's bias (row_bias / col_bias) and input scale (row_in_scale / col_in_scale).
  __device__ __forceinline__ float value(long long row, long long col, float acc, float rbias, float cbias, float rin,
                                         float cin) const {
    if (kRowInScale != 0) acc *= rin;
    if (kColInScale != 0) acc *= cin;
    float x = alpha * acc;
    // BLAS: a run-time beta of 0 does not read C (its NaNs and infinities must not reach D), also
    // when the plan reads C because beta was non-zero at plan time or comes from device memory.
    if (Epi::kHasC && beta != 0.0f) x += beta * to_float(c[c_offset(row, col)]);
    if (Epi::kBiasMode == kVecPerRow) x += rbias;
    if (Epi::kBiasMode == kVecPerColumn) x += cbias;
    x = activation<Epi::kActivation, kFastAct>(x);
    if constexpr (kAmax) amax_y = max_nan(amax_y, fabsf(x));
    if (Epi::kScaleMode == kVecPerTensor) x *= scale[0];
    if (Epi::kScaleMode == kVecPerRow) x *= scale[row];
    if (Epi::kScaleMode == kVecPerColumn) x *= scale[col];
    return x;
  }
  __device__ __forceinline__ float value(long long row, long long col, float acc, float rbias, float cbias) const {
    return value(row, col, acc, rbias, cbias, row_in_scale(row), col_in_scale(col));
  }
  __device__ __forceinline__ float value(long long row, long long col, float acc) const {
    return value(row, col, acc, row_bias(row), col_bias(col));
  }

  // kAmax: the warp's max |y| into the launch's amax_d (one atomic per warp; every lane of the
  // warp calls it, lanes that computed nothing with 0). Non-negative f32 bits order as unsigned
  // integers, and every NaN is made 0x7fc00000, above +inf (0x7f800000): the maximum is NaN as
  // soon as any y was, as the header defines.
  __device__ __forceinline__ void flush_amax() const {
    if constexpr (kAmax) {
      float v = amax_y;
#pragma unroll
      for (int o = 16; o > 0; o /= 2) v = max_nan(v, __shfl_xor_sync(0xffffffffu, v, o));
      if ((threadIdx.x & 31) == 0) atomicMax(amax_d, v != v ? 0x7fc00000u : __float_as_uint(v));
    }
  }

  __device__ __forceinline__ DType convert(long long row, long long col, float x) const {
    if (Epi::kZeroPoint) {
      // i8: round to nearest even, add the zero point, saturate (double: exact for any int32 zp).
      long long idx = Epi::kScaleMode == kVecPerRow ? row : Epi::kScaleMode == kVecPerColumn ? col : 0;
      if (x != x) return from_float<DType>(0.0f, Epi::kSaturate);  // NaN stores 0, as the oracle does
      double t = double(rintf(x)) + double(zero_point[idx]);
      return from_float<DType>(float(fmin(fmax(t, -128.0), 127.0)), Epi::kSaturate);
    }
    return from_float<DType>(x, Epi::kSaturate);
  }

  // kOutBlock: the scale of a block of D whose largest |z| is amax (include/deepgemm/deepgemm.h,
  // "Block-scaled output", as core/scaling.cpp's output_block_scale computes it in double): NaN
  // for a non-finite block; f32: max(amax / fp8_max, 2^-126) rounded to f32; UE8M0: the least
  // power of two 2^e >= amax / fp8_max, e >= -126, with *bits = e + 127 (0xFF for NaN).
  __device__ static float out_block_scale(float amax, unsigned char* bits) {
    const float fp8_max = IsSame<DType, e4m3>::value ? 448.0f : 57344.0f;
    const float min_scale = 1.17549435e-38f;  // 2^-126
    *bits = 0xFFu;
    if (!(amax <= 3.40282347e38f)) return __int_as_float(0x7fc00000);  // NaN or infinite
    if (kOutBlock == 1) return fmaxf(__fdiv_rn(amax, fp8_max), min_scale);
    int e = -126;
    if (amax > 0.0f) {
      // frexp's estimate, then exact corrections (scaling fp8_max by a power of two is exact; an
      // overflow to infinity compares as >= amax, as it should).
      frexpf(__fdiv_rn(amax, fp8_max), &e);
      while (e > -126 && ldexpf(fp8_max, e - 1) >= amax) --e;
      while (ldexpf(fp8_max, e) < amax) ++e;
      e = max(e, -126);
    }
    *bits = (unsigned char)(e + 127);
    return ldexpf(1.0f, e);
  }

  __device__ __forceinline__ void store(long long row, long long col, float acc) const {
    d[d_offset(row, col)] = convert(row, col, value(row, col, acc));
  }
  // kExactInt: the integer sum itself.
  __device__ __forceinline__ void store_exact(long long row, long long col, int acc) const {
    d[d_offset(row, col)] = DType(acc);
  }

  // X(row, col) and, when has_second, X(row, col + 1); the caller checked row and col are inside X
  // and passed their biases (and input scales, or they are loaded here). Written as one access
  // when the two are adjacent and pair-aligned. The overloads with and without the input scales
  // stay separate (here and store_pair_aligned): forwarding the second to the first moved the
  // next column's scale load and changed the SASS of non-grouped kernels with input scales
  // (fp8 f32-out 128x128 / 128x256 / 64x128 b2, i8 ping-pong; checked 2026-12-05), which have
  // passed their GPU tests as they are.
  __device__ __forceinline__ void store_pair(long long row, long long col, float acc0, float acc1, bool has_second,
                                             float rb, float cb0, float cb1) const {
    const DType v0 = convert(row, col, value(row, col, acc0, rb, cb0));
    if (!has_second) {
      d[d_offset(row, col)] = v0;
      return;
    }
    write_pair(row, col, v0, convert(row, col + 1, value(row, col + 1, acc1, rb, cb1)));
  }
  __device__ __forceinline__ void store_pair(long long row, long long col, float acc0, float acc1, bool has_second,
                                             float rb, float cb0, float cb1, float rin, float cin0, float cin1) const {
    const DType v0 = convert(row, col, value(row, col, acc0, rb, cb0, rin, cin0));
    if (!has_second) {
      d[d_offset(row, col)] = v0;
      return;
    }
    write_pair(row, col, v0, convert(row, col + 1, value(row, col + 1, acc1, rb, cb1, rin, cin1)));
  }
  __device__ __forceinline__ void write_pair(long long row, long long col, DType v0, DType v1) const {
    DType* dst = d + d_offset(row, col);
    if (!kTrans && (reinterpret_cast<unsigned long long>(dst) % (2 * sizeof(DType))) == 0) {
      struct alignas(2 * sizeof(DType)) Pair { DType x, y; };
      Pair pr;
      pr.x = v0;
      pr.y = v1;
      *reinterpret_cast<Pair*>(dst) = pr;
    } else {
      dst[0] = v0;
      d[d_offset(row, col + 1)] = v1;
    }
  }

  // Whether every (row, even col) pair of D can be written as one aligned access.
  __device__ __forceinline__ bool pairs_aligned() const {
    return !kTrans && (reinterpret_cast<unsigned long long>(d) % (2 * sizeof(DType))) == 0 && ldd % 2 == 0;
  }
  __device__ __forceinline__ DType* row_ptr(long long row) const { return d + row * ldd; }

  // Both of (row, col), (row, col + 1) exist, X is not transposed and dst = &D[row][col] is
  // pair-aligned (pairs_aligned()): a full tile's store without checks.
  __device__ __forceinline__ void store_pair_aligned(DType* dst, long long row, long long col, float acc0, float acc1,
                                                     float rb, float cb0, float cb1) const {
    struct alignas(2 * sizeof(DType)) Pair { DType x, y; };
    Pair pr;
    pr.x = convert(row, col, value(row, col, acc0, rb, cb0));
    pr.y = convert(row, col + 1, value(row, col + 1, acc1, rb, cb1));
    *reinterpret_cast<Pair*>(dst) = pr;
  }
  __device__ __forceinline__ void store_pair_aligned(DType* dst, long long row, long long col, float acc0, float acc1,
                                                     float rb, float cb0, float cb1, float rin, float cin0,
                                                     float cin1) const {
    struct alignas(2 * sizeof(DType)) Pair { DType x, y; };
    Pair pr;
    pr.x = convert(row, col, value(row, col, acc0, rb, cb0, rin, cin0));
    pr.y = convert(row, col + 1, value(row, col + 1, acc1, rb, cb1, rin, cin1));
    *reinterpret_cast<Pair*>(dst) = pr;
  }

  // A 16-bit D in its own orientation: the converted values of (row, col) and (row, col + 1) as one
  // 32-bit word, the first in the low half, for a kernel that exchanges such words between lanes
  // before storing them 16 bytes at a time (sectors_aligned()). The same value() and convert() as
  // store_pair_aligned, with and without the input scales passed in.
  static constexpr bool kPackedPairs = IsHalfFloat<DType>::value && !kTrans;
  __device__ __forceinline__ unsigned pack_pair(long long row, long long col, float acc0, float acc1, float rb,
                                                float cb0, float cb1) const {
    const DType x = convert(row, col, value(row, col, acc0, rb, cb0));
    const DType y = convert(row, col + 1, value(row, col + 1, acc1, rb, cb1));
    return unsigned(x.bits) | (unsigned(y.bits) << 16);
  }
  __device__ __forceinline__ unsigned pack_pair(long long row, long long col, float acc0, float acc1, float rb,
                                                float cb0, float cb1, float rin, float cin0, float cin1) const {
    const DType x = convert(row, col, value(row, col, acc0, rb, cb0, rin, cin0));
    const DType y = convert(row, col + 1, value(row, col + 1, acc1, rb, cb1, rin, cin1));
    return unsigned(x.bits) | (unsigned(y.bits) << 16);
  }
  // Whether every 8-column run of D starting at a multiple of 8 can be written as one aligned
  // 16-byte access (kPackedPairs, D's base 16-byte aligned, its rows a multiple of 8 elements).
  __device__ __forceinline__ bool sectors_aligned() const {
    return kPackedPairs && (reinterpret_cast<unsigned long long>(d) % 16) == 0 && ldd % 8 == 0;
  }

  // store4 of four integer sums (kernels with s32 accumulators): an i32 D with nothing applied
  // (kExactInt) gets the sums themselves when alpha is 1 (it may come with the call or from device
  // memory), since float would round sums beyond 2^24; anything else goes through float, as the
  // oracle computes it (deepgemm.h: I32 outputs are exact with the identity epilogue).
  __device__ __forceinline__ void store4_int(long long row, long long col, int a0, int a1, int a2, int a3,
                                             long long count) const {
    if constexpr (kExactInt) {
      if (alpha == 1.0f) {
        write4(row, col, Quad{{a0, a1, a2, a3}}, count);
        return;
      }
    }
    store4(row, col, float(a0), float(a1), float(a2), float(a3), count);
  }

  // Four horizontally adjacent elements (col .. col + 3), of which the first `count` (>= 1) exist.
  // Stored as one access when all four exist, are adjacent in D and the run is aligned to its size.
  __device__ __forceinline__ void store4(long long row, long long col, float a0, float a1, float a2, float a3,
                                         long long count) const {
    const float acc[4] = {a0, a1, a2, a3};
    Quad q;
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (e < count) q.v[e] = convert(row, col + e, value(row, col + e, acc[e]));
    write4(row, col, q, count);
  }

  // The first `count` values of q at (row, col ..): one access when all four exist, are adjacent
  // in D and the run is aligned to its size (store4 and store4_int).
  struct alignas(4 * sizeof(DType)) Quad {
    DType v[4];
  };
  __device__ __forceinline__ void write4(long long row, long long col, const Quad& q, long long count) const {
    DType* dst = d + d_offset(row, col);
    if (!kTrans && count >= 4 && (reinterpret_cast<unsigned long long>(dst) % sizeof(Quad)) == 0) {
      *reinterpret_cast<Quad*>(dst) = q;
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (e < count) d[d_offset(row, col + e)] = q.v[e];
    }
  }
};

}  // namespace dg

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
//   };
//
// Rows and columns are those of the kernel's own (row-major) problem: a launcher that maps a
// column-major problem onto a row-major kernel swaps per-row and per-column modes itself.
// Math is IEEE (the JIT is not run with --use_fast_math): erff/tanhf/expf are the accurate ones,
// so f32 outputs match the f64 oracle to ~1e-6 and the epilogue costs little next to the K loop.
#pragma once

#include "common/gemm_params.cuh"
#include "common/types.cuh"

namespace dg {

enum : int { kActNone = 0, kActRelu = 1, kActGeluTanh = 2, kActGeluErf = 3, kActSilu = 4 };
enum : int { kVecNone = 0, kVecPerTensor = 1, kVecPerRow = 2, kVecPerColumn = 3 };

template <int kAct>
__device__ __forceinline__ float activation(float x) {
  if (kAct == kActRelu) return fmaxf(x, 0.0f);
  if (kAct == kActGeluTanh) {
    const float kSqrt2OverPi = 0.7978845608028654f;
    return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
  }
  if (kAct == kActGeluErf) return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
  if (kAct == kActSilu) return x / (1.0f + expf(-x));
  return x;
}

// Per-CTA view of the epilogue operands for one batch, and the per-element math.
template <class Epi>
struct EpilogueOp {
  using CType = typename Epi::CType;
  using DType = typename Epi::DType;
  using BiasType = typename Epi::BiasType;

  float alpha, beta;
  const CType* c;
  DType* d;
  long long ldc, ldd;
  const BiasType* bias;
  const float* scale;
  const int* zero_point;

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
  }

  // Everything up to the conversion: the value to store at (row, col), in float.
  __device__ __forceinline__ float value(long long row, long long col, float acc) const {
    float x = alpha * acc;
    if (Epi::kHasC) x += beta * to_float(c[row * ldc + col]);
    if (Epi::kBiasMode == kVecPerRow) x += to_float(bias[row]);
    if (Epi::kBiasMode == kVecPerColumn) x += to_float(bias[col]);
    x = activation<Epi::kActivation>(x);
    if (Epi::kScaleMode == kVecPerTensor) x *= scale[0];
    if (Epi::kScaleMode == kVecPerRow) x *= scale[row];
    if (Epi::kScaleMode == kVecPerColumn) x *= scale[col];
    return x;
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

  __device__ __forceinline__ void store(long long row, long long col, float acc) const {
    d[row * ldd + col] = convert(row, col, value(row, col, acc));
  }

  // Two horizontally adjacent elements (col, col + 1); the second only when has_second. Stored
  // as one access when the pair is aligned to its size, which is the common case.
  __device__ __forceinline__ void store_pair(long long row, long long col, float acc0, float acc1,
                                             bool has_second) const {
    DType* dst = d + row * ldd + col;
    DType v0 = convert(row, col, value(row, col, acc0));
    if (has_second) {
      DType v1 = convert(row, col + 1, value(row, col + 1, acc1));
      if ((reinterpret_cast<unsigned long long>(dst) % (2 * sizeof(DType))) == 0) {
        struct alignas(2 * sizeof(DType)) Pair { DType x, y; };
        Pair pr;
        pr.x = v0;
        pr.y = v1;
        *reinterpret_cast<Pair*>(dst) = pr;
      } else {
        dst[0] = v0;
        dst[1] = v1;
      }
    } else {
      dst[0] = v0;
    }
  }
};

}  // namespace dg

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
    // BLAS: a run-time beta of 0 does not read C (its NaNs and infinities must not reach D), also
    // when the plan reads C because beta was non-zero at plan time or comes from device memory.
    if (Epi::kHasC && beta != 0.0f) x += beta * to_float(c[row * ldc + col]);
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

  // Four horizontally adjacent elements (col .. col + 3), of which the first `count` (>= 1) exist.
  // Stored as one access when all four exist and the run is aligned to its size.
  __device__ __forceinline__ void store4(long long row, long long col, float a0, float a1, float a2, float a3,
                                         long long count) const {
    DType* dst = d + row * ldd + col;
    const float acc[4] = {a0, a1, a2, a3};
    struct alignas(4 * sizeof(DType)) Quad { DType v[4]; };
    Quad q;
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (e < count) q.v[e] = convert(row, col + e, value(row, col + e, acc[e]));
    if (count >= 4 && (reinterpret_cast<unsigned long long>(dst) % sizeof(Quad)) == 0) {
      *reinterpret_cast<Quad*>(dst) = q;
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (e < count) dst[e] = q.v[e];
    }
  }
};

}  // namespace dg

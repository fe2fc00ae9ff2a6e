// sm90 family: the register epilogue's store step. Builds on the shared fused epilogue
// (dg::EpilogueOp: init / value / convert), adding the access the wgmma accumulator layout gives
// each thread: two horizontally adjacent outputs, written as one access when aligned.
//
// Two things differ from dg::EpilogueOp::value, both for speed (the epilogue is not overlapped
// with the main loop, so every instruction in it shows in the GEMM time):
// - bias values come in as arguments: the kernel loads a per-column bias once per column and a
//   per-row bias once per row of its tile, instead of once per element;
// - with a 16-bit floating-point output, GELU (tanh form) uses the hardware tanh.approx.f32 (one
//   MUFU op instead of tanhf's ~20 instructions) and SiLU a fast exp and divide. tanh.approx's
//   error is ~2^-11 of |tanh|, so GELU's absolute error is <= 2^-12 |x|, below a 16-bit output's
//   rounding wherever |GELU(x)| is comparable to |x| (x > -1); only in the negative tail, where
//   GELU(x) is tiny, is it larger than that element's own rounding. f32 outputs (compared with
//   the f64 oracle at ~1e-5) keep the accurate IEEE functions.
#pragma once

#include "epilogue/epilogue.cuh"

namespace dgemm_sm90 {

template <class T> struct IsHalfFloat { static constexpr bool value = false; };
template <> struct IsHalfFloat<dg::f16> { static constexpr bool value = true; };
template <> struct IsHalfFloat<dg::bf16> { static constexpr bool value = true; };

__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

template <int kAct, bool kFast>
__device__ __forceinline__ float activation(float x) {
  if constexpr (kFast && kAct == dg::kActGeluTanh) {
    const float kSqrt2OverPi = 0.7978845608028654f;
    const float half_x = 0.5f * x;
    const float t = tanh_approx(kSqrt2OverPi * x * fmaf(0.044715f, x * x, 1.0f));
    return fmaf(half_x, t, half_x);
  } else if constexpr (kFast && kAct == dg::kActSilu) {
    return __fdividef(x, 1.0f + __expf(-x));
  } else {
    return dg::activation<kAct>(x);
  }
}

template <class Epi>
struct Sm90Epilogue : dg::EpilogueOp<Epi> {
  using Base = dg::EpilogueOp<Epi>;
  using DType = typename Base::DType;
  static constexpr bool kFastAct = IsHalfFloat<DType>::value;

  // The bias of row `row` (per-row mode) and of column `col` (per-column mode); 0 otherwise.
  __device__ __forceinline__ float row_bias(long long row) const {
    if (Epi::kBiasMode == dg::kVecPerRow) return dg::to_float(this->bias[row]);
    return 0.0f;
  }
  __device__ __forceinline__ float col_bias(long long col) const {
    if (Epi::kBiasMode == dg::kVecPerColumn) return dg::to_float(this->bias[col]);
    return 0.0f;
  }

  // dg::EpilogueOp::value with the bias passed in (same order of operations).
  __device__ __forceinline__ float value_b(long long row, long long col, float acc, float rb, float cb) const {
    float x = this->alpha * acc;
    if (Epi::kHasC && this->beta != 0.0f) x += this->beta * dg::to_float(this->c[row * this->ldc + col]);
    if (Epi::kBiasMode == dg::kVecPerRow) x += rb;
    if (Epi::kBiasMode == dg::kVecPerColumn) x += cb;
    x = activation<Epi::kActivation, kFastAct>(x);
    if (Epi::kScaleMode == dg::kVecPerTensor) x *= this->scale[0];
    if (Epi::kScaleMode == dg::kVecPerRow) x *= this->scale[row];
    if (Epi::kScaleMode == dg::kVecPerColumn) x *= this->scale[col];
    return x;
  }

  // Whether every (row, even col) pair of D is aligned for one paired store.
  __device__ __forceinline__ bool pairs_aligned() const {
    return (reinterpret_cast<unsigned long long>(this->d) % (2 * sizeof(DType))) == 0 && this->ldd % 2 == 0;
  }
  __device__ __forceinline__ DType* row_ptr(long long row) const { return this->d + row * this->ldd; }

  // Both of (row, col), (row, col + 1) exist and dst = &D[row][col] is pair-aligned (a full tile).
  __device__ __forceinline__ void store_pair_aligned(DType* dst, long long row, long long col, float acc0, float acc1,
                                                     float rb, float cb0, float cb1) const {
    struct alignas(2 * sizeof(DType)) Pair { DType x, y; };
    Pair pr;
    pr.x = this->convert(row, col, value_b(row, col, acc0, rb, cb0));
    pr.y = this->convert(row, col + 1, value_b(row, col + 1, acc1, rb, cb1));
    *reinterpret_cast<Pair*>(dst) = pr;
  }

  // (row, col) and, when has_second, (row, col + 1); the caller checked row < m and col < n.
  // rb: row_bias(row); cb0 / cb1: col_bias(col) / col_bias(col + 1).
  __device__ __forceinline__ void store_pair(long long row, long long col, float acc0, float acc1,
                                             bool has_second, float rb, float cb0, float cb1) const {
    DType* dst = this->d + row * this->ldd + col;
    const DType v0 = this->convert(row, col, value_b(row, col, acc0, rb, cb0));
    if (!has_second) {
      dst[0] = v0;
      return;
    }
    const DType v1 = this->convert(row, col + 1, value_b(row, col + 1, acc1, rb, cb1));
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
  }
};

}  // namespace dgemm_sm90

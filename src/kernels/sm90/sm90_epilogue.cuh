// sm90 family: the register epilogue's store step. Builds on the shared fused epilogue
// (dg::EpilogueOp: init / value / convert), adding the access the wgmma accumulator layout gives
// each thread: two horizontally adjacent outputs, written as one access when aligned.
#pragma once

#include "epilogue/epilogue.cuh"

namespace dgemm_sm90 {

template <class Epi>
struct Sm90Epilogue : dg::EpilogueOp<Epi> {
  using Base = dg::EpilogueOp<Epi>;
  using DType = typename Base::DType;

  // (row, col) and, when has_second, (row, col + 1); the caller checked row < m and col < n.
  __device__ __forceinline__ void store_pair(long long row, long long col, float acc0, float acc1,
                                             bool has_second) const {
    DType* dst = this->d + row * this->ldd + col;
    const DType v0 = this->convert(row, col, this->value(row, col, acc0));
    if (!has_second) {
      dst[0] = v0;
      return;
    }
    const DType v1 = this->convert(row, col + 1, this->value(row, col + 1, acc1));
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

// sm90 family: TMA (cp.async.bulk.tensor) loads on 3-D tensor maps (inner, outer, batch) and the
// tensor-map type the host fills with cuTensorMapEncodeTiled (same size and alignment as
// CUtensorMap, declared here so the JIT source needs no driver header).
#pragma once

#include "sm90/ptx_mbarrier.cuh"

namespace dg {
namespace sm90 {

struct alignas(64) TensorMap {
  u64 opaque[16];
};

__device__ __forceinline__ void tma_prefetch_map(const TensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(map)) : "memory");
}

// Loads one box at (c0 inner, c1 outer, c2 batch) into shared memory at dst; completion is
// reported as transaction bytes on bar. Out-of-bounds elements arrive as zeros (and count).
__device__ __forceinline__ void tma_load_3d(u32 dst, const TensorMap* map, u32 bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
      ::"r"(dst), "l"(reinterpret_cast<u64>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// A 2-D box at (c0 inner, c1 outer): the per-stage scale vectors of block-scaled operands.
__device__ __forceinline__ void tma_load_2d(u32 dst, const TensorMap* map, u32 bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
      ::"r"(dst), "l"(reinterpret_cast<u64>(map)), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}

}  // namespace sm90
}  // namespace dg

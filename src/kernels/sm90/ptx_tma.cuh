// sm90 family: TMA (cp.async.bulk.tensor) loads and stores on 3-D tensor maps (inner, outer, batch)
// and the tensor-map type the host fills with cuTensorMapEncodeTiled (same size and alignment as
// CUtensorMap, declared here so the JIT source needs no driver header).
#pragma once

#include "sm90/ptx_mbarrier.cuh"

namespace dgemm_sm90 {

struct alignas(64) TensorMap {
  u64 opaque[16];
};

__device__ __forceinline__ void tma_prefetch_map(const TensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<u64>(map)) : "memory");
}

// Loads one box at (c0 inner, c1 outer, c2 batch) into shared memory at dst; completion is
// reported as transaction bytes on bar. Out-of-bounds elements arrive as zeros.
__device__ __forceinline__ void tma_load_3d(u32 dst, const TensorMap* map, u32 bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
      ::"r"(dst), "l"(reinterpret_cast<u64>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// Stores one box from shared memory; out-of-bounds elements are not written.
__device__ __forceinline__ void tma_store_3d(const TensorMap* map, u32 src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];"
               ::"l"(reinterpret_cast<u64>(map)), "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until the shared-memory sources of all but N committed stores have been read.
template <int N>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// Orders this thread's ordinary shared-memory writes before later async-proxy (TMA/wgmma) reads.
__device__ __forceinline__ void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

}  // namespace dgemm_sm90

// sm90 family: TMA (cp.async.bulk.tensor) loads and stores on 3-D tensor maps (inner, outer, batch) and the
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

// Stores one box of shared memory at src to (c0 inner, c1 outer, c2 batch); elements outside the
// tensor are not written. Asynchronous: src may be reused after bulk_wait_read.
__device__ __forceinline__ void tma_store_3d(const TensorMap* map, u32 src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];"
               ::"l"(reinterpret_cast<u64>(map)), "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}

// Closes the issuing thread's current group of bulk stores.
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Waits until at most N of the issuing thread's store groups still read their shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// Orders this thread's generic-proxy shared-memory writes before later async-proxy (TMA) reads.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// A 32-bit shared store that orders only against other volatile asm (the fence and barriers), so
// the compiler may still move global loads (C, bias) across it.
__device__ __forceinline__ void st_shared_u32(u32 addr, u32 v) {
  asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v));
}

__device__ __forceinline__ void st_shared_v2_u32(u32 addr, u32 a, u32 b) {
  asm volatile("st.shared.v2.b32 [%0], {%1, %2};" ::"r"(addr), "r"(a), "r"(b));
}

// Two 8 x 8 matrices of 16-bit elements into shared memory, each transposed (stmatrix .x2 .trans):
// thread l holds row l / 4, columns 2 (l % 4) and + 1 of each matrix (r0 the first's, r1 the
// second's, the lower column in the low half); lanes 0-7 give the addresses of the first matrix's
// eight stored rows (its columns 0-7), lanes 8-15 the second's. Ordered like st_shared_u32.
__device__ __forceinline__ void stmatrix_x2_trans(u32 addr, u32 r0, u32 r1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" ::"r"(addr), "r"(r0), "r"(r1));
}

__device__ __forceinline__ void st_shared_u16(u32 addr, unsigned short v) {
  asm volatile("st.shared.b16 [%0], %1;" ::"r"(addr), "h"(v));
}

// Named barrier `id` over `threads` threads (a multiple of 32).
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// Arrives on a named barrier without waiting (the other side of a producer / consumer handoff
// between warpgroups: they bar.sync on the same id with the same thread count).
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace sm90
}  // namespace dg

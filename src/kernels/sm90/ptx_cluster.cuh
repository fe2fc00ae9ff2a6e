// sm90 family: thread-block-cluster helpers (rank, cluster-wide barrier, remote mbarrier arrive)
// and the multicast TMA load used by 2-CTA clusters that share one operand tile.
#pragma once

#include "sm90/ptx_tma.cuh"

namespace dgemm_sm90 {

__device__ __forceinline__ u32 cluster_ctarank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// Every thread of every CTA of the cluster arrives and waits (release/acquire): orders barrier
// initialisation before remote use, and keeps a CTA alive while its peer may still touch its
// shared memory.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// Arrives on the mbarrier at the same shared offset in CTA `rank` of the cluster. Plain arrive
// (release at CTA scope, as CUTLASS does): an explicit .release.cluster measured 1.5-2.7x slower
// for the whole GEMM (src/kernels/sm90/NOTES.md).
__device__ __forceinline__ void mbar_arrive_cluster(u32 bar, u32 rank) {
  asm volatile(
      "{ .reg .b32 ra; mapa.shared::cluster.u32 ra, %0, %1; mbarrier.arrive.shared::cluster.b64 _, [ra]; }"
      ::"r"(bar), "r"(rank)
      : "memory");
}

// Like tma_load_3d, but the box lands at the same offset (dst, bar) in every CTA of cta_mask.
__device__ __forceinline__ void tma_load_3d_multicast(u32 dst, const TensorMap* map, u32 bar, int c0, int c1, int c2,
                                                      unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4, %5}], [%2], %6;"
      ::"r"(dst), "l"(reinterpret_cast<u64>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "h"(cta_mask)
      : "memory");
}

}  // namespace dgemm_sm90

// sm90 family: thread-block-cluster helpers: rank, cluster-wide barrier, remote mbarrier arrives,
// loads from a peer CTA's shared memory (distributed shared memory), and the multicast TMA load
// used by 2-CTA clusters that share one operand tile; and what CTAs of a grid (or grids) use to
// order work beyond a cluster: GPU-scope flags in global memory, programmatic dependent launch.
#pragma once

#include "sm90/ptx_tma.cuh"

namespace dg {
namespace sm90 {

__device__ __forceinline__ u32 cluster_ctarank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// Every thread of every CTA of the cluster arrives (relaxed) and waits (acquire). The arrive
// orders no memory: what it is used for needs none ordered by it (barrier initialisation, which
// the initialising thread's fence.mbarrier_init.release.cluster releases; a CTA's lifetime at the
// kernel's end, its last remote reads already ordered by an mbarrier), and a release arrive costs
// a MEMBAR.ALL.GPU, behind the D stores at the end.
__device__ __forceinline__ void cluster_sync_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// The address of shared-memory location `addr` (this CTA's window) in CTA `rank` of the cluster.
__device__ __forceinline__ u32 map_to_rank(u32 addr, u32 rank) {
  u32 r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}

// Arrives on the mbarrier at the same shared offset in CTA `rank` of the cluster. Plain arrive
// (release at CTA scope, as CUTLASS does for its operand ring): an explicit .release.cluster
// measured 1.5-2.7x slower for the whole GEMM when used once per K block (sm90/NOTES.md).
__device__ __forceinline__ void mbar_arrive_cluster(u32 bar, u32 rank) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(map_to_rank(bar, rank)) : "memory");
}

// Arrive with release semantics at cluster scope: this thread's earlier shared-memory writes (and
// reads) are ordered before a peer's acquire-wait on the barrier sees the phase complete. Used
// once per tile (split-K reduction), where its cost does not show.
__device__ __forceinline__ void mbar_arrive_release_cluster(u32 bar, u32 rank) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(map_to_rank(bar, rank))
               : "memory");
}

// 4 bytes into a peer CTA's shared memory (addr and bar from map_to_rank), completing 4 bytes of
// the transactions the peer's barrier `bar` expects: the peer sees the value once it sees the
// barrier's phase complete, with no fence here (a release arrive at cluster scope costs a
// MEMBAR.ALL.GPU in the SASS).
__device__ __forceinline__ void st_async_cluster_f32(u32 addr, float v, u32 bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(addr),
               "r"(__float_as_uint(v)), "r"(bar)
               : "memory");
}

// 16 bytes from a peer CTA's shared memory (addr from map_to_rank).
__device__ __forceinline__ float4 ld_shared_cluster_f4(u32 addr) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}
__device__ __forceinline__ void st_shared_f4(u32 addr, float a, float b, float c, float d) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
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

// A 64-bit flag in global memory read with acquire at GPU scope (what another CTA wrote before
// its fence and store of the flag is then visible), and stored relaxed (after a fence).
__device__ __forceinline__ unsigned long long ld_acquire_gpu_u64(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_relaxed_gpu_u64(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// Programmatic dependent launch (the launcher sets cudaLaunchAttributeProgrammaticStreamSerialization):
// waits until the grids this one depends on have completed and their memory is visible; lets the
// next kernel on the stream begin launching.
__device__ __forceinline__ void grid_dependency_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void grid_dependents_launch() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

}  // namespace sm90
}  // namespace dg

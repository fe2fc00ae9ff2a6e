// sm90 family: mbarrier operations (init, arrive, expect-tx, parity wait) as inline PTX, so the
// JIT source needs no toolkit header. Addresses are 32-bit shared-window addresses (dg::ptx::smem_addr).
#pragma once

#include "common/ptx.cuh"

namespace dg {
namespace sm90 {

typedef unsigned int u32;
typedef unsigned long long u64;
using ptx::smem_addr;

__device__ __forceinline__ void mbar_init(u32 bar, u32 arrive_count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(arrive_count) : "memory");
}

// Makes initialised barriers visible to the other threads, the cluster and the async (TMA) proxy.
__device__ __forceinline__ void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Arrive once and announce the bytes the TMA loads of this phase will deliver.
__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// Spins until the phase with the given parity has completed. A fresh barrier counts its
// (non-existent) previous phase, parity 1, as complete, which is how "empty" slots start free.
// kAcquireCluster: with acquire semantics at cluster scope, so that this thread then sees what the
// threads of other CTAs wrote before their release-arrive on this barrier
// (mbar_arrive_release_cluster).
template <bool kAcquireCluster>
__device__ __forceinline__ void mbar_wait_parity(u32 bar, u32 parity) {
  u32 done;
  do {
    if constexpr (kAcquireCluster)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    else
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  } while (!done);
}
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) { mbar_wait_parity<false>(bar, parity); }
__device__ __forceinline__ void mbar_wait_acquire_cluster(u32 bar, u32 parity) { mbar_wait_parity<true>(bar, parity); }

}  // namespace sm90
}  // namespace dg

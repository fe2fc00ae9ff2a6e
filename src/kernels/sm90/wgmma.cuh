// sm90 family: warpgroup MMA plumbing: fence / commit / wait, the shared-memory matrix descriptor,
// keeping accumulators in place across the asynchronous region, and setmaxnreg. The MMA atoms
// themselves (one per shape and type) are generated: sm90/wgmma_atoms.cuh.
#pragma once

#include "sm90/ptx_mbarrier.cuh"

namespace dg {
namespace sm90 {

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Keeps the compiler from moving accumulator reads/writes across the asynchronous MMA region.
template <int N>
__device__ __forceinline__ void fence_regs(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int N>
__device__ __forceinline__ void fence_regs(int (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}

// Shared-memory matrix descriptor for a 128-byte-swizzled operand (layout type 1 in bits 62-63).
// lbo/sbo in bytes. K-major: sbo = 1024 (8 rows of 128 B), lbo unused. MN-major: lbo = distance
// between 64-element MN chunks, sbo = 1024 (8 K rows of 128 B).
__device__ __forceinline__ u64 make_desc_sw128(u32 smem_byte_addr, u32 lbo, u32 sbo) {
  u64 d = 0;
  d |= (u64)((smem_byte_addr & 0x3FFFF) >> 4);
  d |= (u64)((lbo >> 4) & 0x3FFF) << 16;
  d |= (u64)((sbo >> 4) & 0x3FFF) << 32;
  d |= (u64)1 << 62;
  return d;
}

}  // namespace sm90
}  // namespace dg

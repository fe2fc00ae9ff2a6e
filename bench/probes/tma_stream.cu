// Probe (not part of the library or the build): HBM read rate of a weight stream through TMA, by the
// shape of the box and the order the boxes are issued in. W is rows x 8192 bf16 (16 KB per row).
// Each CTA streams a contiguous range of units (a unit = 64 rows x G chunks of 128 bytes);
// one producer thread, one consumer warp that only waits for each stage and frees it.
//   mode 0: 2D box {64 el, 64 rows} per stage (128 B per row), boxes issued one at a time
//   mode 1: same boxes, the producer waits for G free stages and issues G boxes back to back
//   mode 2: 3D box {64 el, G chunks, 64 rows} per stage (G x 128 B contiguous per row)
// Numbers: bench/RESULTS.md, 2026-12-02 run S.
//   nvcc -std=c++17 -O2 -arch=sm_90a -o tma_stream bench/probes/tma_stream.cu && ./tma_stream
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <vector>

typedef unsigned u32;
__device__ __forceinline__ u32 sa(const void* p) { return u32(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void bar_init(u32 b, u32 n) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(n)); }
__device__ __forceinline__ void bar_expect(u32 b, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bar_arrive(u32 b) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(b) : "memory"); }
__device__ __forceinline__ void bar_wait(u32 b, u32 ph) {
  u32 done;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(b), "r"(ph) : "memory");
  } while (!done);
}
__device__ __forceinline__ void tma2(u32 dst, const CUtensorMap* m, u32 bar, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
               ::"r"(dst), "l"(m), "r"(bar), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void tma3(u32 dst, const CUtensorMap* m, u32 bar, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
               ::"r"(dst), "l"(m), "r"(bar), "r"(c0), "r"(c1), "r"(c2) : "memory");
}

constexpr int KCH = 8192 / 64;  // 128-byte chunks per row

// A stage is 8 KB (modes 0, 1) or G x 8 KB (mode 2); G = boxes per issue group (mode 1) or
// 128-byte chunks per row in one box (mode 2).
__global__ void __launch_bounds__(64) stream(const __grid_constant__ CUtensorMap m2, const __grid_constant__ CUtensorMap m3,
                                             int mode, int G, int stages, int rows, int* out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const u32 base = (sa(smem) + 1023) & ~1023u;
  const u32 stage_bytes = mode == 2 ? 8192u * G : 8192u;
  const u32 bars = base + stage_bytes * stages;
  auto full = [&](int s) { return bars + 8 * s; };
  auto empty = [&](int s) { return bars + 8 * (stages + s); };
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) { bar_init(full(s), 1); bar_init(empty(s), 1); }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  // Units of 64 rows x G chunks, split evenly over the grid (contiguous per CTA, row-major in K).
  const long units = long(rows / 64) * (KCH / G);
  const long u0 = units * blockIdx.x / gridDim.x, u1 = units * (blockIdx.x + 1) / gridDim.x;
  // Loads (stages of 8192 B for modes 0/1; G of them per unit) or boxes (mode 2; one per unit).
  const long per_unit = mode == 2 ? 1 : G;
  const long loads = (u1 - u0) * per_unit;
  if (threadIdx.x == 0) {
    int s = 0; u32 ph = 0;
    for (long i = 0; i < loads;) {
      const int burst = mode == 1 ? G : 1;
      // Wait for `burst` free stages first (mode 1), then issue them together.
      int ss = s; u32 pp = ph;
      for (int b = 0; b < burst; ++b) { bar_wait(empty(ss), pp ^ 1); if (++ss == stages) { ss = 0; pp ^= 1; } }
      for (int b = 0; b < burst && i < loads; ++b, ++i) {
        const long u = u0 + (mode == 2 ? i : i / G);
        const int row = int(u / (KCH / G)) * 64, ch = int(u % (KCH / G)) * G + (mode == 2 ? 0 : int(i % G));
        bar_expect(full(s), stage_bytes);
        if (mode == 2) tma3(base + s * stage_bytes, &m3, full(s), 0, ch, row);
        else tma2(base + s * stage_bytes, &m2, full(s), ch * 64, row);
        if (++s == stages) { s = 0; ph ^= 1; }
      }
    }
  } else if (threadIdx.x == 32) {
    int s = 0; u32 ph = 0; u32 acc = 0;
    for (long i = 0; i < loads; ++i) {
      bar_wait(full(s), ph);
      acc += *(volatile unsigned char*)(smem + (base - sa(smem)) + s * stage_bytes + (i & 127));
      bar_arrive(empty(s));
      if (++s == stages) { s = 0; ph ^= 1; }
    }
    if (acc == 0x7fffffff) out[0] = acc;
  }
}

typedef CUresult (*EncodeFn)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                             const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                             CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

int main() {
  EncodeFn enc = nullptr;
  cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", (void**)&enc, cudaEnableDefault, &q);
  if (!enc) { printf("no cuTensorMapEncodeTiled\n"); return 1; }
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaFuncSetAttribute(stream, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024);
  for (int rows : {8192, 28672}) {
    const size_t bytes = size_t(rows) * 16384;
    void* w; int* o;
    cudaMalloc(&w, bytes); cudaMalloc(&o, 4); cudaMemset(w, 1, bytes);
    CUtensorMap m2, m3[4];
    {
      cuuint64_t dims[2] = {8192, cuuint64_t(rows)}, strides[1] = {16384};
      cuuint32_t box[2] = {64, 64}, es[2] = {1, 1};
      enc(&m2, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, w, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
          CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    }
    const int gs[4] = {1, 2, 4, 8};
    for (int gi = 0; gi < 4; ++gi) {
      cuuint64_t dims[3] = {64, KCH, cuuint64_t(rows)}, strides[2] = {128, 16384};
      cuuint32_t box[3] = {64, cuuint32_t(gs[gi]), 64}, es[3] = {1, 1, 1};
      CUresult r = enc(&m3[gi], CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, w, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                       CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
      if (r != CUDA_SUCCESS) printf("encode 3d G=%d failed %d\n", gs[gi], int(r));
    }
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    struct V { int mode, G, inflight_kb, per_sm; };
    std::vector<V> vs = {{0, 1, 96, 1}, {0, 1, 96, 2}, {0, 1, 192, 1}, {1, 4, 96, 1}, {1, 4, 96, 2}, {1, 8, 192, 1},
                         {2, 2, 96, 1}, {2, 4, 96, 1}, {2, 4, 96, 2}, {2, 4, 192, 1}, {2, 8, 192, 1}};
    for (const V& v : vs) {
      const int gi = v.G == 1 ? 0 : v.G == 2 ? 1 : v.G == 4 ? 2 : 3;
      const int stage = v.mode == 2 ? 8192 * v.G : 8192;
      const int stages = v.inflight_kb * 1024 / stage;
      const int smem = stages * stage + 1024 + 16 * stages;
      const int grid = sms * v.per_sm;
      for (int w0 = 0; w0 < 3; ++w0) stream<<<grid, 64, smem>>>(m2, m3[gi], v.mode, v.G, stages, rows, o);
      cudaEventRecord(a);
      const int reps = 20;
      for (int r = 0; r < reps; ++r) stream<<<grid, 64, smem>>>(m2, m3[gi], v.mode, v.G, stages, rows, o);
      cudaEventRecord(b); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b);
      printf("rows %5d mode %d G %d in-flight %3d KB/CTA x %d CTA/SM (%2d stages): %7.2f us  %.3f TB/s  %s\n", rows, v.mode,
             v.G, v.inflight_kb, v.per_sm, stages, ms * 1e3 / reps, bytes / (ms * 1e-3 / reps) / 1e12,
             cudaGetErrorString(cudaGetLastError()));
    }
    cudaFree(w); cudaFree(o);
  }
  return 0;
}

// Probe (not part of the library or the build): the HBM read-rate ceiling for weight streaming.
// Reads a buffer with 16-byte loads (grid-stride, every SM, several blocks per SM), timed by events
// over repeated launches; a device-to-device copy for reference; and an LSU "tiled" read of a
// 64-row weight tile, CHUNK bytes of each row per step. Numbers: bench/RESULTS.md, 2026-12-02.
//   nvcc -std=c++17 -O2 -arch=sm_90a -o hbm_read bench/probes/hbm_read.cu && ./hbm_read
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
__global__ void readk(const int4* __restrict__ p, size_t n, int* out) {
  int acc = 0;
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x, step = size_t(gridDim.x) * blockDim.x;
#pragma unroll 8
  for (; i < n; i += step) { int4 v = __ldcs(p + i); acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x12345678) out[0] = acc;
}
// Weight-streaming pattern of a 64-row tile: block b reads rows [64b, 64b + 64), CHUNK bytes of each
// row per step, moving along K (as a TMA stage of 64 rows x 128 bytes does when CHUNK = 128); 2 KB
// of each row in flight per block (128 KB), whatever the chunk, so only the order differs.
template <int CHUNK>
__global__ void __launch_bounds__(256) tiled(const char* __restrict__ p, int rows, int row_bytes, int* out) {
  constexpr int L = 64 * CHUNK / 16 / 256;  // int4 loads per thread per step
  constexpr int S = 2048 / CHUNK;           // steps in flight
  int acc = 0;
  for (int r0 = blockIdx.x * 64; r0 < rows; r0 += gridDim.x * 64) {
    for (int k0 = 0; k0 < row_bytes; k0 += CHUNK * S) {
      int4 v[S][L];
#pragma unroll
      for (int s = 0; s < S; ++s)
#pragma unroll
        for (int l = 0; l < L; ++l) {
          const int i = threadIdx.x + l * 256;
          const int row = r0 + i / (CHUNK / 16), col = k0 + s * CHUNK + (i % (CHUNK / 16)) * 16;
          v[s][l] = __ldcs(reinterpret_cast<const int4*>(p + size_t(row) * row_bytes + col));
        }
#pragma unroll
      for (int s = 0; s < S; ++s)
#pragma unroll
        for (int l = 0; l < L; ++l) acc ^= v[s][l].x ^ v[s][l].y ^ v[s][l].z ^ v[s][l].w;
    }
  }
  if (acc == 0x12345678) out[0] = acc;
}
template <int CHUNK>
void run_tiled(const char* p, int rows, int sms, int* o, cudaEvent_t a, cudaEvent_t b) {
  size_t bytes = size_t(rows) * 16384;
  for (int bps : {1, 2}) {
    int grid = std::min(rows / 64, sms * bps);
    for (int w = 0; w < 3; ++w) tiled<CHUNK><<<grid, 256>>>(p, rows, 16384, o);
    cudaEventRecord(a);
    for (int r = 0; r < 50; ++r) tiled<CHUNK><<<grid, 256>>>(p, rows, 16384, o);
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    printf("tiled rows %5d x 16384 B, chunk %4d B, grid %4d: %.2f us, %.3f TB/s\n", rows, CHUNK, grid, ms * 1e3 / 50, bytes / (ms * 1e-3 / 50) / 1e12);
  }
}
int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (size_t mb : {32, 134, 470, 2048}) {
    size_t bytes = mb << 20; int4* p; int* o; void* q;
    cudaMalloc(&p, bytes); cudaMalloc(&q, bytes); cudaMalloc(&o, 4); cudaMemset(p, 1, bytes);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (int bps : {4, 8, 16}) {
      for (int w = 0; w < 3; ++w) readk<<<sms * bps, 512>>>(p, bytes / 16, o);
      int reps = mb < 200 ? 200 : 20;
      cudaEventRecord(a);
      for (int r = 0; r < reps; ++r) readk<<<sms * bps, 512>>>(p, bytes / 16, o);
      cudaEventRecord(b); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b);
      printf("read %5zu MiB, %2d blocks/SM: %.2f us, %.3f TB/s\n", mb, bps, ms * 1e3 / reps, bytes / (ms * 1e-3 / reps) / 1e12);
    }
    cudaEventRecord(a);
    for (int r = 0; r < 10; ++r) cudaMemcpyAsync(q, p, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    printf("copy %5zu MiB: %.3f TB/s (read + write)\n", mb, 2.0 * bytes / (ms * 1e-3 / 10) / 1e12);
    cudaFree(p); cudaFree(q); cudaFree(o);
  }
  for (int rows : {8192, 28672}) {
    size_t bytes = size_t(rows) * 16384; char* p; int* o;
    cudaMalloc(&p, bytes); cudaMalloc(&o, 4); cudaMemset(p, 1, bytes);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    run_tiled<128>(p, rows, sms, o, a, b); run_tiled<256>(p, rows, sms, o, a, b);
    run_tiled<512>(p, rows, sms, o, a, b); run_tiled<1024>(p, rows, sms, o, a, b);
    cudaFree(p); cudaFree(o);
  }
  printf("err: %s\n", cudaGetErrorString(cudaGetLastError()));
}

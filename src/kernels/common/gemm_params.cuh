// The run-time arguments of every GEMM kernel, passed by value. Plain builtin types only, so that
// host code (src/backend/cuda) and NVRTC-compiled device code share this one definition.
// Compile-time choices (types, layout, tile, epilogue) are not here: they are template parameters
// or macros of the generated kernel source.
#pragma once

struct DgemmParams {
  const void* a;
  const void* b;
  const void* c;           // read iff the kernel was generated with C (beta != 0 at plan time)
  void* d;
  const void* bias;        // bias vector (per row or per column), or null
  const float* scale;      // output scale (per tensor / row / column), or null
  const int* zero_point;   // i8 output zero point, or null
  const float* alpha_ptr;  // device scalars (DGEMM_SCALARS_DEVICE), else null
  const float* beta_ptr;
  float alpha, beta;       // host scalars (used when the pointers are null)
  long long m, n, k;
  long long lda, ldb, ldc, ldd;                      // elements
  long long stride_a, stride_b, stride_c, stride_d;  // elements between batches
  int batch_count;
  int reserved;
  void* workspace;
  unsigned long long workspace_size;
  // DGEMM_1.1 input scales that do not vary along K, applied in the epilogue in the kernel's view:
  // one f32 per tensor or per row of X (row_scale) and per column of X (col_scale); null if absent.
  const float* row_scale;
  const float* col_scale;
  // DGEMM_1.1 amax of D (an epilogue with kAmaxD): max |y| as the bits of a non-negative f32 (NaN
  // 0x7fc00000, above every other), raised with atomicMax from 0, which the launcher stores first.
  unsigned* amax_d;
};

// Division by a divisor fixed for a launch, as one multiply-high, an add and a shift
// (common/fast_div.cuh divides; the host makes the pair with fast_div_for below).
struct FastDiv {
  unsigned mul;  // ceil(2^(32 + shift) / d) - 2^32 (0 for a power of two)
  int shift;     // ceil(log2(d))
};

#ifndef __CUDACC_RTC__
// The multiplier and shift for a divisor d >= 1 (anything smaller is taken as 1); why they divide
// exactly: common/fast_div.cuh.
inline FastDiv fast_div_for(int d) {
  FastDiv f{0u, 0};
  if (d <= 1) return f;
  while ((1LL << f.shift) < d) ++f.shift;
  const unsigned long long m = ((1ULL << (32 + f.shift)) + (unsigned long long)d - 1) / (unsigned long long)d;
  f.mul = unsigned(m - (1ULL << 32));
  return f;
}
#endif

// The output tiles of a launch, as the shared tile scheduler (common/scheduler.cuh) walks them.
// Plain data, filled by the host (backend/cuda/kernel_args.cpp) or by a kernel from its constants.
struct TileGrid {
  int num_m_blocks, num_n_blocks, batch_count;
  int raster_group;  // M blocks per rasterization group; <= 1 = row order (N blocks fastest)
  int cluster_m;     // tiles per work unit along M (CTAs of a cluster on adjacent tiles)
  int split_k;       // K splits per tile (>= 1)
};

// What the scheduler derives from a TileGrid, so that a kernel can decode a unit without integer
// division (TileScheduler::coords_fast: sm90's kFastDecode kernels). The host fills it
// (backend/cuda/kernel_args.hpp, tile_divs) and passes it beside the grid (sm90's GemmArgs).
struct TileDivs {
  int m_units;      // ceil(num_m_blocks / cluster_m): work units along M
  int group_m;      // raster_group / cluster_m: work units along M per rasterization group
  FastDiv units;    // by m_units * num_n_blocks (the units of one batch)
  FastDiv batch;    // by batch_count
  FastDiv n;        // by num_n_blocks
  FastDiv group;    // by group_m * num_n_blocks (the units of a whole rasterization group)
  FastDiv group_m_div;  // by group_m
};

// What a grouped launch receives (common/group_walk.cuh walks it on the device).
struct GroupArgs {
  const int* rows;   // contiguous: G + 1 row offsets; masked: G counts (device memory)
  unsigned* status;  // the run's status word (DGEMM_GROUP_STATUS_* bits), or null
  int groups;        // G
  int alignment;     // contiguous: the plan's m_alignment (>= 1)
  // Input scales of A (row) and B (col), in any mode: group g's tensor starts g * stride elements
  // further (deepgemm.h, "grouped problems"); 0 when shared or absent. The epilogue steps its
  // row_scale / col_scale by them; sm90's block-scaled main loop reads its scale tensors there.
  long long row_scale_stride, col_scale_stride;
};

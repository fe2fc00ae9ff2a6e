// Small device helpers of deepgemm-bench, compiled by nvcc (bench_device.cu): random operands
// generated on the GPU (a counter hash, no cuRAND), the reference epilogue applied to cuBLAS's f32
// product, and the relative Frobenius error of an output against a f32 reference.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bench {

// E4M3, I8 and I32 serve the FP8 / INT8 rows (operands, and INT8's output).
enum class ElemType { F32, F16, BF16, E4M3, I8, I32 };

size_t elem_size(ElemType t);

// Fills n elements with uniform values in [-scale, scale), different for every (seed, index):
// never zeros, never a constant, so that unwritten outputs and wrong indexing show up. FP8 and
// I8 round the value (I8: to an integer, so use a scale of about 127).
// Every function returns a CUDA error code (0 = cudaSuccess) and checks the launch.
int fill_random(void* data, size_t n, ElemType t, uint64_t seed, float scale, void* stream);

// ref[i * n + j] = gelu_tanh(ref[i * n + j] + bias[j]) for a row-major m x n f32 matrix.
int apply_bias_gelu(float* ref, const void* bias, ElemType bias_type, int64_t m, int64_t n, void* stream);

// n scale factors uniform in [0.5, 2): positive, never one value.
int fill_scales(float* data, size_t n, uint64_t seed, void* stream);

// dst (row-major rows x cols f32) = src (row-major, ld cols, type t) times the scale of each
// element's block: scale(r / group_rows, c / group_cols) at scales[r' + c' * scale_ld]
// (mn_major) or scales[r' * scale_ld + c'], 1 when scales is null. Serves the reference of the
// scaled rows (dequantize A and B, then one f32 GEMM: the same sum over K blocks of sa * sb *
// partial sums) and the check of a block-scaled FP8 output.
int dequantize(const void* src, ElemType t, int64_t rows, int64_t cols, const float* scales, int64_t group_rows,
               int64_t group_cols, bool mn_major, int64_t scale_ld, float* dst, void* stream);

struct Comparison {
  double rel_error = 0;            // ||out - ref||_F / ||ref||_F over the finite pairs
  unsigned long long nonfinite = 0;// outputs that are NaN/inf where the reference is finite
};

// Compares count elements of out (type t) with the f32 reference; synchronizes the stream.
int compare(const void* out, ElemType t, const float* ref, size_t count, void* stream, Comparison* result);

}  // namespace bench

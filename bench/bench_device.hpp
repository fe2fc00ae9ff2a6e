// Small device helpers of deepgemm-bench, compiled by nvcc (bench_device.cu): random operands
// generated on the GPU (a counter hash, no cuRAND), the reference epilogue applied to cuBLAS's f32
// product, and the relative Frobenius error of an output against a f32 reference.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bench {

enum class ElemType { F32, F16, BF16 };

size_t elem_size(ElemType t);

// Fills n elements with uniform values in [-scale, scale), different for every (seed, index):
// never zeros, never a constant, so that unwritten outputs and wrong indexing show up.
// Every function returns a CUDA error code (0 = cudaSuccess) and checks the launch.
int fill_random(void* data, size_t n, ElemType t, uint64_t seed, float scale, void* stream);

// ref[i * n + j] = gelu_tanh(ref[i * n + j] + bias[j]) for a row-major m x n f32 matrix.
int apply_bias_gelu(float* ref, const void* bias, ElemType bias_type, int64_t m, int64_t n, void* stream);

struct Comparison {
  double rel_error = 0;            // ||out - ref||_F / ||ref||_F over the finite pairs
  unsigned long long nonfinite = 0;// outputs that are NaN/inf where the reference is finite
};

// Compares count elements of out (type t) with the f32 reference; synchronizes the stream.
int compare(const void* out, ElemType t, const float* ref, size_t count, void* stream, Comparison* result);

}  // namespace bench

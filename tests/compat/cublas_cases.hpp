// The problems the two cuBLAS test programs share (compat_e2e on host memory behind stand-in
// libraries, cublas_gpu_check on a GPU): how a case becomes a reference problem, its host
// operands, and the cuBLASLt descriptors a program would set up for it.
#pragma once

#include <cublasLt.h>

#include <cmath>
#include <random>

#include "cublas_reference.hpp"

namespace compat_test {

// A cublas*gemm* problem: column-major, leading dimensions `pad` more than needed; with batches
// and an odd pad, A is shared by every batch (stride 0).
inline RefProblem gemm_problem(int m, int n, int k, bool ta, bool tb, int pad, int batch, float alpha, float beta) {
  RefProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.trans_a = ta;
  p.trans_b = tb;
  p.lda = (ta ? k : m) + pad;
  p.ldb = (tb ? n : k) + pad;
  p.ldc = p.ldd = m + pad;
  p.batch = batch;
  p.stride_a = batch > 1 && pad % 2 == 1 ? 0 : p.lda * (ta ? m : k);
  p.stride_b = p.ldb * (tb ? k : n);
  p.stride_c = p.stride_d = p.ldc * n;
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

// Fresh random A and B; C random when beta != 0, else all NaN (beta = 0 must never read C).
struct GemmHostOperands {
  HostMatrix A, B, C;
};
inline GemmHostOperands gemm_operands(const RefProblem& p, int ab_type, int c_type, std::mt19937& rng) {
  const int64_t a_cols = p.trans_a ? p.m : p.k;
  GemmHostOperands o{HostMatrix(ab_type, std::size_t(p.stride_a * (p.batch - 1) + p.lda * a_cols)),
                     HostMatrix(ab_type, std::size_t(p.stride_b * p.batch)),
                     HostMatrix(c_type, std::size_t(p.stride_c * p.batch))};
  fill_random(o.A, rng);
  fill_random(o.B, rng);
  if (p.beta != 0) {
    fill_random(o.C, rng);
  } else {
    fill_value(o.C, NAN);
  }
  return o;
}

// A cublasLtMatmul problem. Leading dimensions: A + pad, B + 2 pad, C + 3 pad, D tight.
struct LtShape {
  int ab_type, d_type;
  bool ta, tb, row_major;
  int m, n, k, pad;
  cublasLtEpilogue_t epilogue;
  int bias_type;  // -1: cuBLASLt's default (D's type)
  int batch;
  float alpha, beta;
};

inline bool lt_has_bias(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS || e == CUBLASLT_EPILOGUE_GELU_BIAS;
}

// Stored shapes of A and B (rows x cols), as cuBLASLt's layouts describe them.
inline void lt_stored(const LtShape& s, int64_t* a_rows, int64_t* a_cols, int64_t* b_rows, int64_t* b_cols) {
  *a_rows = s.ta ? s.k : s.m;
  *a_cols = s.ta ? s.m : s.k;
  *b_rows = s.tb ? s.n : s.k;
  *b_cols = s.tb ? s.k : s.n;
}

inline RefProblem lt_problem(const LtShape& s) {
  int64_t a_rows, a_cols, b_rows, b_cols;
  lt_stored(s, &a_rows, &a_cols, &b_rows, &b_cols);
  RefProblem p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.trans_a = s.ta;
  p.trans_b = s.tb;
  p.col_major = !s.row_major;
  p.lda = (s.row_major ? a_cols : a_rows) + s.pad;
  p.ldb = (s.row_major ? b_cols : b_rows) + 2 * s.pad;
  p.ldc = (s.row_major ? s.n : s.m) + 3 * s.pad;
  p.ldd = s.row_major ? s.n : s.m;
  p.batch = s.batch;
  p.stride_a = p.lda * (s.row_major ? a_rows : a_cols);
  p.stride_b = p.ldb * (s.row_major ? b_rows : b_cols);
  p.stride_c = p.ldc * (s.row_major ? s.m : s.n);
  p.stride_d = p.ldd * (s.row_major ? s.m : s.n);
  p.alpha = s.alpha;
  p.beta = s.beta;
  p.act = (s.epilogue & CUBLASLT_EPILOGUE_RELU) ? kRelu : (s.epilogue & CUBLASLT_EPILOGUE_GELU) ? kGeluTanh : kNone;
  return p;
}

// Fresh random A, B, C and bias; D all NaN (every element must be written).
struct LtHostOperands {
  HostMatrix A, B, C, D, bias;
};
inline LtHostOperands lt_operands(const RefProblem& p, const LtShape& s, std::mt19937& rng) {
  LtHostOperands o{HostMatrix(s.ab_type, std::size_t(p.stride_a * p.batch)),
                   HostMatrix(s.ab_type, std::size_t(p.stride_b * p.batch)),
                   HostMatrix(s.d_type, std::size_t(p.stride_c * p.batch)),
                   HostMatrix(s.d_type, std::size_t(p.stride_d * p.batch)),
                   HostMatrix(s.bias_type < 0 ? s.d_type : s.bias_type, std::size_t(s.m))};
  fill_random(o.A, rng);
  fill_random(o.B, rng);
  fill_random(o.C, rng);
  fill_random(o.bias, rng);
  fill_value(o.D, NAN);
  return o;
}

// The matmul descriptor and the four layouts of a shape, set up as a program would; destroyed
// with the object. `bias` is the bias vector's address (in the memory the matmul runs on).
struct LtDescriptors {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;

  LtDescriptors(const LtShape& s, const RefProblem& p, const void* bias, bool device_scalars) {
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    const cublasOperation_t ta = s.ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = s.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &s.epilogue, sizeof(s.epilogue));
    if (lt_has_bias(s.epilogue)) {
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
      if (s.bias_type >= 0) {
        const int32_t bt = s.bias_type;
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt));
      }
    }
    if (device_scalars) {
      const cublasLtPointerMode_t mode = CUBLASLT_POINTER_MODE_DEVICE;
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, sizeof(mode));
    }
    int64_t a_rows, a_cols, b_rows, b_cols;
    lt_stored(s, &a_rows, &a_cols, &b_rows, &b_cols);
    cublasLtMatrixLayoutCreate(&a, cudaDataType(s.ab_type), uint64_t(a_rows), uint64_t(a_cols), p.lda);
    cublasLtMatrixLayoutCreate(&b, cudaDataType(s.ab_type), uint64_t(b_rows), uint64_t(b_cols), p.ldb);
    cublasLtMatrixLayoutCreate(&c, cudaDataType(s.d_type), uint64_t(s.m), uint64_t(s.n), p.ldc);
    cublasLtMatrixLayoutCreate(&d, cudaDataType(s.d_type), uint64_t(s.m), uint64_t(s.n), p.ldd);
    const cublasLtMatrixLayout_t layouts[4] = {a, b, c, d};
    const int64_t strides[4] = {p.stride_a, p.stride_b, p.stride_c, p.stride_d};
    for (int i = 0; i < 4; ++i) {
      if (s.row_major) {
        const cublasLtOrder_t order = CUBLASLT_ORDER_ROW;
        cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof(order));
      }
      if (s.batch > 1) {
        const int32_t batch = s.batch;
        cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch));
        cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i],
                                         sizeof(strides[i]));
      }
    }
  }
  ~LtDescriptors() {
    for (cublasLtMatrixLayout_t l : {a, b, c, d}) cublasLtMatrixLayoutDestroy(l);
    cublasLtMatmulDescDestroy(desc);
  }
  LtDescriptors(const LtDescriptors&) = delete;
  LtDescriptors& operator=(const LtDescriptors&) = delete;
};

}  // namespace compat_test

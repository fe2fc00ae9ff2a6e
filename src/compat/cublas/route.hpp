// The routing decision of the cuBLAS-compatible library: is this cuBLAS GEMM call one a DeepGEMM
// plan computes as cuBLAS documents it, and if so, with which plan (its key) and which execute-time
// scalars? Pure functions of the call's arguments and the handle's modes: no CUDA, no cuBLAS
// library, no global state, so that every decision is testable on a machine without a GPU. The
// only memory they read is alpha/beta in host pointer mode, exactly when cuBLAS reads them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "deepgemm/deepgemm.h"
#include "deepgemm/deepgemm_cublas.h"

namespace dgemm_cublas {

// The exported entry point a call came through (for logs; the decision is the same for all).
enum class Entry : uint8_t {
  GemmEx,
  GemmStridedBatchedEx,
  GemmBatchedEx,
  Sgemm,
  SgemmStridedBatched,
  Hgemm,
  HgemmStridedBatched,
  LtMatmul,
};
const char* entry_name(Entry e);

// Everything that identifies a plan: the problem, the epilogue modes and the device. Plain
// integers only, laid out without padding, so that hashing and comparing the bytes is exact.
struct PlanKey {
  int64_t m, n, k;
  int64_t lda, ldb, ldc, ldd;
  int64_t batch, stride_a, stride_b, stride_c, stride_d;
  int32_t a_type, b_type, c_type, d_type;  // dgemm_dtype_t
  int32_t op_a, op_b, order;               // dgemm_op_t, dgemm_order_t
  int32_t reads_c;                         // 1: the plan reads C (beta != 0, or beta on the device)
  int32_t bias_mode, bias_type, activation;
  int32_t device;                          // CUDA ordinal; -1 for the CPU backend (test mode)
};
static_assert(sizeof(PlanKey) == 12 * 8 + 12 * 4, "PlanKey must have no padding: it is hashed as bytes");

bool operator==(const PlanKey& a, const PlanKey& b);
struct PlanKeyHash {
  std::size_t operator()(const PlanKey& k) const;
};

// The public descriptors a key stands for (dgemm_problem_init / dgemm_epilogue_init, then the key).
void make_problem(const PlanKey& key, dgemm_problem_t* problem, dgemm_epilogue_t* epilogue);

// How the plan gets alpha and beta at execute time.
struct Scalars {
  dgemm_scalar_mode_t mode = DGEMM_SCALARS_HOST;
  float alpha = 1.0f, beta = 0.0f;     // DGEMM_SCALARS_HOST
  const float* alpha_ptr = nullptr;    // DGEMM_SCALARS_DEVICE
  const float* beta_ptr = nullptr;
};

struct Decision {
  deepgemm_cublas_reason_t reason = DEEPGEMM_CUBLAS_INVALID;  // ROUTED, or why the call is forwarded
  const char* why = "";  // static text for the log
  PlanKey key{};         // when routed; key.device is left for the caller to fill
  Scalars scalars;
  const void* bias = nullptr;
  bool routed() const { return reason == DEEPGEMM_CUBLAS_ROUTED; }
};

// A cublas*gemm* call in cuBLAS's own terms (cublasOperation_t, cudaDataType, cublasComputeType_t,
// cublasGemmAlgo_t as ints). Non-batched entry points use batch = 1 and strides 0.
struct GemmCall {
  Entry entry = Entry::GemmEx;
  int transa = 0, transb = 0;
  int64_t m = 0, n = 0, k = 0;
  const void* alpha = nullptr;
  const void* beta = nullptr;
  const void* A = nullptr;
  int a_type = 0;
  int64_t lda = 0, stride_a = 0;
  const void* B = nullptr;
  int b_type = 0;
  int64_t ldb = 0, stride_b = 0;
  const void* C = nullptr;
  int c_type = 0;
  int64_t ldc = 0, stride_c = 0;
  int64_t batch = 1;
  bool pointer_array = false;  // cublasGemmBatchedEx: A/B/C are device arrays of pointers
  int compute_type = 0;
  int algo = -1;
};

// The handle settings a decision depends on (cublasSetPointerMode / cublasSetMathMode).
struct HandleModes {
  int pointer_mode = 0;  // CUBLAS_POINTER_MODE_HOST
  int math_mode = 0;     // CUBLAS_DEFAULT_MATH
};

Decision route_gemm(const GemmCall& call, const HandleModes& modes);

// --- cuBLASLt ---------------------------------------------------------------------------------
// What this library remembers of a cublasLtMatmulDesc_t / cublasLtMatrixLayout_t: the values of
// the attributes a decision needs, and the first attribute set to a value it cannot map (then the
// call is forwarded). Kept up to date by the descriptor functions the library exports.
struct LtDesc {
  int32_t compute_type = 0, scale_type = 0;
  int32_t pointer_mode = 0, transa = 0, transb = 0, transc = 0;
  uint32_t epilogue = 1;  // CUBLASLT_EPILOGUE_DEFAULT
  int32_t bias_type = -1; // -1: the type of D
  const void* bias = nullptr;
  int64_t bias_batch_stride = 0;
  uint64_t unmapped = 0;  // bit a: attribute a (< 64) holds a value we do not map
  bool unknown = false;   // an attribute this library does not know was set
};
struct LtLayout {
  uint32_t type = 0;
  int32_t order = 0;  // CUBLASLT_ORDER_COL
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch = 1;
  int64_t stride = 0;
  uint64_t unmapped = 0;
  bool unknown = false;
};

LtDesc lt_desc_init(int32_t compute_type, int32_t scale_type);
LtLayout lt_layout_init(uint32_t type, uint64_t rows, uint64_t cols, int64_t ld);
// Applies a cublasLt*SetAttribute that the real cuBLASLt accepted.
void lt_desc_set(LtDesc& d, int attribute, const void* buf, std::size_t size);
void lt_layout_set(LtLayout& l, int attribute, const void* buf, std::size_t size);

struct LtOperands {
  const void* alpha = nullptr;
  const void* beta = nullptr;
  const void* A = nullptr;
  const void* B = nullptr;
  const void* C = nullptr;
  const void* D = nullptr;
};
Decision route_lt(const LtDesc& desc, const LtLayout& a, const LtLayout& b, const LtLayout& c, const LtLayout& d,
                  const LtOperands& ops);

// Host IEEE binary16 bits to float (cublasHgemm's and CUBLAS_COMPUTE_16F's host alpha/beta).
float half_to_float(uint16_t bits);

}  // namespace dgemm_cublas

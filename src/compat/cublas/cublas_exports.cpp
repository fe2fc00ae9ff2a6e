// The cuBLAS functions of libdeepgemm_cublas.so.1, with cuBLAS's exact C signatures (the
// definitions below are checked against cublas_api.h's declarations by the compiler).
//
// Handle functions forward to the real cuBLAS and keep this library's record of the handle in
// step (handles.hpp). GEMM functions describe the call (route.hpp's GemmCall), try the routed path
// (dispatch.hpp) and forward to the real function with the original arguments when it says no,
// so a forwarded call is exactly the call the program made.
#include <cublas_api.h>

#include <memory>

#include "compat/cublas/dispatch.hpp"
#include "compat/cublas/forward.hpp"
#include "compat/cublas/handles.hpp"

using namespace dgemm_cublas;

namespace {

// The cuBLAS call as route.hpp sees it (non-batched; callers add batches).
GemmCall gemm_call(Entry entry, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                   const void* alpha, const void* A, int a_type, int64_t lda, const void* B, int b_type, int64_t ldb,
                   const void* beta, const void* C, int c_type, int64_t ldc, int compute_type, int algo) {
  GemmCall c;
  c.entry = entry;
  c.transa = transa;
  c.transb = transb;
  c.m = m;
  c.n = n;
  c.k = k;
  c.alpha = alpha;
  c.beta = beta;
  c.A = A;
  c.a_type = a_type;
  c.lda = lda;
  c.B = B;
  c.b_type = b_type;
  c.ldb = ldb;
  c.C = C;
  c.c_type = c_type;
  c.ldc = ldc;
  c.compute_type = compute_type;
  c.algo = algo;
  return c;
}

GemmCall batched(GemmCall c, long long stride_a, long long stride_b, long long stride_c, int64_t batch) {
  c.stride_a = stride_a;
  c.stride_b = stride_b;
  c.stride_c = stride_c;
  c.batch = batch;
  return c;
}

// True when the call ran as a DeepGEMM plan. Calls made by the real cuBLAS itself are never routed.
bool routed(cublasHandle_t handle, const GemmCall& c) {
  return !forwarding() && try_gemm(handle, c) == DEEPGEMM_CUBLAS_ROUTED;
}

// Forwards a handle setting and, when the real cuBLAS accepted it, applies it to our record.
template <class Apply, class... Args>
cublasStatus_t forward_setting(void* sym, Apply&& apply, cublasHandle_t handle, Args... args) {
  return forward_and_record(
      sym,
      [&] {
        if (std::shared_ptr<HandleState> hs = find_handle(handle)) {
          std::lock_guard<std::mutex> lock(hs->mu);
          apply(*hs);
        }
      },
      handle, args...);
}

}  // namespace

extern "C" {

// ---- handle and settings ------------------------------------------------------------------------

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t* handle) {
  return forward_and_record(DGC_REAL(Cublas, cublasCreate_v2), [&] { if (handle) register_handle(*handle); }, handle);
}

cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle) {
  std::shared_ptr<HandleState> record;
  if (!forwarding()) quietly([&] { record = take_handle(handle); });
  const cublasStatus_t st = forward(DGC_REAL(Cublas, cublasDestroy_v2), handle);
  // The real destroy synchronized the device: the record's pools are idle when it goes here.
  if (st != CUBLAS_STATUS_SUCCESS) quietly([&] { restore_handle(handle, std::move(record)); });
  return st;
}

cublasStatus_t CUBLASWINAPI cublasGetVersion_v2(cublasHandle_t handle, int* version) {
  return forward(DGC_REAL(Cublas, cublasGetVersion_v2), handle, version);
}

const char* CUBLASWINAPI cublasGetStatusName(cublasStatus_t status) {
  void* fn = DGC_REAL(Cublas, cublasGetStatusName);
  return fn ? reinterpret_cast<const char* (*)(cublasStatus_t)>(fn)(status) : "CUBLAS_STATUS_UNKNOWN (no real cuBLAS)";
}

const char* CUBLASWINAPI cublasGetStatusString(cublasStatus_t status) {
  void* fn = DGC_REAL(Cublas, cublasGetStatusString);
  return fn ? reinterpret_cast<const char* (*)(cublasStatus_t)>(fn)(status) : "no real cuBLAS could be loaded";
}

cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  return forward_setting(
      DGC_REAL(Cublas, cublasSetStream_v2),
      [&](HandleState& hs) {
        hs.stream = stream;
        // cuBLAS: "unconditionally resets the workspace back to the default pool".
        hs.user_ws = nullptr;
        hs.user_ws_size = 0;
      },
      handle, stream);
}

cublasStatus_t CUBLASWINAPI cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream) {
  return forward(DGC_REAL(Cublas, cublasGetStream_v2), handle, stream);
}

cublasStatus_t CUBLASWINAPI cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, size_t bytes) {
  return forward_setting(
      DGC_REAL(Cublas, cublasSetWorkspace_v2),
      [&](HandleState& hs) {
        hs.user_ws = workspace;
        hs.user_ws_size = workspace ? bytes : 0;
      },
      handle, workspace, bytes);
}

cublasStatus_t CUBLASWINAPI cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
  return forward_setting(
      DGC_REAL(Cublas, cublasSetPointerMode_v2), [&](HandleState& hs) { hs.modes.pointer_mode = mode; }, handle, mode);
}

cublasStatus_t CUBLASWINAPI cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t* mode) {
  return forward(DGC_REAL(Cublas, cublasGetPointerMode_v2), handle, mode);
}

cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  return forward_setting(
      DGC_REAL(Cublas, cublasSetMathMode), [&](HandleState& hs) { hs.modes.math_mode = mode; }, handle, mode);
}

cublasStatus_t CUBLASWINAPI cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  return forward(DGC_REAL(Cublas, cublasGetMathMode), handle, mode);
}

// ---- GEMM ---------------------------------------------------------------------------------------

cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                         int lda, const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
                                         cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                         cublasGemmAlgo_t algo) {
  if (routed(handle, gemm_call(Entry::GemmEx, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                               Ctype, ldc, computeType, algo)))
    return CUBLAS_STATUS_SUCCESS;
  return forward(DGC_REAL(Cublas, cublasGemmEx), handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb,
                 beta, C, Ctype, ldc, computeType, algo);
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                       cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                                       const void* A, cudaDataType Atype, int lda, long long strideA,
                                                       const void* B, cudaDataType Btype, int ldb, long long strideB,
                                                       const void* beta, void* C, cudaDataType Ctype, int ldc,
                                                       long long strideC, int batchCount,
                                                       cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  if (routed(handle, batched(gemm_call(Entry::GemmStridedBatchedEx, transa, transb, m, n, k, alpha, A, Atype, lda, B,
                                       Btype, ldb, beta, C, Ctype, ldc, computeType, algo),
                             strideA, strideB, strideC, batchCount)))
    return CUBLAS_STATUS_SUCCESS;
  return forward(DGC_REAL(Cublas, cublasGemmStridedBatchedEx), handle, transa, transb, m, n, k, alpha, A, Atype, lda,
                 strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

cublasStatus_t CUBLASWINAPI cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                                const void* const Aarray[], cudaDataType Atype, int lda,
                                                const void* const Barray[], cudaDataType Btype, int ldb,
                                                const void* beta, void* const Carray[], cudaDataType Ctype, int ldc,
                                                int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  // Counted and logged like the others; the decision forwards pointer-array batches.
  GemmCall c = batched(gemm_call(Entry::GemmBatchedEx, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray,
                                 Btype, ldb, beta, Carray, Ctype, ldc, computeType, algo),
                       0, 0, 0, batchCount);
  c.pointer_array = true;
  if (routed(handle, c)) return CUBLAS_STATUS_SUCCESS;
  return forward(DGC_REAL(Cublas, cublasGemmBatchedEx), handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda,
                 Barray, Btype, ldb, beta, Carray, Ctype, ldc, batchCount, computeType, algo);
}

cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                           int m, int n, int k, const float* alpha, const float* A, int lda,
                                           const float* B, int ldb, const float* beta, float* C, int ldc) {
  if (routed(handle, gemm_call(Entry::Sgemm, transa, transb, m, n, k, alpha, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb,
                               beta, C, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)))
    return CUBLAS_STATUS_SUCCESS;
  return forward(DGC_REAL(Cublas, cublasSgemm_v2), handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                 ldc);
}

cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                      cublasOperation_t transb, int m, int n, int k, const float* alpha,
                                                      const float* A, int lda, long long strideA, const float* B,
                                                      int ldb, long long strideB, const float* beta, float* C, int ldc,
                                                      long long strideC, int batchCount) {
  if (routed(handle, batched(gemm_call(Entry::SgemmStridedBatched, transa, transb, m, n, k, alpha, A, CUDA_R_32F, lda,
                                       B, CUDA_R_32F, ldb, beta, C, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F,
                                       CUBLAS_GEMM_DEFAULT),
                             strideA, strideB, strideC, batchCount)))
    return CUBLAS_STATUS_SUCCESS;
  return forward(DGC_REAL(Cublas, cublasSgemmStridedBatched), handle, transa, transb, m, n, k, alpha, A, lda, strideA,
                 B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

cublasStatus_t CUBLASWINAPI cublasHgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                        int m, int n, int k, const __half* alpha, const __half* A, int lda,
                                        const __half* B, int ldb, const __half* beta, __half* C, int ldc) {
  if (routed(handle, gemm_call(Entry::Hgemm, transa, transb, m, n, k, alpha, A, CUDA_R_16F, lda, B, CUDA_R_16F, ldb,
                               beta, C, CUDA_R_16F, ldc, CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT)))
    return CUBLAS_STATUS_SUCCESS;
  return forward(DGC_REAL(Cublas, cublasHgemm), handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t CUBLASWINAPI cublasHgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                      cublasOperation_t transb, int m, int n, int k,
                                                      const __half* alpha, const __half* A, int lda, long long strideA,
                                                      const __half* B, int ldb, long long strideB, const __half* beta,
                                                      __half* C, int ldc, long long strideC, int batchCount) {
  if (routed(handle, batched(gemm_call(Entry::HgemmStridedBatched, transa, transb, m, n, k, alpha, A, CUDA_R_16F, lda,
                                       B, CUDA_R_16F, ldb, beta, C, CUDA_R_16F, ldc, CUBLAS_COMPUTE_16F,
                                       CUBLAS_GEMM_DEFAULT),
                             strideA, strideB, strideC, batchCount)))
    return CUBLAS_STATUS_SUCCESS;
  return forward(DGC_REAL(Cublas, cublasHgemmStridedBatched), handle, transa, transb, m, n, k, alpha, A, lda, strideA,
                 B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

}  // extern "C"

#define DGC_CUBLAS(name) DGC_EXPORT_AS(name, "libcublas.so.12", "libcublas.so.13")
#define DGC_CUBLASLT(name)
#include "compat/cublas/exports.def"

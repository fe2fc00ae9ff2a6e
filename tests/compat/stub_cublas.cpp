// A stand-in for the real libcublas.so.12 (soname, version node and the functions
// libdeepgemm_cublas exports), so that the whole routed path can be tested without a GPU: handles
// are plain host objects, settings are accepted, and every GEMM returns STUB_STATUS (a status the
// real functions would not give for these calls) and counts itself, so a test sees exactly which
// calls were forwarded. Built twice into one file per library: STUB_LT selects the cuBLASLt half.
#include <cublasLt.h>
#include <cublas_api.h>

#include <atomic>
#include <cstdlib>

#define STUB_STATUS CUBLAS_STATUS_LICENSE_ERROR
#define STUB_API extern "C" __attribute__((visibility("default")))

namespace {
std::atomic<int> g_gemm_calls{0};
cublasStatus_t gemm() {
  ++g_gemm_calls;
  return STUB_STATUS;
}
}  // namespace

// How many GEMM calls reached this stub (found by the test with dlsym on this library).
STUB_API int compat_stub_gemm_calls(void) { return g_gemm_calls.load(); }

#ifndef STUB_LT
struct cublasContext {
  int magic;
};

STUB_API cublasStatus_t cublasCreate_v2(cublasHandle_t* h) {
  if (!h) return CUBLAS_STATUS_INVALID_VALUE;
  *h = new cublasContext{42};
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasDestroy_v2(cublasHandle_t h) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasGetVersion_v2(cublasHandle_t, int* v) {
  *v = 120000;
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API const char* cublasGetStatusName(cublasStatus_t) { return "STUB"; }
STUB_API const char* cublasGetStatusString(cublasStatus_t) { return "stub"; }
STUB_API cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t) {
  return h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}
STUB_API cublasStatus_t cublasGetStream_v2(cublasHandle_t, cudaStream_t* s) {
  *s = nullptr;
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void*, size_t) {
  return h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}
// Like cuBLAS: a mode outside the enum is rejected (the test checks the record is then unchanged).
STUB_API cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t m) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  return m == CUBLAS_POINTER_MODE_HOST || m == CUBLAS_POINTER_MODE_DEVICE ? CUBLAS_STATUS_SUCCESS
                                                                          : CUBLAS_STATUS_INVALID_VALUE;
}
STUB_API cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t, cublasPointerMode_t* m) {
  *m = CUBLAS_POINTER_MODE_HOST;
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t) {
  return h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}
STUB_API cublasStatus_t cublasGetMathMode(cublasHandle_t, cublasMath_t* m) {
  *m = CUBLAS_DEFAULT_MATH;
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasGemmEx(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                     const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                     cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) {
  return gemm();
}
STUB_API cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                   const void*, const void*, cudaDataType, int, long long, const void*,
                                                   cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                                   long long, int, cublasComputeType_t, cublasGemmAlgo_t) {
  return gemm();
}
STUB_API cublasStatus_t cublasGemmBatchedEx(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                            const void*, const void* const[], cudaDataType, int, const void* const[],
                                            cudaDataType, int, const void*, void* const[], cudaDataType, int, int,
                                            cublasComputeType_t, cublasGemmAlgo_t) {
  return gemm();
}
STUB_API cublasStatus_t cublasSgemm_v2(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                       const float*, const float*, int, const float*, int, const float*, float*, int) {
  return gemm();
}
STUB_API cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                  const float*, const float*, int, long long, const float*, int,
                                                  long long, const float*, float*, int, long long, int) {
  return gemm();
}
STUB_API cublasStatus_t cublasHgemm(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const __half*,
                                    const __half*, int, const __half*, int, const __half*, __half*, int) {
  return gemm();
}
STUB_API cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                  const __half*, const __half*, int, long long, const __half*, int,
                                                  long long, const __half*, __half*, int, long long, int) {
  return gemm();
}
#else
struct cublasLtContext {
  int magic;
};
// Descriptors are opaque to the interposer: any allocation will do.
struct cublasLtMatmulDescOpaque_st;
STUB_API cublasStatus_t cublasLtCreate(cublasLtHandle_t* h) {
  *h = new cublasLtContext{7};
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) {
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* d, cublasComputeType_t, cudaDataType_t) {
  *d = static_cast<cublasLtMatmulDesc_t>(std::calloc(1, sizeof(cublasLtMatmulDescOpaque_t)));
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t, size_t, cublasComputeType_t,
                                                        cudaDataType_t) {
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
  std::free(d);
  return CUBLAS_STATUS_SUCCESS;
}
// Like cuBLASLt, an attribute it does not know is refused (and so must not reach the shadow).
STUB_API cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t attr,
                                                       const void*, size_t) {
  return int(attr) > 1000 ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void*,
                                                       size_t, size_t*) {
  return CUBLAS_STATUS_NOT_SUPPORTED;
}
STUB_API cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType, uint64_t, uint64_t,
                                                   int64_t) {
  *l = static_cast<cublasLtMatrixLayout_t>(std::calloc(1, sizeof(cublasLtMatrixLayoutOpaque_t)));
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t, size_t, cudaDataType, uint64_t,
                                                          uint64_t, int64_t) {
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  std::free(l);
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t attr,
                                                         const void*, size_t) {
  return int(attr) > 1000 ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t,
                                                         void*, size_t, size_t*) {
  return CUBLAS_STATUS_NOT_SUPPORTED;
}
STUB_API cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*,
                                       cublasLtMatrixLayout_t, const void*, cublasLtMatrixLayout_t, const void*,
                                       const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,
                                       const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t) {
  return gemm();
}
STUB_API cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* p) {
  *p = nullptr;
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t) { return CUBLAS_STATUS_SUCCESS; }
STUB_API cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t,
                                                             cublasLtMatmulPreferenceAttributes_t, const void*,
                                                             size_t) {
  return CUBLAS_STATUS_SUCCESS;
}
STUB_API cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                                                       cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                                       cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,
                                                       cublasLtMatmulHeuristicResult_t[], int* n) {
  *n = 0;
  return CUBLAS_STATUS_NOT_SUPPORTED;
}
#endif

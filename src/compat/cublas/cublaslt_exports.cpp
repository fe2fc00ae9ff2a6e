// The cuBLASLt functions of libdeepgemm_cublas.so.1, with cuBLASLt's exact C signatures.
//
// Descriptors stay the real cuBLASLt's objects: create / init / set-attribute forward to it and,
// when it accepts, update this library's shadow of the descriptor (route.hpp's LtDesc / LtLayout),
// which cublasLtMatmul decides from without asking cuBLASLt anything on the hot path. A descriptor
// is forgotten before its real destroy, so an address reused meanwhile is never mistaken for it.
// The preference / heuristic functions only forward: they are here so that a typical cuBLASLt
// program links against this library alone.
#include <cublasLt.h>

#include "compat/cublas/dispatch.hpp"
#include "compat/cublas/forward.hpp"
#include "compat/cublas/handles.hpp"

using namespace dgemm_cublas;

extern "C" {

cublasStatus_t CUBLASWINAPI cublasLtCreate(cublasLtHandle_t* handle) {
  return forward_and_record(DGC_REAL(CublasLt, cublasLtCreate), [&] { if (handle) register_lt_handle(*handle); },
                            handle);
}

cublasStatus_t CUBLASWINAPI cublasLtDestroy(cublasLtHandle_t handle) {
  std::shared_ptr<LtHandleState> record;
  if (!forwarding()) quietly([&] { record = take_lt_handle(handle); });
  const cublasStatus_t st = forward(DGC_REAL(CublasLt, cublasLtDestroy), handle);
  if (st != CUBLAS_STATUS_SUCCESS) quietly([&] { restore_lt_handle(handle, std::move(record)); });
  return st;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t computeType,
                                                     cudaDataType_t scaleType) {
  return forward_and_record(
      DGC_REAL(CublasLt, cublasLtMatmulDescCreate),
      [&] { if (desc) shadow_desc(*desc, lt_desc_init(computeType, scaleType)); }, desc, computeType, scaleType);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t desc, size_t size,
                                                            cublasComputeType_t computeType, cudaDataType_t scaleType) {
  return forward_and_record(
      DGC_REAL(CublasLt, cublasLtMatmulDescInit_internal),
      [&] { shadow_desc(desc, lt_desc_init(computeType, scaleType)); }, desc, size, computeType, scaleType);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  if (!forwarding()) quietly([&] { forget_desc(desc); });
  return forward(DGC_REAL(CublasLt, cublasLtMatmulDescDestroy), desc);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                                           cublasLtMatmulDescAttributes_t attr, const void* buf,
                                                           size_t sizeInBytes) {
  return forward_and_record(
      DGC_REAL(CublasLt, cublasLtMatmulDescSetAttribute), [&] { shadow_desc_set(desc, attr, buf, sizeInBytes); },
      desc, attr, buf, sizeInBytes);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc,
                                                           cublasLtMatmulDescAttributes_t attr, void* buf,
                                                           size_t sizeInBytes, size_t* sizeWritten) {
  return forward(DGC_REAL(CublasLt, cublasLtMatmulDescGetAttribute), desc, attr, buf, sizeInBytes, sizeWritten);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                                       uint64_t cols, int64_t ld) {
  return forward_and_record(
      DGC_REAL(CublasLt, cublasLtMatrixLayoutCreate),
      [&] { if (layout) shadow_layout(*layout, lt_layout_init(type, rows, cols, ld)); }, layout, type, rows, cols, ld);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t layout, size_t size,
                                                              cudaDataType type, uint64_t rows, uint64_t cols,
                                                              int64_t ld) {
  return forward_and_record(
      DGC_REAL(CublasLt, cublasLtMatrixLayoutInit_internal),
      [&] { shadow_layout(layout, lt_layout_init(type, rows, cols, ld)); }, layout, size, type, rows, cols, ld);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  if (!forwarding()) quietly([&] { forget_layout(layout); });
  return forward(DGC_REAL(CublasLt, cublasLtMatrixLayoutDestroy), layout);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                             cublasLtMatrixLayoutAttribute_t attr, const void* buf,
                                                             size_t sizeInBytes) {
  return forward_and_record(
      DGC_REAL(CublasLt, cublasLtMatrixLayoutSetAttribute), [&] { shadow_layout_set(layout, attr, buf, sizeInBytes); },
      layout, attr, buf, sizeInBytes);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout,
                                                             cublasLtMatrixLayoutAttribute_t attr, void* buf,
                                                             size_t sizeInBytes, size_t* sizeWritten) {
  return forward(DGC_REAL(CublasLt, cublasLtMatrixLayoutGetAttribute), layout, attr, buf, sizeInBytes, sizeWritten);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t computeDesc,
                                           const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc,
                                           const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta,
                                           const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                                           cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo,
                                           void* workspace, size_t workspaceSizeInBytes, cudaStream_t stream) {
  // `algo` is cuBLASLt's own choice among its kernels; a routed call runs the plan's kernel instead.
  if (!forwarding()) {
    LtCall call{handle, computeDesc, Adesc, Bdesc, Cdesc, Ddesc, {alpha, beta, A, B, C, D},
                workspace, workspaceSizeInBytes, stream, __builtin_return_address(0)};
    if (try_lt(call) == DEEPGEMM_CUBLAS_ROUTED) return CUBLAS_STATUS_SUCCESS;
  }
  return forward(DGC_REAL(CublasLt, cublasLtMatmul), handle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D,
                 Ddesc, algo, workspace, workspaceSizeInBytes, stream);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  return forward(DGC_REAL(CublasLt, cublasLtMatmulPreferenceCreate), pref);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  return forward(DGC_REAL(CublasLt, cublasLtMatmulPreferenceDestroy), pref);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                                 cublasLtMatmulPreferenceAttributes_t attr,
                                                                 const void* buf, size_t sizeInBytes) {
  return forward(DGC_REAL(CublasLt, cublasLtMatmulPreferenceSetAttribute), pref, attr, buf, sizeInBytes);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                                           cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                                           cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                                           cublasLtMatmulPreference_t preference,
                                                           int requestedAlgoCount,
                                                           cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
                                                           int* returnAlgoCount) {
  return forward(DGC_REAL(CublasLt, cublasLtMatmulAlgoGetHeuristic), handle, desc, Adesc, Bdesc, Cdesc, Ddesc,
                 preference, requestedAlgoCount, heuristicResultsArray, returnAlgoCount);
}

}  // extern "C"

#define DGC_CUBLAS(name)
#define DGC_CUBLASLT(name) DGC_EXPORT_AS(name, "libcublasLt.so.12", "libcublasLt.so.13")
#include "compat/cublas/exports.def"

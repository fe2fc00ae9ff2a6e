// The routed path every GEMM entry point shares: decide (route.hpp), find or make the plan
// (plan_cache.hpp), find workspace, dgemm_execute. Returns DEEPGEMM_CUBLAS_ROUTED when the call ran
// as a DeepGEMM plan; any other value means nothing was enqueued and the caller must forward the
// call to the real cuBLAS. Counts and logs the outcome either way. Never throws.
//
// The hot path (a plan already cached) takes the handle's registry reader lock and its mutex once
// each, hashes the key, and calls dgemm_execute: it allocates nothing. Plans are made, pools grown
// and contexts created only on a miss, and never while the stream is capturing a CUDA graph
// (such a call is forwarded instead).
#pragma once

#include <cstddef>

#include "compat/cublas/route.hpp"
#include "deepgemm/deepgemm_cublas.h"

namespace dgemm_cublas {

deepgemm_cublas_reason_t try_gemm(const void* handle, const GemmCall& call) noexcept;

struct LtCall {
  const void* handle;
  const void* desc;
  const void* a_layout;
  const void* b_layout;
  const void* c_layout;
  const void* d_layout;
  LtOperands ops;
  void* workspace;
  std::size_t workspace_size;
  void* stream;
  const void* caller;  // return address of cublasLtMatmul: cuBLAS's own calls are not counted (real.hpp)
};
deepgemm_cublas_reason_t try_lt(const LtCall& call) noexcept;

}  // namespace dgemm_cublas

// The cuBLAS side of deepgemm-bench (see bench_cublas.hpp for the row-major to column-major map).
#include "bench_cublas.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstring>

namespace bench {

namespace {

constexpr size_t kWorkspaceBytes = size_t(64) << 20;

cudaDataType_t cuda_type(ElemType t) {
  switch (t) {
    case ElemType::F16: return CUDA_R_16F;
    case ElemType::BF16: return CUDA_R_16BF;
    case ElemType::E4M3: return CUDA_R_8F_E4M3;
    case ElemType::I8: return CUDA_R_8I;
    case ElemType::I32: return CUDA_R_32I;
    default: return CUDA_R_32F;
  }
}

// D's type: the inputs' for plain rows, out_type for quantized ones.
ElemType out_type(const GemmShape& s) { return s.quant == Quant::None ? s.type : s.out_type; }

std::string cublas_error(const char* what, cublasStatus_t st) {
  if (st == CUBLAS_STATUS_SUCCESS) return "";
  return std::string(what) + ": " + cublasGetStatusName(st) + " (" + cublasGetStatusString(st) + ")";
}

// cuBLAS's view of the problem: D^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m).
struct ColMajor {
  cublasOperation_t trans_first;   // transpose of cuBLAS's first operand (our B)
  int64_t ld_first;                // its leading dimension
  cublasOperation_t trans_second;  // of its second (our A): A m x k is k x m column-major, no transpose
  int64_t ld_second;               // k (A stored m x k) or m (stored k x m, transposed)
  int64_t ld_out;                  // D^T: n x m, ld n
};

ColMajor col_major(const GemmShape& s) {
  ColMajor c;
  c.trans_first = s.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  c.ld_first = s.b_transposed ? s.k : s.n;
  c.trans_second = s.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  c.ld_second = s.a_transposed ? s.m : s.k;
  c.ld_out = s.n;
  return c;
}

std::string gemm_ex_typed(void* handle, const GemmShape& s, const void* A, const void* B, void* D,
                          cudaDataType_t out_type, void* stream) {
  cublasHandle_t h = static_cast<cublasHandle_t>(handle);
  std::string e = cublas_error("cublasSetStream", cublasSetStream(h, static_cast<cudaStream_t>(stream)));
  if (!e.empty()) return e;
  ColMajor c = col_major(s);
  // INT8 takes i32 scalars and compute; everything else f32.
  const bool int8 = s.type == ElemType::I8;
  const float alpha = 1.0f, beta = 0.0f;
  const int32_t ialpha = 1, ibeta = 0;
  cudaDataType_t in = cuda_type(s.type);
  return cublas_error(
      "cublasGemmEx",
      cublasGemmEx(h, c.trans_first, c.trans_second, static_cast<int>(s.n), static_cast<int>(s.m), static_cast<int>(s.k),
                   int8 ? static_cast<const void*>(&ialpha) : &alpha, B, in, static_cast<int>(c.ld_first), A, in,
                   static_cast<int>(c.ld_second), int8 ? static_cast<const void*>(&ibeta) : &beta, D, out_type,
                   static_cast<int>(c.ld_out), int8 ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

struct Cublas::LtState {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, out = nullptr;
  cublasLtMatmulAlgo_t algo;
  bool ready = false;
  bool int_scalars = false;  // INT8: alpha and beta are int32
};

Cublas::Cublas() : lt_state_(new LtState) {
  cublasHandle_t h = nullptr;
  error_ = cublas_error("cublasCreate", cublasCreate(&h));
  if (!error_.empty()) return;
  handle_ = h;
  cublasLtHandle_t lt = nullptr;
  error_ = cublas_error("cublasLtCreate", cublasLtCreate(&lt));
  if (!error_.empty()) return;
  lt_ = lt;
  if (cudaMalloc(&workspace_, kWorkspaceBytes) != cudaSuccess || cudaMalloc(&lt_workspace_, kWorkspaceBytes) != cudaSuccess) {
    error_ = "cudaMalloc of the cuBLAS workspaces failed";
    return;
  }
  workspace_size_ = kWorkspaceBytes;
  error_ = cublas_error("cublasSetWorkspace", cublasSetWorkspace(h, workspace_, workspace_size_));
}

Cublas::~Cublas() {
  release_lt();
  delete lt_state_;
  if (lt_) cublasLtDestroy(static_cast<cublasLtHandle_t>(lt_));
  if (handle_) cublasDestroy(static_cast<cublasHandle_t>(handle_));
  if (workspace_) cudaFree(workspace_);
  if (lt_workspace_) cudaFree(lt_workspace_);
}

std::string Cublas::gemm_ex(const GemmShape& s, const void* A, const void* B, void* D, void* stream) {
  return gemm_ex_typed(handle_, s, A, B, D, cuda_type(out_type(s)), stream);
}

std::string Cublas::gemm_ex_f32(const GemmShape& s, const void* A, const void* B, float* D, void* stream) {
  return gemm_ex_typed(handle_, s, A, B, D, CUDA_R_32F, stream);
}

std::string Cublas::grouped_gemm_ex(const GemmShape& s, const std::vector<int>& rows, const void* const* A,
                                    const void* const* B, void* const* D, void* stream) {
  cublasHandle_t h = static_cast<cublasHandle_t>(handle_);
  std::string e = cublas_error("cublasSetStream", cublasSetStream(h, static_cast<cudaStream_t>(stream)));
  if (!e.empty()) return e;
  // Per group, in cuBLAS's column-major view (see bench_cublas.hpp): D_i^T = op(B_i^T) A_i^T.
  const ColMajor c = col_major(s);
  const int groups = static_cast<int>(rows.size());
  std::vector<cublasOperation_t> trans_first(groups, c.trans_first), trans_second(groups, CUBLAS_OP_N);
  std::vector<int> m(groups, static_cast<int>(s.n)), k(groups, static_cast<int>(s.k));
  std::vector<int> ld_first(groups, static_cast<int>(c.ld_first)), ld_second(groups, static_cast<int>(c.ld_second));
  std::vector<int> ld_out(groups, static_cast<int>(c.ld_out)), group_size(groups, 1);
  std::vector<float> alpha(groups, 1.0f), beta(groups, 0.0f);
  const cudaDataType_t t = cuda_type(s.type);
  return cublas_error("cublasGemmGroupedBatchedEx",
                      cublasGemmGroupedBatchedEx(h, trans_first.data(), trans_second.data(), m.data(), rows.data(),
                                                 k.data(), alpha.data(), B, t, ld_first.data(), A, t,
                                                 ld_second.data(), beta.data(), D, t, ld_out.data(), groups,
                                                 group_size.data(), CUBLAS_COMPUTE_32F));
}

void Cublas::release_lt() { release_lt_state(*lt_state_); }

void Cublas::release_lt_state(LtState& st) {
  if (st.desc) cublasLtMatmulDescDestroy(st.desc);
  if (st.first) cublasLtMatrixLayoutDestroy(st.first);
  if (st.second) cublasLtMatrixLayoutDestroy(st.second);
  if (st.out) cublasLtMatrixLayoutDestroy(st.out);
  st = LtState();
}

std::string Cublas::prepare_lt(const GemmShape& s, const void* bias) {
  release_lt();
  return prepare_lt_state(*lt_state_, s, bias);
}

std::shared_ptr<const Cublas::LtState> Cublas::prepare_lt_gemm(const GemmShape& s, const void* bias, std::string* why) {
  std::shared_ptr<LtState> st(new LtState, [](LtState* p) {
    release_lt_state(*p);
    delete p;
  });
  *why = prepare_lt_state(*st, s, bias);
  return why->empty() ? st : nullptr;
}

// Fills st (released) with the descriptors and algorithm of s; on failure releases it again.
std::string Cublas::prepare_lt_state(LtState& st, const GemmShape& s, const void* bias) {
  ColMajor c = col_major(s);
  cudaDataType_t t = cuda_type(s.type), t_out = cuda_type(out_type(s));
  st.int_scalars = s.type == ElemType::I8;
  std::string e = cublas_error("cublasLtMatmulDescCreate",
                               st.int_scalars ? cublasLtMatmulDescCreate(&st.desc, CUBLAS_COMPUTE_32I, CUDA_R_32I)
                                              : cublasLtMatmulDescCreate(&st.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  if (e.empty())
    e = cublas_error("CUBLASLT_MATMUL_DESC_TRANSA", cublasLtMatmulDescSetAttribute(st.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                                                  &c.trans_first, sizeof c.trans_first));
  if (e.empty())
    e = cublas_error("CUBLASLT_MATMUL_DESC_TRANSB", cublasLtMatmulDescSetAttribute(st.desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                                                  &c.trans_second, sizeof c.trans_second));
  if (e.empty() && s.bias_gelu) {
    // Lt's bias is per row of its (column-major) output D^T, i.e. per column j of our D: the
    // same vector, in D's type (Lt's default bias type for 16-bit outputs).
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_GELU_BIAS;
    e = cublas_error("CUBLASLT_MATMUL_DESC_EPILOGUE",
                     cublasLtMatmulDescSetAttribute(st.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    if (e.empty())
      e = cublas_error("CUBLASLT_MATMUL_DESC_BIAS_POINTER",
                       cublasLtMatmulDescSetAttribute(st.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  }
  if (e.empty() && s.type == ElemType::E4M3) {
    // cuBLAS's A is our B and its B our A: the scale pointers cross over too.
    const void* first_scale = s.b_scale;
    const void* second_scale = s.a_scale;
    e = cublas_error("CUBLASLT_MATMUL_DESC_A_SCALE_POINTER",
                     cublasLtMatmulDescSetAttribute(st.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &first_scale,
                                                    sizeof first_scale));
    if (e.empty())
      e = cublas_error("CUBLASLT_MATMUL_DESC_B_SCALE_POINTER",
                       cublasLtMatmulDescSetAttribute(st.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &second_scale,
                                                      sizeof second_scale));
  }
  // The first operand as stored: n x k (no transpose) is k x n stored when transposed.
  uint64_t first_rows = s.b_transposed ? s.k : s.n, first_cols = s.b_transposed ? s.n : s.k;
  if (e.empty())
    e = cublas_error("cublasLtMatrixLayoutCreate(B)", cublasLtMatrixLayoutCreate(&st.first, t, first_rows, first_cols, c.ld_first));
  if (e.empty())
    e = cublas_error("cublasLtMatrixLayoutCreate(A)",
                     cublasLtMatrixLayoutCreate(&st.second, t, s.a_transposed ? s.m : s.k, s.a_transposed ? s.k : s.m,
                                                c.ld_second));
  if (e.empty())
    e = cublas_error("cublasLtMatrixLayoutCreate(D)", cublasLtMatrixLayoutCreate(&st.out, t_out, s.n, s.m, c.ld_out));
  cublasLtMatmulPreference_t pref = nullptr;
  if (e.empty()) e = cublas_error("cublasLtMatmulPreferenceCreate", cublasLtMatmulPreferenceCreate(&pref));
  if (e.empty()) {
    uint64_t ws = workspace_size_;
    e = cublas_error("CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES",
                     cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  }
  if (e.empty()) {
    cublasLtMatmulHeuristicResult_t result;
    std::memset(&result, 0, sizeof result);
    int found = 0;
    e = cublas_error("cublasLtMatmulAlgoGetHeuristic",
                     cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(lt_), st.desc, st.first, st.second,
                                                    st.out, st.out, pref, 1, &result, &found));
    if (e.empty() && found == 0) e = "cublasLtMatmulAlgoGetHeuristic found no algorithm";
    if (e.empty()) {
      st.algo = result.algo;
      st.ready = true;
    }
  }
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (!e.empty()) release_lt_state(st);
  return e;
}

std::string Cublas::run_lt(const void* A, const void* B, void* D, void* stream) {
  return run_lt_gemm(*lt_state_, A, B, D, stream);
}

std::string Cublas::run_lt_gemm(const LtState& st, const void* A, const void* B, void* D, void* stream) {
  if (!st.ready) return "cuBLASLt not prepared";
  const float alpha = 1.0f, beta = 0.0f;
  const int32_t ialpha = 1, ibeta = 0;
  const void* a = st.int_scalars ? static_cast<const void*>(&ialpha) : &alpha;
  const void* b = st.int_scalars ? static_cast<const void*>(&ibeta) : &beta;
  return cublas_error("cublasLtMatmul",
                      cublasLtMatmul(static_cast<cublasLtHandle_t>(lt_), st.desc, a, B, st.first, A, st.second, b, D,
                                     st.out, D, st.out, &st.algo, lt_workspace_, workspace_size_,
                                     static_cast<cudaStream_t>(stream)));
}

}  // namespace bench

// The cuBLAS side of deepgemm-bench: one row-major GEMM of the benchmark expressed for
// cublasGemmEx and for cublasLtMatmul (column-major), plus the f32 reference product.
//
// Row-major D (m x n) = A (m x k) * op(B) is, read column-major, D^T (n x m) = op(B)^T * A^T: cuBLAS
// gets B as its first operand and A as its second, with m and n swapped. A row-major m x k array is
// the column-major k x m array A^T (ld k); B of layout "nn" (row-major k x n) is the column-major
// n x k array B^T (ld n, no transpose); B of layout "tn" (row-major n x k, D = A B^T) is the
// column-major k x n array B^T (ld k), so cuBLAS transposes it (CUBLAS_OP_T: its fastest "TN" case).
// A stored k x m (layouts "tt" and "nt": D = A^T op(B)) is the column-major m x k array, which
// cuBLAS transposes (second operand CUBLAS_OP_T, ld m). Layout names follow cuBLAS's call: the
// first letter is its first operand's (our B's) transpose, the second its second's (our A's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_device.hpp"

namespace bench {

// FP8 and INT8 rows (--dtype fp8t, fp8b, fp8q, i8): what both sides compute.
enum class Quant {
  None,
  Fp8Tensor,   // e4m3 A and B, one f32 scale each, D bf16: cuBLASLt A/B_SCALE_POINTER
  Fp8Block,    // e4m3 A (1 x 128 scales) and B (128 x 128), D bf16: DeepGEMM's layout; cuBLAS
               // runs the per-tensor GEMM of the shape (the comparison)
  Fp8BlockQ,   // Fp8Block with D quantized to e4m3 in 1 x 128 blocks by the epilogue
  Int8,        // i8 A and B, D i32 (i32 accumulation)
};

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool b_transposed = true;   // layouts "tn", "tt": B stored n x k (op(B) = B^T); false: B stored k x n
  bool a_transposed = false;  // layouts "tt", "nt": A stored k x m (op(A) = A^T); false: A stored m x k
  ElemType type = ElemType::BF16;  // A, B, C and D (the inputs only for quantized rows)
  bool bias_gelu = false;          // epilogue: D = gelu_tanh(A op(B) + bias[col])
  Quant quant = Quant::None;
  // Quantized rows: cuBLAS's output type, and the per-tensor f32 scales of A and B (device).
  ElemType out_type = ElemType::BF16;
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
};

class Cublas {
 public:
  // Creates the handles and workspaces on the current device; check ok() / error().
  Cublas();
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  // cublasGemmEx, CUBLAS_COMPUTE_32F (32I for INT8, D i32), default algorithm; D of the shape's
  // type. Plain GEMMs only (not FP8: GemmEx has no FP8). Returns "" or the error.
  std::string gemm_ex(const GemmShape& s, const void* A, const void* B, void* D, void* stream);
  // The same product with an f32 output: the reference every result is compared with.
  std::string gemm_ex_f32(const GemmShape& s, const void* A, const void* B, float* D, void* stream);

  // cublasGemmGroupedBatchedEx (cuBLAS's grouped GEMM): GEMM i is rows[i] x s.n x s.k in the
  // layout of `s` (s.m is ignored), one GEMM per group; A, B and D are device arrays of device
  // pointers, as cuBLAS takes them. Returns "" or the error.
  std::string grouped_gemm_ex(const GemmShape& s, const std::vector<int>& rows, const void* const* A,
                              const void* const* B, void* const* D, void* stream);

  // cublasLtMatmul with the heuristic's first algorithm and a workspace; the bias + GELU epilogue
  // fused when the shape asks for it. Quantized rows: FP8 e4m3 TN with the per-tensor scales as
  // CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER and a bf16 D; INT8 TN with i32 compute and D. prepare_lt chooses the algorithm (once per shape); run_lt
  // launches. prepare_lt returns "" or why Lt cannot run it (then skip Lt for that row).
  std::string prepare_lt(const GemmShape& s, const void* bias);
  std::string run_lt(const void* A, const void* B, void* D, void* stream);

  // The same GEMM prepared into a state the caller keeps, for several at once (--grouped's
  // cublaslt_loop: one per expert, each with its own rows and scale pointers). prepare_lt_gemm
  // returns null and sets *why when Lt cannot run the shape; the state frees its descriptors when
  // the last copy goes. run_lt_gemm launches it on this object's Lt handle and workspace.
  struct LtState;
  std::shared_ptr<const LtState> prepare_lt_gemm(const GemmShape& s, const void* bias, std::string* why);
  std::string run_lt_gemm(const LtState& gemm, const void* A, const void* B, void* D, void* stream);

 private:
  void release_lt();
  std::string prepare_lt_state(LtState& st, const GemmShape& s, const void* bias);
  static void release_lt_state(LtState& st);

  std::string error_;
  void* handle_ = nullptr;     // cublasHandle_t
  void* lt_ = nullptr;         // cublasLtHandle_t
  void* workspace_ = nullptr;  // for cublasGemmEx (cublasSetWorkspace: required for graph capture)
  void* lt_workspace_ = nullptr;
  size_t workspace_size_ = 0;
  LtState* lt_state_ = nullptr;
};

}  // namespace bench

// The routing decision (see route.hpp). Every "no" names the cuBLAS argument and says why; a call
// cuBLAS itself would reject is never routed, so that cuBLAS reports its own status for it.
#include "compat/cublas/route.hpp"

#include <cublasLt.h>
#include <cublas_api.h>

#include <cstring>

namespace dgemm_cublas {

const char* entry_name(Entry e) {
  switch (e) {
    case Entry::GemmEx: return "cublasGemmEx";
    case Entry::GemmStridedBatchedEx: return "cublasGemmStridedBatchedEx";
    case Entry::GemmBatchedEx: return "cublasGemmBatchedEx";
    case Entry::Sgemm: return "cublasSgemm";
    case Entry::SgemmStridedBatched: return "cublasSgemmStridedBatched";
    case Entry::Hgemm: return "cublasHgemm";
    case Entry::HgemmStridedBatched: return "cublasHgemmStridedBatched";
    case Entry::LtMatmul: return "cublasLtMatmul";
  }
  return "?";
}

bool operator==(const PlanKey& a, const PlanKey& b) { return std::memcmp(&a, &b, sizeof(PlanKey)) == 0; }

std::size_t PlanKeyHash::operator()(const PlanKey& k) const {
  // 64-bit words through a multiply-xorshift mix: cheap on the hot path, and every field counts.
  uint64_t words[sizeof(PlanKey) / 8];
  std::memcpy(words, &k, sizeof(words));
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (uint64_t w : words) {
    h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  }
  return static_cast<std::size_t>(h);
}

void make_problem(const PlanKey& key, dgemm_problem_t* p, dgemm_epilogue_t* e) {
  dgemm_problem_init(p);
  p->m = key.m;
  p->n = key.n;
  p->k = key.k;
  p->a_type = static_cast<dgemm_dtype_t>(key.a_type);
  p->b_type = static_cast<dgemm_dtype_t>(key.b_type);
  p->c_type = static_cast<dgemm_dtype_t>(key.c_type);
  p->d_type = static_cast<dgemm_dtype_t>(key.d_type);
  p->compute_type = DGEMM_DTYPE_F32;
  p->op_a = static_cast<dgemm_op_t>(key.op_a);
  p->op_b = static_cast<dgemm_op_t>(key.op_b);
  p->order = static_cast<dgemm_order_t>(key.order);
  p->lda = key.lda;
  p->ldb = key.ldb;
  p->ldc = key.ldc;
  p->ldd = key.ldd;
  p->batch_count = key.batch;
  p->stride_a = key.stride_a;
  p->stride_b = key.stride_b;
  p->stride_c = key.stride_c;
  p->stride_d = key.stride_d;
  dgemm_epilogue_init(e);
  // Only "beta != 0" matters at plan time; the values come with every call.
  e->beta = key.reads_c ? 1.0f : 0.0f;
  e->bias_mode = static_cast<dgemm_vector_mode_t>(key.bias_mode);
  e->bias_type = static_cast<dgemm_dtype_t>(key.bias_type);
  e->activation = static_cast<dgemm_activation_t>(key.activation);
}

float half_to_float(uint16_t bits) {
  const uint32_t sign = uint32_t(bits >> 15) << 31;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t out;
  if (exponent == 0x1f) {
    out = sign | 0x7f800000u | (mantissa << 13);  // inf / NaN
  } else if (exponent != 0) {
    out = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    out = sign;
  } else {
    // Subnormal half: normalise into a float exponent.
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    out = sign | (uint32_t(113 - shift) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &out, sizeof(f));
  return f;
}

namespace {

// Values that only the newest cuBLAS headers name (CUDA 13): written as numbers so that the
// library also builds against CUDA 12 headers, where they are simply never passed.
constexpr int kMathFp32EmulatedBf16x9 = 4;        // CUBLAS_FP32_EMULATED_BF16X9_MATH
constexpr int kMathFp64EmulatedFixedpoint = 8;    // CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH
constexpr int kCompute32fEmulated16bfx9 = 78;     // CUBLAS_COMPUTE_32F_EMULATED_16BFX9
constexpr int kLtScaleModeFirst = 31;             // CUBLASLT_MATMUL_DESC_A_SCALE_MODE
constexpr int kLtEmulationDescriptor = 38;        // CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR (last of 31..38)

// The cudaDataType values our plans read and write, mapped to DeepGEMM's; -1: none.
int dtype_of(int cuda_type) {
  switch (cuda_type) {
    case CUDA_R_32F: return DGEMM_DTYPE_F32;
    case CUDA_R_16F: return DGEMM_DTYPE_F16;
    case CUDA_R_16BF: return DGEMM_DTYPE_BF16;
    default: return -1;
  }
}
int64_t dtype_bytes(int dgemm_type) { return dgemm_type == DGEMM_DTYPE_F32 ? 4 : 2; }

bool valid_op(int op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }
// For real types cuBLAS's OP_C is the transpose.
int32_t op_of(int op) { return op == CUBLAS_OP_N ? DGEMM_OP_N : DGEMM_OP_T; }

bool valid_algo(int algo) {
  return (algo >= CUBLAS_GEMM_DEFAULT && algo <= CUBLAS_GEMM_ALGO23) ||
         (algo >= CUBLAS_GEMM_DEFAULT_TENSOR_OP && algo <= CUBLAS_GEMM_ALGO15_TENSOR_OP) || algo == CUBLAS_GEMM_AUTOTUNE;
}

bool aligned(const void* p, int64_t bytes) { return reinterpret_cast<uintptr_t>(p) % uint64_t(bytes) == 0; }

int64_t max1(int64_t v) { return v > 1 ? v : 1; }

Decision no(deepgemm_cublas_reason_t reason, const char* why) {
  Decision d;
  d.reason = reason;
  d.why = why;
  return d;
}

// Host or device alpha/beta into execute-time scalars; `half`: the scalars are binary16.
// Returns false (with d set) when the call cannot be routed for its scalars.
bool take_scalars(Decision& d, bool device, bool half, const void* alpha, const void* beta) {
  if (device) {
    if (half) {
      d = no(DEEPGEMM_CUBLAS_POINTER_MODE, "half-precision alpha/beta in device memory (plans read float scalars)");
      return false;
    }
    if (!aligned(alpha, 4) || !aligned(beta, 4)) {
      d = no(DEEPGEMM_CUBLAS_ALIGNMENT, "device alpha/beta not 4-byte aligned");
      return false;
    }
    d.scalars.mode = DGEMM_SCALARS_DEVICE;
    d.scalars.alpha_ptr = static_cast<const float*>(alpha);
    d.scalars.beta_ptr = static_cast<const float*>(beta);
    d.key.reads_c = 1;  // beta is unknown until the kernel runs (which skips C when it is 0)
    return true;
  }
  float a, b;
  if (half) {
    uint16_t ha, hb;
    std::memcpy(&ha, alpha, 2);
    std::memcpy(&hb, beta, 2);
    a = half_to_float(ha);
    b = half_to_float(hb);
  } else {
    std::memcpy(&a, alpha, 4);
    std::memcpy(&b, beta, 4);
  }
  if (a == 0.0f) {
    // BLAS: with alpha = 0, A and B are not read (their NaNs do not reach C); cuBLAS only scales C.
    d = no(DEEPGEMM_CUBLAS_EMPTY, "alpha = 0 (cuBLAS only scales C)");
    return false;
  }
  d.scalars.mode = DGEMM_SCALARS_HOST;
  d.scalars.alpha = a;
  d.scalars.beta = b;
  d.key.reads_c = b != 0.0f ? 1 : 0;  // BLAS: beta = 0 never reads C, even NaN
  return true;
}

}  // namespace

Decision route_gemm(const GemmCall& c, const HandleModes& modes) {
  // cuBLAS's own argument checks first: what it rejects, it reports.
  if (!valid_op(c.transa) || !valid_op(c.transb)) return no(DEEPGEMM_CUBLAS_INVALID, "transa/transb not N, T or C");
  if (c.m < 0 || c.n < 0 || c.k < 0 || c.batch < 0) return no(DEEPGEMM_CUBLAS_INVALID, "negative m, n, k or batch count");
  if (!valid_algo(c.algo)) return no(DEEPGEMM_CUBLAS_INVALID, "algo is not a cublasGemmAlgo_t");
  const int64_t rows_a = c.transa == CUBLAS_OP_N ? c.m : c.k;
  const int64_t rows_b = c.transb == CUBLAS_OP_N ? c.k : c.n;
  if (c.lda < max1(rows_a)) return no(DEEPGEMM_CUBLAS_INVALID, "lda < rows of A");
  if (c.ldb < max1(rows_b)) return no(DEEPGEMM_CUBLAS_INVALID, "ldb < rows of B");
  if (c.ldc < max1(c.m)) return no(DEEPGEMM_CUBLAS_INVALID, "ldc < m");
  if (c.m == 0 || c.n == 0 || c.batch == 0) return no(DEEPGEMM_CUBLAS_EMPTY, "m, n or batch count is 0");
  if (c.k == 0) return no(DEEPGEMM_CUBLAS_EMPTY, "k = 0 (cuBLAS only scales C)");
  if (c.alpha == nullptr || c.beta == nullptr) return no(DEEPGEMM_CUBLAS_INVALID, "alpha or beta is NULL");
  if (c.pointer_array)
    return no(DEEPGEMM_CUBLAS_LAYOUT, "pointer-array batches (the arrays are in device memory; plans take strided batches)");
  if (c.A == nullptr || c.B == nullptr || c.C == nullptr) return no(DEEPGEMM_CUBLAS_INVALID, "A, B or C is NULL");

  // Math mode: pedantic asks for cuBLAS's reference behaviour; unknown bits are not ours to guess.
  const int math_base = modes.math_mode & ~int(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  if (math_base == CUBLAS_PEDANTIC_MATH) return no(DEEPGEMM_CUBLAS_MATH_MODE, "CUBLAS_PEDANTIC_MATH");
  if (math_base != CUBLAS_DEFAULT_MATH && math_base != CUBLAS_TENSOR_OP_MATH && math_base != CUBLAS_TF32_TENSOR_OP_MATH &&
      math_base != kMathFp32EmulatedBf16x9 && math_base != kMathFp64EmulatedFixedpoint)
    return no(DEEPGEMM_CUBLAS_MATH_MODE, "unknown math mode");

  // Types. cuBLAS's table for these compute types: A = B; C in A's type or f32 (f16/bf16 inputs).
  const int a = dtype_of(c.a_type), b = dtype_of(c.b_type), cc = dtype_of(c.c_type);
  bool half_scalars = false;
  switch (c.compute_type) {
    case CUBLAS_COMPUTE_32F:
      if (a < 0 || a != b || cc < 0) return no(DEEPGEMM_CUBLAS_TYPE, "A/B/C types (plans take f16/bf16/f32)");
      if (a == DGEMM_DTYPE_F32 && cc != DGEMM_DTYPE_F32) return no(DEEPGEMM_CUBLAS_TYPE, "f32 A/B with a 16-bit C");
      if (a != DGEMM_DTYPE_F32 && cc != a && cc != DGEMM_DTYPE_F32)
        return no(DEEPGEMM_CUBLAS_TYPE, "C type is neither A's type nor f32");
      // f32 inputs: any math mode but the default lets cuBLAS reduce precision (TF32, BF16x9,
      // f16), which is not what an f32 plan computes.
      if (a == DGEMM_DTYPE_F32 && math_base != CUBLAS_DEFAULT_MATH)
        return no(DEEPGEMM_CUBLAS_MATH_MODE, "f32 inputs with a reduced-precision math mode (TF32 / tensor-op / BF16x9)");
      break;
    case CUBLAS_COMPUTE_16F:
      // cuBLAS: "at least half precision" accumulation; the plan accumulates in f32.
      if (a != DGEMM_DTYPE_F16 || b != a || cc != a) return no(DEEPGEMM_CUBLAS_TYPE, "CUBLAS_COMPUTE_16F needs f16 A, B and C");
      half_scalars = true;
      break;
    case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case kCompute32fEmulated16bfx9:
      return no(DEEPGEMM_CUBLAS_COMPUTE_TYPE, "reduced-precision f32 compute type (no such kernel)");
    case CUBLAS_COMPUTE_16F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
      return no(DEEPGEMM_CUBLAS_COMPUTE_TYPE, "pedantic compute type");
    default:
      return no(DEEPGEMM_CUBLAS_COMPUTE_TYPE, "compute type (f64, i32 or unknown)");
  }

  // Batches: a shared C would be written by every batch at once; negative strides are not ours.
  int64_t sa = c.stride_a, sb = c.stride_b, sc = c.stride_c;
  if (c.batch > 1) {
    if (sa < 0 || sb < 0 || sc < 0) return no(DEEPGEMM_CUBLAS_LAYOUT, "negative batch stride");
    if (sc < c.ldc * c.n) return no(DEEPGEMM_CUBLAS_LAYOUT, "strideC < ldc * n (batches of C overlap)");
  } else {
    sa = sb = sc = 0;  // ignored by cuBLAS: one key for every stride
  }

  if (!aligned(c.A, dtype_bytes(a)) || !aligned(c.B, dtype_bytes(b)) || !aligned(c.C, dtype_bytes(cc)))
    return no(DEEPGEMM_CUBLAS_ALIGNMENT, "A, B or C not aligned to its element size");

  Decision d;
  if (modes.pointer_mode != CUBLAS_POINTER_MODE_HOST && modes.pointer_mode != CUBLAS_POINTER_MODE_DEVICE)
    return no(DEEPGEMM_CUBLAS_POINTER_MODE, "unknown pointer mode");
  if (!take_scalars(d, modes.pointer_mode == CUBLAS_POINTER_MODE_DEVICE, half_scalars, c.alpha, c.beta)) return d;

  PlanKey& k = d.key;
  k.m = c.m;
  k.n = c.n;
  k.k = c.k;
  k.lda = c.lda;
  k.ldb = c.ldb;
  k.ldc = k.ldd = c.ldc;  // C is read and written in place
  k.batch = c.batch;
  k.stride_a = sa;
  k.stride_b = sb;
  k.stride_c = k.stride_d = sc;
  k.a_type = a;
  k.b_type = b;
  k.c_type = k.d_type = cc;
  k.op_a = op_of(c.transa);
  k.op_b = op_of(c.transb);
  k.order = DGEMM_ORDER_COL_MAJOR;
  k.bias_mode = DGEMM_VECTOR_NONE;
  k.bias_type = DGEMM_DTYPE_F32;
  k.activation = DGEMM_ACT_NONE;
  d.reason = DEEPGEMM_CUBLAS_ROUTED;
  d.why = "";
  return d;
}

// --- cuBLASLt descriptors ------------------------------------------------------------------------

LtDesc lt_desc_init(int32_t compute_type, int32_t scale_type) {
  LtDesc d;
  d.compute_type = compute_type;
  d.scale_type = scale_type;
  return d;
}

LtLayout lt_layout_init(uint32_t type, uint64_t rows, uint64_t cols, int64_t ld) {
  LtLayout l;
  l.type = type;
  l.rows = rows;
  l.cols = cols;
  l.ld = ld;
  return l;
}

namespace {

// Reads an attribute value of exactly T's size; false if the size differs.
template <class T>
bool read_as(const void* buf, std::size_t size, T* out) {
  if (buf == nullptr || size != sizeof(T)) return false;
  std::memcpy(out, buf, sizeof(T));
  return true;
}

// Marks (or clears) attribute `attr` as holding a value we do not map.
void mark(uint64_t& unmapped, int attr, bool unmappable) {
  const uint64_t bit = uint64_t(1) << attr;
  unmapped = unmappable ? (unmapped | bit) : (unmapped & ~bit);
}

// An attribute that must stay at zero / NULL for us to route (scale pointers and modes, amax,
// emulation): any size, all bytes zero.
bool all_zero(const void* buf, std::size_t size) {
  const unsigned char* p = static_cast<const unsigned char*>(buf);
  for (std::size_t i = 0; i < size; ++i)
    if (p[i]) return false;
  return true;
}

}  // namespace

void lt_desc_set(LtDesc& d, int attr, const void* buf, std::size_t size) {
  bool ok = true;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: ok = read_as(buf, size, &d.compute_type); break;
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: ok = read_as(buf, size, &d.scale_type); break;
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: ok = read_as(buf, size, &d.pointer_mode); break;
    case CUBLASLT_MATMUL_DESC_TRANSA: ok = read_as(buf, size, &d.transa); break;
    case CUBLASLT_MATMUL_DESC_TRANSB: ok = read_as(buf, size, &d.transb); break;
    case CUBLASLT_MATMUL_DESC_TRANSC: ok = read_as(buf, size, &d.transc); break;
    case CUBLASLT_MATMUL_DESC_EPILOGUE: ok = read_as(buf, size, &d.epilogue); break;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: ok = read_as(buf, size, &d.bias); break;
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: ok = read_as(buf, size, &d.bias_batch_stride); break;
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: ok = read_as(buf, size, &d.bias_type); break;
    case CUBLASLT_MATMUL_DESC_FILL_MODE: {
      int32_t fill = 0;
      ok = read_as(buf, size, &fill);
      mark(d.unmapped, attr, !ok || fill != CUBLAS_FILL_MODE_FULL);
      return;
    }
    // Used only by epilogues and pointer modes we never route (AUX outputs, alpha vectors), or
    // performance hints: their values cannot change what a routed call computes.
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE:
    case CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE:
    case CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER:
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM:  // FP8 only; FP8 is not routed
      return;
    // FP8 scaling and emulation: routed only at their defaults (NULL / 0).
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_C_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_AMAX_D_POINTER:
      mark(d.unmapped, attr, buf == nullptr || !all_zero(buf, size));
      return;
    default:
      // Scale modes, the D output scale and the emulation descriptor (31..38): same rule.
      if (attr >= kLtScaleModeFirst && attr <= kLtEmulationDescriptor) {
        mark(d.unmapped, attr, buf == nullptr || !all_zero(buf, size));
        return;
      }
      d.unknown = true;
      return;
  }
  // A size we cannot read for an attribute we map: cuBLASLt took it, so we cannot know its value.
  if (!ok) d.unknown = true;
}

void lt_layout_set(LtLayout& l, int attr, const void* buf, std::size_t size) {
  bool ok = true;
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: ok = read_as(buf, size, &l.type); break;
    case CUBLASLT_MATRIX_LAYOUT_ORDER: ok = read_as(buf, size, &l.order); break;
    case CUBLASLT_MATRIX_LAYOUT_ROWS: ok = read_as(buf, size, &l.rows); break;
    case CUBLASLT_MATRIX_LAYOUT_COLS: ok = read_as(buf, size, &l.cols); break;
    case CUBLASLT_MATRIX_LAYOUT_LD: ok = read_as(buf, size, &l.ld); break;
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: ok = read_as(buf, size, &l.batch); break;
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: ok = read_as(buf, size, &l.stride); break;
    case CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET:  // planar complex
    case CUBLASLT_MATRIX_LAYOUT_BATCH_MODE:    // pointer arrays
      mark(l.unmapped, attr, buf == nullptr || !all_zero(buf, size));
      return;
    default:
      l.unknown = true;
      return;
  }
  if (!ok) l.unknown = true;
}

namespace {

// The shape of a layout as stored, in elements; false if it does not fit the int32 range
// cuBLASLt documents (or is not a strided layout we know).
bool layout_ok(const LtLayout& l) {
  return !l.unknown && l.unmapped == 0 && l.rows <= 0x7fffffffull && l.cols <= 0x7fffffffull && l.batch >= 1;
}
int64_t min_ld(const LtLayout& l) {
  const int64_t need = l.order == CUBLASLT_ORDER_ROW ? int64_t(l.cols) : int64_t(l.rows);
  return max1(need);
}

}  // namespace

Decision route_lt(const LtDesc& desc, const LtLayout& la, const LtLayout& lb, const LtLayout& lc, const LtLayout& ld,
                  const LtOperands& ops) {
  if (desc.unknown) return no(DEEPGEMM_CUBLAS_EPILOGUE, "a matmul descriptor attribute this library does not know");
  if (desc.unmapped) return no(DEEPGEMM_CUBLAS_EPILOGUE, "FP8 scale / amax / fill-mode / emulation attributes set");
  if (!layout_ok(la) || !layout_ok(lb) || !layout_ok(lc) || !layout_ok(ld))
    return no(DEEPGEMM_CUBLAS_LAYOUT, "a layout attribute we do not map (planar complex, pointer arrays, > int32 sizes)");
  if (desc.compute_type != CUBLAS_COMPUTE_32F) return no(DEEPGEMM_CUBLAS_COMPUTE_TYPE, "compute type is not CUBLAS_COMPUTE_32F");
  if (desc.scale_type != CUDA_R_32F) return no(DEEPGEMM_CUBLAS_COMPUTE_TYPE, "scale type is not CUDA_R_32F");
  if (!valid_op(desc.transa) || !valid_op(desc.transb)) return no(DEEPGEMM_CUBLAS_INVALID, "transa/transb not N, T or C");
  if (desc.transc != CUBLAS_OP_N) return no(DEEPGEMM_CUBLAS_LAYOUT, "transc is not N");

  int32_t activation;
  bool has_bias;
  switch (desc.epilogue) {
    case CUBLASLT_EPILOGUE_DEFAULT: activation = DGEMM_ACT_NONE; has_bias = false; break;
    case CUBLASLT_EPILOGUE_RELU: activation = DGEMM_ACT_RELU; has_bias = false; break;
    case CUBLASLT_EPILOGUE_BIAS: activation = DGEMM_ACT_NONE; has_bias = true; break;
    case CUBLASLT_EPILOGUE_RELU_BIAS: activation = DGEMM_ACT_RELU; has_bias = true; break;
    // cuBLASLt's GELU taken as the tanh form (frameworks fuse it for gelu(approximate="tanh"));
    // tests/compat/cublas_gpu_check checks the real cuBLASLt against both forms.
    case CUBLASLT_EPILOGUE_GELU: activation = DGEMM_ACT_GELU_TANH; has_bias = false; break;
    case CUBLASLT_EPILOGUE_GELU_BIAS: activation = DGEMM_ACT_GELU_TANH; has_bias = true; break;
    default: return no(DEEPGEMM_CUBLAS_EPILOGUE, "epilogue (AUX outputs, gradients) not mapped");
  }
  if (desc.pointer_mode != CUBLASLT_POINTER_MODE_HOST && desc.pointer_mode != CUBLASLT_POINTER_MODE_DEVICE)
    return no(DEEPGEMM_CUBLAS_POINTER_MODE, "alpha/beta vector pointer modes");

  const int a = dtype_of(int(la.type)), b = dtype_of(int(lb.type));
  const int cc = dtype_of(int(lc.type)), dd = dtype_of(int(ld.type));
  if (la.type == CUDA_R_8F_E4M3 || la.type == CUDA_R_8F_E5M2)
    return no(DEEPGEMM_CUBLAS_TYPE, "FP8 through cuBLASLt (its scale pointers are not mapped yet)");
  if (a < 0 || a == DGEMM_DTYPE_F32 || a != b) return no(DEEPGEMM_CUBLAS_TYPE, "A/B types (plans take f16/bf16 with f32 compute)");
  if (cc != dd || (dd != a && dd != DGEMM_DTYPE_F32)) return no(DEEPGEMM_CUBLAS_TYPE, "C/D types");

  if (la.order != lb.order || la.order != lc.order || la.order != ld.order ||
      (la.order != CUBLASLT_ORDER_COL && la.order != CUBLASLT_ORDER_ROW))
    return no(DEEPGEMM_CUBLAS_LAYOUT, "orders differ or are not COL/ROW (one order for all four matrices)");

  // Shapes as cuBLASLt defines them: D is m x n, op(A) m x k, op(B) k x n, layouts as stored.
  const int64_t m = int64_t(ld.rows), n = int64_t(ld.cols);
  const bool ta = desc.transa != CUBLAS_OP_N, tb = desc.transb != CUBLAS_OP_N;
  const int64_t k = ta ? int64_t(la.rows) : int64_t(la.cols);
  if (int64_t(ta ? la.cols : la.rows) != m || int64_t(tb ? lb.cols : lb.rows) != k ||
      int64_t(tb ? lb.rows : lb.cols) != n || int64_t(lc.rows) != m || int64_t(lc.cols) != n)
    return no(DEEPGEMM_CUBLAS_INVALID, "layout shapes do not agree");
  if (la.ld < min_ld(la) || lb.ld < min_ld(lb) || lc.ld < min_ld(lc) || ld.ld < min_ld(ld))
    return no(DEEPGEMM_CUBLAS_INVALID, "a leading dimension is too small");
  if (m == 0 || n == 0) return no(DEEPGEMM_CUBLAS_EMPTY, "m or n is 0");
  if (k == 0) return no(DEEPGEMM_CUBLAS_EMPTY, "k = 0 (cuBLAS only scales C)");

  const int64_t batch = ld.batch;
  if (la.batch != batch || lb.batch != batch || lc.batch != batch) return no(DEEPGEMM_CUBLAS_LAYOUT, "batch counts differ");
  int64_t sa = la.stride, sb = lb.stride, sc = lc.stride, sd = ld.stride;
  if (batch > 1) {
    if (sa < 0 || sb < 0 || sc < 0 || sd < 0) return no(DEEPGEMM_CUBLAS_LAYOUT, "negative batch stride");
    const int64_t d_span = ld.ld * (ld.order == CUBLASLT_ORDER_ROW ? m : n);
    if (sd < d_span) return no(DEEPGEMM_CUBLAS_LAYOUT, "D batch stride too small (batches of D overlap)");
    if (has_bias && desc.bias_batch_stride != 0) return no(DEEPGEMM_CUBLAS_LAYOUT, "per-batch bias (bias batch stride != 0)");
  } else {
    sa = sb = sc = sd = 0;
  }

  int32_t bias_type = DGEMM_DTYPE_F32;
  if (has_bias) {
    bias_type = desc.bias_type == -1 ? dd : dtype_of(desc.bias_type);
    if (bias_type < 0) return no(DEEPGEMM_CUBLAS_TYPE, "bias data type");
    if (desc.bias == nullptr) return no(DEEPGEMM_CUBLAS_INVALID, "bias epilogue without a bias pointer");
    if (!aligned(desc.bias, dtype_bytes(bias_type))) return no(DEEPGEMM_CUBLAS_ALIGNMENT, "bias not aligned to its element size");
  }

  if (ops.alpha == nullptr || ops.beta == nullptr || ops.A == nullptr || ops.B == nullptr || ops.D == nullptr)
    return no(DEEPGEMM_CUBLAS_INVALID, "alpha, beta, A, B or D is NULL");
  if (!aligned(ops.A, dtype_bytes(a)) || !aligned(ops.B, dtype_bytes(b)) || !aligned(ops.C, dtype_bytes(cc)) ||
      !aligned(ops.D, dtype_bytes(dd)))
    return no(DEEPGEMM_CUBLAS_ALIGNMENT, "A, B, C or D not aligned to its element size");

  Decision d;
  if (!take_scalars(d, desc.pointer_mode == CUBLASLT_POINTER_MODE_DEVICE, false, ops.alpha, ops.beta)) return d;
  if (d.key.reads_c) {
    if (ops.C == nullptr) return no(DEEPGEMM_CUBLAS_INVALID, "C is NULL but beta may be non-zero");
    // In place only as the same matrix (what dgemm_execute allows and cuBLASLt requires).
    if (ops.C == ops.D && (lc.ld != ld.ld || sc != sd)) return no(DEEPGEMM_CUBLAS_LAYOUT, "C == D with different layouts");
  }

  PlanKey& key = d.key;
  key.m = m;
  key.n = n;
  key.k = k;
  key.lda = la.ld;
  key.ldb = lb.ld;
  key.ldc = lc.ld;
  key.ldd = ld.ld;
  key.batch = batch;
  key.stride_a = sa;
  key.stride_b = sb;
  key.stride_c = d.key.reads_c ? sc : 0;
  key.stride_d = sd;
  key.a_type = a;
  key.b_type = b;
  key.c_type = cc;
  key.d_type = dd;
  key.op_a = ta ? DGEMM_OP_T : DGEMM_OP_N;
  key.op_b = tb ? DGEMM_OP_T : DGEMM_OP_N;
  key.order = la.order == CUBLASLT_ORDER_ROW ? DGEMM_ORDER_ROW_MAJOR : DGEMM_ORDER_COL_MAJOR;
  // cuBLASLt's bias has one entry per row of D.
  key.bias_mode = has_bias ? DGEMM_VECTOR_PER_ROW : DGEMM_VECTOR_NONE;
  key.bias_type = bias_type;
  key.activation = activation;
  if (!d.key.reads_c) key.ldc = key.ldd;  // C is not read: its layout must not split keys
  d.bias = has_bias ? desc.bias : nullptr;
  d.reason = DEEPGEMM_CUBLAS_ROUTED;
  d.why = "";
  return d;
}

}  // namespace dgemm_cublas

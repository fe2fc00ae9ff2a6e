// The routing decision of libdeepgemm_cublas (src/compat/cublas/route.hpp) for a table of
// cublasGemmEx / cublasLtMatmul argument combinations, the descriptor shadows, and the per-handle
// plan cache. Pure functions: no GPU, no cuBLAS library. Every routed case is also planned on the
// CPU backend, so a key that the C API would reject fails here.
#include <boost/test/unit_test.hpp>

#include <cublasLt.h>
#include <cublas_api.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compat/cublas/handles.hpp"
#include "compat/cublas/plan_cache.hpp"
#include "compat/cublas/route.hpp"

using namespace dgemm_cublas;

namespace {

// Storage for operands: the decision only looks at the pointers' alignment, never the data.
alignas(256) unsigned char g_mem[4][4096];
float g_alpha = 1.5f, g_beta = 0.0f, g_beta1 = 2.0f, g_zero = 0.0f;
const uint16_t g_half_one = 0x3c00, g_half_zero = 0;  // binary16 scalars (CUBLAS_COMPUTE_16F)

GemmCall base_call() {
  GemmCall c;
  c.transa = CUBLAS_OP_N;
  c.transb = CUBLAS_OP_N;
  c.m = 64;
  c.n = 32;
  c.k = 48;
  c.alpha = &g_alpha;
  c.beta = &g_beta;
  c.A = g_mem[0];
  c.a_type = CUDA_R_16F;
  c.lda = 64;
  c.B = g_mem[1];
  c.b_type = CUDA_R_16F;
  c.ldb = 48;
  c.C = g_mem[2];
  c.c_type = CUDA_R_16F;
  c.ldc = 64;
  c.compute_type = CUBLAS_COMPUTE_32F;
  c.algo = CUBLAS_GEMM_DEFAULT;
  return c;
}

// The key must be one dgemm_create_plan accepts (on the CPU backend, which takes every type).
void expect_plannable(const PlanKey& key) {
  static dgemm_context_t ctx = [] {
    dgemm_context_t c = nullptr;
    dgemm_context_create(DGEMM_DEVICE_CPU, 0, &c);
    return c;
  }();
  PlanKey k = key;
  k.device = -1;
  auto plan = make_plan(ctx, k);
  BOOST_TEST(plan->plan != nullptr, "dgemm_create_plan refused a routed key: " << plan->detail);
}

struct Row {
  const char* name;
  void (*edit)(GemmCall&, HandleModes&);
  deepgemm_cublas_reason_t expect;
};

const Row kGemmTable[] = {
    {"f16 x f16 -> f16, 32F, host scalars", [](GemmCall&, HandleModes&) {}, DEEPGEMM_CUBLAS_ROUTED},
    {"bf16 x bf16 -> f32", [](GemmCall& c, HandleModes&) { c.a_type = c.b_type = CUDA_R_16BF, c.c_type = CUDA_R_32F; }, DEEPGEMM_CUBLAS_ROUTED},
    {"bf16 x bf16 -> bf16, TN", [](GemmCall& c, HandleModes&) { c.a_type = c.b_type = c.c_type = CUDA_R_16BF, c.transa = CUBLAS_OP_T, c.lda = 48; }, DEEPGEMM_CUBLAS_ROUTED},
    {"OP_C is the transpose for real types", [](GemmCall& c, HandleModes&) { c.transb = CUBLAS_OP_C, c.ldb = 32; }, DEEPGEMM_CUBLAS_ROUTED},
    {"f32 x f32 -> f32, default math (plan decides)", [](GemmCall& c, HandleModes&) { c.a_type = c.b_type = c.c_type = CUDA_R_32F; }, DEEPGEMM_CUBLAS_ROUTED},
    {"f16 16F compute, host half scalars", [](GemmCall& c, HandleModes&) { c.compute_type = CUBLAS_COMPUTE_16F, c.alpha = &g_half_one, c.beta = &g_half_zero; }, DEEPGEMM_CUBLAS_ROUTED},
    {"odd leading dimensions", [](GemmCall& c, HandleModes&) { c.lda = 67, c.ldb = 49, c.ldc = 65; }, DEEPGEMM_CUBLAS_ROUTED},
    {"beta != 0", [](GemmCall& c, HandleModes&) { c.beta = &g_beta1; }, DEEPGEMM_CUBLAS_ROUTED},
    {"device pointer mode", [](GemmCall&, HandleModes& h) { h.pointer_mode = CUBLAS_POINTER_MODE_DEVICE; }, DEEPGEMM_CUBLAS_ROUTED},
    {"TF32 math mode, f16 inputs", [](GemmCall&, HandleModes& h) { h.math_mode = CUBLAS_TF32_TENSOR_OP_MATH; }, DEEPGEMM_CUBLAS_ROUTED},
    {"disallow-reduced-precision flag", [](GemmCall&, HandleModes& h) { h.math_mode = CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION; }, DEEPGEMM_CUBLAS_ROUTED},
    {"any algo hint", [](GemmCall& c, HandleModes&) { c.algo = CUBLAS_GEMM_ALGO5_TENSOR_OP; }, DEEPGEMM_CUBLAS_ROUTED},
    {"strided batch 3", [](GemmCall& c, HandleModes&) { c.batch = 3, c.stride_a = 64 * 48, c.stride_b = 48 * 32, c.stride_c = 64 * 32; }, DEEPGEMM_CUBLAS_ROUTED},
    {"strided batch, A broadcast (stride 0)", [](GemmCall& c, HandleModes&) { c.batch = 2, c.stride_a = 0, c.stride_b = 48 * 32, c.stride_c = 64 * 32; }, DEEPGEMM_CUBLAS_ROUTED},
    // Unsupported types.
    {"f64", [](GemmCall& c, HandleModes&) { c.a_type = c.b_type = c.c_type = CUDA_R_64F; }, DEEPGEMM_CUBLAS_TYPE},
    {"f16 x bf16", [](GemmCall& c, HandleModes&) { c.b_type = CUDA_R_16BF; }, DEEPGEMM_CUBLAS_TYPE},
    {"bf16 -> f16", [](GemmCall& c, HandleModes&) { c.a_type = c.b_type = CUDA_R_16BF; }, DEEPGEMM_CUBLAS_TYPE},
    {"f32 inputs, f16 C", [](GemmCall& c, HandleModes&) { c.a_type = c.b_type = CUDA_R_32F; }, DEEPGEMM_CUBLAS_TYPE},
    {"i8", [](GemmCall& c, HandleModes&) { c.a_type = c.b_type = CUDA_R_8I, c.c_type = CUDA_R_32I; }, DEEPGEMM_CUBLAS_TYPE},
    {"16F compute with f32 C", [](GemmCall& c, HandleModes&) { c.compute_type = CUBLAS_COMPUTE_16F, c.c_type = CUDA_R_32F; }, DEEPGEMM_CUBLAS_TYPE},
    // Unsupported compute types.
    {"32F_FAST_TF32", [](GemmCall& c, HandleModes&) { c.a_type = c.b_type = c.c_type = CUDA_R_32F, c.compute_type = CUBLAS_COMPUTE_32F_FAST_TF32; }, DEEPGEMM_CUBLAS_COMPUTE_TYPE},
    {"32F_FAST_16BF", [](GemmCall& c, HandleModes&) { c.compute_type = CUBLAS_COMPUTE_32F_FAST_16BF; }, DEEPGEMM_CUBLAS_COMPUTE_TYPE},
    {"32F_PEDANTIC", [](GemmCall& c, HandleModes&) { c.compute_type = CUBLAS_COMPUTE_32F_PEDANTIC; }, DEEPGEMM_CUBLAS_COMPUTE_TYPE},
    {"64F compute", [](GemmCall& c, HandleModes&) { c.compute_type = CUBLAS_COMPUTE_64F; }, DEEPGEMM_CUBLAS_COMPUTE_TYPE},
    {"32I compute", [](GemmCall& c, HandleModes&) { c.compute_type = CUBLAS_COMPUTE_32I; }, DEEPGEMM_CUBLAS_COMPUTE_TYPE},
    // Math and pointer modes.
    {"pedantic math", [](GemmCall&, HandleModes& h) { h.math_mode = CUBLAS_PEDANTIC_MATH; }, DEEPGEMM_CUBLAS_MATH_MODE},
    {"f32 with TF32 math", [](GemmCall& c, HandleModes& h) { c.a_type = c.b_type = c.c_type = CUDA_R_32F, h.math_mode = CUBLAS_TF32_TENSOR_OP_MATH; }, DEEPGEMM_CUBLAS_MATH_MODE},
    {"unknown math mode", [](GemmCall&, HandleModes& h) { h.math_mode = 5; }, DEEPGEMM_CUBLAS_MATH_MODE},
    {"device pointer mode, half scalars", [](GemmCall& c, HandleModes& h) { c.compute_type = CUBLAS_COMPUTE_16F, h.pointer_mode = CUBLAS_POINTER_MODE_DEVICE; }, DEEPGEMM_CUBLAS_POINTER_MODE},
    {"device alpha not 4-byte aligned", [](GemmCall& c, HandleModes& h) { c.alpha = g_mem[3] + 2, h.pointer_mode = CUBLAS_POINTER_MODE_DEVICE; }, DEEPGEMM_CUBLAS_ALIGNMENT},
    {"unknown pointer mode", [](GemmCall&, HandleModes& h) { h.pointer_mode = 3; }, DEEPGEMM_CUBLAS_POINTER_MODE},
    // Leading dimensions, sizes and arguments cuBLAS rejects itself.
    {"lda < m", [](GemmCall& c, HandleModes&) { c.lda = 63; }, DEEPGEMM_CUBLAS_INVALID},
    {"lda < k with A transposed", [](GemmCall& c, HandleModes&) { c.transa = CUBLAS_OP_T, c.lda = 47; }, DEEPGEMM_CUBLAS_INVALID},
    {"ldb < k", [](GemmCall& c, HandleModes&) { c.ldb = 47; }, DEEPGEMM_CUBLAS_INVALID},
    {"ldc < m", [](GemmCall& c, HandleModes&) { c.ldc = 1; }, DEEPGEMM_CUBLAS_INVALID},
    {"negative n", [](GemmCall& c, HandleModes&) { c.n = -1; }, DEEPGEMM_CUBLAS_INVALID},
    {"transa = CONJG", [](GemmCall& c, HandleModes&) { c.transa = CUBLAS_OP_CONJG; }, DEEPGEMM_CUBLAS_INVALID},
    {"algo out of range", [](GemmCall& c, HandleModes&) { c.algo = 50; }, DEEPGEMM_CUBLAS_INVALID},
    {"NULL beta", [](GemmCall& c, HandleModes&) { c.beta = nullptr; }, DEEPGEMM_CUBLAS_INVALID},
    {"NULL A", [](GemmCall& c, HandleModes&) { c.A = nullptr; }, DEEPGEMM_CUBLAS_INVALID},
    {"m = 0", [](GemmCall& c, HandleModes&) { c.m = 0; }, DEEPGEMM_CUBLAS_EMPTY},
    {"k = 0", [](GemmCall& c, HandleModes&) { c.k = 0; }, DEEPGEMM_CUBLAS_EMPTY},
    {"batch count 0", [](GemmCall& c, HandleModes&) { c.batch = 0; }, DEEPGEMM_CUBLAS_EMPTY},
    {"host alpha = 0", [](GemmCall& c, HandleModes&) { c.alpha = &g_zero; }, DEEPGEMM_CUBLAS_EMPTY},
    // Batches and layouts.
    {"pointer-array batches", [](GemmCall& c, HandleModes&) { c.pointer_array = true, c.batch = 2; }, DEEPGEMM_CUBLAS_LAYOUT},
    {"strideC = 0 with batches", [](GemmCall& c, HandleModes&) { c.batch = 2, c.stride_a = 64 * 48, c.stride_b = 48 * 32, c.stride_c = 0; }, DEEPGEMM_CUBLAS_LAYOUT},
    {"overlapping C batches", [](GemmCall& c, HandleModes&) { c.batch = 2, c.stride_c = 64 * 31; }, DEEPGEMM_CUBLAS_LAYOUT},
    {"negative stride", [](GemmCall& c, HandleModes&) { c.batch = 2, c.stride_a = -1, c.stride_c = 64 * 32; }, DEEPGEMM_CUBLAS_LAYOUT},
    // Alignment.
    {"A not aligned to its element", [](GemmCall& c, HandleModes&) { c.A = g_mem[0] + 1; }, DEEPGEMM_CUBLAS_ALIGNMENT},
    {"f32 C 2-byte aligned", [](GemmCall& c, HandleModes&) { c.c_type = CUDA_R_32F, c.C = g_mem[2] + 2; }, DEEPGEMM_CUBLAS_ALIGNMENT},
};

}  // namespace

BOOST_AUTO_TEST_CASE(compat_route_gemm_table) {
  for (const Row& row : kGemmTable) {
    BOOST_TEST_CONTEXT(row.name) {
      GemmCall c = base_call();
      HandleModes h;
      row.edit(c, h);
      const Decision d = route_gemm(c, h);
      BOOST_TEST(int(d.reason) == int(row.expect), "reason " << int(d.reason) << " (" << d.why << "), expected "
                                                             << int(row.expect));
      if (d.routed()) {
        BOOST_TEST(d.key.order == int(DGEMM_ORDER_COL_MAJOR));
        BOOST_TEST(d.key.ldd == d.key.ldc);
        expect_plannable(d.key);
      } else {
        BOOST_TEST(std::strlen(d.why) > 0, "a forwarded call says why");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(compat_route_gemm_keys_and_scalars) {
  HandleModes host;
  GemmCall c = base_call();
  const Decision d0 = route_gemm(c, host);
  BOOST_TEST(d0.key.reads_c == 0);
  BOOST_TEST(d0.scalars.mode == DGEMM_SCALARS_HOST);
  BOOST_TEST(d0.scalars.alpha == 1.5f);
  BOOST_TEST(d0.key.a_type == int(DGEMM_DTYPE_F16));
  BOOST_TEST(d0.key.lda == 64);
  BOOST_TEST(d0.key.k == 48);
  c.beta = &g_beta1;
  const Decision d1 = route_gemm(c, host);
  BOOST_TEST(d1.key.reads_c == 1);
  BOOST_TEST(d1.scalars.beta == 2.0f);
  BOOST_TEST(!(d0.key == d1.key), "beta = 0 and beta != 0 are different plans");
  BOOST_TEST(PlanKeyHash()(d0.key) != PlanKeyHash()(d1.key));
  // Same beta class, other value: same plan.
  float beta3 = -3.0f;
  c.beta = &beta3;
  BOOST_TEST((route_gemm(c, host).key == d1.key));

  // OP_C and OP_T are one plan.
  GemmCall t = base_call(), cj = base_call();
  t.transa = CUBLAS_OP_T;
  cj.transa = CUBLAS_OP_C;
  t.lda = cj.lda = 48;
  BOOST_TEST((route_gemm(t, host).key == route_gemm(cj, host).key));

  // Batch count 1: strides are ignored by cuBLAS, so they do not split keys.
  GemmCall s1 = base_call(), s2 = base_call();
  s1.stride_a = 5;
  s2.stride_c = 999;
  BOOST_TEST((route_gemm(s1, host).key == route_gemm(s2, host).key));

  // Device pointer mode: the pointers go to the plan, which reads C (beta is known only on the device).
  HandleModes dev;
  dev.pointer_mode = CUBLAS_POINTER_MODE_DEVICE;
  const Decision dd = route_gemm(base_call(), dev);
  BOOST_TEST(dd.routed());
  BOOST_TEST(dd.scalars.mode == DGEMM_SCALARS_DEVICE);
  BOOST_TEST(dd.scalars.alpha_ptr == &g_alpha);
  BOOST_TEST(dd.scalars.beta_ptr == &g_beta);
  BOOST_TEST(dd.key.reads_c == 1);

  // CUBLAS_COMPUTE_16F: host half scalars become floats.
  GemmCall h = base_call();
  h.compute_type = CUBLAS_COMPUTE_16F;
  const uint16_t half_alpha = 0xc100, half_beta = 0x3800;  // -2.5, 0.5
  h.alpha = &half_alpha;
  h.beta = &half_beta;
  const Decision dh = route_gemm(h, host);
  BOOST_TEST(dh.routed());
  BOOST_TEST(dh.scalars.alpha == -2.5f);
  BOOST_TEST(dh.scalars.beta == 0.5f);
}

BOOST_AUTO_TEST_CASE(compat_half_to_float) {
  BOOST_TEST(half_to_float(0x3c00) == 1.0f);
  BOOST_TEST(half_to_float(0xc000) == -2.0f);
  BOOST_TEST(half_to_float(0x7bff) == 65504.0f);
  BOOST_TEST(half_to_float(0x0001) == std::ldexp(1.0f, -24));
  BOOST_TEST(half_to_float(0x03ff) == std::ldexp(1023.0f, -24));
  BOOST_TEST(half_to_float(0x8000) == 0.0f);
  BOOST_TEST(std::signbit(half_to_float(0x8000)));
  BOOST_TEST(std::isinf(half_to_float(0x7c00)));
  BOOST_TEST(std::isnan(half_to_float(0x7e00)));
  // Every finite half round-trips through float and back to the same value order.
  float prev = -INFINITY;
  for (uint32_t h = 0xfbff; h >= 0x8001; --h) {  // negative finite, increasing
    const float f = half_to_float(uint16_t(h));
    BOOST_TEST_REQUIRE(f > prev);
    prev = f;
  }
}

// ---- cuBLASLt ---------------------------------------------------------------------------------

namespace {

struct LtSetup {
  LtDesc desc = lt_desc_init(CUBLAS_COMPUTE_32F, CUDA_R_32F);
  LtLayout a = lt_layout_init(CUDA_R_16BF, 64, 48, 64);  // A: m x k, col-major
  LtLayout b = lt_layout_init(CUDA_R_16BF, 48, 32, 48);  // B: k x n
  LtLayout c = lt_layout_init(CUDA_R_16BF, 64, 32, 64);
  LtLayout d = lt_layout_init(CUDA_R_16BF, 64, 32, 64);
  LtOperands ops{&g_alpha, &g_beta, g_mem[0], g_mem[1], g_mem[2], g_mem[3]};
  Decision route() const { return route_lt(desc, a, b, c, d, ops); }
  template <class T>
  void set(int attr, T v) { lt_desc_set(desc, attr, &v, sizeof(v)); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(compat_route_lt) {
  {
    LtSetup s;
    const Decision d = s.route();
    BOOST_TEST(d.routed(), d.why);
    BOOST_TEST(d.key.activation == int(DGEMM_ACT_NONE));
    BOOST_TEST(d.key.bias_mode == int(DGEMM_VECTOR_NONE));
    expect_plannable(d.key);
  }
  {
    LtSetup s;
    s.set<uint32_t>(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_GELU_BIAS);
    s.set<const void*>(CUBLASLT_MATMUL_DESC_BIAS_POINTER, g_mem[3]);
    s.set<int32_t>(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
    s.a = lt_layout_init(CUDA_R_16BF, 48, 64, 50);  // A stored k x m
    const Decision d = s.route();
    BOOST_TEST(d.routed(), d.why);
    BOOST_TEST(d.key.activation == int(DGEMM_ACT_GELU_TANH));
    BOOST_TEST(d.key.bias_mode == int(DGEMM_VECTOR_PER_ROW));  // cuBLASLt's bias: one per row of D
    BOOST_TEST(d.key.bias_type == int(DGEMM_DTYPE_BF16));     // default: D's type
    BOOST_TEST(d.key.op_a == int(DGEMM_OP_T));
    BOOST_TEST(d.key.lda == 50);
    BOOST_TEST(d.bias == static_cast<const void*>(g_mem[3]));
    expect_plannable(d.key);
    s.set<int32_t>(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, CUDA_R_32F);
    BOOST_TEST(s.route().key.bias_type == int(DGEMM_DTYPE_F32));
  }
  {
    LtSetup s;  // row-major everywhere: ld counts columns
    for (LtLayout* l : {&s.a, &s.b, &s.c, &s.d}) {
      const int32_t order = CUBLASLT_ORDER_ROW;
      lt_layout_set(*l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof(order));
    }
    s.a.ld = 48;
    s.b.ld = 32;
    s.c.ld = s.d.ld = 32;
    const Decision d = s.route();
    BOOST_TEST(d.routed(), d.why);
    BOOST_TEST(d.key.order == int(DGEMM_ORDER_ROW_MAJOR));
    expect_plannable(d.key);
    s.a.ld = 47;
    BOOST_TEST(int(s.route().reason) == int(DEEPGEMM_CUBLAS_INVALID));
  }
  struct LtRow {
    const char* name;
    void (*edit)(LtSetup&);
    deepgemm_cublas_reason_t expect;
  };
  const LtRow rows[] = {
      {"relu", [](LtSetup& s) { s.set<uint32_t>(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_RELU); }, DEEPGEMM_CUBLAS_ROUTED},
      {"f16 -> f32, beta != 0, device scalars", [](LtSetup& s) {
         s.a.type = s.b.type = CUDA_R_16F; s.c.type = s.d.type = CUDA_R_32F; s.ops.beta = &g_beta1;
         s.set<int32_t>(CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_DEVICE); }, DEEPGEMM_CUBLAS_ROUTED},
      {"strided batch 2", [](LtSetup& s) {
         for (LtLayout* l : {&s.a, &s.b, &s.c, &s.d}) { l->batch = 2; l->stride = 4096; } }, DEEPGEMM_CUBLAS_ROUTED},
      {"AUX epilogue", [](LtSetup& s) { s.set<uint32_t>(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_GELU_AUX); }, DEEPGEMM_CUBLAS_EPILOGUE},
      {"DGELU", [](LtSetup& s) { s.set<uint32_t>(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_DGELU); }, DEEPGEMM_CUBLAS_EPILOGUE},
      {"bias epilogue without pointer", [](LtSetup& s) { s.set<uint32_t>(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS); }, DEEPGEMM_CUBLAS_INVALID},
      {"per-batch bias", [](LtSetup& s) {
         s.set<uint32_t>(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
         s.set<const void*>(CUBLASLT_MATMUL_DESC_BIAS_POINTER, g_mem[3]);
         s.set<int64_t>(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, 64);
         for (LtLayout* l : {&s.a, &s.b, &s.c, &s.d}) { l->batch = 2; l->stride = 4096; } }, DEEPGEMM_CUBLAS_LAYOUT},
      {"TF32 compute", [](LtSetup& s) { s.desc.compute_type = CUBLAS_COMPUTE_32F_FAST_TF32; }, DEEPGEMM_CUBLAS_COMPUTE_TYPE},
      {"16F scale type", [](LtSetup& s) { s.desc.scale_type = CUDA_R_16F; }, DEEPGEMM_CUBLAS_COMPUTE_TYPE},
      {"alpha vector pointer mode", [](LtSetup& s) { s.set<int32_t>(CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_DEVICE_VECTOR); }, DEEPGEMM_CUBLAS_POINTER_MODE},
      {"FP8 inputs", [](LtSetup& s) { s.a.type = s.b.type = CUDA_R_8F_E4M3; }, DEEPGEMM_CUBLAS_TYPE},
      {"f32 inputs", [](LtSetup& s) { s.a.type = s.b.type = s.c.type = s.d.type = CUDA_R_32F; }, DEEPGEMM_CUBLAS_TYPE},
      {"C and D types differ", [](LtSetup& s) { s.c.type = CUDA_R_32F; }, DEEPGEMM_CUBLAS_TYPE},
      {"A scale pointer set", [](LtSetup& s) { s.set<const void*>(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, g_mem[0]); }, DEEPGEMM_CUBLAS_EPILOGUE},
      {"A scale pointer set then reset", [](LtSetup& s) {
         s.set<const void*>(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, g_mem[0]);
         s.set<const void*>(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, nullptr); }, DEEPGEMM_CUBLAS_ROUTED},
      {"unknown attribute", [](LtSetup& s) { s.set<int32_t>(999, 1); }, DEEPGEMM_CUBLAS_EPILOGUE},
      {"attribute of an unexpected size", [](LtSetup& s) { s.set<int64_t>(CUBLASLT_MATMUL_DESC_TRANSA, 1); }, DEEPGEMM_CUBLAS_EPILOGUE},
      {"SM count hint (ignored)", [](LtSetup& s) { s.set<int32_t>(CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, 66); }, DEEPGEMM_CUBLAS_ROUTED},
      {"transc = T", [](LtSetup& s) { s.set<int32_t>(CUBLASLT_MATMUL_DESC_TRANSC, CUBLAS_OP_T); }, DEEPGEMM_CUBLAS_LAYOUT},
      {"orders differ", [](LtSetup& s) { s.a.order = CUBLASLT_ORDER_ROW; }, DEEPGEMM_CUBLAS_LAYOUT},
      {"COL32 order", [](LtSetup& s) { for (LtLayout* l : {&s.a, &s.b, &s.c, &s.d}) l->order = CUBLASLT_ORDER_COL32; }, DEEPGEMM_CUBLAS_LAYOUT},
      {"pointer-array batch mode", [](LtSetup& s) { const uint32_t m = 1; lt_layout_set(s.a, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &m, sizeof(m)); }, DEEPGEMM_CUBLAS_LAYOUT},
      {"batch counts differ", [](LtSetup& s) { s.a.batch = 2; }, DEEPGEMM_CUBLAS_LAYOUT},
      {"D batches overlap", [](LtSetup& s) { for (LtLayout* l : {&s.a, &s.b, &s.c, &s.d}) { l->batch = 2; l->stride = 100; } }, DEEPGEMM_CUBLAS_LAYOUT},
      {"shapes disagree", [](LtSetup& s) { s.b.rows = 47; }, DEEPGEMM_CUBLAS_INVALID},
      {"k = 0", [](LtSetup& s) { s.a.cols = 0; s.b.rows = 0; }, DEEPGEMM_CUBLAS_EMPTY},
      {"in place with another ld", [](LtSetup& s) { s.ops.beta = &g_beta1; s.ops.C = s.ops.D; s.c.ld = 65; }, DEEPGEMM_CUBLAS_LAYOUT},
      {"D misaligned", [](LtSetup& s) { s.ops.D = g_mem[3] + 1; }, DEEPGEMM_CUBLAS_ALIGNMENT},
      {"C NULL, beta = 0 (not read)", [](LtSetup& s) { s.ops.C = nullptr; }, DEEPGEMM_CUBLAS_ROUTED},
      {"C NULL, beta != 0", [](LtSetup& s) { s.ops.C = nullptr; s.ops.beta = &g_beta1; }, DEEPGEMM_CUBLAS_INVALID},
  };
  for (const LtRow& row : rows) {
    BOOST_TEST_CONTEXT(row.name) {
      LtSetup s;
      row.edit(s);
      const Decision d = s.route();
      BOOST_TEST(int(d.reason) == int(row.expect), "reason " << int(d.reason) << " (" << d.why << ")");
      if (d.routed()) expect_plannable(d.key);
    }
  }
}

BOOST_AUTO_TEST_CASE(compat_plan_cache_bounded_lru) {
  dgemm_context_t ctx = nullptr;
  BOOST_TEST_REQUIRE(dgemm_context_create(DGEMM_DEVICE_CPU, 0, &ctx) == DGEMM_STATUS_SUCCESS);
  {
    PlanCache cache(2);
    GemmCall c = base_call();
    PlanKey keys[3];
    for (int i = 0; i < 3; ++i) {
      c.m = 8 + i;
      keys[i] = route_gemm(c, HandleModes()).key;
      keys[i].device = -1;
    }
    std::size_t evicted = 0;
    auto p0 = cache.insert(keys[0], make_plan(ctx, keys[0]), &evicted);
    cache.insert(keys[1], make_plan(ctx, keys[1]), &evicted);
    BOOST_TEST(evicted == 0u);
    BOOST_TEST(cache.find(keys[0]) == p0);  // key 0 is now the most recently used
    cache.insert(keys[2], make_plan(ctx, keys[2]), &evicted);
    BOOST_TEST(evicted == 1u);
    BOOST_TEST(cache.size() == 2u);
    BOOST_TEST(cache.find(keys[1]) == nullptr, "the least recently used plan goes");
    BOOST_TEST(cache.find(keys[0]) != nullptr);
    // A second insert of a key keeps the first plan (two threads that missed together).
    auto again = cache.insert(keys[0], make_plan(ctx, keys[0]), &evicted);
    BOOST_TEST(again == p0);
    BOOST_TEST(evicted == 0u);
    // A refused shape is cached as such, with the reason.
    PlanKey bad = keys[0];
    bad.lda = 1;  // below m: dgemm_create_plan says INVALID_ARGUMENT
    auto refused = make_plan(ctx, bad);
    BOOST_TEST(refused->plan == nullptr);
    BOOST_TEST(refused->detail.find("lda") != std::string::npos, refused->detail);
    // An evicted plan stays alive while a caller holds it.
    cache.clear();
    BOOST_TEST(p0->plan != nullptr);
  }
  BOOST_TEST(dgemm_context_destroy(ctx) == DGEMM_STATUS_SUCCESS, "every plan was destroyed with the cache");
}

// Handle records: two live handles at one address share one record, which stays valid for a
// caller that found it while the other handle is destroyed (the H200 hang of run 8: a create at
// an address with a live record used to replace it under the threads using it).
BOOST_AUTO_TEST_CASE(compat_handle_records_shared_and_kept_alive) {
  const void* h = reinterpret_cast<const void*>(std::uintptr_t(0x5150));
  register_lt_handle(h);
  const std::shared_ptr<LtHandleState> first = find_lt_handle(h);
  BOOST_REQUIRE(first);
  register_lt_handle(h);  // a second live handle at the same address
  BOOST_CHECK(find_lt_handle(h) == first);
  BOOST_CHECK(take_lt_handle(h) == first);  // one destroy: the other handle keeps the record
  BOOST_CHECK(find_lt_handle(h) == first);
  take_lt_handle(h);
  BOOST_CHECK(!find_lt_handle(h));
  { std::lock_guard<std::mutex> lock(first->mu); }  // found before both destroys: still usable
  // A failed destroy puts the handle back.
  register_handle(h);
  std::shared_ptr<HandleState> rec = take_handle(h);
  BOOST_CHECK(!find_handle(h));
  restore_handle(h, rec);
  BOOST_CHECK(find_handle(h) == rec);
  take_handle(h);
  BOOST_CHECK(!find_handle(h));
}

// Eight threads creating, using and destroying handles at one address at once (the warm-up of
// cublas_gpu_check with a cuBLASLt that reuses its handle): every record a thread finds stays
// lockable until it lets go of it.
BOOST_AUTO_TEST_CASE(compat_handle_records_under_concurrent_create_destroy) {
  const void* h = reinterpret_cast<const void*>(std::uintptr_t(0x5160));
  std::vector<std::thread> threads;
  std::atomic<int> found{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        register_lt_handle(h);
        if (std::shared_ptr<LtHandleState> s = find_lt_handle(h)) {
          std::lock_guard<std::mutex> lock(s->mu);
          found.fetch_add(1);
        }
        take_lt_handle(h);
      }
    });
  for (std::thread& t : threads) t.join();
  BOOST_CHECK_EQUAL(found.load(), 8 * 2000);  // a live handle always has its record
  BOOST_CHECK(!find_lt_handle(h));
}

// compat_e2e: the whole path of libdeepgemm_cublas, end to end, with no GPU. A program written
// against the cuBLAS / cuBLASLt API (operands in host memory) runs with DEEPGEMM_CUBLAS_DEVICE=cpu,
// so that routed calls run as DeepGEMM plans on the CPU backend, and with stand-in cuBLAS
// libraries (stub_cublas.cpp) behind it, so that every forwarded call is seen. It is built and run
// two ways (tests/compat/CMakeLists.txt): linked against the stand-in libcublas.so.12 with the
// library LD_PRELOADed (so it also checks that .so.12-versioned references bind to it), and linked
// against libdeepgemm_cublas itself (link-time replacement, the stand-ins named by
// DEEPGEMM_CUBLAS_LIBRARY / DEEPGEMM_CUBLASLT_LIBRARY).
//
//   compat_e2e            every check below; routing on
//   compat_e2e off        with DEEPGEMM_CUBLAS=off: the same calls, all forwarded
//   compat_e2e log        with DEEPGEMM_CUBLAS_LOG=1: one log line per distinct call shape
// Exit 0 when every check passes; each failure prints one line naming the case.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cublas_cases.hpp"
#include "deepgemm/deepgemm_cublas.h"

using namespace compat_test;

namespace {

int g_failures = 0;
#define CHECK(cond, ...)                      \
  do {                                        \
    if (!(cond)) {                            \
      std::printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      std::printf(__VA_ARGS__);               \
      std::printf("\n");                      \
      ++g_failures;                           \
    }                                         \
  } while (0)

constexpr cublasStatus_t kStubStatus = CUBLAS_STATUS_LICENSE_ERROR;  // what the stand-ins answer

deepgemm_cublas_counters_t counters() {
  deepgemm_cublas_counters_t c;
  std::memset(&c, 0, sizeof(c));
  c.struct_size = sizeof(c);
  auto fn = reinterpret_cast<int (*)(deepgemm_cublas_counters_t*)>(dlsym(RTLD_DEFAULT, "deepgemm_cublas_counters"));
  if (!fn || fn(&c) != 0) std::printf("FAIL: deepgemm_cublas_counters unavailable\n"), ++g_failures;
  return c;
}

// GEMM calls that reached the stand-ins (cuBLAS + cuBLASLt).
int stub_calls() {
  int total = 0;
  for (const char* lib : {"libcublas.so.12", "libcublasLt.so.12"}) {
    const char* forced = std::getenv(std::strcmp(lib, "libcublas.so.12") ? "DEEPGEMM_CUBLASLT_LIBRARY" : "DEEPGEMM_CUBLAS_LIBRARY");
    void* h = dlopen(forced ? forced : lib, RTLD_NOW | RTLD_NOLOAD);
    if (!h) continue;  // not loaded yet: nothing reached it
    auto fn = reinterpret_cast<int (*)()>(dlsym(h, "compat_stub_gemm_calls"));
    if (fn) total += fn();
    dlclose(h);
  }
  return total;
}

bool g_routing = true;  // false with DEEPGEMM_CUBLAS=off

// Runs `call`, then checks it went where `expect_routed` says (and, when forwarded, that the
// stand-in's status came back unchanged) and returns true if it was routed.
template <class Call>
bool expect_route(const char* name, bool expect_routed, Call&& call) {
  const deepgemm_cublas_counters_t before = counters();
  const int stub_before = stub_calls();
  const cublasStatus_t st = call();
  const deepgemm_cublas_counters_t after = counters();
  const bool routed = after.routed == before.routed + 1;
  const bool want = expect_routed && g_routing;
  CHECK(after.calls == before.calls + 1, "%s: not counted as one call", name);
  CHECK(routed == want, "%s: %s, expected %s", name, routed ? "routed" : "forwarded", want ? "routed" : "forwarded");
  if (routed) {
    CHECK(st == CUBLAS_STATUS_SUCCESS, "%s: routed but status %d", name, int(st));
    CHECK(stub_calls() == stub_before, "%s: routed but the stand-in was called too", name);
  } else {
    CHECK(st == kStubStatus, "%s: forwarded, status %d is not the stand-in's %d", name, int(st), int(kStubStatus));
    CHECK(stub_calls() == stub_before + 1, "%s: forwarded, but the stand-in saw %d calls", name, stub_calls() - stub_before);
  }
  return routed;
}

// Checks a routed result against the reference.
void expect_close(const char* name, const RefProblem& p, const HostMatrix& D, const std::vector<double>& ref) {
  const double err = rel_error(p, D, ref);
  CHECK(err <= threshold(D.type), "%s: relative error %.3g > %.3g (%s output)", name, err, threshold(D.type),
        type_name(D.type));
}

std::mt19937 g_rng(20261201);

// ---- cublasGemmEx / StridedBatched / Hgemm / Sgemm ------------------------------------------------

struct Case {
  const char* name;
  int ab_type, c_type;
  cublasOperation_t ta, tb;
  int m, n, k, pad;
  int batch;
  float alpha, beta;
};

void run_gemm_ex(cublasHandle_t h, const Case& cs, bool device_scalars) {
  const RefProblem p = gemm_problem(cs.m, cs.n, cs.k, cs.ta != CUBLAS_OP_N, cs.tb != CUBLAS_OP_N, cs.pad, cs.batch,
                                    cs.alpha, cs.beta);
  GemmHostOperands o = gemm_operands(p, cs.ab_type, cs.c_type, g_rng);
  HostMatrix &A = o.A, &B = o.B, &C = o.C;
  const std::vector<double> ref = reference(p, A, B, C);
  float alpha = cs.alpha, beta = cs.beta;  // "device" memory is host memory on the CPU backend
  cublasSetPointerMode(h, device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST);
  std::string name = std::string(cs.name) + (device_scalars ? " (device scalars)" : "");
  const bool routed = expect_route(name.c_str(), true, [&] {
    if (cs.batch == 1)
      return cublasGemmEx(h, cs.ta, cs.tb, cs.m, cs.n, cs.k, &alpha, A.data(), cudaDataType(cs.ab_type), int(p.lda),
                          B.data(), cudaDataType(cs.ab_type), int(p.ldb), &beta, C.data(), cudaDataType(cs.c_type),
                          int(p.ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    return cublasGemmStridedBatchedEx(h, cs.ta, cs.tb, cs.m, cs.n, cs.k, &alpha, A.data(), cudaDataType(cs.ab_type),
                                      int(p.lda), p.stride_a, B.data(), cudaDataType(cs.ab_type), int(p.ldb), p.stride_b,
                                      &beta, C.data(), cudaDataType(cs.c_type), int(p.ldc), p.stride_c, cs.batch,
                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  });
  if (routed) expect_close(name.c_str(), p, C, ref);
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
}

void gemm_checks(cublasHandle_t h) {
  const cublasOperation_t ops[2] = {CUBLAS_OP_N, CUBLAS_OP_T};
  char name[128];
  for (cublasOperation_t ta : ops)
    for (cublasOperation_t tb : ops) {
      std::snprintf(name, sizeof(name), "GemmEx f16->f16 %c%c beta=0", ta == CUBLAS_OP_N ? 'N' : 'T', tb == CUBLAS_OP_N ? 'N' : 'T');
      run_gemm_ex(h, {name, kF16, kF16, ta, tb, 33, 17, 29, 3, 1, 1.5f, 0.0f}, false);
      std::snprintf(name, sizeof(name), "GemmEx bf16->f32 %c%c beta!=0", ta == CUBLAS_OP_N ? 'N' : 'T', tb == CUBLAS_OP_N ? 'N' : 'T');
      run_gemm_ex(h, {name, kBF16, kF32, ta, tb, 31, 40, 9, 0, 1, -0.5f, 0.75f}, false);
    }
  run_gemm_ex(h, {"StridedBatchedEx bf16->bf16 TN batch 3", kBF16, kBF16, CUBLAS_OP_T, CUBLAS_OP_N, 24, 20, 16, 2, 3, 1.0f, 1.0f}, false);
  run_gemm_ex(h, {"StridedBatchedEx f16->f32 NT batch 4, A broadcast", kF16, kF32, CUBLAS_OP_N, CUBLAS_OP_T, 8, 12, 20, 1, 4, 2.0f, 0.0f}, false);
  // Device pointer mode: the plan reads beta when it runs; beta = 0 there must still ignore C's NaNs.
  run_gemm_ex(h, {"GemmEx f16->f16 NN beta=0", kF16, kF16, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, 0, 1, 1.0f, 0.0f}, true);
  run_gemm_ex(h, {"StridedBatchedEx bf16->f32 TT beta!=0", kBF16, kF32, CUBLAS_OP_T, CUBLAS_OP_T, 10, 7, 5, 1, 2, 0.5f, -1.0f}, true);

  // Hgemm: half alpha/beta on the host (CUBLAS_COMPUTE_16F is routed with f32 accumulation).
  {
    RefProblem p{20, 12, 8, false, true, true, 20, 12, 20, 20};
    p.alpha = 2.0;
    p.beta = 0.5;
    HostMatrix A(kF16, 20 * 8), B(kF16, 12 * 8), C(kF16, 20 * 12);
    fill_random(A, g_rng);
    fill_random(B, g_rng);
    fill_random(C, g_rng);
    const std::vector<double> ref = reference(p, A, B, C);
    const uint16_t alpha = to_f16(2.0f), beta = to_f16(0.5f);
    if (expect_route("Hgemm NT", true, [&] {
          return cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 20, 12, 8, reinterpret_cast<const __half*>(&alpha),
                             static_cast<const __half*>(A.data()), 20, static_cast<const __half*>(B.data()), 12,
                             reinterpret_cast<const __half*>(&beta), static_cast<__half*>(C.data()), 20);
        }))
      expect_close("Hgemm NT", p, C, ref);
    // Half scalars in device memory cannot be read by a plan: forwarded.
    cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
    expect_route("Hgemm device scalars", false, [&] {
      return cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 20, 12, 8, reinterpret_cast<const __half*>(&alpha),
                         static_cast<const __half*>(A.data()), 20, static_cast<const __half*>(B.data()), 12,
                         reinterpret_cast<const __half*>(&beta), static_cast<__half*>(C.data()), 20);
    });
    cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
  }

  // Sgemm: f32 plans exist on the CPU backend (not on GPUs today: there dgemm_create_plan refuses
  // and the call is forwarded); a TF32 math mode forwards it whatever the backend.
  {
    RefProblem p{9, 11, 13, true, false, true, 13, 13, 9, 9};
    p.alpha = 1.0;
    HostMatrix A(kF32, 13 * 9), B(kF32, 13 * 11), C(kF32, 9 * 11);
    fill_random(A, g_rng);
    fill_random(B, g_rng);
    fill_value(C, NAN);
    const std::vector<double> ref = reference(p, A, B, C);
    const float one = 1.0f, zero = 0.0f;
    auto sgemm = [&] {
      return cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 9, 11, 13, &one, static_cast<const float*>(A.data()), 13,
                         static_cast<const float*>(B.data()), 13, &zero, static_cast<float*>(C.data()), 9);
    };
    if (expect_route("Sgemm TN (CPU backend)", true, sgemm)) expect_close("Sgemm TN", p, C, ref);
    CHECK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH) == CUBLAS_STATUS_SUCCESS, "cublasSetMathMode");
    expect_route("Sgemm with CUBLAS_TF32_TENSOR_OP_MATH", false, sgemm);
    CHECK(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH) == CUBLAS_STATUS_SUCCESS, "cublasSetMathMode");
    expect_route("GemmEx f16 with CUBLAS_PEDANTIC_MATH", false, [&] {
      return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, A.data(), CUDA_R_16F, 4, B.data(), CUDA_R_16F, 4,
                          &zero, C.data(), CUDA_R_16F, 4, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    });
    CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH) == CUBLAS_STATUS_SUCCESS, "cublasSetMathMode");
    // A pointer mode the real cuBLAS refuses must not change what the library believes.
    CHECK(cublasSetPointerMode(h, cublasPointerMode_t(7)) == CUBLAS_STATUS_INVALID_VALUE, "bad pointer mode accepted");
    if (expect_route("Sgemm after a refused cublasSetPointerMode", true, sgemm)) expect_close("Sgemm TN", p, C, ref);
  }

  // What is never routed: each reaches cuBLAS with its own status.
  {
    HostMatrix A(kF16, 64), B(kF16, 64), C(kF16, 64);
    const float one = 1.0f, zero = 0.0f;
    expect_route("GemmEx CUBLAS_COMPUTE_32F_FAST_TF32", false, [&] {
      return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, A.data(), CUDA_R_32F, 8, B.data(), CUDA_R_32F, 8,
                          &zero, C.data(), CUDA_R_32F, 8, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
    });
    expect_route("GemmEx f64", false, [&] {
      return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A.data(), CUDA_R_64F, 2, B.data(), CUDA_R_64F, 2,
                          &zero, C.data(), CUDA_R_64F, 2, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
    });
    expect_route("GemmEx lda < m (cuBLAS reports it)", false, [&] {
      return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, A.data(), CUDA_R_16F, 7, B.data(), CUDA_R_16F, 8,
                          &zero, C.data(), CUDA_R_16F, 8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    });
    const void* arrays[1] = {A.data()};
    void* c_arrays[1] = {C.data()};
    expect_route("GemmBatchedEx (pointer arrays)", false, [&] {
      return cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, arrays, CUDA_R_16F, 8, arrays, CUDA_R_16F,
                                 8, &zero, c_arrays, CUDA_R_16F, 8, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    });
    expect_route("GemmEx misaligned A", false, [&] {
      return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, static_cast<char*>(A.data()) + 1, CUDA_R_16F, 4,
                          B.data(), CUDA_R_16F, 4, &zero, C.data(), CUDA_R_16F, 4, CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT);
    });
  }
}

// ---- plan cache ---------------------------------------------------------------------------------

void cache_checks(cublasHandle_t h) {
  if (!g_routing) return;
  HostMatrix A(kF16, 16 * 16), B(kF16, 16 * 16), C(kF16, 16 * 16);
  fill_random(A, g_rng);
  fill_random(B, g_rng);
  fill_random(C, g_rng);
  auto gemm = [&](int m, float beta) {
    const float one = 1.0f;
    return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, 16, 16, &one, A.data(), CUDA_R_16F, 16, B.data(), CUDA_R_16F,
                        16, &beta, C.data(), CUDA_R_16F, 16, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  deepgemm_cublas_counters_t c0 = counters();
  gemm(16, 0.0f);
  gemm(16, 0.0f);
  gemm(16, 2.0f);  // beta != 0: another plan
  gemm(16, 3.0f);  // same plan as beta = 2
  deepgemm_cublas_counters_t c1 = counters();
  CHECK(c1.plans_created - c0.plans_created == 2, "beta = 0 / beta != 0: %llu plans made, expected 2",
        (unsigned long long)(c1.plans_created - c0.plans_created));
  CHECK(c1.plan_cache_hits - c0.plan_cache_hits == 2, "plan cache hits %llu, expected 2",
        (unsigned long long)(c1.plan_cache_hits - c0.plan_cache_hits));
  // Bounded: with DEEPGEMM_CUBLAS_PLAN_CACHE=N, N + 3 new shapes evict at least 3 plans.
  if (const char* cap = std::getenv("DEEPGEMM_CUBLAS_PLAN_CACHE")) {
    const int n = std::atoi(cap);
    for (int m = 1; m <= n + 3; ++m) gemm(m, 0.0f);
    deepgemm_cublas_counters_t c2 = counters();
    CHECK(c2.plans_evicted - c1.plans_evicted >= 3, "cache of %d plans: %llu evictions after %d new shapes", n,
          (unsigned long long)(c2.plans_evicted - c1.plans_evicted), n + 3);
    // An evicted shape is made again, and still right.
    gemm(16, 0.0f);
    CHECK(counters().plans_created > c2.plans_created, "an evicted plan was not made again");
  }
}

// ---- cublasLtMatmul -----------------------------------------------------------------------------

struct LtCase {
  const char* name;
  LtShape shape;
  bool expect_routed;
};

void run_lt(cublasLtHandle_t lt, const LtCase& cs) {
  const LtShape& s = cs.shape;
  RefProblem p = lt_problem(s);
  LtHostOperands o = lt_operands(p, s, g_rng);
  if (lt_has_bias(s.epilogue)) p.bias = &o.bias;
  const std::vector<double> ref = reference(p, o.A, o.B, o.C);
  LtDescriptors lt_desc(s, p, o.bias.data(), false);
  // Refused by cuBLASLt (the stand-in refuses attributes > 1000): must leave the shadow as it was.
  const int32_t junk = 1;
  CHECK(cublasLtMatmulDescSetAttribute(lt_desc.desc, cublasLtMatmulDescAttributes_t(4242), &junk, sizeof(junk)) ==
            CUBLAS_STATUS_INVALID_VALUE, "a refused attribute was accepted");
  const cublasLtMatmulDesc_t desc = lt_desc.desc;
  HostMatrix& D = o.D;
  // A workspace, as cuBLASLt callers pass one: plans that need scratch (every CPU plan does) get
  // it from the call.
  static std::vector<unsigned char> workspace(std::size_t(4) << 20);
  auto matmul = [&] {
    return cublasLtMatmul(lt, desc, &s.alpha, o.A.data(), lt_desc.a, o.B.data(), lt_desc.b, &s.beta, o.C.data(),
                          lt_desc.c, D.data(), lt_desc.d, nullptr, workspace.data(), workspace.size(), nullptr);
  };
  if (expect_route(cs.name, cs.expect_routed, matmul) && cs.expect_routed) expect_close(cs.name, p, D, ref);

  if (cs.expect_routed) {
    // An FP8 scale pointer is not mapped: forwarded while set, routed again once reset to NULL.
    float scale = 1.0f;
    const float* scale_ptr = &scale;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_ptr, sizeof(scale_ptr));
    std::string name = std::string(cs.name) + " with an A scale pointer";
    expect_route(name.c_str(), false, matmul);
    scale_ptr = nullptr;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_ptr, sizeof(scale_ptr));
    name = std::string(cs.name) + " after the scale pointer is reset";
    fill_value(D, NAN);
    if (expect_route(name.c_str(), true, matmul)) expect_close(name.c_str(), p, D, ref);
  }
}

void lt_checks() {
  cublasLtHandle_t lt;
  CHECK(cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS, "cublasLtCreate");
  run_lt(lt, {"LtMatmul bf16 TN bias+GELU", {kBF16, kBF16, true, false, false, 40, 24, 32, 1, CUBLASLT_EPILOGUE_GELU_BIAS, -1, 1, 1.0f, 0.0f}, true});
  run_lt(lt, {"LtMatmul f16->f32 NN bias(f32)+ReLU beta!=0", {kF16, kF32, false, false, false, 17, 9, 21, 1, CUBLASLT_EPILOGUE_RELU_BIAS, kF32, 1, 0.5f, 1.0f}, true});
  run_lt(lt, {"LtMatmul f16 NT GELU row-major", {kF16, kF16, false, true, true, 12, 20, 8, 1, CUBLASLT_EPILOGUE_GELU, -1, 1, 1.0f, 0.0f}, true});
  run_lt(lt, {"LtMatmul bf16->f32 TT bias batch 3", {kBF16, kF32, true, true, false, 8, 8, 8, 1, CUBLASLT_EPILOGUE_BIAS, -1, 3, 2.0f, -1.0f}, true});
  run_lt(lt, {"LtMatmul DRELU_BGRAD epilogue", {kF16, kF16, false, false, false, 8, 8, 8, 1, CUBLASLT_EPILOGUE_DRELU_BGRAD, -1, 1, 1.0f, 0.0f}, false});
  // A layout the library never saw created: forwarded.
  {
    HostMatrix X(kF16, 64);
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatrixLayout_t l;
    cublasLtMatrixLayoutCreate(&l, CUDA_R_16F, 8, 8, 8);
    const float one = 1.0f, zero = 0.0f;
    expect_route("LtMatmul with an unknown layout", false, [&] {
      return cublasLtMatmul(lt, desc, &one, X.data(), l, X.data(), l, &zero, X.data(), l, X.data(),
                            reinterpret_cast<cublasLtMatrixLayout_t>(&X), nullptr, nullptr, 0, nullptr);
    });
    cublasLtMatrixLayoutDestroy(l);
    cublasLtMatmulDescDestroy(desc);
  }
  CHECK(cublasLtDestroy(lt) == CUBLAS_STATUS_SUCCESS, "cublasLtDestroy");
}

// With DEEPGEMM_CUBLAS_LOG=1: stderr (redirected to a file here) has one line per distinct shape.
void log_checks(cublasHandle_t h) {
  char path[] = "/tmp/compat_e2e_log.XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) {
    CHECK(false, "mkstemp");
    return;
  }
  std::fflush(stderr);
  const int saved = dup(2);
  dup2(fd, 2);
  HostMatrix A(kF16, 256), B(kF16, 256), C(kF16, 256);
  fill_random(A, g_rng);
  fill_random(B, g_rng);
  const float one = 1.0f, zero = 0.0f;
  for (int i = 0; i < 3; ++i)  // one shape three times: one line
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, A.data(), CUDA_R_16F, 16, B.data(), CUDA_R_16F, 16, &zero,
                 C.data(), CUDA_R_16F, 16, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  for (int i = 0; i < 2; ++i)  // a forwarded shape twice: one line, with its reason
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, A.data(), CUDA_R_16F, 16, B.data(), CUDA_R_16F, 16, &zero,
                 C.data(), CUDA_R_16F, 16, CUBLAS_COMPUTE_32F_FAST_16F, CUBLAS_GEMM_DEFAULT);
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::vector<char> text(1 << 16, 0);
  const ssize_t n = pread(fd, text.data(), text.size() - 1, 0);
  close(fd);
  unlink(path);
  int lines = 0, routed = 0, forwarded = 0;
  for (const char* p = text.data(); (p = std::strstr(p, "deepgemm_cublas: ")) != nullptr; ++p) {
    ++lines;
    const char* eol = std::strchr(p, '\n');
    const std::string line(p, eol ? eol : p + std::strlen(p));
    routed += line.find("-> DeepGEMM") != std::string::npos;
    forwarded += line.find("-> cuBLAS: COMPUTE_TYPE") != std::string::npos;
  }
  std::printf("log (%zd bytes):\n%s", n, text.data());
  CHECK(lines == 2 && routed == 1 && forwarded == 1, "log: %d lines (%d routed, %d COMPUTE_TYPE), expected 2 (1, 1)",
        lines, routed, forwarded);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "routed";
  g_routing = mode != "off";
  cublasHandle_t h;
  CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  CHECK(cublasSetStream(h, nullptr) == CUBLAS_STATUS_SUCCESS, "cublasSetStream");
  if (mode == "log") {
    log_checks(h);
  } else {
    gemm_checks(h);
    cache_checks(h);
    lt_checks();
  }
  CHECK(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS, "cublasDestroy");
  // A destroyed handle is unknown again: forwarded (the stand-in does not look at it).
  if (mode == "routed") {
    HostMatrix A(kF16, 16), C(kF16, 16);
    const float one = 1.0f, zero = 0.0f;
    expect_route("GemmEx on a destroyed handle", false, [&] {
      return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, A.data(), CUDA_R_16F, 4, A.data(), CUDA_R_16F, 4,
                          &zero, C.data(), CUDA_R_16F, 4, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    });
  }
  const deepgemm_cublas_counters_t c = counters();
  std::printf("compat_e2e %s: %llu calls, %llu routed, %llu forwarded, %llu plans; %s\n", mode.c_str(),
              (unsigned long long)c.calls, (unsigned long long)c.routed, (unsigned long long)c.fallback,
              (unsigned long long)c.plans_created, g_failures ? "FAIL" : "ok");
  return g_failures ? 1 : 0;
}

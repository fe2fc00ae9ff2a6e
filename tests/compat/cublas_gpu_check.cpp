// cublas_gpu_check: a program written against plain cuBLAS / cuBLASLt (toolkit headers, linked to
// the real cuBLAS, or to libdeepgemm_cublas instead), run on a GPU three ways by
// bench/compat-check.sh: normally, with libdeepgemm_cublas.so.1 LD_PRELOADed, and linked to it.
// Every run must give the same results within the per-type thresholds (each compared with a host
// reference in double); interposed runs also check where each call went.
//
//   cublas_gpu_check [--expect-routed] [--warm-threads N]
//       column-major cublasGemmEx with every op combination and f16/bf16/f32 outputs, strided
//       batches (one with A broadcast), alpha/beta on the host and on the device (beta = 0 on the
//       device over a C full of NaN), Hgemm, a user workspace too small (the handle's pool then),
//       a second stream, cublasLtMatmul with bias / ReLU / GELU (row- and column-major), and cases
//       that must fall back (Sgemm: no f32 kernel; TF32 compute; pointer-array batches).
//       --expect-routed: each case must also have gone where it should (needs the library).
//   cublas_gpu_check --bench
//       the library's cost per call over calling the same DeepGEMM plan directly (the host time to
//       issue a call, timed over 50-200 calls with the stream held; replay time in a CUDA graph),
//       and cublasGemmEx through the library, the plan directly and the real cuBLAS on a few shapes,
//       interleaved within each repetition (needs the library in the process). Fails when the
//       shim's host cost is over issue 13's 2 us on any shape.
// Exit 0: every check passed; 1: a check failed (one line per failure, starting "FAIL");
// 77: no GPU (CTest reports the test skipped).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cublas_cases.hpp"
#include "deepgemm/deepgemm.h"
#include "deepgemm/deepgemm_cublas.h"

using namespace compat_test;

namespace {

int g_failures = 0;
bool g_expect_routed = false;
bool g_quiet = false;  // the warm-up pass prints nothing and checks nothing

#define FAIL(...)                   \
  do {                              \
    if (!g_quiet) {                 \
      std::printf("FAIL ");         \
      std::printf(__VA_ARGS__);     \
      std::printf("\n");            \
      ++g_failures;                 \
    }                               \
  } while (0)

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::printf("FAIL CUDA %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// ---- the library's counters, when it is in the process -------------------------------------------

using CountersFn = int (*)(deepgemm_cublas_counters_t*);
CountersFn counters_fn() {
  static CountersFn fn = reinterpret_cast<CountersFn>(dlsym(RTLD_DEFAULT, "deepgemm_cublas_counters"));
  return fn;
}
deepgemm_cublas_counters_t counters() {
  deepgemm_cublas_counters_t c;
  std::memset(&c, 0, sizeof(c));
  c.struct_size = sizeof(c);
  if (counters_fn()) counters_fn()(&c);
  return c;
}
// Where one call went, from the counters around it: "DeepGEMM", "cuBLAS:REASON" or "-" (no library).
std::string route_between(const deepgemm_cublas_counters_t& a, const deepgemm_cublas_counters_t& b) {
  if (!counters_fn()) return "-";
  if (b.routed > a.routed) return "DeepGEMM";
  for (int r = 1; r < DEEPGEMM_CUBLAS_REASON_COUNT; ++r)
    if (b.by_reason[r] > a.by_reason[r]) {
      static auto name = reinterpret_cast<const char* (*)(int)>(dlsym(RTLD_DEFAULT, "deepgemm_cublas_reason_string"));
      return std::string("cuBLAS:") + (name ? name(r) : std::to_string(r).c_str());
    }
  return "?";
}

// ---- device memory --------------------------------------------------------------------------------

struct DeviceBuffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : bytes(n) { cuda_ok(cudaMalloc(&ptr, n ? n : 1), "cudaMalloc"); }
  explicit DeviceBuffer(const HostMatrix& h) : DeviceBuffer(h.bytes.size()) {
    cuda_ok(cudaMemcpy(ptr, h.data(), bytes, cudaMemcpyHostToDevice), "upload");
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
  void download(HostMatrix& h) const { cuda_ok(cudaMemcpy(h.data(), ptr, h.bytes.size(), cudaMemcpyDeviceToHost), "download"); }
};

thread_local std::mt19937 t_rng(20261201);

// One line per case; a failure when the error is over the threshold, or (--expect-routed) when the
// call did not go where it should.
int g_cases = 0, g_routed = 0;
void report(const std::string& name, double err, double thr, const std::string& route, bool expect_routed) {
  ++g_cases;
  g_routed += route == "DeepGEMM";
  const bool ok = err <= thr;  // false for NaN too
  std::printf("%-62s err %9.2e (<= %.0e) %-4s  %s\n", name.c_str(), err, thr, ok ? "ok" : "FAIL", route.c_str());
  if (!ok) FAIL("%s: relative error %.3g over %.3g", name.c_str(), err, thr);
  if (g_expect_routed && (route == "DeepGEMM") != expect_routed)
    FAIL("%s: went to %s, expected %s", name.c_str(), route.c_str(), expect_routed ? "DeepGEMM" : "cuBLAS");
}

// ---- cuBLAS cases ---------------------------------------------------------------------------------

enum class Api { GemmEx, StridedEx, BatchedEx, Hgemm, HgemmStrided, Sgemm, GemmExTF32 };

struct BlasCase {
  std::string name;
  Api api;
  int ab_type, c_type;
  cublasOperation_t ta, tb;
  int m, n, k, pad;
  int batch;
  float alpha, beta;
  bool device_scalars;
  bool routed;  // where it must go when the library is in the process
};

// One call as a program would make it, compared with the reference; returns where it went.
void run_blas(cublasHandle_t h, cudaStream_t stream, const BlasCase& cs) {
  const RefProblem p = gemm_problem(cs.m, cs.n, cs.k, cs.ta != CUBLAS_OP_N, cs.tb != CUBLAS_OP_N, cs.pad, cs.batch,
                                    cs.alpha, cs.beta);
  GemmHostOperands o = gemm_operands(p, cs.ab_type, cs.c_type, t_rng);
  HostMatrix &A = o.A, &B = o.B, &C = o.C;
  DeviceBuffer dA(A), dB(B), dC(C);

  // Scalars: float, or binary16 for the Hgemm calls; in host or device memory.
  const bool half = cs.api == Api::Hgemm || cs.api == Api::HgemmStrided;
  unsigned char host_scalars[8];
  if (half) {
    const uint16_t a = to_f16(cs.alpha), b = to_f16(cs.beta);
    std::memcpy(host_scalars, &a, 2);
    std::memcpy(host_scalars + 4, &b, 2);
  } else {
    std::memcpy(host_scalars, &cs.alpha, 4);
    std::memcpy(host_scalars + 4, &cs.beta, 4);
  }
  DeviceBuffer dScalars(8);
  cuda_ok(cudaMemcpy(dScalars.ptr, host_scalars, 8, cudaMemcpyHostToDevice), "scalars");
  const unsigned char* scalars = cs.device_scalars ? static_cast<const unsigned char*>(dScalars.ptr) : host_scalars;
  const void* alpha = scalars;
  const void* beta = scalars + 4;
  cublasSetPointerMode(h, cs.device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST);

  // Pointer arrays for cublasGemmBatchedEx live in device memory.
  std::vector<const void*> a_ptrs, b_ptrs;
  std::vector<void*> c_ptrs;
  for (int b = 0; b < cs.batch; ++b) {
    a_ptrs.push_back(static_cast<char*>(dA.ptr) + b * p.stride_a * type_bytes(cs.ab_type));
    b_ptrs.push_back(static_cast<char*>(dB.ptr) + b * p.stride_b * type_bytes(cs.ab_type));
    c_ptrs.push_back(static_cast<char*>(dC.ptr) + b * p.stride_c * type_bytes(cs.c_type));
  }
  DeviceBuffer dAp(a_ptrs.size() * sizeof(void*)), dBp(b_ptrs.size() * sizeof(void*)), dCp(c_ptrs.size() * sizeof(void*));
  cuda_ok(cudaMemcpy(dAp.ptr, a_ptrs.data(), dAp.bytes, cudaMemcpyHostToDevice), "pointer array");
  cuda_ok(cudaMemcpy(dBp.ptr, b_ptrs.data(), dBp.bytes, cudaMemcpyHostToDevice), "pointer array");
  cuda_ok(cudaMemcpy(dCp.ptr, c_ptrs.data(), dCp.bytes, cudaMemcpyHostToDevice), "pointer array");

  const std::vector<double> ref = g_quiet ? std::vector<double>() : reference(p, A, B, C);
  const cudaDataType ab = cudaDataType(cs.ab_type), ct = cudaDataType(cs.c_type);
  const int lda = int(p.lda), ldb = int(p.ldb), ldc = int(p.ldc);
  const deepgemm_cublas_counters_t before = counters();
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  switch (cs.api) {
    case Api::GemmEx:
      st = cublasGemmEx(h, cs.ta, cs.tb, cs.m, cs.n, cs.k, alpha, dA.ptr, ab, lda, dB.ptr, ab, ldb, beta, dC.ptr, ct, ldc,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      break;
    case Api::GemmExTF32:
      st = cublasGemmEx(h, cs.ta, cs.tb, cs.m, cs.n, cs.k, alpha, dA.ptr, ab, lda, dB.ptr, ab, ldb, beta, dC.ptr, ct, ldc,
                        CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
      break;
    case Api::StridedEx:
      st = cublasGemmStridedBatchedEx(h, cs.ta, cs.tb, cs.m, cs.n, cs.k, alpha, dA.ptr, ab, lda, p.stride_a, dB.ptr, ab,
                                      ldb, p.stride_b, beta, dC.ptr, ct, ldc, p.stride_c, cs.batch, CUBLAS_COMPUTE_32F,
                                      CUBLAS_GEMM_DEFAULT);
      break;
    case Api::BatchedEx:
      st = cublasGemmBatchedEx(h, cs.ta, cs.tb, cs.m, cs.n, cs.k, alpha, static_cast<const void* const*>(dAp.ptr), ab,
                               lda, static_cast<const void* const*>(dBp.ptr), ab, ldb, beta,
                               static_cast<void* const*>(dCp.ptr), ct, ldc, cs.batch, CUBLAS_COMPUTE_32F,
                               CUBLAS_GEMM_DEFAULT);
      break;
    case Api::Hgemm:
      st = cublasHgemm(h, cs.ta, cs.tb, cs.m, cs.n, cs.k, static_cast<const __half*>(alpha),
                       static_cast<const __half*>(dA.ptr), lda, static_cast<const __half*>(dB.ptr), ldb,
                       static_cast<const __half*>(beta), static_cast<__half*>(dC.ptr), ldc);
      break;
    case Api::HgemmStrided:
      st = cublasHgemmStridedBatched(h, cs.ta, cs.tb, cs.m, cs.n, cs.k, static_cast<const __half*>(alpha),
                                     static_cast<const __half*>(dA.ptr), lda, p.stride_a,
                                     static_cast<const __half*>(dB.ptr), ldb, p.stride_b, static_cast<const __half*>(beta),
                                     static_cast<__half*>(dC.ptr), ldc, p.stride_c, cs.batch);
      break;
    case Api::Sgemm:
      st = cublasSgemm(h, cs.ta, cs.tb, cs.m, cs.n, cs.k, static_cast<const float*>(alpha),
                       static_cast<const float*>(dA.ptr), lda, static_cast<const float*>(dB.ptr), ldb,
                       static_cast<const float*>(beta), static_cast<float*>(dC.ptr), ldc);
      break;
  }
  const std::string route = route_between(before, counters());
  cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
  if (g_quiet) return;
  if (st != CUBLAS_STATUS_SUCCESS) {
    FAIL("%s: status %d", cs.name.c_str(), int(st));
    return;
  }
  dC.download(C);
  report(cs.name, rel_error(p, C, ref), threshold(cs.c_type), route, cs.routed);
}

// ---- cuBLASLt cases -------------------------------------------------------------------------------

struct LtCase {
  std::string name;
  LtShape shape;
  bool device_scalars;
  bool routed;
};

void run_lt(cublasLtHandle_t lt, cudaStream_t stream, void* workspace, std::size_t workspace_size, const LtCase& cs) {
  const LtShape& s = cs.shape;
  RefProblem p = lt_problem(s);
  LtHostOperands o = lt_operands(p, s, t_rng);
  if (lt_has_bias(s.epilogue)) p.bias = &o.bias;
  std::vector<double> ref, ref_erf;
  if (!g_quiet) {
    ref = reference(p, o.A, o.B, o.C);
    if (p.act == kGeluTanh) {  // which GELU cuBLASLt computes shows in f32 outputs
      RefProblem q = p;
      q.act = kGeluErf;
      ref_erf = reference(q, o.A, o.B, o.C);
    }
  }
  DeviceBuffer dA(o.A), dB(o.B), dC(o.C), dD(o.D), dBias(o.bias), dScalars(8);
  const float scalars[2] = {s.alpha, s.beta};
  cuda_ok(cudaMemcpy(dScalars.ptr, scalars, 8, cudaMemcpyHostToDevice), "scalars");
  const LtDescriptors desc(s, p, dBias.ptr, cs.device_scalars);
  const void* alpha = cs.device_scalars ? dScalars.ptr : static_cast<const void*>(&scalars[0]);
  const void* beta = cs.device_scalars ? static_cast<const char*>(dScalars.ptr) + 4 : static_cast<const void*>(&scalars[1]);
  const deepgemm_cublas_counters_t before = counters();
  const cublasStatus_t st = cublasLtMatmul(lt, desc.desc, alpha, dA.ptr, desc.a, dB.ptr, desc.b, beta, dC.ptr, desc.c,
                                           dD.ptr, desc.d, nullptr, workspace, workspace_size, stream);
  const std::string route = route_between(before, counters());
  cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  if (g_quiet) return;
  if (st == CUBLAS_STATUS_NOT_SUPPORTED && route != "DeepGEMM") {
    // cuBLASLt's own answer for a combination it has no kernel for: nothing to compare, and not
    // this library's doing (a routed call never returns it).
    std::printf("%-62s not compared: the real cuBLASLt says CUBLAS_STATUS_NOT_SUPPORTED  %s\n", cs.name.c_str(),
                route.c_str());
    if (g_expect_routed && cs.routed) FAIL("%s: went to %s, expected DeepGEMM", cs.name.c_str(), route.c_str());
    return;
  }
  if (st != CUBLAS_STATUS_SUCCESS) {
    FAIL("%s: status %d", cs.name.c_str(), int(st));
    return;
  }
  HostMatrix& D = o.D;
  dD.download(D);
  report(cs.name, rel_error(p, D, ref), threshold(s.d_type), route, cs.routed);
  if (!ref_erf.empty()) {
    // The library maps cuBLASLt's GELU to the tanh form. In f32 outputs the two forms differ by
    // ~1e-5 relative, far above the GEMM's own error: the real cuBLASLt (plain run) must be closer
    // to the tanh form too, or that mapping is wrong.
    const double tanh_err = rel_error(p, D, ref), erf_err = rel_error(p, D, ref_erf);
    std::printf("%-62s GELU: err vs tanh form %.2e, vs erf form %.2e\n", "", tanh_err, erf_err);
    if (s.d_type == kF32 && !(tanh_err < erf_err))
      FAIL("%s: the result is the erf form of GELU, not the tanh form", cs.name.c_str());
  }
}

// ---- the case list --------------------------------------------------------------------------------

std::vector<BlasCase> blas_cases() {
  std::vector<BlasCase> out;
  const cublasOperation_t N = CUBLAS_OP_N, T = CUBLAS_OP_T;
  const char* op_names = "NT";
  struct Types {
    int ab, c;
  };
  // Every op combination in each output type, beta = 0 and beta != 0 alternating; odd shapes and
  // padded leading dimensions.
  const Types types[] = {{kF16, kF16}, {kBF16, kBF16}, {kBF16, kF32}, {kF16, kF32}};
  int i = 0;
  for (const Types& t : types)
    for (cublasOperation_t ta : {N, T})
      for (cublasOperation_t tb : {N, T}) {
        const bool beta0 = (i++ % 2) == 0;
        const std::string name = std::string("GemmEx ") + type_name(t.ab) + "->" + type_name(t.c) + " " +
                                 op_names[ta] + op_names[tb] + " 129x65x127 pad 3" + (beta0 ? " beta=0" : " beta=0.5");
        out.push_back({name, Api::GemmEx, t.ab, t.c, ta, tb, 129, 65, 127, 3, 1, 1.25f, beta0 ? 0.0f : 0.5f, false, true});
      }
  out.push_back({"GemmEx bf16->bf16 TN 512x384x256", Api::GemmEx, kBF16, kBF16, T, N, 512, 384, 256, 0, 1, 1.0f, 0.0f, false, true});
  out.push_back({"GemmEx f16->f16 NN 1000x17x333 pad 1 (unaligned ld)", Api::GemmEx, kF16, kF16, N, N, 1000, 17, 333, 1, 1, 1.0f, 1.0f, false, true});
  out.push_back({"GemmEx bf16->bf16 TN 2048x8x2048 (decode)", Api::GemmEx, kBF16, kBF16, T, N, 2048, 8, 2048, 0, 1, 1.0f, 0.0f, false, true});
  out.push_back({"GemmEx bf16->f32 TN 1x4096x1024 (m = 1)", Api::GemmEx, kBF16, kF32, T, N, 1, 4096, 1024, 0, 1, 1.0f, 0.0f, false, true});
  // Device alpha/beta: beta = 0 read by the kernel must still ignore C's NaNs.
  out.push_back({"GemmEx f16->f16 NT device alpha/beta, beta=0", Api::GemmEx, kF16, kF16, N, T, 200, 136, 96, 0, 1, 0.75f, 0.0f, true, true});
  out.push_back({"GemmEx bf16->f32 TT device alpha/beta, beta=-1", Api::GemmEx, kBF16, kF32, T, T, 96, 200, 64, 2, 1, 2.0f, -1.0f, true, true});
  // Strided batches.
  out.push_back({"StridedBatchedEx bf16->bf16 TN batch 3", Api::StridedEx, kBF16, kBF16, T, N, 64, 96, 128, 0, 3, 1.0f, 0.5f, false, true});
  out.push_back({"StridedBatchedEx f16->f32 NN batch 4, A broadcast", Api::StridedEx, kF16, kF32, N, N, 72, 40, 56, 1, 4, 1.0f, 0.0f, false, true});
  out.push_back({"StridedBatchedEx f16->f16 NT batch 2, device scalars", Api::StridedEx, kF16, kF16, N, T, 128, 64, 64, 0, 2, 1.0f, 1.0f, true, true});
  // Hgemm (CUBLAS_COMPUTE_16F, half scalars on the host; k small so f16 accumulation is exact).
  out.push_back({"Hgemm NT 96x80x16", Api::Hgemm, kF16, kF16, N, T, 96, 80, 16, 0, 1, 1.0f, 0.5f, false, true});
  out.push_back({"HgemmStridedBatched TN batch 3", Api::HgemmStrided, kF16, kF16, T, N, 64, 48, 16, 0, 3, 2.0f, 0.0f, false, true});
  // Fall-backs: what no plan runs, answered by the real cuBLAS.
  out.push_back({"Sgemm NN 100x60x40 (no f32 GPU kernel)", Api::Sgemm, kF32, kF32, N, N, 100, 60, 40, 0, 1, 1.0f, 0.0f, false, false});
  out.push_back({"GemmEx f32 CUBLAS_COMPUTE_32F_FAST_TF32", Api::GemmExTF32, kF32, kF32, T, N, 64, 64, 64, 0, 1, 1.0f, 0.0f, false, false});
  out.push_back({"Hgemm NN device scalars (half on the device)", Api::Hgemm, kF16, kF16, N, N, 64, 64, 16, 0, 1, 1.0f, 0.0f, true, false});
  out.push_back({"GemmBatchedEx bf16 NN batch 2 (pointer arrays)", Api::BatchedEx, kBF16, kBF16, N, N, 64, 32, 48, 0, 2, 1.0f, 0.0f, false, false});
  return out;
}

std::vector<LtCase> lt_cases() {
  // Leading dimensions padded by 8 (16-byte rows, as frameworks allocate), and once by 1.
  return {
      {"LtMatmul bf16 TN bias+GELU 256x128x192", {kBF16, kBF16, true, false, false, 256, 128, 192, 8, CUBLASLT_EPILOGUE_GELU_BIAS, -1, 1, 1.0f, 0.0f}, false, true},
      {"LtMatmul f16->f32 TN GELU 96x64x80", {kF16, kF32, true, false, false, 96, 64, 80, 8, CUBLASLT_EPILOGUE_GELU, -1, 1, 1.0f, 0.0f}, false, true},
      {"LtMatmul f16->f32 NN bias(f32)+ReLU beta=1, odd lds", {kF16, kF32, false, false, false, 130, 70, 64, 1, CUBLASLT_EPILOGUE_RELU_BIAS, kF32, 1, 0.5f, 1.0f}, false, true},
      {"LtMatmul bf16 NT bias row-major", {kBF16, kBF16, false, true, true, 64, 192, 96, 8, CUBLASLT_EPILOGUE_BIAS, -1, 1, 1.0f, 0.0f}, false, true},
      {"LtMatmul f16 TN ReLU batch 2, device scalars", {kF16, kF16, true, false, false, 64, 64, 64, 8, CUBLASLT_EPILOGUE_RELU, -1, 2, 1.0f, 0.0f}, true, true},
      {"LtMatmul f32 TN bias (f32 inputs: no plan, cuBLASLt)", {kF32, kF32, true, false, false, 64, 48, 40, 8, CUBLASLT_EPILOGUE_BIAS, -1, 1, 1.0f, 0.0f}, false, false},
  };
}

// ---- modes ----------------------------------------------------------------------------------------

int run_checks(int warm_threads) {
  const std::vector<BlasCase> blas = blas_cases();
  const std::vector<LtCase> lt = lt_cases();
  // Warm-up: every case once from several threads, each with its own handles and stream, results
  // ignored. Interposed, this makes the plans (NVRTC compiles in parallel, into the kernel cache
  // every handle shares); the checked pass below then measures nothing but correctness.
  if (warm_threads > 0) {
    const auto t0 = std::chrono::steady_clock::now();
    g_quiet = true;
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < warm_threads; ++t)
      threads.emplace_back([&] {
        cublasHandle_t h;
        cublasLtHandle_t lth;
        cudaStream_t s;
        cuda_ok(cudaStreamCreate(&s), "cudaStreamCreate");
        cublasCreate(&h);
        cublasLtCreate(&lth);
        cublasSetStream(h, s);
        DeviceBuffer ws(32u << 20);
        for (std::size_t i; (i = next++) < blas.size() + lt.size();) {
          if (i < blas.size()) run_blas(h, s, blas[i]);
          else run_lt(lth, s, ws.ptr, ws.bytes, lt[i - blas.size()]);
        }
        cublasLtDestroy(lth);
        cublasDestroy(h);
        cudaStreamDestroy(s);
      });
    for (std::thread& t : threads) t.join();
    g_quiet = false;
    std::printf("warm-up: %zu cases on %d threads in %.1f s\n", blas.size() + lt.size(), warm_threads,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }

  cublasHandle_t h;
  cudaStream_t stream, other;
  cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
  cuda_ok(cudaStreamCreate(&other), "cudaStreamCreate");
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    FAIL("cublasCreate");
    return 1;
  }
  cublasSetStream(h, stream);
  for (const BlasCase& cs : blas) run_blas(h, stream, cs);

  // A user workspace too small for plans that need one: the handle's own pool serves them; a
  // second stream gets a pool of its own. (Which plans need workspace is the planner's choice:
  // the pool size printed at the end says whether any did.)
  DeviceBuffer tiny(256);
  cublasSetWorkspace(h, tiny.ptr, tiny.bytes);
  run_blas(h, stream, {"GemmEx bf16 TN 2048x8x2048, 256-byte user workspace", Api::GemmEx, kBF16, kBF16, CUBLAS_OP_T,
                       CUBLAS_OP_N, 2048, 8, 2048, 0, 1, 1.0f, 0.0f, false, true});
  cublasSetStream(h, other);  // also resets the workspace to the default, as cuBLAS documents
  run_blas(h, other, {"GemmEx f16 NN 1000x17x333 pad 1, second stream", Api::GemmEx, kF16, kF16, CUBLAS_OP_N,
                      CUBLAS_OP_N, 1000, 17, 333, 1, 1, 1.0f, 0.0f, false, true});
  cublasSetStream(h, stream);

  cublasLtHandle_t lth;
  cublasLtCreate(&lth);
  DeviceBuffer ws(32u << 20);
  for (const LtCase& cs : lt) run_lt(lth, stream, ws.ptr, ws.bytes, cs);
  cublasLtDestroy(lth);
  cublasDestroy(h);
  cudaStreamDestroy(stream);
  cudaStreamDestroy(other);

  const deepgemm_cublas_counters_t c = counters();
  if (counters_fn())
    std::printf("library: %llu calls, %llu routed, %llu to cuBLAS, %llu plans made, %llu refused, %llu MiB in pools\n",
                (unsigned long long)c.calls, (unsigned long long)c.routed, (unsigned long long)c.fallback,
                (unsigned long long)c.plans_created, (unsigned long long)c.plans_refused,
                (unsigned long long)(c.pool_bytes >> 20));
  else if (g_expect_routed)
    FAIL("--expect-routed, but libdeepgemm_cublas is not in the process");
  std::printf("cublas_gpu_check: %d cases, %d routed to DeepGEMM, %d failures\n", g_cases, g_routed, g_failures);
  return g_failures ? 1 : 0;
}

// ---- --bench ----------------------------------------------------------------------------------------

// The public C API of libdeepgemm.so.1, looked up at run time: this program links cuBLAS only.
struct DeepGemmApi {
  decltype(&dgemm_context_create) context_create = nullptr;
  decltype(&dgemm_context_destroy) context_destroy = nullptr;
  decltype(&dgemm_problem_init) problem_init = nullptr;
  decltype(&dgemm_epilogue_init) epilogue_init = nullptr;
  decltype(&dgemm_args_init) args_init = nullptr;
  decltype(&dgemm_create_plan) create_plan = nullptr;
  decltype(&dgemm_destroy_plan) destroy_plan = nullptr;
  decltype(&dgemm_plan_workspace_size) workspace_size = nullptr;
  decltype(&dgemm_execute) execute = nullptr;
  decltype(&dgemm_last_error) last_error = nullptr;
  bool load() {
    void* lib = dlopen("libdeepgemm.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib) lib = dlopen("libdeepgemm.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
#define DGC_LOAD(field, name) field = reinterpret_cast<decltype(field)>(dlsym(lib, #name))
    DGC_LOAD(context_create, dgemm_context_create);
    DGC_LOAD(context_destroy, dgemm_context_destroy);
    DGC_LOAD(problem_init, dgemm_problem_init);
    DGC_LOAD(epilogue_init, dgemm_epilogue_init);
    DGC_LOAD(args_init, dgemm_args_init);
    DGC_LOAD(create_plan, dgemm_create_plan);
    DGC_LOAD(destroy_plan, dgemm_destroy_plan);
    DGC_LOAD(workspace_size, dgemm_plan_workspace_size);
    DGC_LOAD(execute, dgemm_execute);
    DGC_LOAD(last_error, dgemm_last_error);
#undef DGC_LOAD
    return execute && create_plan && last_error;
  }
};

using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v[v.size() / 2];
}

// The median over repetitions of the paired difference a[r] - b[r]: both were measured in the same
// repetition, so drift between repetitions cancels.
double paired_median(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> d;
  for (std::size_t r = 0; r < std::min(a.size(), b.size()); ++r) d.push_back(a[r] - b[r]);
  return median(d);
}

// A shape as cuBLAS sees it (column-major; TN is what a linear layer y = x W^T calls).
struct BenchShape {
  int m, n, k;
  const char* note;
};

struct Variant {
  const char* name;
  std::function<void()> call;  // one GEMM on `stream`
};

// Fills device memory with values every 16-bit type holds exactly (never zeros: they run faster).
void fill_device(void* ptr, std::size_t elements) {
  HostMatrix chunk(kBF16, std::min<std::size_t>(elements, 1u << 20));
  fill_random(chunk, t_rng);
  for (std::size_t done = 0; done < elements; done += chunk.size()) {
    const std::size_t n = std::min(chunk.size(), elements - done);
    cuda_ok(cudaMemcpy(static_cast<char*>(ptr) + done * 2, chunk.data(), n * 2, cudaMemcpyHostToDevice), "fill");
  }
}

// Holds a stream while the host issues calls into it: a host function at the head of the stream
// that returns only when released. The calls queue behind it and none runs, so the host loop times
// the issue path alone, the same way for a 3 us GEMM as for a 1.4 ms one, and the queue holds
// exactly the calls issued, far fewer than fill it. Were it full, the loop would block on the GPU, which waits for the
// release: the host function then gives up after kTimeout and says so, and that repetition's host
// time is not a measure of the issue path (the bench reports it as a failure, never as a number).
// (CUDA asks host functions not to wait on anything that may depend on queued work; the time-out is
// what keeps this one from doing so for more than kTimeout.)
class StreamGate {
 public:
  void close(cudaStream_t stream) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      open_ = false;
      timed_out_ = false;
    }
    cuda_ok(cudaLaunchHostFunc(stream, &StreamGate::hold, this), "cudaLaunchHostFunc");
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  // After the stream's work behind the gate has completed.
  bool timed_out() {
    std::lock_guard<std::mutex> lock(mutex_);
    return timed_out_;
  }

 private:
  static constexpr std::chrono::milliseconds kTimeout{500};  // a loop of 200 calls takes ~2 ms
  static void hold(void* self) {
    StreamGate& g = *static_cast<StreamGate*>(self);
    std::unique_lock<std::mutex> lock(g.mutex_);
    if (!g.cv_.wait_for(lock, kTimeout, [&] { return g.open_; })) g.timed_out_ = true;
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = true;
  bool timed_out_ = false;
};

int run_bench() {
  DeepGemmApi dg;
  if (!counters_fn() || !dg.load()) {
    std::printf("--bench needs libdeepgemm_cublas in the process (LD_PRELOAD or linked) and libdeepgemm.so.1\n");
    return 2;
  }
  const auto bench_start = std::chrono::steady_clock::now();
  cublasHandle_t h;
  cudaStream_t stream;
  cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    FAIL("cublasCreate");
    return 1;
  }
  cublasSetStream(h, stream);
  // A workspace of the program's own, as frameworks set one (cuBLAS allocates nothing while a
  // graph is captured then); it also serves the library's plans that need workspace.
  DeviceBuffer handle_ws(32u << 20);
  cublasSetWorkspace(h, handle_ws.ptr, handle_ws.bytes);
  // The real cuBLAS's own cublasGemmEx, on the same (real) handle: the baseline.
  void* real_lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (!real_lib) real_lib = dlopen("libcublas.so.12", RTLD_NOW | RTLD_NOLOAD);
  GemmExFn real_gemm = real_lib ? reinterpret_cast<GemmExFn>(dlsym(real_lib, "cublasGemmEx")) : nullptr;
  dgemm_context_t ctx = nullptr;
  int device = 0;
  cudaGetDevice(&device);
  if (dg.context_create(DGEMM_DEVICE_CUDA, device, &ctx) != DGEMM_STATUS_SUCCESS) {
    FAIL("dgemm_context_create: %s", dg.last_error());
    return 1;
  }
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  StreamGate gate;

  // A shape is launch-bound when its GEMM (the plan's, back to back) takes less GPU time than this:
  // there the graph column's difference is a per-call cost; above it, GPU-time noise (~0.1-0.3% of
  // the GEMM) outweighs any.
  const double kLaunchBoundUs = 20.0;
  const double kTargetUs = 2.0;  // issue 13: the shim adds <= 2 us per call over the plan called directly
  const BenchShape shapes[] = {
      {64, 64, 64, "tiny: launch-bound, shows the per-call cost"},
      {4096, 4096, 4096, "square"},
      {8192, 8192, 8192, "square, large"},
      {4096, 16, 4096, "decode: 16 tokens"},
      {4095, 4095, 4095, "unaligned"},
  };
  std::vector<std::string> summary;
  double worst_host = -INFINITY;
  std::string worst_shape;
  for (const BenchShape& s : shapes) {
    const std::string shape_name = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    const std::size_t a_elems = std::size_t(s.k) * s.m, b_elems = std::size_t(s.k) * s.n, c_elems = std::size_t(s.m) * s.n;
    DeviceBuffer A(a_elems * 2), B(b_elems * 2), C(c_elems * 2);
    fill_device(A.ptr, a_elems);
    fill_device(B.ptr, b_elems);
    fill_device(C.ptr, c_elems);
    const float alpha = 1.0f, beta = 0.0f;
    // The same problem as a DeepGEMM plan made directly: what the library routes the call to.
    dgemm_problem_t p;
    dg.problem_init(&p);
    p.m = s.m;
    p.n = s.n;
    p.k = s.k;
    p.op_a = DGEMM_OP_T;
    p.op_b = DGEMM_OP_N;
    p.order = DGEMM_ORDER_COL_MAJOR;
    p.lda = s.k;
    p.ldb = s.k;
    p.ldc = p.ldd = s.m;
    dgemm_plan_t plan = nullptr;
    if (dg.create_plan(ctx, &p, nullptr, nullptr, &plan) != DGEMM_STATUS_SUCCESS) {
      FAIL("%s: dgemm_create_plan: %s", shape_name.c_str(), dg.last_error());
      continue;
    }
    std::size_t ws_bytes = 0;
    dg.workspace_size(plan, &ws_bytes);
    DeviceBuffer ws(ws_bytes);
    dgemm_args_t args;
    dg.args_init(&args);
    args.scalar_mode = DGEMM_SCALARS_HOST;
    args.alpha = 1.0f;
    args.beta = 0.0f;
    std::vector<Variant> variants;
    if (real_gemm)
      variants.push_back({"cuBLAS", [&] {
                            real_gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, s.m, s.n, s.k, &alpha, A.ptr, CUDA_R_16BF, s.k, B.ptr,
                                      CUDA_R_16BF, s.k, &beta, C.ptr, CUDA_R_16BF, s.m, CUBLAS_COMPUTE_32F,
                                      CUBLAS_GEMM_DEFAULT);
                          }});
    variants.push_back({"via library", [&] {
                          cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, s.m, s.n, s.k, &alpha, A.ptr, CUDA_R_16BF, s.k,
                                       B.ptr, CUDA_R_16BF, s.k, &beta, C.ptr, CUDA_R_16BF, s.m, CUBLAS_COMPUTE_32F,
                                       CUBLAS_GEMM_DEFAULT);
                        }});
    variants.push_back({"plan direct", [&] {
                          dg.execute(plan, A.ptr, B.ptr, nullptr, C.ptr, &args, ws.ptr, ws.bytes, stream);
                        }});
    const std::size_t nv = variants.size(), lib = real_gemm ? 1 : 0, direct = lib + 1;
    // Warm: plans made, kernels loaded (lazy module loading happens here, not behind the gate);
    // the library's call must be routed.
    for (Variant& v : variants)
      for (int i = 0; i < 3; ++i) v.call();
    cuda_ok(cudaStreamSynchronize(stream), "warm-up");
    const deepgemm_cublas_counters_t c0 = counters();
    variants[lib].call();
    const std::string route = route_between(c0, counters());
    if (route != "DeepGEMM") FAIL("%s: cublasGemmEx went to %s, not DeepGEMM", shape_name.c_str(), route.c_str());

    const double flops = 2.0 * s.m * s.n * double(s.k);
    const double guess_us = std::max(flops / 400e12 * 1e6, 1.0);  // a rough guess, to size the loops
    // Host loop: 200 calls, or 50 where 200 would queue seconds of GPU work (they all run once
    // released); either way far fewer launches than fill a stream's queue.
    const int host_calls = std::max(50, std::min(200, int(4000.0 / guess_us)));
    // Graph: enough GEMMs per replay that a replay is not one launch's worth, as before.
    const int graph_calls = std::max(5, std::min(50, int(2000.0 / guess_us)));
    const int reps = 9;
    std::vector<std::vector<double>> host_us(nv), gpu_us(nv), graph_us(nv);
    // Every repetition runs each variant once, in an order that rotates over repetitions, so drift
    // and the first-after-another-variant effect hit all three alike.
    bool blocked = false;
    for (int r = 0; r < reps && !blocked; ++r)
      for (std::size_t j = 0; j < nv && !blocked; ++j) {
        const std::size_t v = (r + j) % nv;
        cuda_ok(cudaStreamSynchronize(stream), "sync");
        gate.close(stream);
        variants[v].call();  // untimed: brings this variant's code and data back into the caches
        cudaEventRecord(e0, stream);
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < host_calls; ++i) variants[v].call();
        const auto t1 = std::chrono::steady_clock::now();
        // Nothing may have run yet: e0 is behind the gate (cudaErrorNotReady, which is not sticky).
        const bool held = cudaEventQuery(e0) == cudaErrorNotReady;
        cudaEventRecord(e1, stream);
        gate.release();
        cuda_ok(cudaEventSynchronize(e1), "event");
        if (gate.timed_out() || !held) {
          FAIL("%s: %s: %s: no host time measured", shape_name.c_str(), variants[v].name,
               gate.timed_out() ? "the host loop waited for the GPU (its launch queue was full)"
                                : "the stream ran before the loop ended (the gate did not hold it)");
          blocked = true;
          break;
        }
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        host_us[v].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / host_calls);
        gpu_us[v].push_back(ms * 1e3 / host_calls);
      }
    if (blocked)  // shown as nan, never as a number from the repetitions before
      for (std::vector<double>& t : host_us) t.clear();
    // On launch-bound shapes a loop timed while its calls run (the way this was measured before)
    // ends long before the queue could fill, so it measures the issue cost too: the same loop
    // without the gate shows whether holding the stream changes what the host column measures.
    const bool launch_bound = median(gpu_us[direct]) < kLaunchBoundUs;
    std::vector<std::vector<double>> free_us(nv);
    if (launch_bound)
      for (int r = 0; r < reps; ++r)
        for (std::size_t j = 0; j < nv; ++j) {
          const std::size_t v = (r + j) % nv;
          cuda_ok(cudaStreamSynchronize(stream), "sync");
          variants[v].call();
          const auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < host_calls; ++i) variants[v].call();
          const auto t1 = std::chrono::steady_clock::now();
          free_us[v].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / host_calls);
        }
    // CUDA graphs: the same calls captured once, replayed; the library's hot path must be capturable
    // and must put nothing in the graph but the plan's kernels.
    std::vector<cudaGraphExec_t> execs(nv, nullptr);
    for (std::size_t v = 0; v < nv; ++v) {
      cudaGraph_t graph;
      const deepgemm_cublas_counters_t before = counters();
      cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture");
      for (int i = 0; i < graph_calls; ++i) variants[v].call();
      cuda_ok(cudaStreamEndCapture(stream, &graph), "end capture");
      cuda_ok(cudaGraphInstantiate(&execs[v], graph, 0), "instantiate");
      cudaGraphDestroy(graph);
      if (v == lib && counters().routed - before.routed != uint64_t(graph_calls))
        FAIL("%s: %llu of %d captured calls routed", shape_name.c_str(),
             (unsigned long long)(counters().routed - before.routed), graph_calls);
    }
    for (int r = 0; r < reps; ++r)
      for (std::size_t j = 0; j < nv; ++j) {
        const std::size_t v = (r + j) % nv;
        cuda_ok(cudaGraphLaunch(execs[v], stream), "graph warm");
        cudaEventRecord(e0, stream);
        cuda_ok(cudaGraphLaunch(execs[v], stream), "graph");
        cudaEventRecord(e1, stream);
        cuda_ok(cudaEventSynchronize(e1), "event");
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        graph_us[v].push_back(ms * 1e3 / graph_calls);
      }
    for (cudaGraphExec_t e : execs) cudaGraphExecDestroy(e);

    std::printf("\n%s bf16 TN (%s): host %d calls, graph %d GEMMs, x %d reps interleaved; medians\n",
                shape_name.c_str(), s.note, host_calls, graph_calls, reps);
    std::printf("  %-12s %14s %14s %14s %10s\n", "", "host us/call", "GPU us/GEMM", "graph us/GEMM", "TFLOP/s");
    std::vector<double> gpu(nv), host(nv), grp(nv);
    for (std::size_t v = 0; v < nv; ++v) {
      host[v] = median(host_us[v]);
      gpu[v] = median(gpu_us[v]);
      grp[v] = median(graph_us[v]);
      std::printf("  %-12s %14.2f %14.2f %14.2f %10.1f\n", variants[v].name, host[v], gpu[v], grp[v],
                  flops / (grp[v] * 1e-6) / 1e12);
    }
    const double shim_host = paired_median(host_us[lib], host_us[direct]);
    const double shim_graph = paired_median(graph_us[lib], graph_us[direct]);
    // The spread of the paired differences over repetitions: what a single repetition could show.
    auto spread = [](const std::vector<double>& a, const std::vector<double>& b) {
      double lo = INFINITY, hi = -INFINITY;
      for (std::size_t r = 0; r < std::min(a.size(), b.size()); ++r) {
        lo = std::min(lo, a[r] - b[r]);
        hi = std::max(hi, a[r] - b[r]);
      }
      char text[64];
      std::snprintf(text, sizeof(text), "%+.2f..%+.2f", lo, hi);
      return std::string(text);
    };
    std::printf("  library - direct per repetition: host %s us/call, graph %s us/GEMM\n",
                spread(host_us[lib], host_us[direct]).c_str(), spread(graph_us[lib], graph_us[direct]).c_str());
    if (launch_bound)
      std::printf("  the host loop without the gate (the GPU running meanwhile): library %.2f, direct %.2f us/call, "
                  "shim %+.2f (per repetition %s)\n",
                  median(free_us[lib]), median(free_us[direct]), paired_median(free_us[lib], free_us[direct]),
                  spread(free_us[lib], free_us[direct]).c_str());
    char line[320];
    std::snprintf(line, sizeof(line),
                  "bench %-15s shim %+6.2f us/call host, %+6.2f us/GEMM graph (%+.2f%% of the GEMM); "
                  "library/direct %.2fx; cuBLAS/library %.2fx; %s",
                  shape_name.c_str(), shim_host, shim_graph, 100.0 * shim_graph / grp[direct], grp[lib] / grp[direct],
                  real_gemm ? grp[0] / grp[lib] : NAN,
                  launch_bound ? "launch-bound: both are the per-call cost" : "graph: GPU-time noise");
    std::printf("  %s\n", line);
    summary.push_back(line);
    if (!blocked && shim_host > worst_host) {
      worst_host = shim_host;
      worst_shape = shape_name;
    }
    dg.destroy_plan(plan);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cublasDestroy(h);
  cudaStreamDestroy(stream);
  dg.context_destroy(ctx);
  std::printf("\n");
  for (const std::string& l : summary) std::printf("%s\n", l.c_str());
  std::printf(
      "(shim: the library's cost over calling the same plan directly, the median over repetitions of the paired\n"
      " difference. host: the host time to issue one call, timed with the stream held so the GPU's work does\n"
      " not enter it: the per-call overhead, for every shape. GPU us/GEMM: those calls run back to back once\n"
      " released. graph: the same calls replayed in a CUDA graph, which holds the same kernels either way: a\n"
      " per-call cost on launch-bound shapes (GEMM < %.0f us), else GPU-time noise, hence also as %% of the\n"
      " GEMM. cuBLAS/library > 1: the library is faster.)\n",
      kLaunchBoundUs);
  // A shape whose host loop blocked, or whose plan failed, has failed already and is not in worst_host.
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - bench_start).count();
  if (worst_shape.empty()) {
    std::printf("bench shim host cost: no shape measured; %.1f s\n", seconds);
  } else {
    const bool met = worst_host <= kTargetUs;
    std::printf("bench shim host cost: at most %+.2f us/call (%s); target <= %.0f us: %s; %.1f s\n", worst_host,
                worst_shape.c_str(), kTargetUs, met ? "met" : "NOT met", seconds);
    if (!met)
      FAIL("the shim costs %+.2f us/call on the host at %s, over the %.0f us target", worst_host, worst_shape.c_str(),
           kTargetUs);
  }
  return g_failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Whole lines: the library's log (stderr) must not split this program's lines in one log file.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  bool bench = false;
  int warm_threads = 8;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--bench") {
      bench = true;
    } else if (a == "--expect-routed") {
      g_expect_routed = true;
    } else if (a == "--warm-threads" && i + 1 < argc) {
      warm_threads = std::atoi(argv[++i]);
    } else {
      std::printf("usage: cublas_gpu_check [--expect-routed] [--warm-threads N] | --bench\n");
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device: %s; libdeepgemm_cublas %s\n", prop.name, counters_fn() ? "in the process" : "absent");
  return bench ? run_bench() : run_checks(warm_threads);
}

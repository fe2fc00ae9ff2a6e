// Shared harness of the GPU tests (tests/gpu/test_*_gemm.cpp): the no-GPU exit (77) with its
// DGEMM_TEST_PREFILL hook, the CUDA context, cases converted to the C API's structs, device buffers
// with poisoned D and guard bands, the CPU-oracle comparison, the repro lines of failures (text
// and `deepgemm run` command), parallel plan creation / prepare, and the deduplicated kernel list
// a prefill compiles. Header-only on purpose: only the GPU test executables include it (they
// already link CUDA::cudart), so no extra library or CMake target.
// What differs per family (cases, sweeps, menus, family-specific checks) stays in each test file.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cpu/cpu_gemm.hpp"
#include "backend/cuda/jit.hpp"
#include "backend/cuda/launcher.hpp"
#include "common/run_command.hpp"
#include "core/float_convert.hpp"
#include "core/problem.hpp"
#include "deepgemm/deepgemm.h"
#include "plan/planner.hpp"

#define CUDA_OK(x) BOOST_REQUIRE_EQUAL(cudaGetErrorString(x), cudaGetErrorString(cudaSuccess))

namespace dgemm_test {

using namespace dgemm;

// Called from each GPU test's global fixture. Without a device: DGEMM_TEST_PREFILL=<built-in arch,
// e.g. h200> compiles, without a GPU, the kernels this test's plans will most likely use into
// $DEEPGEMM_CACHE_DIR (to carry to the device) and exits 0; otherwise exit 77 (CTest: skipped).
inline void skip_without_gpu(void (*prefill_cache)(const char* arch_name)) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    if (const char* arch = std::getenv("DGEMM_TEST_PREFILL")) {
      prefill_cache(arch);
      std::exit(0);
    }
    std::printf("no CUDA device: skipping the GPU tests\n");
    std::exit(77);
  }
}

constexpr unsigned char kPoison = 0xCD;
constexpr std::size_t kGuard = 256;  // bytes before and after D

struct Case {
  GemmProblem p;
  Epilogue e;
  int misalign = 0;  // elements added to the operand pointers (Operands: all; sm90: A and B), breaking 16-byte alignment
  ScalarMode scalars = ScalarMode::FromPlan;
  bool vs_cublas = false;  // sm90: shapes too big for the CPU oracle are compared with cuBLAS
  bool c_is_d = false;     // sm90: C is D itself (same type and layout): D holds C when the call starts
  std::string tag;
};

// One-line repro printed with every failure; the sm90 test, whose cases never set a scalar mode,
// prints it without one.
inline std::string repro_without_scalars(const Case& c) {
  std::ostringstream os;
  os << "[" << c.tag << "] " << c.p.to_string() << " | " << c.e.to_string() << " misalign=" << c.misalign;
  return os.str();
}
inline std::string repro(const Case& c) { return repro_without_scalars(c) + " scalars=" + std::to_string(int(c.scalars)); }
// The `deepgemm run` line for the same case, printed last in every failure message (on its own
// line, so it can be pasted): `force` is what the test forced, a family or a configuration name.
// Misaligned pointers and execute-time scalars come out as the line's "# not expressible" note.
inline std::string repro_command(const Case& c, const std::string& force) {
  RunExtras x;
  x.force = force;
  x.misalign = c.misalign;
  x.scalars = c.scalars;
  return "\n    repro: " + run_command(c.p, c.e, x);
}

// Relative Frobenius error allowed per output type.
inline double threshold(DType d) {
  switch (d) {
    case DType::F32: return 1e-5;
    case DType::F16: return 2e-3;
    case DType::BF16: return 1e-2;
    case DType::F8E4M3: return 7e-2;
    case DType::F8E5M2: return 1.4e-1;
    default: return 0;  // integers: compared exactly within 1
  }
}

inline dgemm_context_t context() {
  static dgemm_context_t ctx = [] {
    dgemm_context_t c = nullptr;
    dgemm_status_t s = dgemm_context_create(DGEMM_DEVICE_CUDA, 0, &c);
    if (s != DGEMM_STATUS_SUCCESS) std::printf("context: %s\n", dgemm_last_error());
    return c;
  }();
  return ctx;
}

// A plan through the public C API for the internal problem/epilogue, with `force_kernel` forced
// (nullptr: the planner chooses) and `ext`, a DGEMM_1.1 extension chain (nullptr: none).
inline dgemm_status_t make_plan_forced(const GemmProblem& cp, const Epilogue& ce, const char* force_kernel,
                                       dgemm_plan_t* plan, const void* ext = nullptr) {
  dgemm_problem_t p;
  dgemm_problem_init(&p);
  p.m = cp.m; p.n = cp.n; p.k = cp.k;
  p.a_type = dgemm_dtype_t(cp.a_type); p.b_type = dgemm_dtype_t(cp.b_type);
  p.c_type = dgemm_dtype_t(cp.c_type); p.d_type = dgemm_dtype_t(cp.d_type);
  p.compute_type = dgemm_dtype_t(cp.compute_type);  // f32, or i32 for i8 operands
  p.op_a = dgemm_op_t(cp.op_a); p.op_b = dgemm_op_t(cp.op_b);
  p.order = dgemm_order_t(cp.order);
  p.lda = cp.lda; p.ldb = cp.ldb; p.ldc = cp.ldc; p.ldd = cp.ldd;
  p.batch_count = cp.batch_count;
  p.stride_a = cp.stride_a; p.stride_b = cp.stride_b; p.stride_c = cp.stride_c; p.stride_d = cp.stride_d;
  dgemm_epilogue_t e;
  dgemm_epilogue_init(&e);
  e.alpha = ce.alpha;
  e.beta = ce.beta;
  e.bias_mode = dgemm_vector_mode_t(ce.bias_mode);
  e.bias_type = dgemm_dtype_t(ce.bias_type);
  e.activation = dgemm_activation_t(ce.activation);
  e.scale_mode = dgemm_vector_mode_t(ce.scale_mode);
  e.flags = (ce.saturate ? DGEMM_EPILOGUE_SATURATE : 0u) | (ce.zero_point ? DGEMM_EPILOGUE_ZERO_POINT : 0u);
  dgemm_plan_options_t o;
  dgemm_plan_options_init(&o);
  o.force_kernel = force_kernel;
  return dgemm_create_plan_ext(context(), &p, &e, &o, ext, plan);
}

// Elements a matrix spans over all batches (0 when absent).
inline std::size_t span(const GemmProblem& p, int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
  if (rows == 0 || cols == 0) return 0;
  std::size_t one = std::size_t(p.order == Order::RowMajor ? (rows - 1) * ld + cols : (cols - 1) * ld + rows);
  return one + std::size_t(stride) * std::size_t(p.batch_count - 1);
}

// Random values exactly representable in t, never all equal.
inline void fill_random(std::mt19937& rng, DType t, std::vector<unsigned char>& buf, std::size_t elems, double lo,
                        double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  buf.assign(elems * dtype_size(t), 0);
  for (std::size_t i = 0; i < elems; ++i) store_from_double(t, buf.data(), int64_t(i), u(rng), true);
}

struct DevBuf {
  void* base = nullptr;
  std::size_t bytes = 0;
  explicit DevBuf(std::size_t n) : bytes(n) { if (n) cudaMalloc(&base, n); }
  ~DevBuf() { if (base) cudaFree(base); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  char* at(std::size_t off) const { return static_cast<char*>(base) + off; }
};

inline Case make_case(int64_t m, int64_t n, int64_t k, DType ab, DType d, Op op_a, Op op_b, Order order,
                      const std::string& tag) {
  Case c;
  c.p.m = m;
  c.p.n = n;
  c.p.k = k;
  c.p.a_type = c.p.b_type = ab;
  c.p.c_type = c.p.d_type = d;
  c.p.op_a = op_a;
  c.p.op_b = op_b;
  c.p.order = order;
  c.tag = tag;
  return c;
}

// Everything one case needs on the host and the device.
struct Operands {
  std::vector<unsigned char> a, b, c, bias, d_init;
  std::vector<float> scale, alpha_beta;
  std::vector<int32_t> zp;
  std::size_t a_elems, b_elems, c_elems, d_elems, vec_len;
  std::unique_ptr<DevBuf> da, db, dc, dd, dbias, dscale, dzp, dscalars;
  std::size_t off_a, off_b, off_c, off_d;  // byte offsets of the operands inside their buffers

  Operands(const Case& cs, std::mt19937& rng) {
    const GemmProblem& p = cs.p;
    const Epilogue& e = cs.e;
    a_elems = span(p, p.a_rows(), p.a_cols(), p.lda, p.stride_a);
    b_elems = span(p, p.b_rows(), p.b_cols(), p.ldb, p.stride_b);
    c_elems = e.reads_c() ? span(p, p.m, p.n, p.ldc, p.stride_c) : 0;
    d_elems = span(p, p.m, p.n, p.ldd, p.stride_d);
    fill_random(rng, p.a_type, a, a_elems, -1, 1);
    fill_random(rng, p.b_type, b, b_elems, -1, 1);
    fill_random(rng, p.c_type, c, c_elems, -2, 2);
    vec_len = std::size_t(std::max(p.m, p.n));
    fill_random(rng, e.bias_type, bias, vec_len, -1, 1);
    std::uniform_real_distribution<float> us(0.25f, 2.0f);
    scale.resize(vec_len);
    for (float& s : scale) s = us(rng);
    std::uniform_int_distribution<int> uz(-20, 20);
    zp.resize(vec_len);
    for (int32_t& z : zp) z = uz(rng);
    alpha_beta = {0.75f, -0.5f};
    d_init.assign(d_elems * dtype_size(p.d_type) + 2 * kGuard, kPoison);
    const std::size_t mis = std::size_t(cs.misalign);
    off_a = mis * dtype_size(p.a_type);
    off_b = mis * dtype_size(p.b_type);
    off_c = mis * dtype_size(p.c_type);
    off_d = kGuard + mis * dtype_size(p.d_type);
    da = std::make_unique<DevBuf>(a.size() + off_a + 16);
    db = std::make_unique<DevBuf>(b.size() + off_b + 16);
    dc = std::make_unique<DevBuf>(c.size() + off_c + 16);
    dd = std::make_unique<DevBuf>(d_init.size() + 16);
    dbias = std::make_unique<DevBuf>(bias.size());
    dscale = std::make_unique<DevBuf>(scale.size() * 4);
    dzp = std::make_unique<DevBuf>(zp.size() * 4);
    dscalars = std::make_unique<DevBuf>(8);
    cudaMemcpy(da->at(off_a), a.data(), a.size(), cudaMemcpyHostToDevice);
    cudaMemcpy(db->at(off_b), b.data(), b.size(), cudaMemcpyHostToDevice);
    if (!c.empty()) cudaMemcpy(dc->at(off_c), c.data(), c.size(), cudaMemcpyHostToDevice);
    cudaMemcpy(dbias->base, bias.data(), bias.size(), cudaMemcpyHostToDevice);
    cudaMemcpy(dscale->base, scale.data(), scale.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dzp->base, zp.data(), zp.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dscalars->base, alpha_beta.data(), 8, cudaMemcpyHostToDevice);
    poison_d();
  }
  void poison_d() { cudaMemcpy(dd->base, d_init.data(), d_init.size(), cudaMemcpyHostToDevice); }

  dgemm_args_t args(const Case& cs) const {
    dgemm_args_t x;
    dgemm_args_init(&x);
    x.scalar_mode = dgemm_scalar_mode_t(cs.scalars);
    if (cs.scalars == ScalarMode::Host) {
      x.alpha = alpha_beta[0];
      x.beta = cs.e.reads_c() ? alpha_beta[1] : 0.0f;
    } else if (cs.scalars == ScalarMode::Device) {
      x.alpha_ptr = static_cast<const float*>(dscalars->base);
      x.beta_ptr = static_cast<const float*>(dscalars->base) + 1;
    }
    if (cs.e.bias_mode != VectorMode::None) x.bias = dbias->base;
    if (cs.e.scale_mode != VectorMode::None) x.scale = static_cast<const float*>(dscale->base);
    if (cs.e.zero_point) x.zero_point = dzp->base ? static_cast<const int32_t*>(dzp->base) : nullptr;
    return x;
  }

  // Workspace for plans that need one (split-K), allocated on first use: call execute once
  // outside graph capture / threads before relying on it there.
  mutable std::unique_ptr<DevBuf> workspace;
  void* workspace_for(std::size_t bytes) const {
    if (bytes == 0) return nullptr;
    if (!workspace || workspace->bytes < bytes) workspace = std::make_unique<DevBuf>(bytes);
    return workspace->base;
  }

  dgemm_status_t execute(dgemm_plan_t plan, const Case& cs, cudaStream_t stream) const {
    dgemm_args_t x = args(cs);
    std::size_t ws = 0;
    dgemm_plan_workspace_size(plan, &ws);
    return dgemm_execute(plan, da->at(off_a), db->at(off_b), cs.e.reads_c() ? dc->at(off_c) : nullptr,
                         dd->at(off_d), &x, workspace_for(ws), ws, stream);
  }

  // The oracle's D bytes (guard bands and padding poisoned like the device's).
  std::vector<unsigned char> oracle(const Case& cs) const {
    std::vector<unsigned char> out = d_init;
    ExecArgs x;
    x.a = a.data();
    x.b = b.data();
    x.c = c.empty() ? nullptr : c.data();
    x.d = out.data() + kGuard;
    x.scalar_mode = cs.scalars;
    x.alpha = cs.e.alpha;
    x.beta = cs.e.beta;
    if (cs.scalars == ScalarMode::Host) {
      x.alpha = alpha_beta[0];
      x.beta = cs.e.reads_c() ? alpha_beta[1] : 0.0f;
    }
    x.alpha_ptr = &alpha_beta[0];
    x.beta_ptr = &alpha_beta[1];
    x.bias = bias.data();
    x.scale = scale.data();
    x.zero_point = zp.data();
    cpu_gemm(cs.p, cs.e, x);
    return out;
  }

  std::vector<unsigned char> fetch_d() const {
    std::vector<unsigned char> out(d_init.size());
    cudaMemcpy(out.data(), dd->base, out.size(), cudaMemcpyDeviceToHost);
    // The misaligned case shifted D by `misalign` elements; undo that so both views line up.
    return out;
  }
};

// Compares the device's D bytes with the oracle's: elements by relative Frobenius error (or
// within 1 for integers), every other byte exactly (poison). Returns "" when they agree.
inline std::string compare(const Case& cs, const std::vector<unsigned char>& got_all,
                           const std::vector<unsigned char>& want_all, std::size_t got_off,
                           const char* against = "oracle") {
  const GemmProblem& p = cs.p;
  const std::size_t es = dtype_size(p.d_type);
  const unsigned char* got = got_all.data() + got_off;
  const unsigned char* want = want_all.data() + kGuard;
  std::vector<char> is_elem(got_all.size(), 0);
  double num = 0, den = 0;
  int64_t int_bad = 0, nonfinite_bad = 0;
  for (int64_t bt = 0; bt < p.batch_count; ++bt) {
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        const int64_t idx = bt * p.stride_d + p.offset(i, j, p.ldd);
        std::memset(&is_elem[got_off + std::size_t(idx) * es], 1, es);
        const double g = load_as_double(p.d_type, got, idx), w = load_as_double(p.d_type, want, idx);
        if (dtype_is_integer(p.d_type)) {
          int_bad += std::fabs(g - w) > 1.0;
        } else if (!std::isfinite(w) || !std::isfinite(g)) {
          nonfinite_bad += !(std::isnan(w) ? std::isnan(g) : g == w);
        } else {
          num += (g - w) * (g - w);
          den += w * w;
        }
      }
    }
  }
  std::ostringstream os;
  const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  if (rel > threshold(p.d_type) || int_bad || nonfinite_bad)
    os << "vs " << against << ": rel_frobenius=" << rel << " (max " << threshold(p.d_type) << "), integer mismatches "
       << int_bad << ", non-finite mismatches " << nonfinite_bad << "; ";
  std::size_t touched = 0;
  for (std::size_t i = 0; i < got_all.size(); ++i)
    if (!is_elem[i] && got_all[i] != kPoison) ++touched;
  if (touched) os << touched << " bytes outside D's elements were written (guard bands / padding); ";
  return os.str();
}

// The worker count the tests use to create plans / prepare kernels in parallel.
inline unsigned worker_count() { return std::max(2u, std::thread::hardware_concurrency()); }

// fn(i) for i in [0, n) on `threads` threads, each taking the next index.
template <class Fn>
void parallel_for(std::size_t n, unsigned threads, Fn fn) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < n;) fn(i);
    });
  for (auto& t : pool) t.join();
}

// Plans of a sweep, created first from all cores at once: the distinct kernels compile in
// parallel (or come from the carried cache); the cases then run one by one.
struct SweepPlans {
  std::vector<dgemm_plan_t> plans;
  std::vector<dgemm_status_t> status;
  std::vector<std::string> errors;  // dgemm_last_error() of each failed create_plan
};
template <class MakePlan>
SweepPlans create_plans(const std::vector<Case>& cases, MakePlan make) {
  SweepPlans r;
  r.plans.assign(cases.size(), nullptr);
  r.status.assign(cases.size(), DGEMM_STATUS_SUCCESS);
  r.errors.resize(cases.size());
  parallel_for(cases.size(), worker_count(), [&](std::size_t i) {
    r.status[i] = make(cases[i], &r.plans[i]);
    if (r.status[i] != DGEMM_STATUS_SUCCESS) r.errors[i] = dgemm_last_error();
  });
  return r;
}

// One configuration of a family's menu on one case, prepared directly by the backend.
struct MenuJob {
  const Case* cs;
  KernelConfig cfg;
  std::unique_ptr<Executable> exe;
  std::string error;
};
inline void prepare_all(Backend& backend, std::vector<MenuJob>& jobs) {
  parallel_for(jobs.size(), worker_count(), [&](std::size_t i) {
    try {
      jobs[i].exe = backend.prepare(jobs[i].cs->p, jobs[i].cs->e, jobs[i].cfg);
    } catch (const std::exception& ex) {
      jobs[i].error = ex.what();
    }
  });
}

// The kernels a DGEMM_TEST_PREFILL run compiles, each once (by cache key, first-come order).
class PrefillSet {
 public:
  void add(jit::CompileRequest req) {
    std::string key = jit::cache_key(req);
    if (std::find(keys_.begin(), keys_.end(), key) != keys_.end()) return;
    keys_.push_back(std::move(key));
    requests_.push_back(std::move(req));
  }
  std::size_t size() const { return requests_.size(); }

  // The kernels a plan for (p, e) on `hw` compiles: the planner's choice (`force`: a family or a
  // sm90 configuration name, "" for none) with the fallback it prepares for unaligned pointers,
  // and, unforced, the best plan of the other family (the benchmark's runner-up column). A
  // problem the machine cannot plan (e.g. a forced family that rejects it) adds nothing.
  void add_plan(const GemmProblem& p, const Epilogue& e, const HardwareDesc& hw, const std::string& arch,
                const std::string& force) {
    auto add_decision = [&](const PlanDecision& d) {
      for (jit::CompileRequest& r :
           cuda::plan_compile_requests(p, e, d.chosen.config, d.fallback ? &d.fallback->config : nullptr, arch))
        add(std::move(r));
    };
    try {
      PlanRequest r;
      Family f;
      if (force.empty()) {
      } else if (family_from_name(force, &f)) {
        r.force = f;
      } else {
        r.force = Family::Sm90;
        r.force_config = force;
      }
      const PlanDecision d = choose_kernel(p, e, hw, r);
      add_decision(d);
      if (force.empty()) {
        PlanRequest other;
        other.force = d.chosen.config.family == Family::Sm90 ? Family::Sm80 : Family::Sm90;
        add_decision(choose_kernel(p, e, hw, other));
      }
    } catch (const std::exception&) {
    }
  }

  // Prints the count and compiles on `threads` threads. DGEMM_TEST_PREFILL_DRY=1 prints the count
  // and every request's cache key instead of compiling (to compare request lists in seconds).
  void compile(const char* arch_name, const std::string& arch, unsigned threads) {
    std::printf("prefill: %zu distinct kernels for %s (%s) into %s\n", requests_.size(), arch_name, arch.c_str(),
                jit::cache_dir().c_str());
    if (const char* dry = std::getenv("DGEMM_TEST_PREFILL_DRY"); dry && std::strcmp(dry, "0") != 0) {
      for (const std::string& k : keys_) std::printf("prefill key %s\n", k.c_str());
      return;
    }
    parallel_for(requests_.size(), threads, [&](std::size_t i) { jit::compile(requests_[i]); });
  }

 private:
  std::vector<std::string> keys_;
  std::vector<jit::CompileRequest> requests_;
};

}  // namespace dgemm_test

// GPU tests of the small-M (decode) family through the public API and through its launcher
// (label gpu; exit 77 = skipped without a GPU). Every case: fresh random inputs, D poisoned and
// surrounded by guard bands, compared with the CPU oracle (dgemm::cpu_gemm, f64) by relative
// Frobenius error with per-type thresholds, and every byte outside the m x n elements of D checked
// untouched. Sweeps: M in {1, 2, 7, 15, 16} x N in {1, 7, 63, 64, 65, 1000, 4096} x K in {1, 7, 15,
// 16, 17, 127, 1000, 4093, 4096}, cycling through both operand types, every transpose of A and B
// and both orders; epilogues (bias per row / column, GELU, beta * C, other output types);
// unaligned pointers and padded leading dimensions (the element-load kernel); batches (strided
// with gaps, broadcast B); and every configuration of the planner's menu (columns per CTA, every
// split-K count) run directly through the launcher. Every failure prints a one-line repro.
// DGEMM_TEST_PREFILL=<arch, e.g. h200> without a GPU compiles the kernels the sweep's plans use
// into $DEEPGEMM_CACHE_DIR (to carry to the device).
#include <boost/test/unit_test.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cpu/cpu_gemm.hpp"
#include "backend/cuda/jit.hpp"
#include "backend/cuda/small_m_gemm.hpp"
#include "core/float_convert.hpp"
#include "core/problem.hpp"
#include "deepgemm/deepgemm.h"
#include "plan/arch_file.hpp"
#include "plan/families.hpp"
#include "plan/planner.hpp"

namespace {

using namespace dgemm;

void prefill_cache(const char* arch_name);

struct SkipWithoutGpu {
  SkipWithoutGpu() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
      // DGEMM_TEST_PREFILL=<built-in arch, e.g. h200>: compile, without a GPU, the kernels this
      // test's plans will most likely use into $DEEPGEMM_CACHE_DIR (to carry to the device).
      if (const char* arch = std::getenv("DGEMM_TEST_PREFILL")) {
        prefill_cache(arch);
        std::exit(0);
      }
      std::printf("no CUDA device: skipping the GPU tests\n");
      std::exit(77);
    }
  }
};
BOOST_TEST_GLOBAL_FIXTURE(SkipWithoutGpu);

#define CUDA_OK(x) BOOST_REQUIRE_EQUAL(cudaGetErrorString(x), cudaGetErrorString(cudaSuccess))

constexpr unsigned char kPoison = 0xCD;
constexpr std::size_t kGuard = 256;  // bytes before and after D

struct Case {
  GemmProblem p;
  Epilogue e;
  int misalign = 0;  // elements added to every operand pointer (breaks 16-byte alignment)
  ScalarMode scalars = ScalarMode::FromPlan;
  std::string tag;
};

std::string repro(const Case& c) {
  std::ostringstream os;
  os << "[" << c.tag << "] " << c.p.to_string() << " | " << c.e.to_string() << " misalign=" << c.misalign
     << " scalars=" << int(c.scalars);
  return os.str();
}

double threshold(DType d) {
  switch (d) {
    case DType::F32: return 1e-5;
    case DType::F16: return 2e-3;
    case DType::BF16: return 1e-2;
    case DType::F8E4M3: return 7e-2;
    case DType::F8E5M2: return 1.4e-1;
    default: return 0;  // integers: compared exactly within 1
  }
}

dgemm_context_t context() {
  static dgemm_context_t ctx = [] {
    dgemm_context_t c = nullptr;
    dgemm_status_t s = dgemm_context_create(DGEMM_DEVICE_CUDA, 0, &c);
    if (s != DGEMM_STATUS_SUCCESS) std::printf("context: %s\n", dgemm_last_error());
    return c;
  }();
  return ctx;
}

dgemm_status_t make_plan(const Case& c, dgemm_plan_t* plan) {
  dgemm_problem_t p;
  dgemm_problem_init(&p);
  p.m = c.p.m; p.n = c.p.n; p.k = c.p.k;
  p.a_type = dgemm_dtype_t(c.p.a_type); p.b_type = dgemm_dtype_t(c.p.b_type);
  p.c_type = dgemm_dtype_t(c.p.c_type); p.d_type = dgemm_dtype_t(c.p.d_type);
  p.compute_type = DGEMM_DTYPE_F32;
  p.op_a = dgemm_op_t(c.p.op_a); p.op_b = dgemm_op_t(c.p.op_b);
  p.order = dgemm_order_t(c.p.order);
  p.lda = c.p.lda; p.ldb = c.p.ldb; p.ldc = c.p.ldc; p.ldd = c.p.ldd;
  p.batch_count = c.p.batch_count;
  p.stride_a = c.p.stride_a; p.stride_b = c.p.stride_b; p.stride_c = c.p.stride_c; p.stride_d = c.p.stride_d;
  dgemm_epilogue_t e;
  dgemm_epilogue_init(&e);
  e.alpha = c.e.alpha;
  e.beta = c.e.beta;
  e.bias_mode = dgemm_vector_mode_t(c.e.bias_mode);
  e.bias_type = dgemm_dtype_t(c.e.bias_type);
  e.activation = dgemm_activation_t(c.e.activation);
  e.scale_mode = dgemm_vector_mode_t(c.e.scale_mode);
  e.flags = (c.e.saturate ? DGEMM_EPILOGUE_SATURATE : 0u) | (c.e.zero_point ? DGEMM_EPILOGUE_ZERO_POINT : 0u);
  dgemm_plan_options_t o;
  dgemm_plan_options_init(&o);
  o.force_kernel = "small_m";
  return dgemm_create_plan(context(), &p, &e, &o, plan);
}

// Elements a matrix spans over all batches (0 when absent).
std::size_t span(const GemmProblem& p, int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
  if (rows == 0 || cols == 0) return 0;
  std::size_t one = std::size_t(p.order == Order::RowMajor ? (rows - 1) * ld + cols : (cols - 1) * ld + rows);
  return one + std::size_t(stride) * std::size_t(p.batch_count - 1);
}

// Random values exactly representable in t, never all equal.
void fill_random(std::mt19937& rng, DType t, std::vector<unsigned char>& buf, std::size_t elems, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  buf.assign(elems * dtype_size(t), 0);
  for (std::size_t i = 0; i < elems; ++i) store_from_double(t, buf.data(), int64_t(i), u(rng), true);
}

struct DevBuf {
  void* base = nullptr;
  std::size_t bytes = 0;
  explicit DevBuf(std::size_t n) : bytes(n) { if (n) cudaMalloc(&base, n); }
  ~DevBuf() { if (base) cudaFree(base); }
  char* at(std::size_t off) const { return static_cast<char*>(base) + off; }
};

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
std::string compare(const Case& cs, const std::vector<unsigned char>& got_all, const std::vector<unsigned char>& want_all,
                    std::size_t got_off, const char* against = "oracle") {
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


Case make_case(int64_t m, int64_t n, int64_t k, DType ab, DType d, Op op_a, Op op_b, Order order,
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

// The 16 combinations of operand type, op_a, op_b and order, cycled through by the shape sweep.
struct Layout {
  DType ab;
  Op op_a, op_b;
  Order order;
};
std::vector<Layout> layouts() {
  std::vector<Layout> out;
  for (Order o : {Order::RowMajor, Order::ColMajor})
    for (Op ob : {Op::T, Op::N})
      for (Op oa : {Op::N, Op::T})
        for (DType t : {DType::BF16, DType::F16}) out.push_back({t, oa, ob, o});
  return out;
}

std::vector<Case> sweep() {
  std::vector<Case> cases;
  const std::vector<Layout> lay = layouts();
  const int64_t ms[] = {1, 2, 7, 15, 16};
  const int64_t ns[] = {1, 7, 63, 64, 65, 1000, 4096};
  const int64_t ks[] = {1, 7, 15, 16, 17, 127, 1000, 4093, 4096};
  // 1. Every M x N x K; the layout advances with every case (315 = 5 x 7 x 9 cases, so each of the
  //    16 layouts meets every size of each dimension).
  std::size_t i = 0;
  for (int64_t m : ms)
    for (int64_t n : ns)
      for (int64_t k : ks) {
        const Layout& l = lay[i++ % lay.size()];
        cases.push_back(make_case(m, n, k, l.ab, l.ab, l.op_a, l.op_b, l.order, "shape"));
      }
  // 2. Every layout on the decode shapes that matter (N, K of a 4096-wide model) at M = 1 and 16.
  for (const Layout& l : lay)
    for (int64_t m : {int64_t(1), int64_t(16)})
      cases.push_back(make_case(m, 4096, 4096, l.ab, l.ab, l.op_a, l.op_b, l.order, "decode"));
  // 3. Epilogues, in both orders and both B layouts (per-row / per-column swap when transposed).
  struct Epi {
    DType c, d, bias_type;
    float alpha, beta;
    VectorMode bias;
    Activation act;
    ScalarMode scalars;
  };
  const Epi epis[] = {
      {DType::F32, DType::F32, DType::F32, 1.5f, 0.5f, VectorMode::None, Activation::None, ScalarMode::FromPlan},
      {DType::BF16, DType::BF16, DType::F32, 1.0f, -1.0f, VectorMode::PerColumn, Activation::GeluTanh, ScalarMode::FromPlan},
      {DType::F16, DType::F32, DType::BF16, 0.5f, 0.0f, VectorMode::PerRow, Activation::GeluErf, ScalarMode::FromPlan},
      {DType::F32, DType::F16, DType::F16, 1.0f, 2.0f, VectorMode::PerRow, Activation::GeluErf, ScalarMode::Host},
      {DType::F32, DType::F32, DType::F32, 1.0f, 1.0f, VectorMode::PerColumn, Activation::Silu, ScalarMode::Device},
  };
  for (const Epi& x : epis)
    for (Order o : {Order::RowMajor, Order::ColMajor})
      for (Op ob : {Op::N, Op::T}) {
        Case c = make_case(7, 1000, 1000, DType::BF16, x.d, Op::N, ob, o, "epilogue");
        c.p.c_type = x.c;
        c.e.alpha = x.alpha;
        c.e.beta = x.beta;
        c.e.bias_mode = x.bias;
        c.e.bias_type = x.bias_type;
        c.e.activation = x.act;
        c.scalars = x.scalars;
        cases.push_back(c);
      }
  // 4. Padded leading dimensions and unaligned pointers (the element-load kernel), every layout.
  for (const Layout& l : lay)
    for (int mis : {0, 1}) {
      Case c = make_case(15, 65, 1000, l.ab, l.ab, l.op_a, l.op_b, l.order, mis ? "unaligned" : "ldpad");
      c.p.resolve_and_validate();
      c.p.lda += 5;
      c.p.ldb += 5;
      c.p.ldc += 5;
      c.p.ldd += 5;
      c.misalign = mis;
      c.e.beta = 0.5f;
      cases.push_back(c);
      if (!mis) {  // padded to a multiple of 8 elements: 16-byte loads with ld > minimum
        Case pad8 = c;
        pad8.p.lda += 3;
        pad8.p.ldb += 3;
        pad8.tag = "ldpad8";
        cases.push_back(pad8);
      }
    }
  // 5. Batches (strided with gaps, and a broadcast B), both orders and B layouts.
  for (Order o : {Order::RowMajor, Order::ColMajor})
    for (Op ob : {Op::N, Op::T})
      for (int bcast : {0, 1}) {
        Case c = make_case(7, 130, 520, DType::F16, DType::F16, Op::N, ob, o, "batch");
        c.p.resolve_and_validate();
        c.p.batch_count = 3;
        GemmProblem& p = c.p;
        p.stride_a = span(p, p.a_rows(), p.a_cols(), p.lda, 0) + 8;
        p.stride_b = bcast ? 0 : span(p, p.b_rows(), p.b_cols(), p.ldb, 0) + 16;
        p.stride_c = span(p, p.m, p.n, p.ldc, 0) + 3;
        p.stride_d = span(p, p.m, p.n, p.ldd, 0) + 5;
        c.e.beta = 0.5f;
        cases.push_back(c);
      }
  for (Case& c : cases) c.p.resolve_and_validate();
  return cases;
}

// Shapes on which every configuration of the menu runs (through the launcher, not the planner).
std::vector<Case> menu_cases() {
  std::vector<Case> cases;
  for (Order o : {Order::RowMajor, Order::ColMajor})
    for (Op ob : {Op::N, Op::T})
      for (int64_t m : {int64_t(1), int64_t(7), int64_t(16)}) {
        Case c = make_case(m, 1000, 4093, m == 7 ? DType::F16 : DType::BF16, DType::BF16, m == 16 ? Op::T : Op::N, ob,
                           o, "menu");
        c.e.beta = 0.5f;
        c.e.bias_mode = VectorMode::PerColumn;
        c.p.resolve_and_validate();
        cases.push_back(c);
      }
  return cases;
}

void prefill_cache(const char* arch_name) {
  HardwareDesc hw = apply_arch_file(HardwareDesc{}, arch_name);
  const std::string arch = jit::arch_for_cc(hw.cc_major, hw.cc_minor);
  std::vector<jit::CompileRequest> requests;
  std::vector<std::string> keys;
  auto add = [&](const Case& c, const KernelConfig& cfg) {
    jit::CompileRequest req = cuda::small_m_compile_request(c.p, c.e, cfg, arch);
    std::string key = jit::cache_key(req);
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
    keys.push_back(key);
    requests.push_back(req);
  };
  for (const Case& c : sweep()) {
    PlanRequest r;
    r.force = Family::SmallM;
    add(c, choose_kernel(c.p, c.e, hw, r).chosen.config);
  }
  for (const Case& c : menu_cases())
    for (const Candidate& cand : small_m_family_model().enumerate(c.p, c.e, hw))
      if (cand.feasible) add(c, cand.config);
  std::printf("prefill: %zu distinct kernels for %s (%s) into %s\n", requests.size(), arch_name, arch.c_str(),
              jit::cache_dir().c_str());
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(2u, std::thread::hardware_concurrency()); ++t)
    pool.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < requests.size();) jit::compile(requests[i]);
    });
  for (auto& t : pool) t.join();
}

}  // namespace

BOOST_AUTO_TEST_CASE(small_m_sweep_vs_oracle) {
  BOOST_REQUIRE(context() != nullptr);
  std::vector<Case> cases = sweep();
  // Plans first, from all cores at once: the distinct kernels compile in parallel (or come from
  // the carried cache); the cases then run one by one.
  std::vector<dgemm_plan_t> plans(cases.size(), nullptr);
  std::vector<dgemm_status_t> status(cases.size(), DGEMM_STATUS_SUCCESS);
  std::vector<std::string> errors(cases.size());
  {
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    unsigned n = std::max(2u, std::thread::hardware_concurrency());
    for (unsigned t = 0; t < n; ++t)
      pool.emplace_back([&] {
        for (std::size_t i; (i = next.fetch_add(1)) < cases.size();) {
          status[i] = make_plan(cases[i], &plans[i]);
          if (status[i] != DGEMM_STATUS_SUCCESS) errors[i] = dgemm_last_error();
        }
      });
    for (auto& t : pool) t.join();
  }
  std::mt19937 rng(4242);
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int failed = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& cs = cases[i];
    BOOST_CHECK_MESSAGE(status[i] == DGEMM_STATUS_SUCCESS, repro(cs) << ": create_plan: " << errors[i]);
    if (status[i] != DGEMM_STATUS_SUCCESS) continue;
    Operands ops(cs, rng);
    dgemm_status_t st = ops.execute(plans[i], cs, stream);
    BOOST_CHECK_MESSAGE(st == DGEMM_STATUS_SUCCESS, repro(cs) << ": execute: " << dgemm_last_error());
    CUDA_OK(cudaStreamSynchronize(stream));
    std::string why = compare(cs, ops.fetch_d(), ops.oracle(cs), ops.off_d);
    if (!why.empty()) {
      char desc[1024];
      dgemm_plan_describe(plans[i], desc, sizeof desc, nullptr);
      why += std::string(" plan: ") + std::string(desc).substr(0, 300);
    }
    BOOST_CHECK_MESSAGE(why.empty(), repro(cs) << ": " << why);
    failed += !why.empty();
    dgemm_destroy_plan(plans[i]);
  }
  cudaStreamDestroy(stream);
  std::printf("small_m sweep: %zu cases, %d failed\n", cases.size(), failed);
}

// Every configuration of the planner's menu (columns per CTA, every split-K count) on shapes with
// tails in N and K, both B layouts and orders, aligned (16-byte kernel) and misaligned (element
// kernel): the backend's prepare() is called directly with each configuration.
BOOST_AUTO_TEST_CASE(small_m_every_menu_configuration) {
  std::string why;
  std::unique_ptr<Backend> backend = make_cuda_backend(0, &why);
  BOOST_REQUIRE_MESSAGE(backend, why);
  std::vector<Case> cases = menu_cases();
  for (Case& c : menu_cases()) {
    c.misalign = 1;
    c.tag = "menu-unaligned";
    cases.push_back(c);
  }
  struct Job {
    const Case* cs;
    KernelConfig cfg;
    std::unique_ptr<Executable> exe;
    std::string error;
  };
  std::vector<Job> jobs;
  for (const Case& cs : cases)
    for (const Candidate& c : small_m_family_model().enumerate(cs.p, cs.e, backend->hardware()))
      if (c.feasible) jobs.push_back({&cs, c.config, nullptr, ""});
  {
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < std::max(2u, std::thread::hardware_concurrency()); ++t)
      pool.emplace_back([&] {
        for (std::size_t i; (i = next.fetch_add(1)) < jobs.size();) {
          try {
            jobs[i].exe = backend->prepare(jobs[i].cs->p, jobs[i].cs->e, jobs[i].cfg);
          } catch (const std::exception& ex) {
            jobs[i].error = ex.what();
          }
        }
      });
    for (auto& t : pool) t.join();
  }
  std::mt19937 rng(77);
  const Case* current = nullptr;
  std::unique_ptr<Operands> ops;
  std::vector<unsigned char> want;
  int failed = 0;
  for (Job& j : jobs) {
    BOOST_CHECK_MESSAGE(j.exe, j.cfg.name() << " " << repro(*j.cs) << ": prepare: " << j.error);
    if (!j.exe) continue;
    if (j.cs != current) {
      current = j.cs;
      ops = std::make_unique<Operands>(*j.cs, rng);
      want = ops->oracle(*j.cs);
    }
    ops->poison_d();
    dgemm_args_t a = ops->args(*j.cs);
    ExecArgs x;
    x.a = ops->da->at(ops->off_a);
    x.b = ops->db->at(ops->off_b);
    x.c = ops->dc->at(ops->off_c);
    x.d = ops->dd->at(ops->off_d);
    x.alpha = j.cs->e.alpha;
    x.beta = j.cs->e.beta;
    x.bias = a.bias;
    x.workspace_size = j.exe->workspace_size();
    x.workspace = ops->workspace_for(x.workspace_size);
    j.exe->run(x);
    CUDA_OK(cudaDeviceSynchronize());
    std::string bad = compare(*j.cs, ops->fetch_d(), want, ops->off_d);
    BOOST_CHECK_MESSAGE(bad.empty(), j.cfg.name() << " " << repro(*j.cs) << ": " << bad);
    failed += !bad.empty();
  }
  std::printf("small_m menu: %zu configuration x case runs, %d failed\n", jobs.size(), failed);
}

// GPU tests of the sm90 family's 8-bit paths (label gpu; exit 77 = skipped without a Hopper GPU):
// fp8 (every e4m3 / e5m2 pair) and s8 operands, with the DGEMM_1.1 input scales the kernel applies
// (per tensor and per row / column in the epilogue; 1 x 128 and 128 x 128 block scales promoted
// per 128 of K, DeepGEMM's layouts), through the public API (dgemm_create_plan_ext /
// dgemm_execute_ext) exactly as a user calls it. The oracle is the same plan made on a CPU
// context (the exact CPU backend) on the same bytes. Every case: fresh random inputs, D poisoned
// with guard bands around it, relative Frobenius error per output type (fp8 inputs, f32 output:
// 1e-3, the accuracy issue 12 asks for; s8 with an i32 output: exact), and every byte outside D's
// elements untouched. Every skinny, K-split and two-CTA configuration the planner offers for a
// block-scaled problem also runs by name. Every failure prints a one-line repro and its
// `deepgemm run` line.
#include <boost/test/unit_test.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "api/convert.hpp"
#include "api/scaling.hpp"
#include "common/gpu_harness.hpp"
#include "plan/arch_file.hpp"
#include "plan/families.hpp"

namespace {

using namespace dgemm;
using dgemm_test::DevBuf;
using dgemm_test::kGuard;
using dgemm_test::kPoison;

void prefill_cache(const char* arch_name);  // below: every case's kernel, without a GPU

struct RequireHopper {
  RequireHopper() {
    dgemm_test::skip_without_gpu(prefill_cache);
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9) {
      std::printf("not a Hopper GPU (cc %d.%d): the sm90 8-bit kernels have nothing to run, skipped\n", prop.major,
                  prop.minor);
      std::exit(77);
    }
  }
};
BOOST_TEST_GLOBAL_FIXTURE(RequireHopper);

struct Scale {
  dgemm_scale_mode_t mode = DGEMM_SCALE_NONE;
  dgemm_scale_layout_t layout = DGEMM_SCALE_MN_MAJOR;
  int64_t ld = 0;  // 0 = packed
  dgemm_scale_type_t type = DGEMM_SCALE_TYPE_F32;
};

struct Case {
  int64_t m, n, k;
  DType a, b, d;
  Scale sa, sb;
  dgemm_vector_mode_t out_scale = DGEMM_VECTOR_NONE;
  bool zero_point = false;
  dgemm_vector_mode_t bias = DGEMM_VECTOR_NONE;
  dgemm_activation_t act = DGEMM_ACT_NONE;
  std::string force = "sm90";
  std::string tag;
  Scale sd = {};  // D's block scales (VEC128: an FP8 D quantized per 1 x 128 block of a row)
  float alpha = 1.0f;
  bool amax = false;  // DGEMM_SCALING_AMAX_D: max |y| of D, compared with the oracle's
};

const char* mode_name(dgemm_scale_mode_t m) {
  switch (m) {
    case DGEMM_SCALE_NONE: return "none";
    case DGEMM_SCALE_PER_TENSOR: return "tensor";
    case DGEMM_SCALE_OUTER_VEC: return "outer";
    case DGEMM_SCALE_VEC128: return "vec128";
    case DGEMM_SCALE_BLK128x128: return "blk128";
  }
  return "?";
}

std::string repro(const Case& c) {
  std::ostringstream os;
  os << "[" << c.tag << "] " << c.m << "x" << c.n << "x" << c.k << " " << dtype_name(c.a) << "*" << dtype_name(c.b)
     << "->" << dtype_name(c.d) << " row TN a_scale=" << mode_name(c.sa.mode)
     << (c.sa.layout == DGEMM_SCALE_K_MAJOR ? "(k" : "(mn") << (c.sa.type == DGEMM_SCALE_TYPE_UE8M0 ? ",ue8m0)" : ")")
     << " b_scale=" << mode_name(c.sb.mode) << (c.sb.layout == DGEMM_SCALE_K_MAJOR ? "(k" : "(mn")
     << (c.sb.type == DGEMM_SCALE_TYPE_UE8M0 ? ",ue8m0)" : ")") << " bias=" << int(c.bias) << " act=" << int(c.act)
     << " out_scale=" << int(c.out_scale) << (c.zero_point ? " zp" : "") << " alpha=" << c.alpha << " force=" << c.force;
  if (c.sd.mode != DGEMM_SCALE_NONE)
    os << " d_scale=" << mode_name(c.sd.mode) << (c.sd.type == DGEMM_SCALE_TYPE_UE8M0 ? "(ue8m0" : "(f32")
       << (c.sd.layout == DGEMM_SCALE_K_MAJOR ? ",k)" : ",mn)");
  if (c.amax) os << " amax_d";
  return os.str();
}

// The case's `deepgemm run` line, printed last in every failure message. Scales in the layouts the
// tool's --a-scale/--b-scale/--d-scale make are flags; others are named in its "# not expressible" note.
std::string repro_command(const Case& c) {
  GemmProblem p;
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.a_type = c.a;
  p.b_type = c.b;
  p.c_type = p.d_type = c.d;
  p.compute_type = c.a == DType::I8 ? DType::I32 : DType::F32;
  p.op_b = Op::T;  // as make_plan
  for (auto [desc, s] : {std::pair{&p.a_scale, &c.sa}, std::pair{&p.b_scale, &c.sb}}) {
    desc->mode = ScaleMode(s->mode);
    desc->layout = ScaleLayout(s->layout);
    desc->ld = s->ld;
    desc->type = ScaleType(s->type);
  }
  Epilogue e;
  e.scale_mode = VectorMode(c.out_scale);
  e.zero_point = c.zero_point;
  e.bias_mode = VectorMode(c.bias);
  e.bias_type = DType::F32;
  e.activation = Activation(c.act);
  e.alpha = c.alpha;
  e.d_scale.mode = ScaleMode(c.sd.mode);
  e.d_scale.layout = ScaleLayout(c.sd.layout);
  e.d_scale.ld = c.sd.ld;
  e.d_scale.type = ScaleType(c.sd.type);
  e.amax_d = c.amax;
  dgemm_test::RunExtras x;
  x.force = c.force;
  return "\n    repro: " + dgemm_test::run_command(p, e, x);
}

double threshold(const Case& c) {
  switch (c.d) {
    case DType::F32: return 1e-3;  // fp8 products accumulate narrower than f32 inside a 128-K block
    case DType::F16: return 2e-3;
    case DType::BF16: return 1e-2;
    case DType::F8E4M3: return 7e-2;
    case DType::F8E5M2: return 1.4e-1;
    default: return 0;  // integers: exact (i32) or within 1 (i8)
  }
}

struct Plans {
  dgemm_plan_t gpu = nullptr, cpu = nullptr;
  ~Plans() {
    dgemm_destroy_plan(gpu);
    dgemm_destroy_plan(cpu);
  }
};

dgemm_context_t cpu_context() {
  static dgemm_context_t ctx = [] {
    dgemm_context_t c = nullptr;
    dgemm_context_create(DGEMM_DEVICE_CPU, 0, &c);
    return c;
  }();
  return ctx;
}

// The case as the C API's structs (what make_plan plans and prefill_cache compiles).
struct CaseStructs {
  dgemm_problem_t p;
  dgemm_epilogue_t e;
  dgemm_scaling_t s;
};
CaseStructs structs_of(const Case& c) {
  CaseStructs r;
  dgemm_problem_t& p = r.p;
  dgemm_problem_init(&p);
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.a_type = dgemm_dtype_t(c.a);
  p.b_type = dgemm_dtype_t(c.b);
  p.c_type = p.d_type = dgemm_dtype_t(c.d);
  p.compute_type = c.a == DType::I8 ? DGEMM_DTYPE_I32 : DGEMM_DTYPE_F32;
  p.op_a = DGEMM_OP_N;
  p.op_b = DGEMM_OP_T;
  dgemm_epilogue_t& e = r.e;
  dgemm_epilogue_init(&e);
  e.scale_mode = c.out_scale;
  if (c.zero_point) e.flags |= DGEMM_EPILOGUE_ZERO_POINT;
  e.bias_mode = c.bias;
  e.bias_type = DGEMM_DTYPE_F32;
  e.activation = c.act;
  e.alpha = c.alpha;
  dgemm_scaling_t& s = r.s;
  dgemm_scaling_init(&s);
  s.a_scale.mode = c.sa.mode;
  s.a_scale.layout = c.sa.layout;
  s.a_scale.ld = c.sa.ld;
  s.a_scale.type = c.sa.type;
  s.b_scale.mode = c.sb.mode;
  s.b_scale.layout = c.sb.layout;
  s.b_scale.ld = c.sb.ld;
  s.b_scale.type = c.sb.type;
  s.d_scale.mode = c.sd.mode;
  s.d_scale.layout = c.sd.layout;
  s.d_scale.ld = c.sd.ld;
  s.d_scale.type = c.sd.type;
  if (c.amax) s.flags |= DGEMM_SCALING_AMAX_D;
  return r;
}

// Plans the case on `ctx` (force = nullptr: whatever the planner picks).
dgemm_status_t make_plan(const Case& c, dgemm_context_t ctx, const char* force, dgemm_plan_t* plan) {
  CaseStructs r = structs_of(c);
  dgemm_plan_options_t o;
  dgemm_plan_options_init(&o);
  o.force_kernel = force;
  return dgemm_create_plan_ext(ctx, &r.p, &r.e, &o, &r.s, plan);
}

// Runs one case on the GPU and against the CPU oracle; "" when they agree.
std::string run_case(const Case& c, std::mt19937& rng) {
  Plans plans;
  if (make_plan(c, dgemm_test::context(), c.force.c_str(), &plans.gpu) != DGEMM_STATUS_SUCCESS)
    return std::string("create_plan (GPU): ") + dgemm_last_error();
  if (make_plan(c, cpu_context(), nullptr, &plans.cpu) != DGEMM_STATUS_SUCCESS)
    return std::string("create_plan (CPU): ") + dgemm_last_error();
  // Operands and vectors; scale tensors sized by the plan.
  std::vector<unsigned char> a, b, bias, d_init;
  dgemm_test::fill_random(rng, c.a, a, std::size_t(c.m * c.k), c.a == DType::I8 ? -127 : -2, c.a == DType::I8 ? 127 : 2);
  dgemm_test::fill_random(rng, c.b, b, std::size_t(c.n * c.k), c.b == DType::I8 ? -127 : -2, c.b == DType::I8 ? 127 : 2);
  dgemm_test::fill_random(rng, DType::F32, bias, std::size_t(std::max(c.m, c.n)), -1, 1);
  std::uniform_real_distribution<float> us(0.5f, 2.0f);
  std::vector<float> out_scale(std::size_t(std::max(c.m, c.n)));
  for (float& x : out_scale) x = us(rng) * (c.d == DType::I8 ? 1e-4f : 1.0f);  // i8: sums of ~3e5 to ~30
  std::uniform_int_distribution<int> uz(-20, 20);
  std::vector<int32_t> zp(out_scale.size());
  for (int32_t& z : zp) z = uz(rng);
  // Scale tensors as bytes: f32 values in [0.5, 2), or UE8M0 exponents 2^-3 ... 2^3 (and, at
  // random, the subnormal 2^-127 in one element of ten, which the kernel must not flush to zero).
  std::vector<unsigned char> sa, sb;
  std::uniform_int_distribution<int> ue(124, 130), tenth(0, 9);
  for (auto [which, buf, type] : {std::tuple{DGEMM_SCALE_TENSOR_A, &sa, c.sa.type}, std::tuple{DGEMM_SCALE_TENSOR_B, &sb, c.sb.type}}) {
    int64_t elements = 0;
    dgemm_plan_scale_shape(plans.gpu, which, nullptr, nullptr, nullptr, &elements);
    const std::size_t n_el = std::size_t(std::max<int64_t>(elements, 1));
    if (type == DGEMM_SCALE_TYPE_UE8M0) {
      buf->resize(n_el);
      for (unsigned char& x : *buf) x = (unsigned char)(tenth(rng) == 0 ? 0 : ue(rng));
    } else {
      buf->resize(n_el * 4);
      for (std::size_t i = 0; i < n_el; ++i) {
        const float x = us(rng);
        std::memcpy(buf->data() + i * 4, &x, 4);
      }
    }
  }
  const std::size_t es = dtype_size(c.d), d_bytes = std::size_t(c.m * c.n) * es;
  d_init.assign(d_bytes + 2 * kGuard, kPoison);
  // D's block scales: poisoned with guard bands, like D.
  const bool block_d = c.sd.mode != DGEMM_SCALE_NONE;
  const std::size_t ds_es = c.sd.type == DGEMM_SCALE_TYPE_UE8M0 ? 1 : 4;
  int64_t ds_elements = 0;
  if (block_d) dgemm_plan_scale_shape(plans.gpu, DGEMM_SCALE_TENSOR_D, nullptr, nullptr, nullptr, &ds_elements);
  const std::size_t ds_bytes = std::size_t(ds_elements) * ds_es;
  std::vector<unsigned char> ds_init(ds_bytes + 2 * kGuard, kPoison);
  DevBuf dds(ds_init.size());
  cudaMemcpy(dds.base, ds_init.data(), ds_init.size(), cudaMemcpyHostToDevice);

  DevBuf da(a.size()), db(b.size()), dbias(bias.size()), dscale(out_scale.size() * 4), dzp(zp.size() * 4),
      dsa(sa.size() + 16), dsb(sb.size() + 16), dd(d_init.size());
  cudaMemcpy(da.base, a.data(), a.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(db.base, b.data(), b.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dbias.base, bias.data(), bias.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dscale.base, out_scale.data(), out_scale.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dzp.base, zp.data(), zp.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dsa.base, sa.data(), sa.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dsb.base, sb.data(), sb.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dd.base, d_init.data(), d_init.size(), cudaMemcpyHostToDevice);

  // amax of D: the device's float poisoned with -1 (no amax is negative), the oracle's on the host.
  const float amax_poison = -1.0f;
  DevBuf damax(4);
  cudaMemcpy(damax.base, &amax_poison, 4, cudaMemcpyHostToDevice);
  float amax_want = amax_poison;
  auto execute = [&](dgemm_plan_t plan, const void* A, const void* B, void* D, const void* bias_p, const float* scale_p,
                     const int32_t* zp_p, const void* sa_p, const void* sb_p, void* sd_p, float* amax_p) {
    dgemm_args_t x;
    dgemm_args_init(&x);
    if (c.bias != DGEMM_VECTOR_NONE) x.bias = bias_p;
    if (c.out_scale != DGEMM_VECTOR_NONE) x.scale = scale_p;
    if (c.zero_point) x.zero_point = zp_p;
    dgemm_scale_args_t sx;
    dgemm_scale_args_init(&sx);
    sx.a_scale = c.sa.mode != DGEMM_SCALE_NONE ? sa_p : nullptr;
    sx.b_scale = c.sb.mode != DGEMM_SCALE_NONE ? sb_p : nullptr;
    sx.d_scale = block_d ? sd_p : nullptr;
    sx.amax_d = c.amax ? amax_p : nullptr;
    const bool scaled = c.sa.mode != DGEMM_SCALE_NONE || c.sb.mode != DGEMM_SCALE_NONE || block_d || c.amax;
    std::size_t ws = 0;
    dgemm_plan_workspace_size(plan, &ws);
    std::vector<unsigned char> host_ws;
    DevBuf dev_ws(plan == plans.gpu ? ws : 0);
    if (plan == plans.cpu) host_ws.resize(ws);
    void* w = plan == plans.gpu ? dev_ws.base : (ws ? host_ws.data() : nullptr);
    return dgemm_execute_ext(plan, A, B, nullptr, D, &x, scaled ? &sx : nullptr, w, ws, nullptr);
  };
  if (execute(plans.gpu, da.base, db.base, dd.at(kGuard), dbias.base, static_cast<const float*>(dscale.base),
              static_cast<const int32_t*>(dzp.base), dsa.base, dsb.base, dds.at(kGuard),
              static_cast<float*>(damax.base)) != DGEMM_STATUS_SUCCESS)
    return std::string("execute (GPU): ") + dgemm_last_error();
  if (cudaDeviceSynchronize() != cudaSuccess) return "kernel failed: " + std::string(cudaGetErrorString(cudaGetLastError()));
  std::vector<unsigned char> got(d_init.size()), want = d_init, ds_got(ds_init.size()), ds_want = ds_init;
  cudaMemcpy(got.data(), dd.base, got.size(), cudaMemcpyDeviceToHost);
  cudaMemcpy(ds_got.data(), dds.base, ds_got.size(), cudaMemcpyDeviceToHost);
  if (execute(plans.cpu, a.data(), b.data(), want.data() + kGuard, bias.data(), out_scale.data(), zp.data(), sa.data(),
              sb.data(), ds_want.data() + kGuard, &amax_want) != DGEMM_STATUS_SUCCESS)
    return std::string("execute (CPU): ") + dgemm_last_error();
  // A block-scaled D is compared dequantized (D(i, j) * s(i, j / 128)), and its scales element by
  // element: f32 within 1e-3 relative (amax from f32 values here, from doubles in the oracle; 1e-2
  // for fp8 operands without block scales, whose sums over K the tensor core accumulates narrower
  // than f32), UE8M0 equal except where the block's amax sits at a power of two (at most 1 % of
  // the blocks, a factor of two at most).
  const bool promoted = c.sa.mode == DGEMM_SCALE_VEC128 || c.sa.mode == DGEMM_SCALE_BLK128x128 ||
                        c.sb.mode == DGEMM_SCALE_VEC128 || c.sb.mode == DGEMM_SCALE_BLK128x128;
  const double scale_tol = dtype_size(c.a) == 1 && !promoted ? 1e-2 : 1e-3;
  int64_t ds_ld = c.sd.ld;
  if (block_d) dgemm_plan_scale_shape(plans.gpu, DGEMM_SCALE_TENSOR_D, nullptr, nullptr, &ds_ld, nullptr);
  auto scale_index = [&](int64_t i, int64_t cb) { return c.sd.layout == DGEMM_SCALE_K_MAJOR ? i * ds_ld + cb : i + cb * ds_ld; };
  auto scale_at = [&](const std::vector<unsigned char>& buf, int64_t i, int64_t j) {
    const int64_t at = scale_index(i, j / 128);
    if (ds_es == 1) {
      const unsigned bits = buf[kGuard + std::size_t(at)];
      return bits == 0xFFu ? std::nan("") : std::ldexp(1.0, int(bits) - 127);
    }
    float f;
    std::memcpy(&f, buf.data() + kGuard + std::size_t(at) * 4, 4);
    return double(f);
  };
  int64_t scale_bad = 0, scale_off = 0, blocks = 0;
  if (block_d) {
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; j += 128) {
        const double g = scale_at(ds_got, i, j), w = scale_at(ds_want, i, j);
        ++blocks;
        if (ds_es == 4) scale_bad += !(std::fabs(g - w) <= scale_tol * std::fabs(w));
        else if (g != w) (g == 2 * w || w == 2 * g) ? ++scale_off : ++scale_bad;
      }
    if (scale_off * 100 > blocks) scale_bad += scale_off;
  }
  // The scale tensor's bytes that are not a block's scale (ld padding) and its guard bands.
  std::vector<bool> is_scale(ds_got.size(), false);
  if (block_d)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t cb = 0; cb * 128 < c.n; ++cb)
        for (std::size_t b = 0; b < ds_es; ++b) is_scale[kGuard + std::size_t(scale_index(i, cb)) * ds_es + b] = true;
  std::size_t ds_touched = 0;
  for (std::size_t i = 0; i < ds_got.size(); ++i) ds_touched += !is_scale[i] && ds_got[i] != kPoison;

  double num = 0, den = 0;
  int64_t int_bad = 0, nonfinite_bad = 0;
  for (int64_t i = 0; i < c.m * c.n; ++i) {
    double g = load_as_double(c.d, got.data() + kGuard, i), w = load_as_double(c.d, want.data() + kGuard, i);
    if (block_d) {
      g *= scale_at(ds_got, i / c.n, i % c.n);
      w *= scale_at(ds_want, i / c.n, i % c.n);
    }
    if (dtype_is_integer(c.d)) {
      int_bad += c.d == DType::I32 ? g != w : std::fabs(g - w) > 1.0;
    } else if (!std::isfinite(w) || !std::isfinite(g)) {
      nonfinite_bad += !(std::isnan(w) ? std::isnan(g) : g == w);
    } else {
      num += (g - w) * (g - w);
      den += w * w;
    }
  }
  std::ostringstream os;
  const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  if (rel > threshold(c) || int_bad || nonfinite_bad)
    os << "rel_frobenius=" << rel << " (max " << threshold(c) << "), integer mismatches " << int_bad
       << ", non-finite mismatches " << nonfinite_bad << "; ";
  std::size_t touched = 0;
  for (std::size_t i = 0; i < kGuard; ++i) touched += (got[i] != kPoison) + (got[kGuard + d_bytes + i] != kPoison);
  if (touched) os << touched << " guard bytes around D were written; ";
  if (scale_bad) os << scale_bad << " of " << blocks << " block scales of D differ from the oracle's (" << scale_off
                    << " by a factor of two); ";
  if (ds_touched) os << ds_touched << " bytes of the D scale tensor outside its blocks were written; ";
  if (c.amax) {
    // y in f32 on the device (fast activations for half and FP8 D), in double in the oracle: D's
    // threshold, at least 1e-3; NaN only against NaN.
    float amax_got = 0;
    cudaMemcpy(&amax_got, damax.base, 4, cudaMemcpyDeviceToHost);
    const double tol = std::max(threshold(c), 1e-3);
    const bool ok = std::isnan(amax_want) ? std::isnan(amax_got)
                                          : std::fabs(double(amax_got) - amax_want) <= tol * std::fabs(double(amax_want));
    if (!ok) os << "amax_d " << amax_got << ", the oracle's " << amax_want << " (max relative difference " << tol << "); ";
  }
  if (os.str().empty()) {
    char desc[4096];
    dgemm_plan_describe(plans.gpu, desc, sizeof desc, nullptr);
    const std::string text(desc);
    const auto at = text.find("\"name\":\"");
    BOOST_TEST_MESSAGE(repro(c) << ": ok, rel " << rel << ", "
                                << (at == std::string::npos ? "?" : text.substr(at + 8, text.find('"', at + 8) - at - 8)));
  }
  return os.str();
}

Scale vec128_mn(int64_t outer) { return {DGEMM_SCALE_VEC128, DGEMM_SCALE_MN_MAJOR, (outer + 3) / 4 * 4}; }
Scale blk128_k() { return {DGEMM_SCALE_BLK128x128, DGEMM_SCALE_K_MAJOR, 0}; }

std::vector<Case> cases() {
  std::vector<Case> out;
  const DType e4 = DType::F8E4M3, e5 = DType::F8E5M2;
  // Unscaled fp8, every type pair and output type; K with a partial last block.
  for (auto [a, b] : {std::pair{e4, e4}, std::pair{e4, e5}, std::pair{e5, e4}, std::pair{e5, e5}})
    for (DType d : {DType::BF16, DType::F32})
      out.push_back({300, 200, 1008, a, b, d, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE, DGEMM_ACT_NONE,
                     "sm90", "fp8"});
  // Scales outside the K sum: per tensor, per row x per column; with bias and GELU.
  out.push_back({257, 391, 528, e4, e4, DType::F32, {DGEMM_SCALE_PER_TENSOR}, {DGEMM_SCALE_PER_TENSOR},
                 DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE, DGEMM_ACT_NONE, "sm90", "tensor"});
  out.push_back({257, 391, 528, e4, e5, DType::BF16, {DGEMM_SCALE_OUTER_VEC}, {DGEMM_SCALE_OUTER_VEC},
                 DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_PER_COLUMN, DGEMM_ACT_GELU_ERF, "sm90", "outer"});
  // DeepGEMM's block scales (A 1 x 128 MN-major, B 128 x 128 K-major), square and skinny (swap-AB),
  // and VEC128 on both operands.
  for (auto [m, n, k] : {std::tuple{257, 384, 1008}, std::tuple{1024, 1000, 2048}, std::tuple{5, 1000, 1008},
                         std::tuple{64, 2112, 2048}, std::tuple{130, 700, 4096}})
    for (DType d : {DType::BF16, DType::F32})
      out.push_back({m, n, k, e4, e4, d, vec128_mn(m), blk128_k(), DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
                     DGEMM_ACT_NONE, "sm90", "deepseek"});
  out.push_back({300, 250, 1008, e4, e4, DType::F32, vec128_mn(300), vec128_mn(250), DGEMM_VECTOR_NONE, false,
                 DGEMM_VECTOR_PER_ROW, DGEMM_ACT_SILU, "sm90", "vec128-both"});
  // s8: exact i32 (square and skinny), a requantized i8 with per-row scale and zero point, bf16
  // dequantized with per-row x per-column scales and a bias.
  for (int64_t m : {300, 16})
    out.push_back({m, 200, 1008, DType::I8, DType::I8, DType::I32, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
                   DGEMM_ACT_NONE, "sm90", "i8-exact"});
  // The staged exact path (N a multiple of 32 keeps D's rows 16-byte aligned; 200 above does not),
  // a partial tile in both dimensions; and alpha = 0.5, which is not the sums themselves (through
  // float, as the oracle rounds it).
  out.push_back({300, 480, 1024, DType::I8, DType::I8, DType::I32, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
                 DGEMM_ACT_NONE, "sm90", "i8-exact-staged"});
  for (const char* force : {"sm90", "sm90_128x256x128_s4_t384_p", "sm90_128x128x128_s6_t384_c2_p"}) {
    Case half{300, 480, 1024, DType::I8, DType::I8, DType::I32, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
              DGEMM_ACT_NONE, force, "i8-alpha"};
    half.alpha = 0.5f;
    out.push_back(half);
  }
  out.push_back({300, 200, 1008, DType::I8, DType::I8, DType::I8, {}, {}, DGEMM_VECTOR_PER_ROW, true, DGEMM_VECTOR_NONE,
                 DGEMM_ACT_NONE, "sm90", "i8-requant"});
  out.push_back({300, 200, 1008, DType::I8, DType::I8, DType::BF16, {DGEMM_SCALE_OUTER_VEC}, {DGEMM_SCALE_OUTER_VEC},
                 DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_PER_COLUMN, DGEMM_ACT_NONE, "sm90", "i8-dequant"});
  // 128x192 tiles straddle two 128-column blocks of B's scales (the boundary 128 or 64 columns
  // into the tile); at N = 1000 the last tile's second block lies past N's last block.
  for (const char* name : {"sm90_128x192x128_s5_t384_p", "sm90_128x192x128_s5_t384_c2_p"})
    out.push_back({260, 1000, 1024, e4, e4, DType::F32, vec128_mn(260), blk128_k(), DGEMM_VECTOR_NONE, false,
                   DGEMM_VECTOR_NONE, DGEMM_ACT_NONE, name, "config"});
  // UE8M0 input scales (DeepGEMM's newer layout): 1 x 128 A (MN-major, ld a multiple of 16) and
  // 128 x 128 B, on the pipelined 128x128 tile (default choice) and the two-set 128x192 one, and
  // VEC128 on both operands; some scales are the subnormal 2^-127.
  {
    const Scale a_ue{DGEMM_SCALE_VEC128, DGEMM_SCALE_MN_MAJOR, 272, DGEMM_SCALE_TYPE_UE8M0};
    const Scale b_ue{DGEMM_SCALE_BLK128x128, DGEMM_SCALE_K_MAJOR, 0, DGEMM_SCALE_TYPE_UE8M0};
    for (const char* force : {"sm90", "sm90_128x192x128_s5_t384_p"})
      for (DType d : {DType::BF16, DType::F32})
        out.push_back({257, 1000, 1008, e4, e4, d, a_ue, b_ue, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
                       DGEMM_ACT_NONE, force, "ue8m0"});
    const Scale b_vec_ue{DGEMM_SCALE_VEC128, DGEMM_SCALE_MN_MAJOR, 256, DGEMM_SCALE_TYPE_UE8M0};
    const Scale a_ue300{DGEMM_SCALE_VEC128, DGEMM_SCALE_MN_MAJOR, 304, DGEMM_SCALE_TYPE_UE8M0};
    out.push_back({300, 256, 1008, e4, e5, DType::F32, a_ue300, b_vec_ue, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
                   DGEMM_ACT_NONE, "sm90", "ue8m0-vec128-both"});
  }
  // A block-scaled FP8 D (1 x 128 per row, DeepGEMM's next-layer input): f32 and UE8M0 scales,
  // MN- and K-major with padded ld, e4m3 and e5m2, from fp8 and from bf16 operands, block-scaled
  // inputs, a bias and GELU before the quantization, N not a multiple of 128.
  {
    const Scale dmn{DGEMM_SCALE_VEC128, DGEMM_SCALE_MN_MAJOR, 264, DGEMM_SCALE_TYPE_F32};
    const Scale dk_ue{DGEMM_SCALE_VEC128, DGEMM_SCALE_K_MAJOR, 9, DGEMM_SCALE_TYPE_UE8M0};
    Case q{257, 1000, 1008, e4, e4, e4, vec128_mn(257), blk128_k(), DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
           DGEMM_ACT_NONE, "sm90", "fp8-out-blocks"};
    q.sd = dmn;
    out.push_back(q);
    q.sd = dk_ue;
    out.push_back(q);
    Case r{300, 520, 512, e4, e4, e5, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_PER_COLUMN, DGEMM_ACT_GELU_TANH,
           "sm90", "fp8-out-blocks"};
    r.sd = {DGEMM_SCALE_VEC128, DGEMM_SCALE_MN_MAJOR, 0, DGEMM_SCALE_TYPE_UE8M0};
    out.push_back(r);
    Case t{260, 384, 520, DType::BF16, DType::BF16, e4, {}, {}, DGEMM_VECTOR_PER_ROW, false, DGEMM_VECTOR_PER_ROW,
           DGEMM_ACT_RELU, "sm90", "bf16-in-fp8-out-blocks"};
    t.sd = {DGEMM_SCALE_VEC128, DGEMM_SCALE_MN_MAJOR, 0, DGEMM_SCALE_TYPE_F32};
    out.push_back(t);
    // Staged (16-byte rows) with whole tiles and a partial tile row (kFast and not): a column bias
    // and GELU, UE8M0 and f32 scales (the whole-tile path has no bounds checks at all).
    for (int ue = 0; ue < 2; ++ue) {
      const int64_t m = ue ? 330 : 384;
      Case g{m, 640, 512, e4, e4, e4, vec128_mn(m), blk128_k(), DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_PER_COLUMN,
             DGEMM_ACT_GELU_TANH, "sm90", "fp8-out-blocks-staged"};
      g.sd = {DGEMM_SCALE_VEC128, DGEMM_SCALE_MN_MAJOR, 0, ue ? DGEMM_SCALE_TYPE_UE8M0 : DGEMM_SCALE_TYPE_F32};
      out.push_back(g);
    }
    // The measuring-only candidates that put more CTAs on a small M's weights (bench/jobs/
    // fp8q-small-m.jobs): stream-K (15 tiles of 128x128 shared in 4 even pieces, 25 of 64x128 in
    // 4 pieces too) and K over four in clusters.
    for (const char* name : {"sm90_128x128x128_s6_t384_p_streamk", "sm90_128x128x128_s4_t384_ck4_p",
                             "sm90_64x128x128_s7_t256_p_streamk"}) {
      Case f{300, 640, 2048, e4, e4, e4, vec128_mn(300), blk128_k(), DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_PER_COLUMN,
             DGEMM_ACT_GELU_TANH, name, "fp8-out-blocks-split-k"};
      f.sd = dmn;
      f.sd.ld = 300;
      out.push_back(f);
    }
    // By name: the pipelined promotion (128x128) and a 2-CTA cluster of 128x256 tiles (unscaled
    // inputs: promoted 128x256 does not fit), 300 rows = a partial second tile row. N = 640 keeps
    // D's rows 16-byte aligned (the staged epilogue: TMA stores clipped at N and M); N = 700 and
    // 1000 (above) do not (2-byte stores from registers).
    for (int64_t n : {700, 640}) {
      Case f{300, n, 1024, e4, e4, e4, vec128_mn(300), blk128_k(), DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
             DGEMM_ACT_NONE, "sm90_128x128x128_s6_t384_p", "fp8-out-blocks"};
      f.sd = dmn;
      f.sd.ld = 300;
      out.push_back(f);
      f.sa = f.sb = {};
      f.force = "sm90_128x256x128_s4_t384_c2_p";
      out.push_back(f);
    }
  }
  // Ping-pong consumer warpgroups (`_v1`: each owns whole 128-row tiles in turn), by name, on
  // several tiles per CTA (1100 rows: 9 tile rows, the last partial): the exact i32 D staged over
  // both m64 atoms (N a multiple of 32) and from registers (N = 2050: rows not 16-byte aligned),
  // alpha 0.5 through float, fp8 with per-tensor scales into bf16, and with outer-vector scales,
  // a column bias and GELU (tanh).
  {
    const char* pp = "sm90_128x128x128_s6_t384_p_v1";
    for (auto [m, n, k] : {std::tuple{1100, 2080, 1024}, std::tuple{1056, 1024, 2048}, std::tuple{1100, 2050, 1024}})
      out.push_back({m, n, k, DType::I8, DType::I8, DType::I32, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
                     DGEMM_ACT_NONE, pp, "i8-pingpong"});
    Case half{1100, 2080, 1024, DType::I8, DType::I8, DType::I32, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
              DGEMM_ACT_NONE, pp, "i8-pingpong-alpha"};
    half.alpha = 0.5f;
    out.push_back(half);
    out.push_back({1100, 1000, 1008, DType::I8, DType::I8, DType::BF16, {DGEMM_SCALE_OUTER_VEC}, {DGEMM_SCALE_OUTER_VEC},
                   DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_PER_COLUMN, DGEMM_ACT_NONE, pp, "i8-pingpong-dequant"});
    out.push_back({1100, 1024, 1024, e4, e4, DType::BF16, {DGEMM_SCALE_PER_TENSOR}, {DGEMM_SCALE_PER_TENSOR},
                   DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE, DGEMM_ACT_NONE, pp, "fp8-pingpong-tensor"});
    out.push_back({1100, 1000, 1008, e4, e5, DType::BF16, {DGEMM_SCALE_OUTER_VEC}, {DGEMM_SCALE_OUTER_VEC},
                   DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_PER_COLUMN, DGEMM_ACT_GELU_TANH, pp, "fp8-pingpong-outer"});
  }
  // Stream-K (`_streamk`: the tiles of a partial last wave shared out by K blocks), by name: 1100
  // rows x 2080 = 153 tiles of 128x128, the 21 past a wave of 132 each cut into 4 even pieces of
  // its 10 K blocks (3, 3, 2, 2); 2100 x 1536 = 204 tiles, 72 shared in contiguous ranges that
  // cross tile boundaries (a tile finished with one or two partials); the exact i32 D staged and
  // from registers, alpha 0.5, fp8 per tensor and with DeepSeek's block scales (the promoted sums
  // are what the pieces add); ping-pong and cooperative, and 128x256.
  for (const char* sk : {"sm90_128x128x128_s6_t384_p_v1_streamk", "sm90_128x128x128_s6_t384_p_streamk",
                         "sm90_128x256x128_s4_t384_p_streamk", "sm90_128x64x128_s8_t384_p_streamk"}) {
    for (auto [m, n] : {std::pair{1100, 2080}, std::pair{1100, 2050}, std::pair{2100, 1536}})
      out.push_back({m, n, 1280, DType::I8, DType::I8, DType::I32, {}, {}, DGEMM_VECTOR_NONE, false,
                     DGEMM_VECTOR_NONE, DGEMM_ACT_NONE, sk, "i8-streamk"});
    Case half{1100, 2080, 1280, DType::I8, DType::I8, DType::I32, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
              DGEMM_ACT_NONE, sk, "i8-streamk-alpha"};
    half.alpha = 0.5f;
    out.push_back(half);
    out.push_back({1100, 1024, 1280, e4, e4, DType::BF16, {DGEMM_SCALE_PER_TENSOR}, {DGEMM_SCALE_PER_TENSOR},
                   DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_PER_COLUMN, DGEMM_ACT_GELU_TANH, sk, "fp8-streamk-tensor"});
  }
  for (auto [m, n] : {std::pair{1100, 2050}, std::pair{2100, 1536}})
    out.push_back({m, n, 1280, e4, e4, DType::BF16, vec128_mn(m), blk128_k(), DGEMM_VECTOR_NONE, false,
                   DGEMM_VECTOR_NONE, DGEMM_ACT_NONE, "sm90_128x128x128_s6_t384_p_streamk", "fp8b-streamk"});
  // The 128x64 stream-K twin where it is chosen (fewer than 50 tiles at 65+ rows, 48+ K blocks):
  // 128 x 2112 = 33 tiles in four even pieces; 100 rows; i8 exact, fp8 per tensor, block-scaled.
  for (auto [m, n] : {std::pair{128, 2112}, std::pair{100, 1000}}) {
    out.push_back({m, n, 7168, DType::I8, DType::I8, DType::I32, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
                   DGEMM_ACT_NONE, "sm90_128x64x128_s8_t384_p_streamk", "i8-streamk-few"});
    out.push_back({m, n, 7168, e4, e4, DType::BF16, vec128_mn(m), blk128_k(), DGEMM_VECTOR_NONE, false,
                   DGEMM_VECTOR_NONE, DGEMM_ACT_NONE, "sm90_128x64x128_s8_t384_p_streamk", "fp8b-streamk-few"});
  }
  // The skinny swap-AB tiles' stream-K twins (measuring only), by name: 100 swapped 64-row tiles
  // (N = 6337) over 132 CTAs in contiguous K ranges that cross tiles, at two CTAs per SM in even
  // pieces; i8 exact at M = 3, DeepSeek's block scales at M = 40 (promoted sums in the pieces),
  // fp8 per tensor with a column bias (a row bias of the transposed view) and GELU at M = 17.
  for (const char* sk : {"sm90_64x8x128_s12_t256_swap_p_streamk", "sm90_64x8x128_s12_t256_b2_swap_p_streamk",
                         "sm90_128x8x128_s12_t384_swap_p_streamk"})
    out.push_back({3, 6337, 2048, DType::I8, DType::I8, DType::I32, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
                   DGEMM_ACT_NONE, sk, "i8-skinny-streamk"});
  for (const char* sk : {"sm90_64x64x128_s12_t256_swap_p_streamk", "sm90_64x64x128_s6_t256_b2_swap_p_streamk",
                         "sm90_128x64x128_s9_t384_swap_p_streamk"})
    out.push_back({40, 6337, 2048, e4, e4, DType::BF16, vec128_mn(40), blk128_k(), DGEMM_VECTOR_NONE, false,
                   DGEMM_VECTOR_NONE, DGEMM_ACT_NONE, sk, "fp8b-skinny-streamk"});
  for (const char* sk : {"sm90_64x32x128_s12_t256_swap_p_streamk", "sm90_64x32x128_s9_t256_b2_swap_p_streamk"})
    out.push_back({17, 3000, 2048, e4, e4, DType::BF16, {DGEMM_SCALE_PER_TENSOR}, {DGEMM_SCALE_PER_TENSOR},
                   DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_PER_COLUMN, DGEMM_ACT_GELU_TANH, sk, "fp8-skinny-streamk"});
  // Swap tiles as wide as M (rounded up to 8, 16 for i8; chosen for 64 < M <= 208 without block
  // scales), by name: i8 exact at M = 200 (208 columns, 8 past M), fp8 per tensor with a column
  // bias and GELU at M = 150, i8 with outer scales into bf16 at M = 65 (80 columns).
  out.push_back({200, 1000, 1024, DType::I8, DType::I8, DType::I32, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
                 DGEMM_ACT_NONE, "sm90_64x208x128_s6_t256_swap_p", "i8-exact-width"});
  out.push_back({150, 1000, 1024, e4, e4, DType::BF16, {DGEMM_SCALE_PER_TENSOR}, {DGEMM_SCALE_PER_TENSOR},
                 DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_PER_COLUMN, DGEMM_ACT_GELU_TANH, "sm90_64x152x128_s8_t256_swap_p",
                 "fp8-exact-width"});
  out.push_back({65, 700, 1024, DType::I8, DType::I8, DType::BF16, {DGEMM_SCALE_OUTER_VEC}, {DGEMM_SCALE_OUTER_VEC},
                 DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_PER_COLUMN, DGEMM_ACT_NONE, "sm90_64x80x128_s12_t256_swap_p",
                 "i8-dequant-exact-width"});
  // The 64-row one-CTA tiles a block-scaled D is offered at small M (measuring only), by name:
  // DeepSeek's block-scaled inputs, M = 64 and 65 (a second, one-row tile), N not a multiple of
  // 128 (the staged boxes clipped at N; 1000: unstaged, D's rows not 16-byte aligned).
  // Also K over four and clusters of two sharing B (measuring only, 2026-12-05 session 7).
  for (const char* name : {"sm90_64x128x128_s8_t256_p", "sm90_64x128x128_s7_t256_ck2_p", "sm90_64x128x128_s7_t256_ck4_p",
                           "sm90_64x128x128_s8_t256_c2_p"})
    for (auto [m, n] : {std::pair{64, 640}, std::pair{65, 1000}, std::pair{64, 2112}, std::pair{128, 2112}}) {
      Case f{m, n, 2048, e4, e4, e4, vec128_mn(m), blk128_k(), DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
             DGEMM_ACT_NONE, name, "fp8-out-blocks-64"};
      f.sd = {DGEMM_SCALE_VEC128, DGEMM_SCALE_MN_MAJOR, 0, DGEMM_SCALE_TYPE_F32};
      out.push_back(f);
    }
  // The 64x128 one-CTA tile alone and in clusters of two sharing B (chosen at 65-128 rows with
  // weights larger than half the L2), by name: the exact i32 D staged (N a multiple of 32) and
  // from registers (N = 2050), 100 rows (the pair's second tile partial) and 128, alpha 0.5, fp8
  // per tensor with a column bias and GELU, block-scaled inputs.
  for (const char* name : {"sm90_64x128x128_s8_t256_c2_p", "sm90_64x128x128_s8_t256_p"}) {
    for (auto [m, n] : {std::pair{128, 2080}, std::pair{100, 2050}, std::pair{200, 1536}})
      out.push_back({m, n, 1280, DType::I8, DType::I8, DType::I32, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
                     DGEMM_ACT_NONE, name, "i8-64x128"});
    Case half{128, 2080, 1280, DType::I8, DType::I8, DType::I32, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
              DGEMM_ACT_NONE, name, "i8-64x128-alpha"};
    half.alpha = 0.5f;
    out.push_back(half);
    out.push_back({100, 1024, 1280, e4, e4, DType::BF16, {DGEMM_SCALE_PER_TENSOR}, {DGEMM_SCALE_PER_TENSOR},
                   DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_PER_COLUMN, DGEMM_ACT_GELU_TANH, name, "fp8-64x128-tensor"});
    out.push_back({128, 1000, 1024, e4, e4, DType::BF16, vec128_mn(128), blk128_k(), DGEMM_VECTOR_NONE, false,
                   DGEMM_VECTOR_NONE, DGEMM_ACT_NONE, name, "fp8b-64x128"});
  }
  // The amax of D (by name: no GPU run had checked it when it was built): taken after the
  // activation and before the output scale, over every path that stores D: the TMA-staged tile
  // (bf16 D, 128x128 and 128x256 c2), registers (D rows not 16-byte aligned: N = 1001), a swapped
  // skinny tile (transposed store), stream-K (only the pieces that finish a tile store), ping-pong,
  // the promoted block-scaled main loop into a block-scaled FP8 D, an i32 D through float (not the
  // exact path), a requantized i8 D with a zero point, and a NaN alpha (amax NaN).
  {
    const DType bf = DType::BF16;
    for (const char* name : {"sm90_128x128x64_s6_t384_p", "sm90_128x256x64_s4_t384_c2_p", "sm90_64x128x64_s7_t256_p"})
      for (int64_t n : {520, 1001}) {
        Case c{300, n, 512, bf, bf, bf, {}, {}, DGEMM_VECTOR_PER_TENSOR, false, DGEMM_VECTOR_PER_COLUMN,
               DGEMM_ACT_GELU_TANH, name, "amax-bf16"};
        c.amax = true;
        out.push_back(c);
      }
    for (const char* name : {"sm90_64x40x64_s12_t256_swap_p", "sm90_128x40x64_s10_t384_swap_p"}) {
      Case c{40, 3000, 1024, bf, bf, DType::F32, {}, {}, DGEMM_VECTOR_PER_COLUMN, false, DGEMM_VECTOR_PER_ROW,
             DGEMM_ACT_SILU, name, "amax-swap"};
      c.amax = true;
      out.push_back(c);
    }
    for (const char* name : {"sm90_128x128x128_s6_t384_p_streamk", "sm90_128x128x128_s6_t384_p_v1",
                             "sm90_128x128x128_s6_t384_p"}) {
      Case c{1100, 1024, 1280, e4, e4, DType::BF16, {DGEMM_SCALE_PER_TENSOR}, {DGEMM_SCALE_PER_TENSOR},
             DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_PER_COLUMN, DGEMM_ACT_GELU_TANH, name, "amax-fp8"};
      c.amax = true;
      out.push_back(c);
    }
    Case q{257, 1000, 1008, e4, e4, e4, vec128_mn(257), blk128_k(), DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
           DGEMM_ACT_NONE, "sm90_128x128x128_s6_t384_p", "amax-fp8-out-blocks"};
    q.sd = {DGEMM_SCALE_VEC128, DGEMM_SCALE_MN_MAJOR, 264, DGEMM_SCALE_TYPE_F32};
    q.amax = true;
    out.push_back(q);
    Case i{300, 480, 1024, DType::I8, DType::I8, DType::I32, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE,
           DGEMM_ACT_NONE, "sm90_128x128x128_s6_t384_p", "amax-i32"};
    i.amax = true;
    out.push_back(i);
    Case r{300, 200, 1008, DType::I8, DType::I8, DType::I8, {}, {}, DGEMM_VECTOR_PER_ROW, true, DGEMM_VECTOR_NONE,
           DGEMM_ACT_NONE, "sm90_128x128x128_s6_t384_p", "amax-i8-requant"};
    r.amax = true;
    out.push_back(r);
    Case nan{300, 520, 512, bf, bf, bf, {}, {}, DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_NONE, DGEMM_ACT_NONE,
             "sm90_128x128x64_s6_t384_p", "amax-nan"};
    nan.alpha = std::nanf("");
    nan.amax = true;
    out.push_back(nan);
  }
  // A K-major A whose rows end inside the first tile loads a box of exactly its rows;
  // the rest of the stage keeps stale data, which must reach no stored row, no block scale of D
  // and no amax: M = 1 and 13 through the fused FP8 output's small-M tiles (K over two, the
  // stream-K twin, 128x128), with a column bias, GELU and the amax of D.
  for (const char* name : {"sm90_64x128x128_s7_t256_ck2_p", "sm90_64x128x128_s7_t256_p_streamk",
                           "sm90_128x128x128_s6_t384_p"})
    for (int64_t m : {1, 13}) {
      Case c{m, 640, 2048, e4, e4, e4, vec128_mn(m), blk128_k(), DGEMM_VECTOR_NONE, false, DGEMM_VECTOR_PER_COLUMN,
             DGEMM_ACT_GELU_TANH, name, "short-a-box"};
      c.sd = {DGEMM_SCALE_VEC128, DGEMM_SCALE_MN_MAJOR, 0, DGEMM_SCALE_TYPE_F32};
      c.amax = true;
      out.push_back(c);
    }
  // The block-scaled FP8 D of swap-AB tiles (epilogue_block_scaled_t: D's 1 x 128 blocks are 128
  // rows of a tile column, reduced over both consumer warpgroups, or over a pair of 64-row tiles), by name: whole K, K over a
  // cluster, stream-K; M = 1, 7, 13, 40, 64 (the activations' box short of the tile: stale
  // columns must reach no scale and no amax); N a multiple of 128 and not (1000: the last block
  // of each D row partial, its tile's rows past N unstored); a column bias (a row bias of the
  // swapped view) with GELU and the amax of D on some, UE8M0 scales on others.
  {
    struct Swapped {
      const char* name;
      int64_t m, n;
      bool epi;
      bool ue8m0;
    };
    for (const Swapped& t : {Swapped{"sm90_128x8x128_s12_t384_swap_p", 1, 640, true, false},
                             Swapped{"sm90_128x8x128_s12_t384_swap_p", 7, 1000, false, true},
                             Swapped{"sm90_128x8x128_s12_t384_ck2_swap_p", 1, 1000, true, false},
                             Swapped{"sm90_128x8x128_s12_t384_ck4_swap_p", 7, 640, false, false},
                             Swapped{"sm90_128x8x128_s12_t384_swap_p_streamk", 1, 1000, true, true},
                             Swapped{"sm90_128x16x128_s12_t384_swap_p", 13, 1000, true, false},
                             Swapped{"sm90_128x16x128_s11_t384_ck2_swap_p", 13, 640, false, true},
                             Swapped{"sm90_128x16x128_s12_t384_swap_p_streamk", 13, 1000, false, false},
                             Swapped{"sm90_128x64x128_s9_t384_swap_p", 64, 2112, true, false},
                             Swapped{"sm90_128x64x128_s9_t384_swap_p", 40, 1000, false, true},
                             Swapped{"sm90_128x64x128_s7_t384_ck2_swap_p", 64, 1000, true, false},
                             Swapped{"sm90_128x64x128_s7_t384_ck4_swap_p", 40, 2112, false, false},
                             Swapped{"sm90_128x64x128_s9_t384_swap_p_streamk", 64, 1000, true, true},
                             // 64-row tiles in pairs along M (kPairAmax: each CTA's column maxima
                             // to the other through distributed shared memory); N = 960 is 15
                             // tiles, so the last pair's second CTA has no rows.
                             Swapped{"sm90_64x8x128_s12_t256_c2_swap_p", 1, 960, true, false},
                             Swapped{"sm90_64x8x128_s12_t256_c2_swap_p", 7, 1000, false, true},
                             Swapped{"sm90_64x8x128_s12_t256_c2_swap_p", 1, 4096, false, false},
                             Swapped{"sm90_64x16x128_s12_t256_c2_swap_p", 13, 1000, true, true},
                             Swapped{"sm90_64x64x128_s12_t256_c2_swap_p", 40, 960, true, false},
                             Swapped{"sm90_64x64x128_s12_t256_c2_swap_p", 64, 2112, false, true},
                             // ... splitting K as well (clusters of 2 x 2 and 2 x 4, ranks M
                             // fastest: each K leader adds its partners' parked tiles, then the
                             // two leaders exchange their maxima).
                             Swapped{"sm90_64x8x128_s12_t256_c2_ck2_swap_p", 1, 960, true, false},
                             Swapped{"sm90_64x8x128_s12_t256_c2_ck2_swap_p", 7, 1000, false, true},
                             Swapped{"sm90_64x8x128_s12_t256_c2_ck2_swap_p", 1, 4096, false, false},
                             Swapped{"sm90_64x16x128_s12_t256_c2_ck4_swap_p", 13, 1000, true, true},
                             Swapped{"sm90_64x8x128_s12_t256_c2_ck4_swap_p", 1, 960, false, false},
                             Swapped{"sm90_64x16x128_s12_t256_c2_ck2_swap_p", 13, 640, true, false},
                             Swapped{"sm90_64x64x128_s12_t256_c2_ck2_swap_p", 40, 960, true, false},
                             // ... and one CTA each, pairing through the workspace (kPairGlobal).
                             Swapped{"sm90_64x8x128_s12_t256_swap_p", 1, 960, true, false},
                             Swapped{"sm90_64x8x128_s12_t256_swap_p", 7, 1000, false, true},
                             Swapped{"sm90_64x8x128_s12_t256_swap_p", 1, 28672, false, false},
                             Swapped{"sm90_64x16x128_s12_t256_swap_p", 13, 1000, true, true},
                             Swapped{"sm90_64x64x128_s12_t256_swap_p", 40, 960, true, false},
                             Swapped{"sm90_64x64x128_s12_t256_swap_p", 64, 2112, false, true}}) {
      Case c{t.m, t.n, 2048, e4, e4, e4, vec128_mn(t.m), blk128_k(), DGEMM_VECTOR_NONE, false,
             t.epi ? DGEMM_VECTOR_PER_COLUMN : DGEMM_VECTOR_NONE, t.epi ? DGEMM_ACT_GELU_TANH : DGEMM_ACT_NONE, t.name,
             "swap-out-blocks"};
      c.sd = {DGEMM_SCALE_VEC128, DGEMM_SCALE_MN_MAJOR, 0, t.ue8m0 ? DGEMM_SCALE_TYPE_UE8M0 : DGEMM_SCALE_TYPE_F32};
      c.amax = t.epi;
      out.push_back(c);
    }
  }
  // Every feasible sm90 configuration of two block-scaled problems, by name.
  const HardwareDesc hw = apply_arch_file(HardwareDesc{}, "h200");
  for (auto [m, n, k] : {std::tuple{9, 700, 2048}, std::tuple{200, 300, 3072}}) {
    GemmProblem p;
    p.m = m;
    p.n = n;
    p.k = k;
    p.a_type = p.b_type = e4;
    p.c_type = p.d_type = DType::BF16;
    p.op_b = Op::T;
    p.resolve_and_validate();
    p.a_scale.mode = ScaleMode::Vec128;
    p.a_scale.layout = ScaleLayout::MnMajor;
    p.a_scale.ld = (m + 3) / 4 * 4;
    p.b_scale.mode = ScaleMode::Blk128x128;
    p.b_scale.layout = ScaleLayout::KMajor;
    p.b_scale.ld = (k + 127) / 128;
    for (const Candidate& cand : sm90_family_model().enumerate(p, Epilogue{}, hw)) {
      if (!cand.feasible) continue;
      out.push_back({m, n, k, e4, e4, DType::BF16, vec128_mn(m), blk128_k(), DGEMM_VECTOR_NONE, false,
                     DGEMM_VECTOR_NONE, DGEMM_ACT_NONE, cand.config.name(), "config"});
    }
  }
  return out;
}

// DGEMM_TEST_PREFILL: the kernel of every case's plan, converted as dgemm_create_plan_ext converts
// it (so the cache keys are the device run's).
void prefill_cache(const char* arch_name) {
  const HardwareDesc hw = apply_arch_file(HardwareDesc{}, arch_name);
  const std::string arch = jit::arch_for_cc(hw.cc_major, hw.cc_minor);
  dgemm_test::PrefillSet all;
  for (const Case& c : cases()) {
    CaseStructs r = structs_of(c);
    try {
      GemmProblem p = api::convert_problem(&r.p);
      Epilogue e = api::convert_epilogue(&r.e, p);
      api::apply_scaling(&r.s.header, p, e);
      all.add_plan(p, e, hw, arch, c.force);
    } catch (const std::exception&) {
    }
  }
  all.compile(arch_name, arch, dgemm_test::worker_count());
}

}  // namespace

BOOST_AUTO_TEST_CASE(sm90_8bit_sweep_vs_cpu_oracle) {
  BOOST_REQUIRE(dgemm_test::context() != nullptr);
  std::mt19937 rng(8);
  int failed = 0;
  const std::vector<Case> all = cases();
  for (const Case& c : all) {
    const std::string why = run_case(c, rng);
    BOOST_CHECK_MESSAGE(why.empty(), repro(c) << ": " << why << repro_command(c));
    failed += !why.empty();
  }
  BOOST_TEST_MESSAGE(all.size() << " sm90 8-bit cases, " << failed << " failed");
}

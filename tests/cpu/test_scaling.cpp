// DGEMM_1.1 scaling on the CPU backend (the oracle), through the public C API: input scales of A
// and B in every mode, type and layout (per tensor, per row / column, 1 x 128 and 128 x 128
// blocks; f32 and UE8M0; MN- and K-major, padded leading dimensions, batch strides), FP8 and I8
// inputs with every output, the fused block-scaled FP8 output with its scales and the amax of D,
// against an independent f64 reference written here from the header's definitions (it shares only
// the element decoders / encoders of core/float_convert). D and the output scales are poisoned
// twice (every element written) and surrounded by guard bytes (nothing else touched). Bad scale
// arguments get their specific status and message and leave every output untouched.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/float_convert.hpp"
#include "core/hardware.hpp"
#include "core/problem.hpp"
#include "deepgemm/deepgemm.h"
#include "plan/arch_file.hpp"
#include "plan/autotune.hpp"
#include "plan/families.hpp"
#include "plan/planner.hpp"

using dgemm::DType;

namespace {

// The workspace a plan asks for (the CPU backend's scratch, since execute allocates nothing).
std::vector<unsigned char> workspace_of(dgemm_plan_t plan) {
  size_t bytes = 0;
  if (dgemm_plan_workspace_size(plan, &bytes) != DGEMM_STATUS_SUCCESS) bytes = 0;
  return std::vector<unsigned char>(bytes);
}

// ---- the case --------------------------------------------------------------------------------
struct SDesc {
  dgemm_scale_mode_t mode = DGEMM_SCALE_NONE;
  dgemm_scale_type_t type = DGEMM_SCALE_TYPE_F32;
  dgemm_scale_layout_t layout = DGEMM_SCALE_MN_MAJOR;
  int64_t ld_pad = 0;      // added to the packed leading dimension
  bool per_batch = false;  // a tensor per batch (else shared; D's scales are always per batch)
};

struct QCase {
  int64_t m = 1, n = 1, k = 1, batch = 1;
  DType a = DType::F8E4M3, b = DType::F8E4M3, c = DType::BF16, d = DType::BF16;
  dgemm_op_t op_a = DGEMM_OP_N, op_b = DGEMM_OP_T;
  dgemm_order_t order = DGEMM_ORDER_ROW_MAJOR;
  float alpha = 1.0f, beta = 0.0f;
  dgemm_vector_mode_t bias = DGEMM_VECTOR_NONE;
  dgemm_activation_t act = DGEMM_ACT_NONE;
  dgemm_vector_mode_t out_scale = DGEMM_VECTOR_NONE;
  bool zero_point = false;
  SDesc sa, sb, sd;
  bool amax = false;
  bool pow2_scales = false;  // f32 input scales are powers of two (keeps the arithmetic exact)
  double range = 4.0;        // float inputs uniform in (-range, range)
};

const char* mode_name(dgemm_scale_mode_t m) {
  const char* names[] = {"none", "tensor", "outer", "vec128", "blk128"};
  return names[int(m)];
}

std::string describe(const QCase& c) {
  std::ostringstream os;
  auto sd = [&](const char* name, const SDesc& s) {
    if (s.mode == DGEMM_SCALE_NONE) return;
    os << " " << name << "=" << mode_name(s.mode) << (s.type == DGEMM_SCALE_TYPE_F32 ? "/f32" : "/ue8m0")
       << (s.layout == DGEMM_SCALE_MN_MAJOR ? "/mn" : "/k") << "+" << s.ld_pad << (s.per_batch ? "/batched" : "");
  };
  os << c.m << "x" << c.n << "x" << c.k << " batch=" << c.batch << " " << dgemm::dtype_name(c.a) << "*"
     << dgemm::dtype_name(c.b) << "->" << dgemm::dtype_name(c.d) << (c.op_a ? " T" : " N") << (c.op_b ? "T" : "N")
     << (c.order ? " col" : " row") << " alpha=" << c.alpha << " beta=" << c.beta << " bias=" << int(c.bias)
     << " act=" << int(c.act) << " oscale=" << int(c.out_scale) << (c.zero_point ? " zp" : "");
  sd("A", c.sa);
  sd("B", c.sb);
  sd("D", c.sd);
  if (c.amax) os << " amax";
  if (c.pow2_scales) os << " pow2";
  return os.str();
}

uint64_t seed_of(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// ---- the reference's own view of the header ---------------------------------------------------
// A scale tensor's geometry, from the header's table: rows (outer groups) x cols (K blocks).
struct ScaleGeom {
  int64_t rows = 0, cols = 0, ld = 0, stride = 0, elements = 0;
  std::size_t esize = 4;
};

ScaleGeom geometry(const SDesc& s, int64_t outer, int64_t inner, int64_t batch, bool output) {
  ScaleGeom g;
  if (s.mode == DGEMM_SCALE_NONE) return g;
  g.rows = s.mode == DGEMM_SCALE_PER_TENSOR ? 1 : s.mode == DGEMM_SCALE_BLK128x128 ? (outer + 127) / 128 : outer;
  g.cols = (s.mode == DGEMM_SCALE_VEC128 || s.mode == DGEMM_SCALE_BLK128x128) ? (inner + 127) / 128 : 1;
  g.ld = std::max<int64_t>(1, s.layout == DGEMM_SCALE_MN_MAJOR ? g.rows : g.cols) + s.ld_pad;
  g.esize = s.type == DGEMM_SCALE_TYPE_F32 ? 4 : 1;
  if (g.rows == 0 || g.cols == 0) return g;
  const int64_t one = s.layout == DGEMM_SCALE_MN_MAJOR ? g.rows + (g.cols - 1) * g.ld : (g.rows - 1) * g.ld + g.cols;
  g.stride = (s.per_batch || output) && batch > 1 ? one + 3 : 0;
  g.elements = one + (batch - 1) * g.stride;
  return g;
}

// The scale covering outer index o and K index p (the header's table).
double scale_at(const SDesc& s, const ScaleGeom& g, const std::vector<unsigned char>& buf, int64_t batch, int64_t o,
                int64_t p) {
  if (s.mode == DGEMM_SCALE_NONE) return 1.0;
  const int64_t r = s.mode == DGEMM_SCALE_PER_TENSOR ? 0 : s.mode == DGEMM_SCALE_BLK128x128 ? o / 128 : o;
  const int64_t c = (s.mode == DGEMM_SCALE_VEC128 || s.mode == DGEMM_SCALE_BLK128x128) ? p / 128 : 0;
  const int64_t idx = batch * g.stride + (s.layout == DGEMM_SCALE_MN_MAJOR ? r + c * g.ld : r * g.ld + c);
  if (s.type == DGEMM_SCALE_TYPE_F32) {
    float v;
    std::memcpy(&v, buf.data() + idx * 4, 4);
    return v;
  }
  const uint8_t e = buf[std::size_t(idx)];
  return e == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, int(e) - 127);
}

// The output block scale for a block of largest magnitude amax (header: "Block-scaled output").
double ref_block_scale(double amax, DType d, bool ue8m0) {
  const double fp8_max = d == DType::F8E4M3 ? 448.0 : 57344.0;
  if (std::isnan(amax) || amax >= std::ldexp(1.0, 128)) return std::numeric_limits<double>::quiet_NaN();
  if (!ue8m0) return std::max(double(float(amax / fp8_max)), std::ldexp(1.0, -126));
  int e = -126;
  while (std::ldexp(fp8_max, e) < amax) ++e;
  return std::ldexp(1.0, e);
}

double act(dgemm_activation_t a, double x) {
  switch (a) {
    case DGEMM_ACT_NONE: return x;
    case DGEMM_ACT_RELU: return std::isnan(x) ? x : std::fmax(x, 0.0);
    case DGEMM_ACT_GELU_TANH:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    case DGEMM_ACT_GELU_ERF: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case DGEMM_ACT_SILU: return x / (1.0 + std::exp(-x));
  }
  return x;
}

// a op b, clearing *exact when the double result is rounded.
double add_x(double a, double b, bool* exact) {
  const double s = a + b, bb = s - a;
  if ((a - (s - bb)) + (b - bb) != 0 || !std::isfinite(s)) *exact = false;
  return s;
}
double mul_x(double a, double b, bool* exact) {
  const double p = a * b;
  if (!std::isfinite(p) || std::fma(a, b, -p) != 0) *exact = false;
  return p;
}

struct Buffers {
  std::vector<unsigned char> a, b, c, bias, sa, sb;
  std::vector<float> oscale;
  std::vector<int32_t> zp;
  ScaleGeom ga, gb, gd;
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0, stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;
};

int64_t offset(const QCase& c, int64_t row, int64_t col, int64_t ld) {
  return c.order == DGEMM_ORDER_ROW_MAJOR ? row * ld + col : col * ld + row;
}

struct RefValue {
  double z, tol;  // before the final conversion, and how far a correct double evaluation may be
  double y, ytol; // after the activation, before the output scale (what amax takes)
};

RefValue reference(const QCase& c, const Buffers& x, int64_t bt, int64_t i, int64_t j) {
  bool exact = true;
  double acc = 0, mag = 0;
  for (int64_t k0 = 0; k0 < c.k; k0 += 128) {
    double part = 0, pmag = 0;
    for (int64_t p = k0; p < std::min(c.k, k0 + 128); ++p) {
      const int64_t ao = bt * x.stride_a + (c.op_a == DGEMM_OP_N ? offset(c, i, p, x.lda) : offset(c, p, i, x.lda));
      const int64_t bo = bt * x.stride_b + (c.op_b == DGEMM_OP_N ? offset(c, p, j, x.ldb) : offset(c, j, p, x.ldb));
      const double t = mul_x(dgemm::load_as_double(c.a, x.a.data(), ao), dgemm::load_as_double(c.b, x.b.data(), bo), &exact);
      part = add_x(part, t, &exact);
      pmag += std::fabs(t);
    }
    const double s = mul_x(scale_at(c.sa, x.ga, x.sa, bt, i, k0), scale_at(c.sb, x.gb, x.sb, bt, j, k0), &exact);
    acc = add_x(acc, mul_x(s, part, &exact), &exact);
    mag += std::fabs(s) * pmag;
  }
  double v = c.k > 0 ? mul_x(c.alpha, acc, &exact) : 0.0;
  mag *= std::fabs(c.alpha);
  if (c.beta != 0.0f) {
    const double cv = mul_x(c.beta, dgemm::load_as_double(c.c, x.c.data(), bt * x.stride_c + offset(c, i, j, x.ldc)), &exact);
    v = add_x(v, cv, &exact);
    mag += std::fabs(cv);
  }
  if (c.bias != DGEMM_VECTOR_NONE) {
    const double bv = dgemm::load_as_double(DType::F32, x.bias.data(), c.bias == DGEMM_VECTOR_PER_ROW ? i : j);
    v = add_x(v, bv, &exact);
    mag += std::fabs(bv);
  }
  // Exact arithmetic (integer sums, power-of-two scales of small sums) must give this very value;
  // otherwise each of the k + 4 terms may carry a few roundings in either evaluation.
  double tol = exact ? 0.0 : 8.0 * double(c.k + 8) * std::ldexp(mag, -53);
  const double y = act(c.act, v);
  if (c.act != DGEMM_ACT_NONE && c.act != DGEMM_ACT_RELU) tol = tol * 1.2 + 1e-15 * (std::fabs(v) + std::fabs(y));
  RefValue r{y, tol, y, tol};
  if (c.out_scale != DGEMM_VECTOR_NONE) {
    const double s = x.oscale[std::size_t(c.out_scale == DGEMM_VECTOR_PER_TENSOR ? 0 : c.out_scale == DGEMM_VECTOR_PER_ROW ? i : j)];
    bool e2 = true;
    r.z = mul_x(y, s, &e2);
    r.tol = tol * std::fabs(s) + (e2 ? 0.0 : std::ldexp(std::fabs(r.z), -52));
  }
  return r;
}

double quantize(const QCase& c, const Buffers& x, int64_t i, int64_t j, double z) {
  if (c.zero_point) {
    const int64_t s = c.out_scale == DGEMM_VECTOR_PER_TENSOR ? 0 : c.out_scale == DGEMM_VECTOR_PER_ROW ? i : j;
    if (std::isnan(z)) return 0.0;
    const double r = std::nearbyint(z) + double(x.zp[std::size_t(s)]);
    return std::min(127.0, std::max(-128.0, r));
  }
  return dgemm::round_to_dtype(c.d, z, true);
}

bool within(double got, double lo, double hi) {
  if (std::isnan(got) || std::isnan(lo) || std::isnan(hi)) return std::isnan(got) && std::isnan(lo) && std::isnan(hi);
  return got >= std::min(lo, hi) && got <= std::max(lo, hi);
}

// Random non-zero values of type t.
void fill(DType t, std::vector<unsigned char>& buf, int64_t count, std::mt19937_64& rng, double range) {
  buf.assign(std::size_t(std::max<int64_t>(count, 1)) * dgemm::dtype_size(t), 0);
  std::uniform_real_distribution<double> real(-range, range);
  std::uniform_int_distribution<int> i8(-127, 127);
  for (int64_t i = 0; i < count; ++i) {
    do {
      dgemm::store_from_double(t, buf.data(), i, t == DType::I8 ? double(i8(rng)) : real(rng), true);
    } while (dgemm::load_as_double(t, buf.data(), i) == 0.0);
  }
}

void fill_scales(const SDesc& s, const ScaleGeom& g, std::vector<unsigned char>& buf, std::mt19937_64& rng, bool pow2) {
  buf.assign(std::size_t(std::max<int64_t>(g.elements, 1)) * g.esize, 0);
  std::uniform_int_distribution<int> exp(-3, 3);
  std::uniform_real_distribution<double> real(0.3, 3.0);
  for (int64_t i = 0; i < g.elements; ++i) {
    if (s.type == DGEMM_SCALE_TYPE_UE8M0) {
      buf[std::size_t(i)] = uint8_t(127 + exp(rng));
    } else {
      const float v = float(pow2 ? std::ldexp(1.0, exp(rng)) : real(rng));
      std::memcpy(buf.data() + i * 4, &v, 4);
    }
  }
}

int64_t extent(const QCase& c, int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
  if (rows == 0 || cols == 0) return 0;
  const int64_t one = c.order == DGEMM_ORDER_ROW_MAJOR ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
  return one + (c.batch - 1) * stride;
}

dgemm_scale_desc_t to_desc(const SDesc& s, const ScaleGeom& g) {
  dgemm_scale_desc_t d{};
  d.mode = s.mode;
  d.type = s.type;
  d.layout = s.layout;
  d.ld = s.mode == DGEMM_SCALE_NONE ? 0 : g.ld;
  d.stride = g.stride;
  return d;
}

struct Api {
  dgemm_context_t ctx = nullptr;
  Api() { BOOST_REQUIRE(dgemm_context_create(DGEMM_DEVICE_CPU, 0, &ctx) == DGEMM_STATUS_SUCCESS); }
  ~Api() { dgemm_context_destroy(ctx); }
};

// Builds the public structs of a case (and its buffers' geometry).
struct Structs {
  dgemm_problem_t p;
  dgemm_epilogue_t e;
  dgemm_scaling_t s;
};

Structs make_structs(const QCase& c, Buffers& x) {
  Structs st;
  dgemm_problem_init(&st.p);
  st.p.m = c.m;
  st.p.n = c.n;
  st.p.k = c.k;
  st.p.a_type = dgemm_dtype_t(c.a);
  st.p.b_type = dgemm_dtype_t(c.b);
  st.p.c_type = dgemm_dtype_t(c.c);
  st.p.d_type = dgemm_dtype_t(c.d);
  st.p.compute_type = c.a == DType::I8 ? DGEMM_DTYPE_I32 : DGEMM_DTYPE_F32;
  st.p.op_a = c.op_a;
  st.p.op_b = c.op_b;
  st.p.order = c.order;
  const bool row = c.order == DGEMM_ORDER_ROW_MAJOR;
  const int64_t a_rows = c.op_a == DGEMM_OP_N ? c.m : c.k, a_cols = c.op_a == DGEMM_OP_N ? c.k : c.m;
  const int64_t b_rows = c.op_b == DGEMM_OP_N ? c.k : c.n, b_cols = c.op_b == DGEMM_OP_N ? c.n : c.k;
  x.lda = std::max<int64_t>(1, row ? a_cols : a_rows) + 1;
  x.ldb = std::max<int64_t>(1, row ? b_cols : b_rows) + 2;
  x.ldc = std::max<int64_t>(1, row ? c.n : c.m) + 1;
  x.ldd = std::max<int64_t>(1, row ? c.n : c.m) + 3;
  st.p.lda = x.lda;
  st.p.ldb = x.ldb;
  st.p.ldc = x.ldc;
  st.p.ldd = x.ldd;
  st.p.batch_count = c.batch;
  if (c.batch > 1) {
    x.stride_a = extent(c, a_rows, a_cols, x.lda, 0) + 5;
    x.stride_b = 0;  // B shared by the batch (a broadcast weight)
    x.stride_c = extent(c, c.m, c.n, x.ldc, 0) + 2;
    x.stride_d = extent(c, c.m, c.n, x.ldd, 0) + 7;
  }
  st.p.stride_a = x.stride_a;
  st.p.stride_b = x.stride_b;
  st.p.stride_c = x.stride_c;
  st.p.stride_d = x.stride_d;

  dgemm_epilogue_init(&st.e);
  st.e.alpha = c.alpha;
  st.e.beta = c.beta;
  st.e.bias_mode = c.bias;
  st.e.bias_type = DGEMM_DTYPE_F32;
  st.e.activation = c.act;
  st.e.scale_mode = c.out_scale;
  st.e.flags = DGEMM_EPILOGUE_SATURATE | (c.zero_point ? DGEMM_EPILOGUE_ZERO_POINT : 0u);

  x.ga = geometry(c.sa, c.m, c.k, c.batch, false);
  x.gb = geometry(c.sb, c.n, c.k, c.batch, false);
  x.gd = geometry(c.sd, c.m, c.n, c.batch, true);
  dgemm_scaling_init(&st.s);
  st.s.a_scale = to_desc(c.sa, x.ga);
  st.s.b_scale = to_desc(c.sb, x.gb);
  st.s.d_scale = to_desc(c.sd, x.gd);
  st.s.flags = c.amax ? DGEMM_SCALING_AMAX_D : 0u;
  return st;
}

// Runs one case through the C API on the CPU backend and checks everything; returns failures.
int run_case(const Api& api, const QCase& c) {
  const std::string what = describe(c);
  const uint64_t seed = seed_of(what);
  std::mt19937_64 rng(seed);
  const std::string repro = "repro: " + what + " seed=" + std::to_string(seed);
  int failures = 0;
  auto fail = [&](const std::string& msg) {
    if (failures++ < 3) BOOST_ERROR(msg << ". " << repro);
  };

  Buffers x;
  Structs st = make_structs(c, x);
  dgemm_plan_t plan = nullptr;
  const dgemm_status_t made = dgemm_create_plan_ext(api.ctx, &st.p, &st.e, nullptr, &st.s, &plan);
  if (made != DGEMM_STATUS_SUCCESS) {
    fail(std::string("plan failed: ") + dgemm_last_error());
    return failures;
  }
  // The plan resolves the scale tensors exactly as the reference reads them.
  const ScaleGeom* geoms[] = {&x.ga, &x.gb, &x.gd};
  for (int w = 0; w < 3; ++w) {
    int64_t rows = -1, cols = -1, ld = -1, elements = -1;
    BOOST_REQUIRE(dgemm_plan_scale_shape(plan, dgemm_scale_tensor_t(w), &rows, &cols, &ld, &elements) ==
                  DGEMM_STATUS_SUCCESS);
    const ScaleGeom& g = *geoms[w];
    if (rows != g.rows || cols != g.cols || ld != (g.rows ? g.ld : 0) || elements != g.elements) {
      std::ostringstream os;
      os << "scale tensor " << w << ": plan says " << rows << " x " << cols << " ld " << ld << " elements "
         << elements << ", the reference " << g.rows << " x " << g.cols << " ld " << g.ld << " elements " << g.elements;
      fail(os.str());
    }
  }

  const int64_t a_rows = c.op_a == DGEMM_OP_N ? c.m : c.k, a_cols = c.op_a == DGEMM_OP_N ? c.k : c.m;
  const int64_t b_rows = c.op_b == DGEMM_OP_N ? c.k : c.n, b_cols = c.op_b == DGEMM_OP_N ? c.n : c.k;
  fill(c.a, x.a, extent(c, a_rows, a_cols, x.lda, x.stride_a), rng, c.range);
  fill(c.b, x.b, extent(c, b_rows, b_cols, x.ldb, x.stride_b), rng, c.range);
  fill(c.c, x.c, c.beta != 0.0f ? extent(c, c.m, c.n, x.ldc, x.stride_c) : 0, rng, 2.0);
  fill(DType::F32, x.bias, c.bias == DGEMM_VECTOR_PER_ROW ? c.m : c.n, rng, 2.0);
  fill_scales(c.sa, x.ga, x.sa, rng, c.pow2_scales);
  fill_scales(c.sb, x.gb, x.sb, rng, c.pow2_scales);
  const int64_t olen = c.out_scale == DGEMM_VECTOR_PER_ROW ? c.m : c.out_scale == DGEMM_VECTOR_PER_COLUMN ? c.n : 1;
  std::uniform_real_distribution<double> omag(0.5, 2.0);
  std::uniform_int_distribution<int> zpd(-20, 20);
  for (int64_t i = 0; i < olen; ++i) {
    x.oscale.push_back(float(omag(rng)));
    x.zp.push_back(zpd(rng));
  }

  // D and its block scales with guard bands, poisoned twice.
  const std::size_t dsz = dgemm::dtype_size(c.d), kGuard = 64;
  const int64_t nd = extent(c, c.m, c.n, x.ldd, x.stride_d);
  std::vector<unsigned char> dbuf(std::size_t(nd) * dsz + 2 * kGuard), sdbuf(std::size_t(x.gd.elements) * x.gd.esize + 2 * kGuard);
  std::vector<char> d_inside(dbuf.size(), 0), s_inside(sdbuf.size(), 0);
  for (int64_t bt = 0; bt < c.batch; ++bt)
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j)
        std::memset(&d_inside[kGuard + std::size_t(bt * x.stride_d + offset(c, i, j, x.ldd)) * dsz], 1, dsz);
      for (int64_t jb = 0; jb < x.gd.cols; ++jb) {
        const int64_t idx = bt * x.gd.stride + (c.sd.layout == DGEMM_SCALE_MN_MAJOR ? i + jb * x.gd.ld : i * x.gd.ld + jb);
        std::memset(&s_inside[kGuard + std::size_t(idx) * x.gd.esize], 1, x.gd.esize);
      }
    }
  float amax_out = 0;
  dgemm_args_t args;
  dgemm_args_init(&args);
  args.bias = c.bias != DGEMM_VECTOR_NONE ? x.bias.data() : nullptr;
  args.scale = c.out_scale != DGEMM_VECTOR_NONE ? x.oscale.data() : nullptr;
  args.zero_point = c.zero_point ? x.zp.data() : nullptr;
  dgemm_scale_args_t sargs;
  dgemm_scale_args_init(&sargs);
  sargs.a_scale = c.sa.mode ? x.sa.data() : nullptr;
  sargs.b_scale = c.sb.mode ? x.sb.data() : nullptr;
  sargs.d_scale = c.sd.mode ? sdbuf.data() + kGuard : nullptr;
  sargs.amax_d = c.amax ? &amax_out : nullptr;
  const bool scaled = c.sa.mode || c.sb.mode || c.sd.mode || c.amax;  // else the plan refuses scale args
  auto run = [&](unsigned char poison, std::vector<unsigned char>& d_after, std::vector<unsigned char>& s_after) {
    std::memset(dbuf.data(), poison, dbuf.size());
    std::memset(sdbuf.data(), poison, sdbuf.size());
    amax_out = -1.0f;
    std::vector<unsigned char> ws = workspace_of(plan);
    const dgemm_status_t st2 = dgemm_execute_ext(plan, c.k ? x.a.data() : nullptr, c.k ? x.b.data() : nullptr,
                                                 c.beta != 0.0f ? x.c.data() : nullptr, dbuf.data() + kGuard, &args,
                                                 scaled ? &sargs : nullptr, ws.data(), ws.size(), nullptr);
    if (st2 != DGEMM_STATUS_SUCCESS) fail(std::string("execute failed: ") + dgemm_last_error());
    d_after = dbuf;
    s_after = sdbuf;
  };
  std::vector<unsigned char> d1, s1, d2, s2;
  run(0xFF, d1, s1);
  run(0x5A, d2, s2);
  dgemm_destroy_plan(plan);
  for (std::size_t i = 0; i < dbuf.size(); ++i) {
    if (d_inside[i] ? d1[i] != d2[i] : (d1[i] != 0xFF || d2[i] != 0x5A)) {
      fail("D byte " + std::to_string(std::ptrdiff_t(i) - std::ptrdiff_t(kGuard)) +
           (d_inside[i] ? " not written" : " outside D written"));
      return failures;
    }
  }
  for (std::size_t i = 0; i < sdbuf.size(); ++i) {
    if (s_inside[i] ? s1[i] != s2[i] : (s1[i] != 0xFF || s2[i] != 0x5A)) {
      fail("d_scale byte " + std::to_string(std::ptrdiff_t(i) - std::ptrdiff_t(kGuard)) +
           (s_inside[i] ? " not written" : " outside the scale tensor written"));
      return failures;
    }
  }

  const unsigned char* d = d2.data() + kGuard;
  const std::vector<unsigned char> sd(s2.begin() + kGuard, s2.end());
  double amax_ref = 0, amax_tol = 0;
  bool amax_nan = false;
  std::vector<RefValue> row(std::size_t(c.n));
  for (int64_t bt = 0; bt < c.batch; ++bt)
    for (int64_t i = 0; i < c.m; ++i) {
      // The reference costs k operations per element: large cases check the edge rows and every
      // third row (whole rows, so each D block and its scale are checked; that every element was
      // written is checked above for all of them).
      if (!c.amax && c.m * c.n * c.k > 500000 && i >= 8 && i < c.m - 8 && i % 3 != 0) continue;
      for (int64_t j = 0; j < c.n; ++j) {
        row[std::size_t(j)] = reference(c, x, bt, i, j);
        const RefValue& r = row[std::size_t(j)];
        amax_nan = amax_nan || std::isnan(r.y);
        amax_ref = std::max(amax_ref, std::fabs(r.y));
        amax_tol = std::max(amax_tol, r.ytol);
      }
      for (int64_t j0 = 0; j0 < c.n; j0 += 128) {
        const int64_t j1 = std::min(c.n, j0 + 128);
        double s = 1.0;
        if (c.sd.mode != DGEMM_SCALE_NONE) {
          double amax = 0, tol = 0;
          for (int64_t j = j0; j < j1; ++j) {
            amax = std::max(amax, std::fabs(row[std::size_t(j)].z));
            tol = std::max(tol, row[std::size_t(j)].tol);
          }
          s = scale_at(c.sd, x.gd, sd, bt, i, j0);
          const bool ue = c.sd.type == DGEMM_SCALE_TYPE_UE8M0;
          const double lo = ref_block_scale(std::max(0.0, amax - tol), c.d, ue), hi = ref_block_scale(amax + tol, c.d, ue);
          if (!within(s, lo, hi)) {
            std::ostringstream os;
            os << "d_scale(batch " << bt << ", row " << i << ", block " << j0 / 128 << ") = " << s << ", want "
               << ref_block_scale(amax, c.d, ue) << " (amax " << amax << " +- " << tol << ")";
            fail(os.str());
          }
        }
        for (int64_t j = j0; j < j1; ++j) {
          const RefValue& r = row[std::size_t(j)];
          const double got = dgemm::load_as_double(c.d, d, bt * x.stride_d + offset(c, i, j, x.ldd));
          const double lo = quantize(c, x, i, j, (r.z - r.tol) / s), hi = quantize(c, x, i, j, (r.z + r.tol) / s);
          if (!within(got, lo, hi)) {
            std::ostringstream os;
            os << "D[batch " << bt << "](" << i << ", " << j << ") = " << got << ", want " << quantize(c, x, i, j, r.z / s)
               << " (z = " << r.z << " +- " << r.tol << ", block scale " << s << ")";
            fail(os.str());
          }
        }
      }
    }
  if (c.amax && c.m > 0 && c.n > 0) {
    const double lo = amax_nan ? NAN : double(float(std::max(0.0, amax_ref - amax_tol)));
    const double hi = amax_nan ? NAN : double(float(amax_ref + amax_tol));
    if (!within(amax_out, lo, hi)) {
      std::ostringstream os;
      os << "amax_d = " << amax_out << ", want " << amax_ref << " +- " << amax_tol;
      fail(os.str());
    }
  }
  if (failures > 3) BOOST_ERROR(failures << " checks failed in total. " << repro);
  return failures;
}

// Shapes around the 128 blocks: K not a multiple of 128, M / N not multiples of 128, and the CPU
// oracle's own tile edges (72 rows, 256 columns, 256-deep K blocks).
struct Shape {
  int64_t m, n, k;
};
const Shape kShapes[] = {{1, 1, 1}, {7, 17, 100}, {129, 130, 129}, {73, 257, 300}, {3, 300, 385}};

}  // namespace

BOOST_AUTO_TEST_SUITE(scaling)

// DeepGEMM's layout: A 1 x 128 (per token), B 128 x 128, f32 and UE8M0, every storage of the
// scales, both orders and all transposes, e4m3 / e5m2 / mixed, bf16 and f32 outputs.
BOOST_AUTO_TEST_CASE(fp8_block_scaled_inputs) {
  Api api;
  int cases = 0, failures = 0;
  for (const Shape& sh : kShapes)
    for (int v = 0; v < 8; ++v) {
      QCase c;
      c.m = sh.m;
      c.n = sh.n;
      c.k = sh.k;
      c.a = v % 3 == 2 ? DType::F8E5M2 : DType::F8E4M3;
      c.b = v % 4 == 1 ? DType::F8E5M2 : DType::F8E4M3;
      c.d = v % 2 ? DType::F32 : DType::BF16;
      c.order = v / 4 ? DGEMM_ORDER_COL_MAJOR : DGEMM_ORDER_ROW_MAJOR;
      c.op_a = v % 2 ? DGEMM_OP_T : DGEMM_OP_N;
      c.op_b = (v / 2) % 2 ? DGEMM_OP_N : DGEMM_OP_T;
      c.sa = {DGEMM_SCALE_VEC128, v % 2 ? DGEMM_SCALE_TYPE_UE8M0 : DGEMM_SCALE_TYPE_F32,
              v % 3 ? DGEMM_SCALE_MN_MAJOR : DGEMM_SCALE_K_MAJOR, v % 3 == 1 ? 3 : 0};
      c.sb = {v % 4 == 3 ? DGEMM_SCALE_VEC128 : DGEMM_SCALE_BLK128x128, v % 2 ? DGEMM_SCALE_TYPE_UE8M0 : DGEMM_SCALE_TYPE_F32,
              v % 2 ? DGEMM_SCALE_MN_MAJOR : DGEMM_SCALE_K_MAJOR, v % 5 == 2 ? 2 : 0};
      c.pow2_scales = v == 4;  // exact arithmetic: the comparison is then exact (tol 0)
      failures += run_case(api, c);
      ++cases;
    }
  BOOST_TEST(cases == 40);
  BOOST_TEST(failures == 0);
}

// Every input mode on each operand (including A 128 x 128 and B per tensor), every output type.
BOOST_AUTO_TEST_CASE(every_mode_on_each_operand_and_every_output) {
  Api api;
  const dgemm_scale_mode_t modes[] = {DGEMM_SCALE_NONE, DGEMM_SCALE_PER_TENSOR, DGEMM_SCALE_OUTER_VEC,
                                      DGEMM_SCALE_VEC128, DGEMM_SCALE_BLK128x128};
  const DType outs[] = {DType::F32, DType::BF16, DType::F16, DType::F8E4M3, DType::F8E5M2};
  int cases = 0, failures = 0;
  for (dgemm_scale_mode_t ma : modes)
    for (dgemm_scale_mode_t mb : modes) {
      QCase c;
      c.m = 130;
      c.n = 40;
      c.k = 260;
      c.d = outs[cases % 5];
      c.alpha = 0.03f;  // keeps FP8 outputs in range (sums of 260 products of up to 16 x scales)
      c.sa = {ma, cases % 2 ? DGEMM_SCALE_TYPE_UE8M0 : DGEMM_SCALE_TYPE_F32, DGEMM_SCALE_MN_MAJOR, cases % 3};
      c.sb = {mb, cases % 3 ? DGEMM_SCALE_TYPE_F32 : DGEMM_SCALE_TYPE_UE8M0, DGEMM_SCALE_K_MAJOR, cases % 2};
      c.out_scale = dgemm::dtype_is_fp8(c.d) ? DGEMM_VECTOR_PER_COLUMN : DGEMM_VECTOR_NONE;
      failures += run_case(api, c);
      ++cases;
    }
  BOOST_TEST(failures == 0);
}

// Batches with per-batch and shared scale tensors, the whole epilogue (beta * C, bias, GELU,
// output scale) after the scaled product, and k = 0 (no scale of A or B is read).
BOOST_AUTO_TEST_CASE(batches_full_epilogue_and_k_zero) {
  Api api;
  int failures = 0;
  for (int v = 0; v < 4; ++v) {
    QCase c;
    c.m = 37;
    c.n = 150;
    c.k = v == 3 ? 0 : 200;
    c.batch = 3;
    c.beta = 0.5f;
    c.bias = v % 2 ? DGEMM_VECTOR_PER_ROW : DGEMM_VECTOR_PER_COLUMN;
    c.act = v == 1 ? DGEMM_ACT_GELU_ERF : DGEMM_ACT_SILU;
    c.alpha = 0.05f;
    c.sa = {DGEMM_SCALE_VEC128, DGEMM_SCALE_TYPE_F32, DGEMM_SCALE_MN_MAJOR, 1, v != 2};
    c.sb = {v == 2 ? DGEMM_SCALE_PER_TENSOR : DGEMM_SCALE_BLK128x128, DGEMM_SCALE_TYPE_UE8M0, DGEMM_SCALE_K_MAJOR, 0, v != 0};
    failures += run_case(api, c);
  }
  BOOST_TEST(failures == 0);
}

// INT8: i32 output exact (no scales), requantized i8 (output scale per row + zero point), and
// W8A8 dequantization: per-token x per-channel scales plus bias into f32 / bf16 / f16.
BOOST_AUTO_TEST_CASE(int8_exact_requantized_and_dequantized) {
  Api api;
  int failures = 0;
  for (const Shape& sh : kShapes) {
    QCase c;
    c.m = sh.m;
    c.n = sh.n;
    c.k = sh.k;
    c.a = c.b = DType::I8;
    c.c = c.d = DType::I32;
    failures += run_case(api, c);  // exact: the comparison has tol 0

    QCase r = c;
    r.d = r.c = DType::I8;
    r.alpha = float(40.0 / (std::sqrt(double(sh.k)) * 5461.0));
    r.out_scale = DGEMM_VECTOR_PER_ROW;
    r.zero_point = true;
    failures += run_case(api, r);

    for (DType out : {DType::F32, DType::BF16, DType::F16}) {
      QCase q = c;
      q.d = q.c = out;
      q.sa = {DGEMM_SCALE_OUTER_VEC, DGEMM_SCALE_TYPE_F32, DGEMM_SCALE_MN_MAJOR, 0};
      q.sb = {DGEMM_SCALE_OUTER_VEC, DGEMM_SCALE_TYPE_F32, DGEMM_SCALE_K_MAJOR, 0};
      q.bias = DGEMM_VECTOR_PER_COLUMN;
      q.alpha = 1e-3f;
      failures += run_case(api, q);
    }
  }
  BOOST_TEST(failures == 0);
}

// The fused quantized output: D in e4m3 / e5m2 with its 1 x 128 scales (f32 and UE8M0, both
// layouts, padded), N not a multiple of 128, batches, amax of D, from bf16 and from block-scaled
// FP8 inputs, with an activation and an output scale before the quantization.
BOOST_AUTO_TEST_CASE(fused_block_scaled_fp8_output_and_amax) {
  Api api;
  int cases = 0, failures = 0;
  for (const Shape& sh : kShapes)
    for (int v = 0; v < 4; ++v) {
      QCase c;
      c.m = sh.m;
      c.n = sh.n;
      c.k = sh.k;
      c.batch = v == 3 ? 2 : 1;
      c.a = c.b = v % 2 ? DType::BF16 : DType::F8E4M3;
      c.d = v == 2 ? DType::F8E5M2 : DType::F8E4M3;
      c.c = DType::BF16;
      c.act = v == 1 ? DGEMM_ACT_RELU : DGEMM_ACT_NONE;
      c.out_scale = v == 3 ? DGEMM_VECTOR_PER_ROW : DGEMM_VECTOR_NONE;
      c.sd = {DGEMM_SCALE_VEC128, v % 2 ? DGEMM_SCALE_TYPE_UE8M0 : DGEMM_SCALE_TYPE_F32,
              v < 2 ? DGEMM_SCALE_MN_MAJOR : DGEMM_SCALE_K_MAJOR, v == 0 ? 3 : 0};
      if (c.a == DType::F8E4M3) {
        c.sa = {DGEMM_SCALE_VEC128, DGEMM_SCALE_TYPE_F32, DGEMM_SCALE_K_MAJOR, 0};
        c.sb = {DGEMM_SCALE_BLK128x128, DGEMM_SCALE_TYPE_F32, DGEMM_SCALE_K_MAJOR, 0};
      }
      c.amax = v != 1;
      failures += run_case(api, c);
      ++cases;
    }
  BOOST_TEST(cases == 20);
  BOOST_TEST(failures == 0);
}

// amax of D with outputs that are not block-scaled, taken before the output scale.
BOOST_AUTO_TEST_CASE(amax_of_d_before_the_output_scale) {
  Api api;
  int failures = 0;
  for (DType out : {DType::BF16, DType::F8E4M3, DType::F32}) {
    QCase c;
    c.m = 75;
    c.n = 260;
    c.k = 64;
    c.batch = 2;
    c.d = out;
    c.alpha = 0.1f;
    c.out_scale = DGEMM_VECTOR_PER_TENSOR;
    c.sa = {DGEMM_SCALE_PER_TENSOR, DGEMM_SCALE_TYPE_F32, DGEMM_SCALE_MN_MAJOR, 0};
    c.sb = {DGEMM_SCALE_PER_TENSOR, DGEMM_SCALE_TYPE_F32, DGEMM_SCALE_MN_MAJOR, 0};
    c.amax = true;
    failures += run_case(api, c);
  }
  BOOST_TEST(failures == 0);
}

// Special values of the block-scale rule, one row of D at a time: a zero block gets the floor
// 2^-126 (UE8M0 byte 1) and zeros; an infinite or NaN value makes its block's scale NaN (UE8M0
// 0xFF) and the block NaN; a UE8M0 input scale of 0xFF makes its products NaN; the UE8M0 scale is
// the f32 one rounded up to a power of two, so a block whose amax is 448 * 2^e exactly gets 2^e.
BOOST_AUTO_TEST_CASE(block_scale_special_values) {
  Api api;
  // D's one row is the bias (the product is 0 x 0): its values are set directly.
  const int64_t n = 130;
  for (dgemm_scale_type_t type : {DGEMM_SCALE_TYPE_F32, DGEMM_SCALE_TYPE_UE8M0}) {
    dgemm_problem_t p;
    dgemm_problem_init(&p);
    p.m = 1;
    p.n = n;
    p.k = 1;
    p.a_type = p.b_type = p.c_type = DGEMM_DTYPE_F32;
    p.d_type = DGEMM_DTYPE_F8_E4M3;
    dgemm_epilogue_t e;
    dgemm_epilogue_init(&e);
    e.bias_mode = DGEMM_VECTOR_PER_COLUMN;
    dgemm_scaling_t s;
    dgemm_scaling_init(&s);
    s.d_scale.mode = DGEMM_SCALE_VEC128;
    s.d_scale.type = type;
    s.flags = DGEMM_SCALING_AMAX_D;
    dgemm_plan_t plan;
    BOOST_REQUIRE(dgemm_create_plan_ext(api.ctx, &p, &e, nullptr, &s, &plan) == DGEMM_STATUS_SUCCESS);
    const float a = 0.0f;
    const std::vector<float> b(std::size_t(n), 0.0f);
    auto run = [&](const std::vector<float>& bias, std::vector<uint8_t>& d, float scales[2], float* amax) {
      std::vector<unsigned char> sbuf(8, 0xAA);
      d.assign(std::size_t(n), 0xAA);
      dgemm_args_t args;
      dgemm_args_init(&args);
      args.bias = bias.data();
      dgemm_scale_args_t sa;
      dgemm_scale_args_init(&sa);
      sa.d_scale = sbuf.data();
      sa.amax_d = amax;
      std::vector<unsigned char> ws = workspace_of(plan);
      BOOST_REQUIRE(dgemm_execute_ext(plan, &a, b.data(), nullptr, d.data(), &args, &sa, ws.data(), ws.size(),
                                      nullptr) == DGEMM_STATUS_SUCCESS);
      for (int i = 0; i < 2; ++i) {
        float f;
        std::memcpy(&f, sbuf.data() + 4 * i, 4);
        scales[i] = type == DGEMM_SCALE_TYPE_F32 ? f
                                                 : (sbuf[std::size_t(i)] == 0xFF ? NAN : std::ldexp(1.0f, sbuf[std::size_t(i)] - 127));
      }
      if (type == DGEMM_SCALE_TYPE_UE8M0) BOOST_TEST(sbuf[2] == 0xAA);  // two bytes, no more
    };
    std::vector<uint8_t> d;
    float sc[2], amax = -1;
    // Block 0 all zero, block 1 (two columns) with amax exactly 448 * 4.
    std::vector<float> row(std::size_t(n), 0.0f);
    row[128] = 448.0f * 4;
    row[129] = -3.0f;
    run(row, d, sc, &amax);
    BOOST_TEST(sc[0] == std::ldexp(1.0f, -126));
    for (int64_t j = 0; j < 128; ++j) BOOST_TEST(d[std::size_t(j)] == 0);
    BOOST_TEST(sc[1] == 4.0f);  // f32: 1792 / 448 = 4 exactly; UE8M0: 2^2, not rounded up further
    BOOST_TEST(dgemm::e4m3_to_double(d[128]) == 448.0);
    BOOST_TEST(dgemm::e4m3_to_double(d[129]) == -0.75);
    BOOST_TEST(amax == 1792.0f);
    // A value just above: UE8M0 rounds the scale up to 8, f32 keeps 1793 / 448.
    row[128] = 1793.0f;
    run(row, d, sc, &amax);
    if (type == DGEMM_SCALE_TYPE_UE8M0) {
      BOOST_TEST(sc[1] == 8.0f);
      BOOST_TEST(dgemm::e4m3_to_double(d[128]) == dgemm::round_to_dtype(DType::F8E4M3, 1793.0 / 8, true));
    } else {
      BOOST_TEST(sc[1] == float(1793.0 / 448.0));
      BOOST_TEST(dgemm::e4m3_to_double(d[128]) == dgemm::round_to_dtype(DType::F8E4M3, 1793.0 / double(sc[1]), true));
    }
    // An infinity in block 0, a NaN in block 1: both scales NaN, both blocks NaN; amax NaN.
    row[5] = INFINITY;
    row[129] = NAN;
    run(row, d, sc, &amax);
    BOOST_TEST(std::isnan(sc[0]));
    BOOST_TEST(std::isnan(sc[1]));
    BOOST_TEST(std::isnan(dgemm::e4m3_to_double(d[0])));
    BOOST_TEST(std::isnan(dgemm::e4m3_to_double(d[5])));
    BOOST_TEST(std::isnan(dgemm::e4m3_to_double(d[128])));
    BOOST_TEST(std::isnan(amax));
    // An infinity alone: amax is infinite, its block's scale NaN, the other block finite.
    row[129] = 1.0f;
    run(row, d, sc, &amax);
    BOOST_TEST(std::isnan(sc[0]));
    BOOST_TEST(sc[1] == (type == DGEMM_SCALE_TYPE_F32 ? float(1793.0 / 448.0) : 8.0f));
    BOOST_TEST(std::isinf(amax));
    dgemm_destroy_plan(plan);
  }

  // UE8M0 0xFF as an input scale: the products of its block are NaN, the other block's are not.
  dgemm_problem_t p;
  dgemm_problem_init(&p);
  p.m = 1;
  p.n = 1;
  p.k = 256;
  p.a_type = p.b_type = DGEMM_DTYPE_F8_E4M3;
  p.c_type = p.d_type = DGEMM_DTYPE_F32;
  dgemm_scaling_t s;
  dgemm_scaling_init(&s);
  s.a_scale.mode = DGEMM_SCALE_VEC128;
  s.a_scale.type = DGEMM_SCALE_TYPE_UE8M0;
  dgemm_plan_t plan;
  BOOST_REQUIRE(dgemm_create_plan_ext(api.ctx, &p, nullptr, nullptr, &s, &plan) == DGEMM_STATUS_SUCCESS);
  std::vector<uint8_t> ab(256, 0x38);  // e4m3 1.0
  uint8_t scales[2] = {127 + 3, 0xFF};
  float d = 0;
  dgemm_scale_args_t sa;
  dgemm_scale_args_init(&sa);
  sa.a_scale = scales;
  std::vector<unsigned char> ws = workspace_of(plan);
  BOOST_REQUIRE(dgemm_execute_ext(plan, ab.data(), ab.data(), nullptr, &d, nullptr, &sa, ws.data(), ws.size(),
                                  nullptr) == DGEMM_STATUS_SUCCESS);
  BOOST_TEST(std::isnan(d));
  scales[1] = 127 - 1;
  BOOST_REQUIRE(dgemm_execute_ext(plan, ab.data(), ab.data(), nullptr, &d, nullptr, &sa, ws.data(), ws.size(),
                                  nullptr) == DGEMM_STATUS_SUCCESS);
  BOOST_TEST(d == 128.0f * 8 + 128.0f * 0.5f);  // 1024 + 64
  dgemm_destroy_plan(plan);
}

// An infinite f32 block scale multiplies its block's partial sum P (deepgemm.h: acc = sum over kb
// of sa * sb * P), so a block with P != 0 gives an infinity even when some of its elements are 0:
// scaling the elements first (0 * inf) gave a NaN (fuzz_c_api_v11). P = 0 gives NaN (inf * 0).
BOOST_AUTO_TEST_CASE(infinite_block_scale_multiplies_the_partial_sum) {
  Api api;
  for (dgemm_scale_mode_t mode : {DGEMM_SCALE_VEC128, DGEMM_SCALE_BLK128x128}) {
    for (bool on_b : {false, true}) {
      BOOST_TEST_CONTEXT((mode == DGEMM_SCALE_VEC128 ? "vec128" : "blk128x128") << (on_b ? " on B" : " on A")) {
        dgemm_problem_t p;
        dgemm_problem_init(&p);
        p.m = 2;
        p.n = 1;
        p.k = 200;  // two K blocks: the second one's scale is finite
        p.a_type = p.b_type = DGEMM_DTYPE_F8_E4M3;
        p.c_type = p.d_type = DGEMM_DTYPE_F32;
        p.op_b = DGEMM_OP_T;
        dgemm_scaling_t s;
        dgemm_scaling_init(&s);
        (on_b ? s.b_scale : s.a_scale).mode = mode;
        (on_b ? s.b_scale : s.a_scale).layout = DGEMM_SCALE_K_MAJOR;
        dgemm_plan_t plan;
        BOOST_REQUIRE(dgemm_create_plan_ext(api.ctx, &p, nullptr, nullptr, &s, &plan) == DGEMM_STATUS_SUCCESS);
        // Row 0 of A: 1, 0, 1, 0, ... (P of block 0 is 64); row 1: all 0 in block 0 (P = 0).
        // Every element of B is 1. K-major scales: block 0's then block 1's (one row of them for
        // B, and for A's 128 x 128 blocks; two rows for A's 1 x 128).
        std::vector<uint8_t> a(2 * 200, 0x00), b(200, 0x38);  // e4m3 0 and 1.0
        for (int q = 0; q < 200; q += 2) a[std::size_t(q)] = 0x38;
        for (int q = 128; q < 200; ++q) a[std::size_t(200 + q)] = 0x38;
        const float scales[4] = {INFINITY, 2.0f, INFINITY, 2.0f};
        dgemm_scale_args_t sa;
        dgemm_scale_args_init(&sa);
        (on_b ? sa.b_scale : sa.a_scale) = scales;
        float d[2] = {0, 0};
        std::vector<unsigned char> ws = workspace_of(plan);
        BOOST_REQUIRE(dgemm_execute_ext(plan, a.data(), b.data(), nullptr, d, nullptr, &sa, ws.data(), ws.size(),
                                        nullptr) == DGEMM_STATUS_SUCCESS);
        BOOST_TEST(std::isinf(d[0]));
        BOOST_TEST(d[0] > 0);
        // Row 1: A's own scale rows differ for 1 x 128 (block 0's scale inf, P = 0: NaN); with B's
        // scales or A's 128 x 128 block the same: NaN as well.
        BOOST_TEST(std::isnan(d[1]));
        dgemm_destroy_plan(plan);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---- bad arguments -------------------------------------------------------------------------------
namespace {

void expect_error(dgemm_status_t got, dgemm_status_t want, std::initializer_list<const char*> fragments) {
  BOOST_TEST_CONTEXT("status " << dgemm_status_string(got) << ", message \"" << dgemm_last_error() << "\"") {
    BOOST_TEST(got == want);
    for (const char* f : fragments)
      BOOST_TEST(std::string(dgemm_last_error()).find(f) != std::string::npos, "message lacks \"" << f << "\"");
  }
}

// A 4 x 6 x 200 e4m3 problem, D e4m3, with A 1 x 128 scales (MN-major), B 128 x 128 (K-major),
// D block-scaled (f32) and amax: every pointer of the scale args is in use.
struct ScaledFixture {
  Api api;
  dgemm_problem_t prob;
  dgemm_epilogue_t epi;
  dgemm_scaling_t sc;
  dgemm_plan_t const kSentinel = reinterpret_cast<dgemm_plan_t>(uintptr_t(0x5e47));
  dgemm_plan_t plan = kSentinel;
  ScaledFixture() {
    dgemm_problem_init(&prob);
    prob.m = 4;
    prob.n = 6;
    prob.k = 200;
    prob.a_type = prob.b_type = prob.d_type = DGEMM_DTYPE_F8_E4M3;
    prob.c_type = DGEMM_DTYPE_BF16;
    prob.op_b = DGEMM_OP_T;
    dgemm_epilogue_init(&epi);
    dgemm_scaling_init(&sc);
    sc.a_scale.mode = DGEMM_SCALE_VEC128;
    sc.b_scale.mode = DGEMM_SCALE_BLK128x128;
    sc.b_scale.layout = DGEMM_SCALE_K_MAJOR;
    sc.d_scale.mode = DGEMM_SCALE_VEC128;
    sc.flags = DGEMM_SCALING_AMAX_D;
  }
  void expect_plan_error(dgemm_status_t want, std::initializer_list<const char*> fragments,
                         const dgemm_plan_options_t* options = nullptr) {
    expect_error(dgemm_create_plan_ext(api.ctx, &prob, &epi, options, &sc, &plan), want, fragments);
    BOOST_TEST((plan == kSentinel), "plan output was written on failure");
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(scaling_errors)

BOOST_AUTO_TEST_CASE(init_functions) {
  BOOST_TEST(dgemm_scaling_init(nullptr) == DGEMM_STATUS_INVALID_ARGUMENT);
  BOOST_TEST(dgemm_scale_args_init(nullptr) == DGEMM_STATUS_INVALID_ARGUMENT);
  dgemm_scaling_t s;
  std::memset(&s, 0x7f, sizeof s);
  BOOST_REQUIRE(dgemm_scaling_init(&s) == DGEMM_STATUS_SUCCESS);
  BOOST_TEST(s.header.type == uint32_t(DGEMM_EXT_SCALING));
  BOOST_TEST(s.header.struct_size == sizeof s);
  BOOST_TEST(s.header.next == nullptr);
  BOOST_TEST((s.a_scale.mode == DGEMM_SCALE_NONE && s.d_scale.ld == 0 && s.flags == 0 && s.reserved[7] == 0));
  dgemm_scale_args_t a;
  std::memset(&a, 0x7f, sizeof a);
  BOOST_REQUIRE(dgemm_scale_args_init(&a) == DGEMM_STATUS_SUCCESS);
  BOOST_TEST(a.header.type == uint32_t(DGEMM_EXT_SCALE_ARGS));
  BOOST_TEST((a.a_scale == nullptr && a.d_scale == nullptr && a.amax_d == nullptr && a.reserved[0] == 0));
}

BOOST_FIXTURE_TEST_CASE(bad_scaling_structs_at_plan_time, ScaledFixture) {
  dgemm_scaling_t good = sc;
  sc.header.struct_size = sizeof(dgemm_ext_header_t) + 8;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"scaling->header.struct_size = 24", "expected"});
  sc = good;
  sc.reserved[3] = 1;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"scaling->reserved[3] = 1"});
  sc = good;
  sc.b_scale.reserved0 = 2;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"scaling->b_scale.reserved0 = 2"});
  sc = good;
  sc.flags = 0x10;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"scaling->flags = 0x10"});
  sc = good;
  sc.a_scale.mode = dgemm_scale_mode_t(7);
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"scaling->a_scale.mode = 7", "dgemm_scale_mode_t"});
  sc = good;
  sc.b_scale.type = dgemm_scale_type_t(2);
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"scaling->b_scale.type = 2"});
  sc = good;
  sc.d_scale.layout = dgemm_scale_layout_t(-1);
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"scaling->d_scale.layout = -1"});
  sc = good;
  sc.a_scale.ld = -1;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"a_scale.ld = -1"});
  sc = good;
  sc.a_scale.ld = 3;  // MN-major: one column of m = 4 scales per K block
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"a_scale.ld = 3", ">= 4", "MN_MAJOR"});
  sc = good;
  sc.b_scale.ld = 1;  // K-major 1 x 2 blocks: ld >= 2
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"b_scale.ld = 1", ">= 2", "K_MAJOR"});
  sc = good;
  sc.b_scale.stride = -4;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"b_scale.stride = -4"});
  sc = good;
  sc.a_scale.ld = int64_t(1) << 62;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"a_scale", "64-bit index"});
  sc = good;
  prob.batch_count = 2;
  prob.stride_d = 64;
  prob.stride_a = 1000;
  sc.d_scale.stride = 3;  // one tensor is 4 x 1
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"d_scale.stride = 3", "overlap"});
  sc.d_scale.stride = 0;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"d_scale.stride = 0"});
  prob.batch_count = 1;
  sc = good;
  sc.d_scale.mode = DGEMM_SCALE_PER_TENSOR;
  expect_plan_error(DGEMM_STATUS_NOT_SUPPORTED, {"d_scale.mode = per_tensor"});
  sc = good;
  prob.d_type = DGEMM_DTYPE_BF16;
  expect_plan_error(DGEMM_STATUS_NOT_SUPPORTED, {"d_scale.mode = vec128 with d_type = bf16"});
  prob.d_type = DGEMM_DTYPE_F8_E4M3;

  // The good one plans, and its description carries every plan-time field.
  BOOST_REQUIRE(dgemm_create_plan_ext(api.ctx, &prob, &epi, nullptr, &sc, &plan) == DGEMM_STATUS_SUCCESS);
  std::vector<char> json(8192);
  BOOST_REQUIRE(dgemm_plan_describe(plan, json.data(), json.size(), nullptr) == DGEMM_STATUS_SUCCESS);
  const std::string text(json.data());
  for (const char* f : {"a_scale=vec128(f32,mn,ld=4,stride=0)", "b_scale=blk128x128(f32,k,ld=2,stride=0)",
                        "d_scale=vec128(f32,mn,ld=4,stride=0)", "amax_d"})
    BOOST_TEST(text.find(f) != std::string::npos, "describe lacks " << f << ": " << text);
  int64_t rows = 0, cols = 0, ld = 0, elements = 0;
  BOOST_TEST(dgemm_plan_scale_shape(plan, DGEMM_SCALE_TENSOR_B, &rows, &cols, &ld, &elements) == DGEMM_STATUS_SUCCESS);
  BOOST_TEST((rows == 1 && cols == 2 && ld == 2 && elements == 2));
  expect_error(dgemm_plan_scale_shape(plan, dgemm_scale_tensor_t(3), &rows, nullptr, nullptr, nullptr),
               DGEMM_STATUS_INVALID_ARGUMENT, {"which = 3"});
  expect_error(dgemm_plan_scale_shape(nullptr, DGEMM_SCALE_TENSOR_A, &rows, nullptr, nullptr, nullptr),
               DGEMM_STATUS_INVALID_ARGUMENT, {"plan is NULL"});
  dgemm_destroy_plan(plan);

  // Plans that differ only in their scaling are different plans (the caches key on all of it).
  dgemm_plan_t p1 = nullptr, p2 = nullptr;
  BOOST_REQUIRE(dgemm_create_plan_ext(api.ctx, &prob, &epi, nullptr, &sc, &p1) == DGEMM_STATUS_SUCCESS);
  sc.d_scale.type = DGEMM_SCALE_TYPE_UE8M0;
  BOOST_REQUIRE(dgemm_create_plan_ext(api.ctx, &prob, &epi, nullptr, &sc, &p2) == DGEMM_STATUS_SUCCESS);
  BOOST_REQUIRE(dgemm_plan_describe(p2, json.data(), json.size(), nullptr) == DGEMM_STATUS_SUCCESS);
  BOOST_TEST(std::string(json.data()).find("d_scale=vec128(ue8m0") != std::string::npos);
  dgemm_destroy_plan(p1);
  dgemm_destroy_plan(p2);
}

BOOST_FIXTURE_TEST_CASE(bad_scale_args_at_execute_touch_nothing, ScaledFixture) {
  BOOST_REQUIRE(dgemm_create_plan_ext(api.ctx, &prob, &epi, nullptr, &sc, &plan) == DGEMM_STATUS_SUCCESS);
  std::vector<uint8_t> a(4 * 200, 0x38), b(6 * 200, 0x38), d(4 * 6, 0xAB);
  std::vector<float> sa(4 * 2 + 1, 1.0f), sb(2 + 1, 1.0f), sd(4, -7.0f);
  float amax = -7.0f;
  dgemm_scale_args_t args;
  dgemm_scale_args_init(&args);
  args.a_scale = sa.data();
  args.b_scale = sb.data();
  args.d_scale = sd.data();
  args.amax_d = &amax;
  auto untouched = [&] {
    BOOST_TEST(std::all_of(d.begin(), d.end(), [](uint8_t v) { return v == 0xAB; }));
    BOOST_TEST(std::all_of(sd.begin(), sd.end(), [](float v) { return v == -7.0f; }));
    BOOST_TEST(amax == -7.0f);
  };
  std::vector<unsigned char> ws = workspace_of(plan);
  auto exec = [&](const void* ext) {
    return dgemm_execute_ext(plan, a.data(), b.data(), nullptr, d.data(), nullptr, ext, ws.data(), ws.size(), nullptr);
  };
  expect_error(dgemm_execute(plan, a.data(), b.data(), nullptr, d.data(), nullptr, nullptr, 0, nullptr),
               DGEMM_STATUS_INVALID_ARGUMENT, {"no DGEMM_EXT_SCALE_ARGS", "dgemm_execute_ext"});
  expect_error(exec(nullptr), DGEMM_STATUS_INVALID_ARGUMENT, {"a_scale vec128", "no DGEMM_EXT_SCALE_ARGS"});
  untouched();
  dgemm_scale_args_t bad = args;
  bad.header.struct_size = 16;
  expect_error(exec(&bad), DGEMM_STATUS_INVALID_ARGUMENT, {"scale_args->header.struct_size = 16"});
  bad = args;
  bad.reserved[0] = 9;
  expect_error(exec(&bad), DGEMM_STATUS_INVALID_ARGUMENT, {"scale_args->reserved[0] = 9"});
  const char* names[] = {"scale_args->a_scale is NULL", "scale_args->b_scale is NULL", "scale_args->d_scale is NULL",
                         "scale_args->amax_d is NULL"};
  for (int w = 0; w < 4; ++w) {
    bad = args;
    if (w == 0) bad.a_scale = nullptr;
    if (w == 1) bad.b_scale = nullptr;
    if (w == 2) bad.d_scale = nullptr;
    if (w == 3) bad.amax_d = nullptr;
    expect_error(exec(&bad), DGEMM_STATUS_INVALID_ARGUMENT, {names[w]});
  }
  bad = args;
  bad.b_scale = reinterpret_cast<const char*>(sb.data()) + 1;
  expect_error(exec(&bad), DGEMM_STATUS_INVALID_ARGUMENT, {"scale_args->b_scale = ", "not aligned", "4 bytes"});
  bad = args;
  bad.amax_d = reinterpret_cast<float*>(reinterpret_cast<char*>(&amax) + 2);
  expect_error(exec(&bad), DGEMM_STATUS_INVALID_ARGUMENT, {"scale_args->amax_d = ", "not aligned"});
  untouched();
  // The same args succeed and write all three outputs.
  BOOST_REQUIRE(exec(&args) == DGEMM_STATUS_SUCCESS);
  BOOST_TEST(amax == 200.0f);  // 200 products of 1 x 1 with unit scales
  BOOST_TEST(sd[0] == float(200.0 / 448.0));
  dgemm_destroy_plan(plan);

  // Scale args given to a plan without scaling are refused.
  dgemm_problem_t plain = prob;
  plain.d_type = DGEMM_DTYPE_BF16;
  BOOST_REQUIRE(dgemm_create_plan(api.ctx, &plain, &epi, nullptr, &plan) == DGEMM_STATUS_SUCCESS);
  expect_error(exec(&args), DGEMM_STATUS_INVALID_ARGUMENT, {"DGEMM_EXT_SCALE_ARGS given", "no scaling"});
  dgemm_destroy_plan(plan);
}

// A block-scaled FP8 D plans on sm90 (tiles whose BLOCK_N is a multiple of 128, unswapped); the
// other GPU families reject it with a reason. The amax of D plans on sm90 (by name only until
// test_sm90_8bit_gemm's amax-* cases passed on an H200, 2026-12-05) and the other families
// reject it with their reason; one that names an sm90 configuration gets it.
BOOST_FIXTURE_TEST_CASE(gpu_families_reject_scaling_until_their_kernels_exist, ScaledFixture) {
  using namespace dgemm;
  const HardwareDesc h200 = apply_arch_file(cpu_hardware(), "h200");
  GemmProblem p;
  p.m = p.n = p.k = 256;
  p.d_type = DType::F8E4M3;
  Epilogue e;
  PlanRequest request;
  request.use_cache = false;
  BOOST_TEST((choose_kernel(p, e, h200, request).chosen.config.family == Family::Sm90));  // bf16 in, e4m3 out
  e.d_scale.mode = ScaleMode::Vec128;
  resolve_and_validate_scaling(p, e);
  const KernelConfig chosen = choose_kernel(p, e, h200, request).chosen.config;
  BOOST_TEST((chosen.family == Family::Sm90 && chosen.block_n % 128 == 0 && !chosen.swap_ab));
  const CandidateSet set = evaluate_candidates(p, e, h200, request, family_models());
  int other_rejections = 0, tile_rejections = 0;
  for (const Candidate& c : set.rejected) {
    if (c.config.family == Family::Cpu) continue;
    if (c.config.family == Family::Sm90) {
      tile_rejections += c.reject_reason.find("block-scaled D") != std::string::npos;
      continue;
    }
    ++other_rejections;
    BOOST_TEST(c.reject_reason == std::string("no ") + family_name(c.config.family) +
                                      " kernel for scaling yet (d_scale vec128)");
  }
  BOOST_TEST(other_rejections == 2);  // sm80, small_m
  BOOST_TEST(tile_rejections > 0);    // e.g. BLOCK_N 64 / 192 tiles, swap-AB
  for (const Candidate& c : set.feasible)
    BOOST_TEST((c.config.family != Family::Sm90 || (c.config.block_n % 128 == 0 && !c.config.swap_ab)));
  e.amax_d = true;
  BOOST_TEST((choose_kernel(p, e, h200, request).chosen.config.family == Family::Sm90));
  {
    const CandidateSet amax = evaluate_candidates(p, e, h200, request, family_models());
    bool sm80_said = false;
    for (const Candidate& c : amax.rejected)
      sm80_said = sm80_said || c.reject_reason == "no sm80 kernel for scaling yet (d_scale vec128, amax_d)";
    BOOST_TEST(sm80_said);
    for (const Candidate& c : amax.feasible) BOOST_TEST((c.config.family == Family::Sm90), c.config.name());
  }
  PlanRequest named = request;
  named.force = Family::Sm90;
  named.force_config = chosen.name();
  BOOST_TEST(choose_kernel(p, e, h200, named).chosen.config.name() == chosen.name());
  // The exact i32 store cannot write an amax: i8 into i32 with it plans the epilogue through float.
  GemmProblem i8 = p;
  i8.a_type = i8.b_type = DType::I8;
  i8.c_type = i8.d_type = DType::I32;
  i8.compute_type = DType::I32;
  i8.op_b = Op::T;  // 8-bit wgmma reads K-major operands
  Epilogue ie;
  ie.amax_d = true;
  resolve_and_validate_scaling(i8, ie);
  named.force_config = "sm90_128x128x128_s6_t384_p";
  BOOST_TEST(choose_kernel(i8, ie, h200, named).chosen.config.name() == named.force_config);

  // Through the C API: a CPU context planning for an H200 description.
  dgemm_plan_options_t o;
  dgemm_plan_options_init(&o);
  o.arch_file = "h200";
  // (sm90's reason for this 4 x 6 x 200 problem is TMA's: rows of 200 bytes.)
  expect_plan_error(DGEMM_STATUS_NOT_SUPPORTED, {"no sm80 kernel for scaling yet", "a_scale vec128", "amax_d", "sm90: TMA"},
                    &o);
}

// A strided batch whose input scales differ per batch (stride != 0): the sm90 kernels would read
// batch 0's for every batch, so sm90 refuses it naming the stride; shared scales (stride 0) plan.
BOOST_AUTO_TEST_CASE(sm90_refuses_per_batch_input_scales_of_a_strided_batch) {
  using namespace dgemm;
  const HardwareDesc h200 = apply_arch_file(cpu_hardware(), "h200");
  GemmProblem p;
  p.m = 256;
  p.n = 512;
  p.k = 1024;
  p.a_type = p.b_type = DType::F8E4M3;
  p.c_type = p.d_type = DType::BF16;
  p.op_b = Op::T;
  p.batch_count = 3;
  p.stride_a = p.m * p.k;
  p.stride_b = p.n * p.k;
  p.stride_c = p.stride_d = p.m * p.n;
  p.resolve_and_validate();
  p.a_scale.mode = ScaleMode::PerTensor;
  p.b_scale.mode = ScaleMode::OuterVec;
  Epilogue e;
  resolve_and_validate_scaling(p, e);
  PlanRequest request;
  request.use_cache = false;
  BOOST_TEST((choose_kernel(p, e, h200, request).chosen.config.family == Family::Sm90));  // shared scales
  for (ScaleDesc* s : {&p.a_scale, &p.b_scale}) {
    GemmProblem q = p;
    ScaleDesc& d = s == &p.a_scale ? q.a_scale : q.b_scale;
    d.stride = d.mode == ScaleMode::PerTensor ? 1 : q.n;
    resolve_and_validate_scaling(q, e);
    const CandidateSet set = evaluate_candidates(q, e, h200, request, family_models());
    bool said = false;
    for (const Candidate& c : set.rejected)
      said = said || (c.config.family == Family::Sm90 && c.reject_reason.find("per-batch scales are not built") !=
                                                            std::string::npos);
    BOOST_TEST(said, "sm90 did not refuse per-batch " << (s == &p.a_scale ? "a" : "b") << "_scale");
    for (const Candidate& c : set.feasible) BOOST_TEST((c.config.family != Family::Sm90), c.config.name());
  }
}

// The autotuning memory keys on the problem's class: input scaling is part of it.
BOOST_AUTO_TEST_CASE(autotune_memory_separates_scaled_problems) {
  using namespace dgemm;
  GemmProblem p;
  p.m = p.n = p.k = 4096;
  p.a_type = p.b_type = DType::F8E4M3;
  const Epilogue e;
  GemmProblem q = p;
  q.a_scale.mode = ScaleMode::Vec128;
  q.b_scale.mode = ScaleMode::Blk128x128;
  GemmProblem r = q;
  r.b_scale.type = ScaleType::UE8M0;
  BOOST_TEST(problem_class_key(p, e) != problem_class_key(q, e));
  BOOST_TEST(problem_class_key(q, e) != problem_class_key(r, e));
}

BOOST_AUTO_TEST_SUITE_END()

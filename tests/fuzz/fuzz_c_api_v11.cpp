// Fuzz target: the DGEMM_1.1 surface of the C boundary on the CPU context (fuzz_c_api covers
// 1.0): input scales of A and B (per tensor, per row / column, 1 x 128, 128 x 128; f32 and UE8M0;
// MN- and K-major, padded leading dimensions, batch strides), the block-scaled FP8 output (D's
// VEC128 scales) and the amax of D (DGEMM_EXT_SCALING / DGEMM_EXT_SCALE_ARGS), grouped problems
// (contiguous with offsets and m_alignment, masked with counts, the expected_m hint, the status
// word; DGEMM_EXT_GROUPED / DGEMM_EXT_GROUP_ARGS), alone and together, on plain, strided-batch
// and grouped problems, through dgemm_create_plan_ext -> dgemm_plan_scale_shape ->
// dgemm_execute_ext. Mostly plausible values, now and then raw ones (garbage enums, struct sizes,
// reserved words, chains with duplicates, unknown or misplaced types; bad group arrays; NULL or
// misaligned scale pointers; special scale values: NaN, inf, 0, UE8M0 0x00 / 0xFE / 0xFF).
// The promises checked (a violation aborts, so libFuzzer reports it with the input):
//   - every status is a dgemm_status_t; a failing create leaves *plan untouched and says why;
//   - a valid expected_m hint changes no status; one outside the documented range is refused;
//   - dgemm_plan_scale_shape gives the geometry of deepgemm.h's table (computed here);
//   - an execute with a broken chain, a missing / misplaced extension, a missing or misaligned
//     pointer the plan reads or writes, a per-group array that breaks the rules (a CPU context
//     checks the values), or too little workspace fails with the documented status and writes
//     nothing: not D, not d_scale, not amax, not the status word; a valid one succeeds;
//   - a successful execute writes exactly D's elements in the rows the groups own (rows past a
//     masked count, or outside a contiguous group, stay untouched), their block scales, the
//     amax and the status word (0), each equal to what an independent double-precision reference
//     written here from deepgemm.h's definitions allows (not the library's CPU backend); nothing
//     else, and no input, changes.
// One context serves every input, so its plan cache is exercised too.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "api/convert.hpp"
#include "core/float_convert.hpp"
#include "core/problem.hpp"
#include "deepgemm/deepgemm.h"
#include "fuzz_c_api_common.hpp"
#include "fuzz_guarded.hpp"
#include "fuzz_input.hpp"

// fuzz_c_caller.c: the C API called from C, with raw ints for enum parameters.
extern "C" dgemm_status_t dgemm_fuzz_plan_scale_shape_raw(dgemm_plan_t plan, int which, int64_t* rows, int64_t* cols,
                                                          int64_t* ld, int64_t* elements);

namespace {

using dgemm::DType;
using dgemm_fuzz::Guarded;
using dgemm_fuzz::Input;

using dgemm_fuzz::context;
using dgemm_fuzz::valid_status;
using dgemm_fuzz::violated;

// How often each outcome happened, printed at exit when DGEMM_FUZZ_STATS is set (to see that a
// corpus reaches the successful paths, not only the refusals).
struct Stats {
  long created = 0, refused = 0, executed = 0, failed = 0, grouped = 0, masked = 0, scaled_in = 0, blocked_in = 0,
       block_out = 0, amax = 0, grouped_scaled = 0, rows_checked = 0;
  ~Stats() {
    if (std::getenv("DGEMM_FUZZ_STATS"))
      std::fprintf(stderr,
                   "plans %ld (refused %ld); executes ok %ld (failed %ld): grouped %ld (masked %ld), input scales %ld "
                   "(blocked %ld), block-scaled D %ld, amax %ld, grouped + scaled %ld; D elements checked %ld\n",
                   created, refused, executed, failed, grouped, masked, scaled_in, blocked_in, block_out, amax,
                   grouped_scaled, rows_checked);
  }
} g_stats;


template <class Enum>
void store_enum(Enum& field, int32_t v) {
  std::memcpy(&field, &v, 4);  // enum fields hold whatever the caller stored
}

int32_t raw_or(Input& in, int32_t plausible) { return in.one_in(24) ? in.take<int32_t>() : plausible; }

float scalar(Input& in) {
  static const float kValues[] = {1.0f, 0.5f, -1.0f, 2.0f, 0.0f, 1.0000049f, 0.25f, -0.5f};
  if (in.one_in(48)) return in.take<float>();
  return kValues[in.pick(8)];
}

// ---- the problem, as the fuzzer decides it --------------------------------------------------
enum Shape { kPlain, kBatched, kContiguous, kMasked };

struct Decided {
  Shape shape = kPlain;
  bool has_scaling = false, has_grouped = false;
  int64_t m_alignment = 1, expected_m = 0;
  int32_t layout = 0;
};

int64_t size_m(Input& in) {
  if (in.one_in(48)) return in.take<int64_t>();
  static const int64_t k[] = {1, 7, 16, 17, 3, 0, 33, 5, 8, 12, 129, 130, 24, 2, 64, 4};
  return k[in.pick(16)];
}
int64_t size_n(Input& in) {
  if (in.one_in(48)) return in.take<int64_t>();
  static const int64_t k[] = {1, 7, 16, 17, 3, 0, 33, 5, 130, 129, 2, 4};
  return k[in.pick(12)];
}
int64_t size_k(Input& in) {
  if (in.one_in(48)) return in.take<int64_t>();
  static const int64_t k[] = {1, 7, 16, 17, 3, 0, 33, 5, 128, 129, 130, 200, 256, 257, 2, 64};
  return k[in.pick(16)];
}

// Wrapping arithmetic for what the fuzzer computes from raw sizes before the library has
// validated them (the results then only make plausible fields, whatever they are).
int64_t wadd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t wmul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

int64_t packed_ld(bool row_major, int64_t rows, int64_t cols) { return std::max<int64_t>(1, row_major ? cols : rows); }
int64_t one_extent(bool row_major, int64_t rows, int64_t cols, int64_t ld) {
  if (rows <= 0 || cols <= 0) return 0;
  return row_major ? wadd(wmul(rows - 1, ld), cols) : wadd(wmul(cols - 1, ld), rows);
}

// A leading dimension: packed (0), padded, one too small, or raw.
int64_t ld_field(Input& in, int64_t need) {
  const unsigned how = in.pick(16);
  if (how < 10) return 0;
  if (how < 14) return wadd(need, in.pick(4));
  if (how == 14) return need - 1;
  return in.take<int64_t>();
}

// A batch stride for a matrix of `one` elements: a full one plus some, shared (0), or raw.
int64_t stride_field(Input& in, int64_t one, bool may_share) {
  const unsigned how = in.pick(16);
  if (how < 10) return wadd(one, in.pick(4));
  if (how < 14) return may_share ? 0 : wadd(one, 1);
  if (how == 14) return one > 0 ? one - 1 : 0;
  return in.take<int64_t>();
}

// Independent geometry of one scale tensor (deepgemm.h's table and "Scale tensor layout").
struct Geom {
  int mode = 0, type = 0, layout = 0;
  int64_t rows = 0, cols = 0, ld = 0, stride = 0, elements = 0;
  std::size_t esize = 4;
  bool active() const { return mode != DGEMM_SCALE_NONE; }
  bool blocked() const { return mode == DGEMM_SCALE_VEC128 || mode == DGEMM_SCALE_BLK128x128; }
  int64_t index(int64_t batch, int64_t o, int64_t p) const {
    const int64_t r = mode == DGEMM_SCALE_PER_TENSOR ? 0 : mode == DGEMM_SCALE_BLK128x128 ? o / 128 : o;
    const int64_t c = blocked() ? p / 128 : 0;
    return batch * stride + (layout == DGEMM_SCALE_MN_MAJOR ? r + c * ld : r * ld + c);
  }
};

// The geometry as deepgemm.h defines it, for a tensor the library accepted (so ld, when given,
// is at least the minimum, and nothing overflows).
Geom geometry(const dgemm_scale_desc_t& d, int64_t outer, int64_t inner, int64_t batches) {
  Geom g;
  g.mode = dgemm::api::enum_value(d.mode);
  if (g.mode == DGEMM_SCALE_NONE) return g;
  g.type = dgemm::api::enum_value(d.type);
  g.layout = dgemm::api::enum_value(d.layout);
  g.rows = g.mode == DGEMM_SCALE_PER_TENSOR ? 1 : g.mode == DGEMM_SCALE_BLK128x128 ? (outer + 127) / 128 : outer;
  g.cols = g.blocked() ? (inner + 127) / 128 : 1;
  g.ld = d.ld != 0 ? d.ld : std::max<int64_t>(1, g.layout == DGEMM_SCALE_MN_MAJOR ? g.rows : g.cols);
  g.stride = d.stride;
  g.esize = g.type == DGEMM_SCALE_TYPE_F32 ? 4 : 1;
  if (g.rows == 0 || g.cols == 0) return g;
  const int64_t last = g.layout == DGEMM_SCALE_MN_MAJOR ? (g.rows - 1) + (g.cols - 1) * g.ld
                                                        : (g.rows - 1) * g.ld + (g.cols - 1);
  g.elements = last + 1 + (batches - 1) * g.stride;
  return g;
}

// A scale descriptor for an operand of outer x inner over `batches` batches.
dgemm_scale_desc_t scale_desc(Input& in, int mode, int64_t outer, int64_t inner, int64_t batches, bool output) {
  dgemm_scale_desc_t d{};
  store_enum(d.mode, raw_or(in, mode));
  store_enum(d.type, raw_or(in, int32_t(in.pick(2))));
  store_enum(d.layout, raw_or(in, int32_t(in.pick(2))));
  if (in.one_in(48)) d.reserved0 = in.take<uint32_t>();
  const int64_t rows = mode == DGEMM_SCALE_PER_TENSOR ? 1 : mode == DGEMM_SCALE_BLK128x128 ? wadd(outer, 127) / 128 : outer;
  const int64_t cols = mode == DGEMM_SCALE_VEC128 || mode == DGEMM_SCALE_BLK128x128 ? wadd(inner, 127) / 128 : 1;
  const bool mn = dgemm::api::enum_value(d.layout) == DGEMM_SCALE_MN_MAJOR;
  const int64_t need = std::max<int64_t>(1, mn ? rows : cols);
  d.ld = ld_field(in, need);
  const int64_t ld = d.ld > 0 ? d.ld : need;
  const int64_t one = rows > 0 && cols > 0 ? (mn ? wadd(rows, wmul(cols - 1, ld)) : wadd(wmul(rows - 1, ld), cols)) : 0;
  if (batches > 1 || in.one_in(16)) d.stride = stride_field(in, one, !output);
  return d;
}

// Scale values: nice ones, and with `specials` now and then NaN, infinities, zero, extremes.
void fill_scales(const Geom& g, unsigned char* buf, std::mt19937& rng, bool specials) {
  static const float kNice[] = {1.0f, 0.5f, 2.0f, 0.25f, 4.0f, 0.3f, 1.7f, 3.0f, -1.0f, 0.0625f, 1.0f, 8.0f};
  static const float kSpecial[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity(), 0.0f, 1e-40f, 1e30f, 3e38f, -0.0f};
  static const uint8_t kSpecialE[] = {0x00, 0xFE, 0xFF, 0x01, 0xF0, 0x7F};
  for (int64_t i = 0; i < g.elements; ++i) {
    const bool special = specials && rng() % 16 == 0;
    if (g.type == DGEMM_SCALE_TYPE_UE8M0) {
      buf[i] = special ? kSpecialE[rng() % 6] : uint8_t(127 - 3 + int(rng() % 7));
    } else {
      const float v = special ? kSpecial[rng() % 8] : kNice[rng() % 12];
      std::memcpy(buf + i * 4, &v, 4);
    }
  }
}

double load_scale(const Geom& g, const unsigned char* buf, int64_t index) {
  if (g.type == DGEMM_SCALE_TYPE_F32) {
    float v;
    std::memcpy(&v, buf + index * 4, 4);
    return v;
  }
  const uint8_t e = buf[index];
  return e == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, int(e) - 127);
}

// D's block scale for a block of largest magnitude amax ("Block-scaled output").
double block_scale(double amax, DType d, bool ue8m0) {
  const double fp8_max = d == DType::F8E4M3 ? 448.0 : 57344.0;
  if (std::isnan(amax) || amax >= std::ldexp(1.0, 128)) return std::numeric_limits<double>::quiet_NaN();
  if (!ue8m0) return std::max(double(float(amax / fp8_max)), std::ldexp(1.0, -126));
  int e = -126;
  if (amax > 0) e = std::max(-126, std::ilogb(amax) - std::ilogb(fp8_max) - 2);  // below the answer
  while (std::ldexp(fp8_max, e) < amax) ++e;
  return std::ldexp(1.0, e);
}

double activation(int act, double x) {
  switch (act) {
    case DGEMM_ACT_RELU: return std::isnan(x) ? x : std::fmax(x, 0.0);
    case DGEMM_ACT_GELU_TANH:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    case DGEMM_ACT_GELU_ERF: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case DGEMM_ACT_SILU: return x / (1.0 + std::exp(-x));
    default: return x;
  }
}

double add_x(double a, double b, bool* exact) {
  const double s = a + b, bb = s - a;
  if (!std::isfinite(s) || (a - (s - bb)) + (b - bb) != 0) *exact = false;
  return s;
}
double mul_x(double a, double b, bool* exact) {
  const double p = a * b;
  if (!std::isfinite(p) || std::fma(a, b, -p) != 0) *exact = false;
  return p;
}

// Values exactly representable in every input type (quarters in [-2, 2], integers for i8/i32).
void fill(DType t, void* buf, int64_t count, std::mt19937& rng) {
  for (int64_t i = 0; i < count; ++i) {
    const int q = int(rng() % 17) - 8;
    dgemm::store_from_double(t, buf, i, t == DType::I8 || t == DType::I32 ? q : q * 0.25, true);
  }
}

// An extension struct as a newer or broken caller might pass it: a larger size (zero or non-zero
// tail) or a raw size. Returns what to pass, inside `storage`; *bad says whether the library must
// refuse it (a size below its own, over 4096, or a non-zero byte it does not know).
template <class Ext>
Ext* versioned_ext(Input& in, const Ext& s, std::vector<unsigned char>& storage, bool* bad, bool mutate) {
  storage.assign(sizeof s + 64, 0);
  std::memcpy(storage.data(), &s, sizeof s);
  auto* out = reinterpret_cast<Ext*>(storage.data());
  *bad = false;
  if (!mutate) return out;
  const unsigned how = in.pick(24);
  if (how == 20) {
    out->header.struct_size = uint32_t(sizeof s + 8 * (1 + in.pick(8)));
    if (in.one_in(2)) {
      storage[sizeof s + in.pick(8)] = 1;
      *bad = true;
    }
  } else if (how == 21) {
    out->header.struct_size = uint32_t(in.pick(uint32_t(sizeof s)));  // too small (or below the header)
    *bad = true;
  } else if (how == 22) {
    const uint32_t size = in.take<uint32_t>();
    out->header.struct_size = size > storage.size() ? uint32_t(sizeof s - 1 - in.pick(8)) : size;
    *bad = out->header.struct_size != sizeof s &&
           (out->header.struct_size < sizeof s ||
            !std::all_of(storage.begin() + sizeof s, storage.begin() + out->header.struct_size,
                         [](unsigned char c) { return c == 0; }));
  } else if (how == 23) {
    out->reserved[in.pick(sizeof(s.reserved) / sizeof(s.reserved[0]))] = 1 + in.pick(255);
    *bad = true;
  }
  return out;
}

struct Chain {
  // Links the non-null entries in order (their headers' next), returns the first.
  static const void* link(std::vector<dgemm_ext_header_t*> items) {
    items.erase(std::remove(items.begin(), items.end(), nullptr), items.end());
    for (std::size_t i = 0; i < items.size(); ++i) items[i]->next = i + 1 < items.size() ? items[i + 1] : nullptr;
    return items.empty() ? nullptr : items.front();
  }
};

// ---- the execute-time reference --------------------------------------------------------------
struct Ref {
  const dgemm::GemmProblem* p;
  const dgemm::Epilogue* e;
  Shape shape;
  int64_t groups;
  Geom ga, gb, gd;
  const unsigned char *a, *b, *c, *bias, *sa, *sb;
  const float* oscale;
  const int32_t* zp;
  double alpha, beta;

  int64_t vindex(dgemm::VectorMode mode, int64_t g, int64_t i, int64_t j) const {
    const bool grouped = shape == kContiguous || shape == kMasked;
    switch (mode) {
      case dgemm::VectorMode::PerTensor: return grouped ? g : 0;
      case dgemm::VectorMode::PerRow: return shape == kMasked ? g * p->m + i : i;
      case dgemm::VectorMode::PerColumn: return grouped ? g * p->n + j : j;
      default: return 0;
    }
  }
  int64_t off(int64_t row, int64_t col, int64_t ld) const {
    return p->order == dgemm::Order::RowMajor ? row * ld + col : col * ld + row;
  }

  struct Value {
    double z, tol;  // before the final conversion, and how far a correct evaluation may be
    double y, ytol; // after the activation, before the output scale (what amax takes)
    double acc, x;  // the scaled product, and the epilogue's sum before the activation
    double sa0, sb0, part0;  // the first K block's scales and partial sum (for messages)
    // An infinite scale that does not vary along K: deepgemm.h lets an implementation factor it
    // out of the sum over K blocks, which changes what infinities and zeros make (inf * (P1 + P2)
    // against inf * P1 + inf * P2), so any value is then correct.
    bool anything;
  };

  Value at(int64_t g, int64_t i, int64_t j) const {
    bool exact = true;
    double acc = 0, mag = 0, sa0 = 1, sb0 = 1, part0 = 0;
    for (int64_t k0 = 0; k0 < p->k; k0 += 128) {
      double part = 0, pmag = 0;
      for (int64_t q = k0; q < std::min(p->k, k0 + 128); ++q) {
        const int64_t ao = g * p->stride_a + (p->op_a == dgemm::Op::N ? off(i, q, p->lda) : off(q, i, p->lda));
        const int64_t bo = g * p->stride_b + (p->op_b == dgemm::Op::N ? off(q, j, p->ldb) : off(j, q, p->ldb));
        const double t = mul_x(dgemm::load_as_double(p->a_type, a, ao), dgemm::load_as_double(p->b_type, b, bo), &exact);
        part = add_x(part, t, &exact);
        pmag += std::fabs(t);
      }
      const double s_a = ga.active() ? load_scale(ga, sa, ga.index(g, i, k0)) : 1.0;
      const double s_b = gb.active() ? load_scale(gb, sb, gb.index(g, j, k0)) : 1.0;
      if (k0 == 0) {
        sa0 = s_a;
        sb0 = s_b;
        part0 = part;
      }
      const double s = mul_x(s_a, s_b, &exact);
      acc = add_x(acc, mul_x(s, part, &exact), &exact);
      mag += std::fabs(s) * pmag;
    }
    double x = p->k > 0 ? mul_x(alpha, acc, &exact) : 0.0;
    mag *= std::fabs(alpha);
    if (e->reads_c()) {
      const double cv = mul_x(beta, dgemm::load_as_double(p->c_type, c, g * p->stride_c + off(i, j, p->ldc)), &exact);
      x = add_x(x, cv, &exact);
      mag += std::fabs(cv);
    }
    if (e->bias_mode != dgemm::VectorMode::None) {
      const double bv = dgemm::load_as_double(e->bias_type, bias, vindex(e->bias_mode, g, i, j));
      x = add_x(x, bv, &exact);
      mag += std::fabs(bv);
    }
    // Exact arithmetic must give this very value; otherwise each of the k + 4 terms may carry a
    // few roundings in either evaluation (and scales factored out of the sum change the order).
    double tol = exact ? 0.0 : 8.0 * double(p->k + 8) * std::ldexp(mag, -53);
    const double y = activation(int(e->activation), x);
    if (e->activation != dgemm::Activation::None && e->activation != dgemm::Activation::Relu)
      tol = tol * 1.2 + 1e-15 * (std::fabs(x) + std::fabs(y)) + 1e-300;
    const bool outer_inf = p->k > 0 && ((ga.active() && !ga.blocked() && std::isinf(sa0)) ||
                                        (gb.active() && !gb.blocked() && std::isinf(sb0)));
    Value v{y, tol, y, tol, acc, x, sa0, sb0, part0, outer_inf};
    if (e->scale_mode != dgemm::VectorMode::None) {
      const double s = oscale[vindex(e->scale_mode, g, i, j)];
      bool e2 = true;
      v.z = mul_x(y, s, &e2);
      v.tol = tol * std::fabs(s) + (e2 ? 0.0 : std::ldexp(std::fabs(v.z), -52));
    }
    return v;
  }

  double quantize(int64_t g, int64_t i, int64_t j, double z) const {
    if (e->zero_point) {
      if (std::isnan(z)) return 0.0;
      const double r = std::nearbyint(z) + double(zp[vindex(e->scale_mode, g, i, j)]);
      return std::min(127.0, std::max(-128.0, r));
    }
    return dgemm::round_to_dtype(p->d_type, z, e->saturate);
  }
};

bool bad_value(double v) { return std::isnan(v) || std::isinf(v); }

// got within the conversions of [lo, hi] (NaN bounds, from NaN or unbounded references, accept
// anything).
bool accepts(double got, double want, double lo, double hi, double z) {
  if (std::isnan(z) || std::isnan(lo) || std::isnan(hi) || std::isnan(want)) return true;
  return got == want || (got >= std::min(lo, hi) && got <= std::max(lo, hi));
}

// ---- one input -------------------------------------------------------------------------------
void run(Input& in) {
  Decided dd;
  dgemm_problem_t problem;
  dgemm_problem_init(&problem);
  problem.m = size_m(in);
  problem.n = size_n(in);
  problem.k = size_k(in);
  static const dgemm_dtype_t kAB[] = {DGEMM_DTYPE_F8_E4M3, DGEMM_DTYPE_F8_E5M2, DGEMM_DTYPE_I8, DGEMM_DTYPE_BF16,
                                      DGEMM_DTYPE_F8_E4M3, DGEMM_DTYPE_F16,     DGEMM_DTYPE_F32, DGEMM_DTYPE_F8_E4M3};
  const dgemm_dtype_t ab = kAB[in.pick(8)];
  const bool integer = ab == DGEMM_DTYPE_I8;
  const bool fp8 = ab == DGEMM_DTYPE_F8_E4M3 || ab == DGEMM_DTYPE_F8_E5M2;
  const int32_t b_type = fp8 && in.one_in(4) ? int32_t(in.one_in(2) ? DGEMM_DTYPE_F8_E4M3 : DGEMM_DTYPE_F8_E5M2) : int32_t(ab);
  static const int32_t kD[] = {DGEMM_DTYPE_F8_E4M3, DGEMM_DTYPE_BF16, DGEMM_DTYPE_F32, DGEMM_DTYPE_F8_E5M2,
                               DGEMM_DTYPE_F16,     DGEMM_DTYPE_I8,   DGEMM_DTYPE_I32, DGEMM_DTYPE_F8_E4M3};
  const int32_t d_type = raw_or(in, kD[in.pick(8)]);
  const int32_t c_type = raw_or(in, in.one_in(2) ? d_type : int32_t(in.pick(7)));
  store_enum(problem.a_type, raw_or(in, ab));
  store_enum(problem.b_type, b_type);
  store_enum(problem.c_type, c_type);
  store_enum(problem.d_type, d_type);
  store_enum(problem.compute_type, raw_or(in, integer ? DGEMM_DTYPE_I32 : DGEMM_DTYPE_F32));
  store_enum(problem.op_a, raw_or(in, int32_t(in.pick(2))));
  store_enum(problem.op_b, raw_or(in, int32_t(in.pick(2))));
  store_enum(problem.order, raw_or(in, int32_t(in.pick(2))));
  const bool row = dgemm::api::enum_value(problem.order) == DGEMM_ORDER_ROW_MAJOR;
  const bool op_a_n = dgemm::api::enum_value(problem.op_a) == DGEMM_OP_N, op_b_n = dgemm::api::enum_value(problem.op_b) == DGEMM_OP_N;
  const int64_t m = problem.m, n = problem.n, k = problem.k;
  const int64_t a_rows = op_a_n ? m : k, a_cols = op_a_n ? k : m;
  const int64_t b_rows = op_b_n ? k : n, b_cols = op_b_n ? n : k;
  problem.lda = ld_field(in, packed_ld(row, a_rows, a_cols));
  problem.ldb = ld_field(in, packed_ld(row, b_rows, b_cols));
  problem.ldc = ld_field(in, packed_ld(row, m, n));
  problem.ldd = ld_field(in, packed_ld(row, m, n));
  auto ld_or = [&](int64_t ld, int64_t rows, int64_t cols) { return ld > 0 ? ld : packed_ld(row, rows, cols); };
  const int64_t one_a = one_extent(row, a_rows, a_cols, ld_or(problem.lda, a_rows, a_cols));
  const int64_t one_b = one_extent(row, b_rows, b_cols, ld_or(problem.ldb, b_rows, b_cols));
  const int64_t one_c = one_extent(row, m, n, ld_or(problem.ldc, m, n));
  const int64_t one_d = one_extent(row, m, n, ld_or(problem.ldd, m, n));

  dd.shape = Shape(in.pick(4));
  if (dd.shape != kPlain) {
    problem.batch_count = in.one_in(32) ? in.take<int64_t>() : 1 + in.pick(4);
    problem.stride_b = stride_field(in, one_b, true);
    if (dd.shape == kContiguous) {
      if (in.one_in(16)) problem.stride_a = 1;  // refused: A, C and D are shared
      if (in.one_in(16)) problem.stride_c = 1;
      if (in.one_in(16)) problem.stride_d = one_d;
    } else {
      problem.stride_a = stride_field(in, one_a, true);
      problem.stride_c = stride_field(in, one_c, true);
      problem.stride_d = stride_field(in, one_d, false);
    }
  }
  if (in.one_in(48)) problem.reserved[in.pick(8)] = in.take<uint64_t>();
  const int64_t batches = problem.batch_count;

  // The epilogue.
  dgemm_epilogue_t epilogue;
  dgemm_epilogue_init(&epilogue);
  epilogue.alpha = scalar(in);
  epilogue.beta = in.one_in(3) ? scalar(in) : 0.0f;
  store_enum(epilogue.bias_mode, raw_or(in, in.one_in(2) ? 0 : 2 + int32_t(in.pick(2))));
  store_enum(epilogue.bias_type, raw_or(in, int32_t(in.pick(3))));
  store_enum(epilogue.activation, raw_or(in, int32_t(in.pick(5))));
  store_enum(epilogue.scale_mode, raw_or(in, in.one_in(2) ? 0 : int32_t(in.pick(4))));
  if (in.one_in(4)) epilogue.flags = in.one_in(16) ? in.take<uint32_t>() : in.pick(4);

  // The plan-time extensions.
  dgemm_grouped_t grouped;
  dgemm_grouped_init(&grouped);
  dd.has_grouped = dd.shape == kContiguous || dd.shape == kMasked || in.one_in(24);
  if (dd.has_grouped) {
    dd.layout = raw_or(in, dd.shape == kMasked ? DGEMM_GROUP_MASKED : DGEMM_GROUP_CONTIGUOUS);
    store_enum(grouped.layout, dd.layout);
    static const int64_t kAlign[] = {1, 1, 1, 2, 4, 8, 16, 3};
    grouped.m_alignment = dd.layout == DGEMM_GROUP_MASKED ? (in.one_in(16) ? 2 : 1)
                          : in.one_in(32)                  ? in.take<int64_t>()
                                                           : kAlign[in.pick(8)];
    if (dd.layout == DGEMM_GROUP_CONTIGUOUS && grouped.m_alignment > 1 && !in.one_in(8) && m > 0) {
      // Usually keep m a multiple of the alignment (the rule), by picking the alignment from m's.
      while (grouped.m_alignment > 1 && m % grouped.m_alignment != 0) grouped.m_alignment /= 2;
    }
    const unsigned hint = in.pick(8);
    const int64_t cap = dd.layout == DGEMM_GROUP_MASKED ? m : m / std::max<int64_t>(1, batches);
    grouped.expected_m = hint < 4 ? 0 : hint < 6 ? int64_t(in.pick(unsigned(std::max<int64_t>(1, std::min<int64_t>(cap, 200)) + 1)))
                         : hint == 6 ? wadd(cap, 1) : in.take<int64_t>();
    if (in.one_in(48)) grouped.reserved0 = 1;
    dd.m_alignment = grouped.m_alignment;
    dd.expected_m = grouped.expected_m;
  }
  dgemm_scaling_t scaling;
  dgemm_scaling_init(&scaling);
  dd.has_scaling = !in.one_in(4);
  if (dd.has_scaling) {
    const int64_t sb = dd.shape == kContiguous ? 1 : batches;  // D scales of contiguous groups are shared
    scaling.a_scale = scale_desc(in, int(in.pick(5)), m, k, batches, false);
    scaling.b_scale = scale_desc(in, int(in.pick(5)), n, k, batches, false);
    const unsigned dmode = in.pick(8);
    scaling.d_scale = scale_desc(in, dmode < 4 ? 0 : dmode < 7 ? DGEMM_SCALE_VEC128 : int(in.pick(5)), m, n, sb, true);
    if (dd.shape == kContiguous && !in.one_in(8)) scaling.d_scale.stride = 0;
    scaling.flags = in.one_in(3) ? DGEMM_SCALING_AMAX_D : 0;
    if (in.one_in(48)) scaling.flags = in.take<uint32_t>();
    if (in.one_in(48)) scaling.reserved0 = 1;
    if (in.one_in(48)) scaling.reserved[in.pick(8)] = 1;
  }
  std::vector<unsigned char> g_store, s_store;
  bool g_bad = false, s_bad = false;
  dgemm_grouped_t* g_arg = dd.has_grouped ? versioned_ext(in, grouped, g_store, &g_bad, true) : nullptr;
  dgemm_scaling_t* s_arg = dd.has_scaling ? versioned_ext(in, scaling, s_store, &s_bad, true) : nullptr;
  if (dd.has_grouped && in.one_in(48)) store_enum(g_arg->header.type, raw_or(in, int32_t(in.pick(6))));
  const bool scaling_first = in.one_in(2);
  const void* chain = scaling_first ? Chain::link({s_arg ? &s_arg->header : nullptr, g_arg ? &g_arg->header : nullptr})
                                    : Chain::link({g_arg ? &g_arg->header : nullptr, s_arg ? &s_arg->header : nullptr});
  dgemm_scaling_t extra_scaling;
  dgemm_scale_args_t misplaced;
  if (chain && in.one_in(32)) {
    // A second scaling (given twice) or an execute-time extension at plan time, first or last.
    dgemm_scaling_init(&extra_scaling);
    dgemm_scale_args_init(&misplaced);
    dgemm_ext_header_t* bad = in.one_in(2) ? &extra_scaling.header : &misplaced.header;
    dgemm_ext_header_t* first = const_cast<dgemm_ext_header_t*>(static_cast<const dgemm_ext_header_t*>(chain));
    if (in.one_in(2)) {
      bad->next = first;
      chain = bad;
    } else {
      dgemm_ext_header_t* last = first;
      while (last->next) last = const_cast<dgemm_ext_header_t*>(static_cast<const dgemm_ext_header_t*>(last->next));
      last->next = bad;
    }
  }

  const dgemm_plan_t kSentinel = reinterpret_cast<dgemm_plan_t>(uintptr_t(0x5e47));
  dgemm_plan_t plan = kSentinel;
  const dgemm_status_t st = dgemm_create_plan_ext(context(), &problem, &epilogue, nullptr, chain, &plan);
  char where[768];
  std::snprintf(where, sizeof where, "create_plan_ext: m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " G=%" PRId64
                " shape=%d", m, n, k, batches, int(dd.shape));
  if (!valid_status(st)) violated("status out of range", where);
  if (st != DGEMM_STATUS_SUCCESS) {
    if (plan != kSentinel) violated("plan written by a failing create_plan_ext", where);
    if (dgemm_last_error()[0] == '\0') violated("failure without a message", where);
  }
  // The hint changes no status (only the choice of kernel), unless it is out of its range.
  if (dd.has_grouped && g_arg->expected_m != 0) {
    const int64_t hint = g_arg->expected_m;
    g_arg->expected_m = 0;
    dgemm_plan_t other = kSentinel;
    const dgemm_status_t st0 = dgemm_create_plan_ext(context(), &problem, &epilogue, nullptr, chain, &other);
    g_arg->expected_m = hint;
    if (st0 == DGEMM_STATUS_SUCCESS) dgemm_destroy_plan(other);
    const int64_t cap = dd.layout == DGEMM_GROUP_MASKED ? m : m / std::max<int64_t>(1, batches);
    const bool in_range = hint >= 0 && hint <= cap;
    if (in_range && st0 != st) violated("a valid expected_m changed the status of create_plan_ext", where);
    if (!in_range && st0 == DGEMM_STATUS_SUCCESS && st != DGEMM_STATUS_INVALID_ARGUMENT)
      violated("expected_m outside [0, cap] accepted", where);
  }
  if (st != DGEMM_STATUS_SUCCESS) {
    ++g_stats.refused;
    return;
  }
  ++g_stats.created;
  if (g_bad || s_bad) violated("a bad extension struct accepted", where);

  // The problem as the library understood it (white box: the same conversion; the 1.0 target
  // checks it), for the matrices' resolved leading dimensions.
  dgemm::Grouping grouping;
  const bool grouped_plan = dd.has_grouped;
  if (grouped_plan) {
    grouping.layout = dgemm::GroupLayout(dd.layout);
    grouping.m_alignment = dd.m_alignment;
    grouping.expected_m = dd.expected_m;
  }
  const dgemm::GemmProblem p = dgemm::api::convert_problem(&problem, grouping);
  const dgemm::Epilogue e = dgemm::api::convert_epilogue(&epilogue, p);
  const Shape shape = !grouped_plan ? (batches > 1 ? kBatched : kPlain)
                      : grouping.masked() ? kMasked : kContiguous;
  // The scale tensors, from the header's table (independent of the library's resolution).
  const Geom ga = dd.has_scaling ? geometry(scaling.a_scale, m, k, batches) : Geom{};
  const Geom gb = dd.has_scaling ? geometry(scaling.b_scale, n, k, batches) : Geom{};
  const Geom gd = dd.has_scaling ? geometry(scaling.d_scale, m, n, shape == kContiguous ? 1 : batches) : Geom{};
  const bool amax = dd.has_scaling && (scaling.flags & DGEMM_SCALING_AMAX_D);
  const bool scaled = ga.active() || gb.active() || gd.active() || amax;
  std::string desc = p.to_string() + " | " + e.to_string();
  if (scaled) {
    char s[256];
    std::snprintf(s, sizeof s, " | sa mode %d type %d layout %d ld %" PRId64 " stride %" PRId64 "; sb %d %d %d %" PRId64
                  " %" PRId64 "; sd %d %d %d %" PRId64 " %" PRId64 "%s", ga.mode, ga.type, ga.layout, ga.ld, ga.stride,
                  gb.mode, gb.type, gb.layout, gb.ld, gb.stride, gd.mode, gd.type, gd.layout, gd.ld, gd.stride,
                  amax ? " amax" : "");
    desc += s;
  }
  std::snprintf(where, sizeof where, "%s", desc.c_str());
  if (gd.active() && p.d_type != DType::F8E4M3 && p.d_type != DType::F8E5M2) violated("block-scaled non-FP8 D accepted", where);

  // The plan's scale shapes are the table's.
  for (int which = 0; which < 3; ++which) {
    const Geom& g = which == 0 ? ga : which == 1 ? gb : gd;
    int64_t rows = -1, cols = -1, ld = -1, elements = -1;
    if (dgemm_plan_scale_shape(plan, dgemm_scale_tensor_t(which), &rows, &cols, &ld, &elements) != DGEMM_STATUS_SUCCESS)
      violated("dgemm_plan_scale_shape failed", where);
    if (rows != g.rows || cols != g.cols || ld != (g.active() ? g.ld : 0) || elements != g.elements) {
      char msg[256];
      std::snprintf(msg, sizeof msg, "scale shape %d: %" PRId64 " x %" PRId64 " ld %" PRId64 " elements %" PRId64
                    ", the table says %" PRId64 " x %" PRId64 " ld %" PRId64 " elements %" PRId64, which, rows, cols, ld,
                    elements, g.rows, g.cols, g.ld, g.elements);
      violated(msg, where);
    }
  }
  if (in.one_in(32)) {
    const int bad_which = in.one_in(2) ? 3 : in.one_in(2) ? -1 : in.take<int32_t>() | 0x100;
    if (dgemm_fuzz_plan_scale_shape_raw(plan, bad_which, nullptr, nullptr, nullptr, nullptr) !=
        DGEMM_STATUS_INVALID_ARGUMENT)
      violated("dgemm_plan_scale_shape accepted a bad tensor", where);
  }

  // Buffers (nothing to read or write when the output is empty; keep every input fast).
  const bool work = !p.empty_output();
  auto extent = [&](int64_t rows, int64_t cols, int64_t ld, int64_t stride) -> int64_t {
    if (rows == 0 || cols == 0) return 0;
    return (p.order == dgemm::Order::RowMajor ? (rows - 1) * ld + cols : (cols - 1) * ld + rows) +
           (batches - 1) * stride;
  };
  const int64_t na = work && k > 0 ? extent(p.a_rows(), p.a_cols(), p.lda, p.stride_a) : 0;
  const int64_t nb = work && k > 0 ? extent(p.b_rows(), p.b_cols(), p.ldb, p.stride_b) : 0;
  const int64_t nc = work && e.reads_c() ? extent(m, n, p.ldc, p.stride_c) : 0;
  const int64_t nd = work ? extent(m, n, p.ldd, p.stride_d) : 0;
  const int64_t nsa = work && k > 0 ? ga.elements : 0, nsb = work && k > 0 ? gb.elements : 0;
  const int64_t nsd = work ? gd.elements : 0;
  constexpr int64_t kMaxElements = 1 << 16;
  const double macs = double(m) * double(n) * double(std::max<int64_t>(k, 1)) * (shape == kContiguous ? 1.0 : double(batches));
  if (na > kMaxElements || nb > kMaxElements || nc > kMaxElements || nd > kMaxElements || nsa > kMaxElements ||
      nsb > kMaxElements || nsd > kMaxElements || macs > double(1 << 17) || (grouped_plan && batches > 64)) {
    dgemm_destroy_plan(plan);
    return;
  }
  const bool grouped_vectors = grouped_plan;
  auto vec_len = [&](dgemm::VectorMode mode) -> int64_t {
    if (!work) return 0;
    switch (mode) {
      case dgemm::VectorMode::PerTensor: return grouped_vectors ? batches : 1;
      case dgemm::VectorMode::PerRow: return shape == kMasked ? batches * m : m;
      case dgemm::VectorMode::PerColumn: return grouped_vectors ? batches * n : n;
      default: return 0;
    }
  };
  const int64_t bias_len = vec_len(e.bias_mode), scale_len = vec_len(e.scale_mode);
  std::mt19937 rng(in.take<uint32_t>());
  const bool specials = in.one_in(6);
  const std::size_t dsz = dgemm::dtype_size(p.d_type);
  Guarded A(std::size_t(na) * dgemm::dtype_size(p.a_type)), B(std::size_t(nb) * dgemm::dtype_size(p.b_type)),
      C(std::size_t(nc) * dgemm::dtype_size(p.c_type)), D(std::size_t(nd) * dsz, 0xCD);
  fill(p.a_type, A.data(), na, rng);
  fill(p.b_type, B.data(), nb, rng);
  fill(p.c_type, C.data(), nc, rng);
  Guarded bias(std::size_t(bias_len) * 4), oscale(std::size_t(scale_len) * 4), zero(std::size_t(scale_len) * 4);
  fill(e.bias_type, bias.data(), bias_len, rng);
  for (int64_t i = 0; i < scale_len; ++i) {
    reinterpret_cast<float*>(oscale.data())[i] = float(1 + rng() % 4) * 0.5f;
    reinterpret_cast<int32_t*>(zero.data())[i] = int32_t(rng() % 7) - 3;
  }
  Guarded SA(std::size_t(nsa) * ga.esize), SB(std::size_t(nsb) * gb.esize), SD(std::size_t(nsd) * gd.esize, 0xCD);
  fill_scales(Geom{ga.mode, ga.type, ga.layout, 0, 0, 0, 0, nsa, ga.esize}, SA.data(), rng, specials);
  fill_scales(Geom{gb.mode, gb.type, gb.layout, 0, 0, 0, 0, nsb, gb.esize}, SB.data(), rng, specials);
  Guarded AMAX(4, 0xCD), STATUS(4, 0xCD);

  // The per-group arrays: valid ones, broken now and then.
  const int64_t G = batches;
  const int64_t n_rows = grouped_plan ? (shape == kContiguous ? G + 1 : G) : 0;
  Guarded ROWS(std::size_t(n_rows) * 4 + 8);
  int32_t* rows_arr = reinterpret_cast<int32_t*>(ROWS.data());
  if (grouped_plan) {
    if (shape == kContiguous) {
      const int64_t align = std::max<int64_t>(1, dd.m_alignment), slots = m / align;
      for (int64_t i = 0; i <= G; ++i) rows_arr[i] = int32_t(align * int64_t(rng() % uint32_t(slots + 1)));
      std::sort(rows_arr, rows_arr + G + 1);
      if (rng() % 2) rows_arr[0] = 0;
      if (rng() % 2) rows_arr[G] = int32_t(m);
    } else {
      for (int64_t g = 0; g < G; ++g) rows_arr[g] = rng() % 3 == 0 ? int32_t(m) : int32_t(rng() % uint32_t(m + 1));
    }
    if (in.one_in(8)) {
      // Break one entry: negative, past m, below its predecessor, or unaligned.
      const int64_t at = int64_t(in.pick(unsigned(n_rows)));
      const unsigned how = in.pick(5);
      const int64_t v = how == 0   ? -1 - int64_t(in.pick(3))
                        : how == 1 ? m + 1 + int64_t(in.pick(3))
                        : how == 2 ? (at > 0 ? int64_t(rows_arr[at - 1]) - 1 : -1)
                        : how == 3 ? int64_t(rows_arr[at]) + 1
                                   : int64_t(in.take<int32_t>());
      rows_arr[at] = int32_t(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX));
    }
  }
  // Independent check of the documented rules (deepgemm.h, "grouped problems").
  bool rows_valid = true;
  std::vector<int64_t> row_begin(std::size_t(grouped_plan ? G : 0), 0), row_end(std::size_t(grouped_plan ? G : 0), m);
  if (grouped_plan) {
    if (shape == kContiguous) {
      const int64_t align = dd.m_alignment;
      for (int64_t i = 0; i <= G; ++i) {
        const int64_t v = rows_arr[i];
        if (v < 0 || v > m || v % align != 0 || (i > 0 && v < rows_arr[i - 1])) rows_valid = false;
      }
      for (int64_t g = 0; g < G; ++g) {
        row_begin[std::size_t(g)] = rows_arr[g];
        row_end[std::size_t(g)] = rows_arr[g + 1];
      }
    } else {
      for (int64_t g = 0; g < G; ++g) {
        if (rows_arr[g] < 0 || rows_arr[g] > m) rows_valid = false;
        row_end[std::size_t(g)] = rows_arr[g];
      }
    }
  }

  const std::vector<unsigned char> before_a = A.bytes, before_b = B.bytes, before_c = C.bytes, before_d = D.bytes,
                                   before_bias = bias.bytes, before_os = oscale.bytes, before_zp = zero.bytes,
                                   before_sa = SA.bytes, before_sb = SB.bytes, before_sd = SD.bytes,
                                   before_amax = AMAX.bytes, before_status = STATUS.bytes, before_rows = ROWS.bytes;

  // Execute-time arguments. At most one thing is broken on purpose: `chain_fail` (the chain or an
  // extension struct: refused even when there is nothing to compute) or `must_fail` (a pointer
  // the computation reads or writes: refused when it computes).
  bool chain_fail = false, must_fail = false;
  dgemm_status_t want_failure = DGEMM_STATUS_INVALID_ARGUMENT;
  dgemm_args_t args;
  dgemm_args_init(&args);
  const bool host_scalars = in.one_in(4);
  if (host_scalars) {
    args.scalar_mode = DGEMM_SCALARS_HOST;
    args.alpha = scalar(in);
    args.beta = e.reads_c() ? scalar(in) : 0.0f;
  }
  args.bias = bias.data();
  args.scale = reinterpret_cast<const float*>(oscale.data());
  args.zero_point = reinterpret_cast<const int32_t*>(zero.data());

  dgemm_group_args_t ga_args;
  dgemm_group_args_init(&ga_args);
  if (shape == kContiguous) ga_args.offsets = rows_arr;
  if (shape == kMasked) ga_args.counts = rows_arr;
  ga_args.status = in.one_in(4) ? nullptr : reinterpret_cast<uint32_t*>(STATUS.data());
  dgemm_scale_args_t sc_args;
  dgemm_scale_args_init(&sc_args);
  sc_args.a_scale = SA.data();
  sc_args.b_scale = SB.data();
  sc_args.d_scale = SD.data();
  sc_args.amax_d = reinterpret_cast<float*>(AMAX.data());
  if (k == 0 && in.one_in(2)) sc_args.a_scale = sc_args.b_scale = nullptr;  // not read when k = 0
  bool give_group = grouped_plan, give_scale = scaled;
  if (grouped_plan && !rows_valid) chain_fail = true;  // a CPU context checks every value
  // The plan's array missing, or the other layout's given too.
  auto break_group_array = [&] {
    const int32_t*& mine = shape == kContiguous ? ga_args.offsets : ga_args.counts;
    const int32_t*& other = shape == kContiguous ? ga_args.counts : ga_args.offsets;
    if (in.one_in(2)) mine = nullptr;
    else other = rows_arr;
  };
  const unsigned breakage = in.one_in(4) ? in.pick(12) : 99;
  if (breakage == 0 && (grouped_plan || scaled)) {
    if (grouped_plan && (!scaled || in.one_in(2))) give_group = false;
    else give_scale = false;
    chain_fail = true;
  } else if (breakage == 1) {
    if (!grouped_plan) {
      give_group = true;  // refused by a plan that is not grouped
      ga_args.offsets = rows_arr;
    } else if (!scaled) {
      give_scale = true;  // refused by a plan without scaling
    } else {
      break_group_array();
    }
    chain_fail = true;
  } else if (breakage == 2 && grouped_plan) {
    if (in.one_in(2)) {
      (shape == kContiguous ? ga_args.offsets : ga_args.counts) = reinterpret_cast<const int32_t*>(ROWS.data(2));
    } else {
      ga_args.status = reinterpret_cast<uint32_t*>(STATUS.data(1));
    }
    chain_fail = true;
  } else if (breakage == 3 && grouped_plan) {
    break_group_array();
    chain_fail = true;
  } else if ((breakage == 4 || breakage == 5) && scaled) {
    // A pointer the plan reads or writes: NULL or off its element alignment.
    const unsigned which = in.pick(4);
    const bool null = in.one_in(2);
    if (which == 0 && ga.active() && k > 0 && (null || ga.esize > 1)) {
      sc_args.a_scale = null ? nullptr : SA.data(1);
      must_fail = true;
    } else if (which == 1 && gb.active() && k > 0 && (null || gb.esize > 1)) {
      sc_args.b_scale = null ? nullptr : SB.data(1);
      must_fail = true;
    } else if (which == 2 && gd.active() && (null || gd.esize > 1)) {
      sc_args.d_scale = null ? nullptr : SD.data(1);
      must_fail = true;
    } else if (which == 3 && amax) {
      sc_args.amax_d = null ? nullptr : reinterpret_cast<float*>(AMAX.data(2));
      must_fail = true;
    }
  }
  std::vector<unsigned char> xg_store, xs_store;
  bool xg_bad = false, xs_bad = false;
  dgemm_group_args_t* xg = give_group ? versioned_ext(in, ga_args, xg_store, &xg_bad, breakage == 6) : nullptr;
  dgemm_scale_args_t* xs = give_scale ? versioned_ext(in, sc_args, xs_store, &xs_bad, breakage == 7) : nullptr;
  if (xg_bad || xs_bad) chain_fail = true;
  const bool scale_first = in.one_in(2);
  const void* xchain = scale_first ? Chain::link({xs ? &xs->header : nullptr, xg ? &xg->header : nullptr})
                                   : Chain::link({xg ? &xg->header : nullptr, xs ? &xs->header : nullptr});
  dgemm_scale_args_t twice;
  dgemm_grouped_t wrong_stage;
  dgemm_ext_header_t unknown{};
  if (breakage == 8) {
    // A broken chain: a type given twice, a plan-time extension, an unknown type.
    dgemm_scale_args_init(&twice);
    dgemm_grouped_init(&wrong_stage);
    unknown.type = 5 + in.pick(1000);
    unknown.struct_size = sizeof unknown;
    const unsigned how = in.pick(3);
    dgemm_ext_header_t* bad = how == 0 ? &twice.header : how == 1 ? &wrong_stage.header : &unknown;
    bad->next = xchain;  // first: its fault is the first the chain shows
    xchain = bad;
    chain_fail = true;
    if (how == 2) want_failure = DGEMM_STATUS_NOT_SUPPORTED;
  }
  const bool use_10 = breakage == 9 && (grouped_plan || scaled);  // dgemm_execute: the extensions are missing
  if (use_10) chain_fail = true;

  size_t ws_need = 0;
  if (dgemm_plan_workspace_size(plan, &ws_need) != DGEMM_STATUS_SUCCESS) violated("workspace size", where);
  size_t ws_size = ws_need;
  const std::size_t ws_shift = in.pick(8);
  if (ws_need > 0 && breakage == 10 && !chain_fail && !must_fail) {
    ws_size = in.pick(unsigned(std::min<size_t>(ws_need, 255)));
    want_failure = DGEMM_STATUS_INSUFFICIENT_WORKSPACE;
    must_fail = true;
  }
  Guarded W(ws_size, 0x3C, ws_shift);
  const void* a_ptr = k > 0 ? A.data() : nullptr;
  const void* b_ptr = k > 0 ? B.data() : nullptr;
  const dgemm_args_t* x_arg = host_scalars || e.bias_mode != dgemm::VectorMode::None ||
                                      e.scale_mode != dgemm::VectorMode::None || e.zero_point || !in.one_in(4)
                                  ? &args
                                  : nullptr;
  const dgemm_status_t xst =
      use_10 ? dgemm_execute(plan, a_ptr, b_ptr, e.reads_c() ? C.data() : nullptr, D.data(), x_arg,
                             ws_size ? W.data() : nullptr, ws_size, nullptr)
             : dgemm_execute_ext(plan, a_ptr, b_ptr, e.reads_c() ? C.data() : nullptr, D.data(), x_arg, xchain,
                                 ws_size ? W.data() : nullptr, ws_size, nullptr);
  if (!valid_status(xst)) violated("execute status out of range", where);
  if (!work) must_fail = false;  // nothing is read or written: only the chain and structs are checked
  if (chain_fail) must_fail = true;
  if (A.bytes != before_a || B.bytes != before_b || C.bytes != before_c || bias.bytes != before_bias ||
      oscale.bytes != before_os || zero.bytes != before_zp || SA.bytes != before_sa || SB.bytes != before_sb ||
      ROWS.bytes != before_rows)
    violated("an input was modified", where);
  if (!W.guards_intact()) violated("written outside the workspace", where);
  if (xst != DGEMM_STATUS_SUCCESS) {
    if (D.bytes != before_d) violated("D written by a failing execute", where);
    if (SD.bytes != before_sd) violated("d_scale written by a failing execute", where);
    if (AMAX.bytes != before_amax) violated("amax_d written by a failing execute", where);
    if (STATUS.bytes != before_status) violated("the group status word written by a failing execute", where);
    if (dgemm_last_error()[0] == '\0') violated("execute failure without a message", where);
    if (!must_fail) violated("valid execute refused", where);
    if (xst != want_failure) violated("wrong failure status", where);
    ++g_stats.failed;
    dgemm_destroy_plan(plan);
    return;
  }
  ++g_stats.executed;
  if (must_fail) violated("invalid execute arguments accepted", where);
  if (!D.guards_intact()) violated("written outside D", where);
  if (!SD.guards_intact()) violated("written outside d_scale", where);
  if (!AMAX.guards_intact() || !STATUS.guards_intact()) violated("written next to amax_d or the status word", where);
  if (!work) {
    if (D.bytes != before_d || SD.bytes != before_sd || AMAX.bytes != before_amax || STATUS.bytes != before_status)
      violated("an execute with nothing to compute wrote an output", where);
    dgemm_destroy_plan(plan);
    return;
  }
  if (grouped_plan && ga_args.status) {
    uint32_t word;
    std::memcpy(&word, STATUS.data(), 4);
    if (word != 0) violated("status word not 0 after valid arrays", where);
  } else if (STATUS.bytes != before_status) {
    violated("a status word nobody gave was written", where);
  }

  g_stats.grouped += grouped_plan;
  g_stats.masked += shape == kMasked;
  g_stats.scaled_in += ga.active() || gb.active();
  g_stats.blocked_in += ga.blocked() || gb.blocked();
  g_stats.block_out += gd.active();
  g_stats.amax += amax;
  g_stats.grouped_scaled += grouped_plan && scaled;
  // Every element of D in the groups' rows, their block scales and the amax, against the
  // reference; nothing else of D's or d_scale's buffer.
  Ref ref{&p, &e, shape, G, ga, gb, gd, A.data(), B.data(), C.data(), bias.data(), SA.data(), SB.data(),
          reinterpret_cast<const float*>(oscale.data()), reinterpret_cast<const int32_t*>(zero.data()), e.alpha, e.beta};
  if (host_scalars) {
    ref.alpha = args.alpha;
    ref.beta = args.beta;
  }
  std::vector<char> inside(std::size_t(nd) * dsz, 0), inside_sd(std::size_t(nsd) * gd.esize, 0);
  double amax_lo = 0, amax_hi = 0;
  bool amax_nan = false, amax_unbounded = false, amax_any = false;
  std::vector<Ref::Value> rowv(static_cast<std::size_t>(n));
  char msg[320];
  for (int64_t g = 0; g < G; ++g) {
    const int64_t i0 = grouped_plan ? row_begin[std::size_t(g)] : 0, i1 = grouped_plan ? row_end[std::size_t(g)] : m;
    for (int64_t i = i0; i < i1; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const Ref::Value v = ref.at(g, i, j);
        rowv[std::size_t(j)] = v;
        if (amax) {
          if (std::isnan(v.y)) amax_nan = true;
          if (bad_value(v.ytol)) amax_unbounded = true;
          if (v.anything) amax_any = true;
          amax_lo = std::max(amax_lo, std::max(0.0, std::fabs(v.y) - v.ytol));
          amax_hi = std::max(amax_hi, std::fabs(v.y) + v.ytol);
        }
      }
      for (int64_t jb = 0; jb * 128 < n; ++jb) {
        const int64_t j0 = jb * 128, j1 = std::min(n, j0 + 128);
        double s = 1.0;  // D's block scale as stored (the division the check applies)
        if (gd.active()) {
          const int64_t si = gd.index(shape == kContiguous ? 0 : g, i, j0);
          std::memset(&inside_sd[std::size_t(si) * gd.esize], 1, gd.esize);
          s = load_scale(gd, SD.data(), si);
          double lo = 0, hi = 0;
          bool nan = false, unbounded = false, any = false;
          for (int64_t j = j0; j < j1; ++j) {
            const Ref::Value& v = rowv[std::size_t(j)];
            if (std::isnan(v.z)) nan = true;
            if (bad_value(v.tol)) unbounded = true;
            if (v.anything) any = true;
            lo = std::max(lo, std::max(0.0, std::fabs(v.z) - v.tol));
            hi = std::max(hi, std::fabs(v.z) + v.tol);
          }
          const bool ue8m0 = gd.type == DGEMM_SCALE_TYPE_UE8M0;
          const double s_lo = block_scale(lo, p.d_type, ue8m0), s_hi = block_scale(hi, p.d_type, ue8m0);
          bool ok = true;
          if (any) ok = true;
          else if (nan) ok = std::isnan(s);
          else if (!unbounded)
            ok = std::isnan(s_hi) ? (std::isnan(s) || (std::isnan(s_lo) ? false : s >= s_lo)) || std::isnan(s_lo)
                                  : (!std::isnan(s) && s >= s_lo && s <= s_hi);
          if (!ok) {
            std::snprintf(msg, sizeof msg, "d_scale[%" PRId64 "](%" PRId64 ", block %" PRId64 ") = %g, the rule gives [%g, %g]",
                          g, i, jb, s, s_lo, s_hi);
            violated(msg, where);
          }
        }
        for (int64_t j = j0; j < j1; ++j) {
          const Ref::Value& v = rowv[std::size_t(j)];
          const int64_t o = g * p.stride_d + ref.off(i, j, p.ldd);
          std::memset(&inside[std::size_t(o) * dsz], 1, dsz);
          const double got = dgemm::load_as_double(p.d_type, D.data(), o);
          ++g_stats.rows_checked;
          bool same;
          if (v.anything) {
            same = true;
          } else if (gd.active()) {
            if (std::isnan(s)) {
              same = std::isnan(got);
            } else {
              const double want = ref.quantize(g, i, j, v.z / s);
              const double lo = ref.quantize(g, i, j, (v.z - v.tol) / s), hi = ref.quantize(g, i, j, (v.z + v.tol) / s);
              same = (std::isnan(got) && std::isnan(want)) || accepts(got, want, lo, hi, v.z);
            }
          } else {
            const double want = ref.quantize(g, i, j, v.z);
            const double lo = ref.quantize(g, i, j, v.z - v.tol), hi = ref.quantize(g, i, j, v.z + v.tol);
            same = (std::isnan(got) && std::isnan(want)) || accepts(got, want, lo, hi, v.z);
          }
          if (!same) {
            std::snprintf(msg, sizeof msg,
                          "D[%" PRId64 "](%" PRId64 ", %" PRId64 ") = %g, reference z %g tol %g (D block scale %g; "
                          "acc %g, x %g; first K block: sa %g sb %g partial sum %g)",
                          g, i, j, got, v.z, v.tol, s, v.acc, v.x, v.sa0, v.sb0, v.part0);
            violated(msg, where);
          }
        }
      }
    }
  }
  for (std::size_t i = 0; i < inside.size(); ++i)
    if (!inside[i] && D.bytes[Guarded::kGuard + i] != 0xCD)
      violated("a byte of D's buffer outside the groups' elements was written", where);
  for (std::size_t i = 0; i < inside_sd.size(); ++i)
    if (!inside_sd[i] && SD.bytes[Guarded::kGuard + i] != 0xCD)
      violated("a byte of d_scale's buffer outside the computed rows' scales was written", where);
  if (amax) {
    float got;
    std::memcpy(&got, AMAX.data(), 4);
    const bool ok = amax_any ? true
                    : amax_nan ? std::isnan(got)
                    : amax_unbounded ? true
                                     : (!std::isnan(got) && got >= float(amax_lo) && got <= float(amax_hi));
    if (!ok) {
      std::snprintf(msg, sizeof msg, "amax_d = %g, the reference [%g, %g]%s", double(got), amax_lo, amax_hi,
                    amax_nan ? " (NaN)" : "");
      violated(msg, where);
    }
  } else if (AMAX.bytes != before_amax) {
    violated("amax_d written by a plan without DGEMM_SCALING_AMAX_D", where);
  }
  if (!gd.active() && SD.bytes != before_sd) violated("d_scale written by a plan without block scales", where);
  dgemm_destroy_plan(plan);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  run(in);
  return 0;
}

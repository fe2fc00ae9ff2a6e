// Tests of the CPU reference backend (src/backend/cpu/cpu_gemm) against the independent naive
// reference in tests/common/reference.hpp: every accepted type combination, both storage orders,
// all four transposes, padded leading dimensions, batches (with broadcast), every epilogue option,
// the DESIGN.md edge sizes in each of M, N and K, k = 0, C aliasing D, and the public C API on the
// CPU device. Inputs are random and never zero; D is poisoned before each run, guard bytes around
// and inside D (padding) must stay untouched, and every element must be written.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_gemm.hpp"
#include "common/reference.hpp"
#include "common/shapes.hpp"
#include "core/error.hpp"
#include "core/float_convert.hpp"
#include "deepgemm/deepgemm.h"

using namespace dgemm;
using namespace dgemm_test;

namespace {

const char* scalar_mode_name(ScalarMode m) {
  return m == ScalarMode::FromPlan ? "from_plan" : m == ScalarMode::Host ? "host" : "device";
}

struct Case {
  GemmProblem p;
  Epilogue e;
  ScalarMode mode = ScalarMode::FromPlan;
  float run_alpha = 1.0f, run_beta = 0.0f;  // used in Host / Device modes
  bool alias_cd = false;                    // C and D are the same buffer
  int64_t sample = 0;                       // 0: check every element; else this many random ones
  double input_range = 2.0;                 // float inputs uniform in (-range, range)
  int i8_input_limit = 127;                 // i8 inputs uniform in [-limit, limit] (never 0)
  bool unit_scale = false;                  // output scales of +-1 (keeps exact ties exact)
  bool offset_pointers = false;             // A, B, C, D one element past a 16-byte boundary
};

struct Outcome {
  int failures = 0;
  double seconds = 0;  // of the last cpu_gemm call
};

// The seed of a case is a hash (FNV-1a) of its description, so that a failing case's data are
// the same whichever tests run before it (--run_test=<name> reproduces it).
uint64_t seed_of(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// Elements spanned by batch_count matrices (0 when the matrix is empty).
int64_t extent(const GemmProblem& p, int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
  if (rows == 0 || cols == 0) return 0;
  int64_t one = p.order == Order::RowMajor ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
  return one + (p.batch_count - 1) * stride;
}

// Random representable values of type t, never zero.
void fill_random(DType t, void* buf, int64_t count, std::mt19937_64& rng, double range, int i8_limit = 128) {
  std::uniform_real_distribution<double> real(-range, range);
  std::uniform_int_distribution<int> i8(-i8_limit, std::min(i8_limit, 127)), i32(-100000, 100000);
  for (int64_t i = 0; i < count; ++i) {
    do {
      double v = t == DType::I8 ? i8(rng) : t == DType::I32 ? i32(rng) : real(rng);
      store_from_double(t, buf, i, v, true);
    } while (load_as_double(t, buf, i) == 0.0);
  }
}

// An alpha that keeps outputs in an interesting part of the output type's range: a few units for
// floats (fp8 included), tens for i8, so that rounding and saturation are both exercised.
float natural_alpha(const GemmProblem& p) {
  if (p.is_integer() && p.d_type == DType::I32) return 1.0f;
  double target = p.d_type == DType::I8 ? 60.0 : 4.0;
  double product_rms = p.is_integer() ? 5461.0 : 1.33;
  return float(target / (std::sqrt(double(std::max<int64_t>(p.k, 1))) * product_rms));
}

bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

std::string describe(const Case& c) {
  std::ostringstream os;
  os << c.p.to_string() << " | " << c.e.to_string() << " | scalars=" << scalar_mode_name(c.mode);
  if (c.mode != ScalarMode::FromPlan) os << "(" << c.run_alpha << "," << c.run_beta << ")";
  if (c.alias_cd) os << " C==D";
  if (c.i8_input_limit != 127) os << " i8_inputs=+-" << c.i8_input_limit;
  if (c.unit_scale) os << " unit_scale";
  if (c.offset_pointers) os << " offset_pointers";
  return os.str();
}

Outcome run_case(Case c, const std::string& label) {
  Outcome out;
  GemmProblem& p = c.p;
  p.resolve_and_validate();
  c.e.validate(p);
  const std::string what = "[" + label + "] " + describe(c);
  const uint64_t seed = seed_of(what);
  std::mt19937_64 rng(seed);
  const std::string repro = "repro: " + what + " seed=" + std::to_string(seed);

  const bool reads_c = c.e.reads_c();
  const std::size_t asz = dtype_size(p.a_type), bsz = dtype_size(p.b_type), csz = dtype_size(p.c_type),
                    dsz = dtype_size(p.d_type);
  const int64_t na = p.k > 0 ? extent(p, p.a_rows(), p.a_cols(), p.lda, p.stride_a) : 0;
  const int64_t nb = p.k > 0 ? extent(p, p.b_rows(), p.b_cols(), p.ldb, p.stride_b) : 0;
  const int64_t nc = reads_c ? extent(p, p.m, p.n, p.ldc, p.stride_c) : 0;
  const int64_t nd = extent(p, p.m, p.n, p.ldd, p.stride_d);
  // Operands may start one element past an aligned address (any element-aligned pointer is legal).
  const std::size_t shift = c.offset_pointers ? 1 : 0;
  std::vector<unsigned char> a_mem((std::size_t(na) + shift) * asz + 1), b_mem((std::size_t(nb) + shift) * bsz + 1),
      c_mem((std::size_t(nc) + shift) * csz + 1);
  unsigned char* a = a_mem.data() + shift * asz;
  unsigned char* b = b_mem.data() + shift * bsz;
  unsigned char* cbuf = c_mem.data() + shift * csz;
  fill_random(p.a_type, a, na, rng, c.input_range, c.i8_input_limit);
  fill_random(p.b_type, b, nb, rng, c.input_range, c.i8_input_limit);
  fill_random(p.c_type, cbuf, nc, rng, 2.0);

  const int64_t bias_len = c.e.bias_mode == VectorMode::PerRow ? p.m : p.n;
  std::vector<unsigned char> bias(std::size_t(bias_len) * 4 + 4);
  fill_random(c.e.bias_type, bias.data(), bias_len, rng, 2.0);
  const int64_t scale_len = c.e.scale_mode == VectorMode::PerRow ? p.m : c.e.scale_mode == VectorMode::PerColumn ? p.n : 1;
  std::vector<float> scale(static_cast<std::size_t>(scale_len));
  std::vector<int32_t> zero_point(static_cast<std::size_t>(scale_len));
  std::uniform_real_distribution<double> mag(0.5, 2.0);
  std::uniform_int_distribution<int> zp(1, 20);
  for (int64_t i = 0; i < scale_len; ++i) {
    scale[std::size_t(i)] = float(((rng() & 1) ? 1 : -1) * (c.unit_scale ? 1.0 : mag(rng)));
    zero_point[std::size_t(i)] = (rng() & 1) ? zp(rng) : -zp(rng);
  }

  ExecArgs x;
  x.a = p.k > 0 ? a : nullptr;  // k = 0 must not read A or B
  x.b = p.k > 0 ? b : nullptr;
  x.bias = c.e.bias_mode != VectorMode::None ? bias.data() : nullptr;
  x.scale = c.e.scale_mode != VectorMode::None ? scale.data() : nullptr;
  x.zero_point = c.e.zero_point ? zero_point.data() : nullptr;
  // Exactly the workspace the plan asks for, at an odd address, between guard bands that must
  // keep their poison (the scratch must stay inside it, whatever the pointer's alignment).
  const std::size_t kWsGuard = 64 + 3;
  const std::size_t ws_size = cpu_gemm_workspace_size(p);
  std::vector<unsigned char> ws_mem(ws_size + 2 * kWsGuard, 0xA5);
  x.workspace = ws_mem.data() + kWsGuard;
  x.workspace_size = ws_size;
  auto guards_intact = [&] {
    for (std::size_t i = 0; i < kWsGuard; ++i)
      if (ws_mem[i] != 0xA5 || ws_mem[kWsGuard + ws_size + i] != 0xA5) return false;
    return true;
  };
  x.scalar_mode = c.mode;
  double alpha = c.e.alpha, beta = c.e.beta;
  if (c.mode == ScalarMode::FromPlan) {
    x.alpha = 1e30f;  // FROM_PLAN means the epilogue's scalars: these must be ignored
    x.beta = 1e30f;
  } else if (c.mode == ScalarMode::Host) {
    x.alpha = c.run_alpha;
    x.beta = c.run_beta;
    alpha = c.run_alpha;
    beta = c.run_beta;
  } else {
    x.alpha = 1e30f;  // must be ignored
    x.beta = 1e30f;
    x.alpha_ptr = &c.run_alpha;
    x.beta_ptr = reads_c ? &c.run_beta : nullptr;
    alpha = c.run_alpha;
    beta = reads_c ? c.run_beta : 0.0;
  }

  // D with guard bands; `inside` marks the bytes of D's elements (everything else must keep the poison).
  const std::size_t kGuard = 64 + shift * dsz;
  std::vector<unsigned char> dbuf(std::size_t(nd) * dsz + 2 * kGuard);
  void* d = dbuf.data() + kGuard;
  std::vector<char> inside(dbuf.size(), 0);
  for (int64_t bt = 0; bt < p.batch_count; ++bt)
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        std::size_t off = kGuard + std::size_t(bt * p.stride_d + ref_offset(p, i, j, p.ldd)) * dsz;
        std::memset(&inside[off], 1, dsz);
      }
  x.d = d;
  x.c = reads_c ? cbuf : nullptr;
  if (c.alias_cd) {
    BOOST_REQUIRE(reads_c && p.c_type == p.d_type && p.ldc == p.ldd && p.stride_c == p.stride_d);
    x.c = d;
  }

  auto run_once = [&](unsigned char poison) {
    std::memset(dbuf.data(), poison, dbuf.size());
    if (c.alias_cd) std::memcpy(d, cbuf, std::size_t(nd) * dsz);
    auto t0 = std::chrono::steady_clock::now();
    cpu_gemm(p, c.e, x);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return dbuf;
  };
  const std::vector<unsigned char> first = run_once(0xFF);
  // What each byte held before the run (C's bytes when C aliases D, else the poison).
  std::vector<unsigned char> before(dbuf.size(), 0xFF);
  if (c.alias_cd) std::memcpy(before.data() + kGuard, cbuf, std::size_t(nd) * dsz);
  // A second run with another poison shows every element was written (an unwritten byte would
  // differ between the two). With C == D both runs start from C, so the values check covers it.
  const std::vector<unsigned char> second = c.alias_cd ? first : run_once(0x5A);
  if (!guards_intact()) {
    BOOST_ERROR("cpu_gemm wrote outside its " << ws_size << "-byte workspace. " << repro);
    ++out.failures;
    return out;
  }
  for (std::size_t i = 0; i < dbuf.size(); ++i) {
    if (inside[i]) {
      if (first[i] != second[i]) {
        BOOST_ERROR("byte " << i << " of D's elements not written (differs between poisons). " << repro);
        ++out.failures;
        return out;
      }
    } else if (first[i] != before[i] || (!c.alias_cd && second[i] != 0x5A)) {
      BOOST_ERROR("byte " << (std::ptrdiff_t(i) - std::ptrdiff_t(kGuard)) << " (relative to D) outside D's elements was modified. "
                          << repro);
      ++out.failures;
      return out;
    }
  }

  // Values against the reference (computed from the original C even when C aliases D).
  ExecArgs rx = x;
  rx.c = cbuf;
  rx.d = nullptr;
  const bool exact = p.is_integer() && p.d_type == DType::I32 && c.e.is_identity() && alpha == 1.0;
  auto check = [&](int64_t bt, int64_t i, int64_t j) {
    const int64_t off = bt * p.stride_d + ref_offset(p, i, j, p.ldd);
    const double got = load_as_double(p.d_type, second.data() + kGuard, off);
    const RefValue r = reference_element(p, c.e, rx, alpha, beta, bt, i, j);
    const double want = reference_quantize(p, c.e, rx, i, j, r.z);
    bool ok;
    if (exact) {
      ok = got == std::min(std::max(r.z, -2147483648.0), 2147483647.0);
    } else {
      const double lo = reference_quantize(p, c.e, rx, i, j, r.z - r.tol);
      const double hi = reference_quantize(p, c.e, rx, i, j, r.z + r.tol);
      ok = same_value(got, want) || same_value(got, lo) || same_value(got, hi) ||
           (got >= std::min(lo, hi) && got <= std::max(lo, hi));
    }
    if (!ok && out.failures < 3) {
      BOOST_ERROR("D[batch " << bt << "](" << i << ", " << j << ") = " << got << ", want " << want << " (z = " << r.z
                             << " +- " << r.tol << "). " << repro);
    }
    if (!ok) ++out.failures;
  };
  if (c.sample > 0) {
    std::uniform_int_distribution<int64_t> bd(0, p.batch_count - 1), id(0, p.m - 1), jd(0, p.n - 1);
    for (int64_t s = 0; s < c.sample; ++s) check(bd(rng), id(rng), jd(rng));
  } else {
    for (int64_t bt = 0; bt < p.batch_count; ++bt)
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) check(bt, i, j);
  }
  if (out.failures > 3) BOOST_ERROR(out.failures << " elements wrong in total. " << repro);
  return out;
}

GemmProblem make_problem(int64_t m, int64_t n, int64_t k, DType ab, DType c, DType d) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a_type = p.b_type = ab;
  p.c_type = c;
  p.d_type = d;
  p.compute_type = ab == DType::I8 ? DType::I32 : DType::F32;
  return p;
}

Case make_case(const GemmProblem& p, float beta = 0.0f) {
  Case c;
  c.p = p;
  c.e.alpha = natural_alpha(p);
  c.e.beta = beta;
  return c;
}

const DType kAllTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2, DType::I8, DType::I32};

}  // namespace

BOOST_AUTO_TEST_CASE(every_accepted_type_combination) {
  int combos = 0, failures = 0;
  for (DType compute : {DType::F32, DType::I32})
    for (DType a : kAllTypes)
      for (DType b : kAllTypes)
        for (DType ct : kAllTypes)
          for (DType d : kAllTypes) {
            GemmProblem p = make_problem(kSmallOddShape.m, kSmallOddShape.n, kSmallOddShape.k, a, ct, d);
            p.b_type = b;
            p.compute_type = compute;
            try {
              p.resolve_and_validate();
            } catch (const Error&) {
              continue;  // not accepted by the library: nothing to compute
            }
            Case c = make_case(p, 0.5f);
            // Rotate layouts and epilogue pieces so the combinations also vary them.
            c.p.order = combos % 2 ? Order::ColMajor : Order::RowMajor;
            c.p.op_a = (combos / 2) % 2 ? Op::T : Op::N;
            c.p.op_b = (combos / 4) % 2 ? Op::T : Op::N;
            c.p.lda = c.p.ldb = c.p.ldc = c.p.ldd = 0;
            c.e.bias_mode = combos % 3 == 0 ? VectorMode::None : combos % 3 == 1 ? VectorMode::PerRow : VectorMode::PerColumn;
            c.e.bias_type = combos % 5 == 0 ? DType::F16 : combos % 5 == 1 ? DType::BF16 : DType::F32;
            c.e.saturate = combos % 7 != 3;
            std::ostringstream label;
            label << "types " << combos;
            failures += run_case(c, label.str()).failures;
            ++combos;
          }
  // 7 float input pairs x 21 (C, D) + 21 integer (C, D) combinations.
  BOOST_CHECK_EQUAL(combos, 7 * 21 + 21);
  BOOST_CHECK_EQUAL(failures, 0);
}

BOOST_AUTO_TEST_CASE(both_orders_all_transposes_and_padded_leading_dimensions) {
  struct Types { DType ab, c, d; };
  const Types types[] = {{DType::BF16, DType::BF16, DType::BF16}, {DType::F32, DType::F32, DType::F32},
                         {DType::F16, DType::F32, DType::F8E4M3}, {DType::I8, DType::I32, DType::I32}};
  for (const Types& t : types)
    for (Order order : {Order::RowMajor, Order::ColMajor})
      for (Op op_a : {Op::N, Op::T})
        for (Op op_b : {Op::N, Op::T}) {
          GemmProblem p = make_problem(17, 23, 31, t.ab, t.c, t.d);
          p.order = order;
          p.op_a = op_a;
          p.op_b = op_b;
          p.lda = p.min_ld(p.a_rows(), p.a_cols()) + kLdPad;
          p.ldb = p.min_ld(p.b_rows(), p.b_cols()) + kLdPad + 1;
          p.ldc = p.min_ld(p.m, p.n) + kLdPad + 2;
          p.ldd = p.min_ld(p.m, p.n) + kLdPad + 3;
          Case c = make_case(p, t.ab == DType::I8 ? 1.0f : -0.75f);
          if (t.ab == DType::I8) c.e.alpha = 1.0f;
          c.offset_pointers = op_a == op_b;
          run_case(c, "layout");
        }
  // Mixed fp8 operands in every layout too.
  for (Op op_a : {Op::N, Op::T})
    for (Op op_b : {Op::N, Op::T}) {
      GemmProblem p = make_problem(9, 14, 40, DType::F8E4M3, DType::BF16, DType::BF16);
      p.b_type = DType::F8E5M2;
      p.op_a = op_a;
      p.op_b = op_b;
      p.order = op_a == op_b ? Order::ColMajor : Order::RowMajor;
      run_case(make_case(p, 1.0f), "layout fp8 mixed");
    }
}

BOOST_AUTO_TEST_CASE(edge_sizes_in_each_dimension) {
  int index = 0;
  for (int dim = 0; dim < 3; ++dim)
    for (int64_t s : kEdgeSizes) {
      int64_t m = dim == 0 ? s : kSweepOtherM, n = dim == 1 ? s : kSweepOtherN, k = dim == 2 ? s : kSweepOtherK;
      {
        GemmProblem p = make_problem(m, n, k, DType::BF16, DType::F32, DType::BF16);
        p.op_a = index % 2 ? Op::T : Op::N;
        p.op_b = index % 3 ? Op::N : Op::T;
        p.order = index % 4 < 2 ? Order::RowMajor : Order::ColMajor;
        Case c = make_case(p, 0.5f);
        c.e.bias_mode = VectorMode::PerColumn;
        c.e.bias_type = DType::BF16;
        c.e.activation = Activation::GeluTanh;
        run_case(c, "edge bf16 dim " + std::to_string(dim) + " size " + std::to_string(s));
      }
      {
        GemmProblem p = make_problem(m, n, k, DType::I8, DType::I32, DType::I32);
        p.op_a = index % 2 ? Op::N : Op::T;
        p.order = index % 4 < 2 ? Order::ColMajor : Order::RowMajor;
        run_case(make_case(p), "edge i8 dim " + std::to_string(dim) + " size " + std::to_string(s));
      }
      ++index;
    }
}

BOOST_AUTO_TEST_CASE(shapes_crossing_every_internal_tile_boundary) {
  for (const Shape& s : kTileCrossingShapes) {
    GemmProblem p = make_problem(s.m, s.n, s.k, DType::F32, DType::F32, DType::F32);
    p.op_b = Op::T;
    run_case(make_case(p, 2.0f), "tiles f32");
    GemmProblem q = make_problem(s.m, s.n, s.k, DType::I8, DType::I32, DType::I32);
    q.op_a = Op::T;
    q.order = Order::ColMajor;
    run_case(make_case(q), "tiles i8");
  }
}

BOOST_AUTO_TEST_CASE(batches_with_padded_and_broadcast_strides) {
  for (DType ab : {DType::BF16, DType::I8}) {
    const DType cd = ab == DType::I8 ? DType::I32 : DType::F32;
    for (int variant = 0; variant < 5; ++variant) {
      GemmProblem p = make_problem(11, 7, 13, ab, cd, ab == DType::I8 ? DType::I32 : DType::BF16);
      p.batch_count = 3;
      p.order = variant % 2 ? Order::ColMajor : Order::RowMajor;
      p.op_a = variant == 3 ? Op::T : Op::N;
      const int64_t sa = 11 * 13, sb = 13 * 7, sc = 11 * 7;
      p.stride_a = sa + (variant == 1 ? 5 : 0);
      p.stride_b = sb + (variant == 1 ? 3 : 0);
      p.stride_c = sc + (variant == 1 ? 9 : 0);
      p.stride_d = sc + (variant == 1 ? 4 : 0);
      if (variant == 2) p.stride_a = 0;  // one A for every batch
      if (variant == 3) p.stride_b = 0;
      if (variant == 4) p.stride_c = 0;
      run_case(make_case(p, 1.5f), "batch variant " + std::to_string(variant));
    }
  }
  // Many small batches exercise the task split across batches.
  GemmProblem p = make_problem(70, 9, 300, DType::F16, DType::F16, DType::F16);
  p.batch_count = 17;
  p.stride_a = 70 * 300;
  p.stride_b = 300 * 9;
  p.stride_c = p.stride_d = 70 * 9;
  run_case(make_case(p, 1.0f), "batch 17");
}

BOOST_AUTO_TEST_CASE(every_epilogue_option) {
  const DType d_types[] = {DType::BF16, DType::F32, DType::F8E4M3, DType::I8, DType::F8E5M2, DType::F16};
  const DType bias_types[] = {DType::F32, DType::F16, DType::BF16};
  int index = 0;
  for (int act = 0; act <= 4; ++act)
    for (VectorMode bias : {VectorMode::None, VectorMode::PerRow, VectorMode::PerColumn})
      for (VectorMode scale : {VectorMode::None, VectorMode::PerTensor, VectorMode::PerRow, VectorMode::PerColumn}) {
        const DType d = d_types[index % 6];
        // Integer inputs where the output type allows them (i32 compute has no fp8 output).
        const bool int_inputs = index % 5 == 4 && !dtype_is_fp8(d);
        GemmProblem p = make_problem(19, 21, 23, int_inputs ? DType::I8 : DType::BF16, DType::F32, d);
        if (d == DType::I8 && index % 2) p.c_type = DType::I8;
        Case c = make_case(p, index % 3 == 0 ? 0.0f : -0.75f);
        c.e.activation = Activation(act);
        c.e.bias_mode = bias;
        c.e.bias_type = bias_types[index % 3];
        c.e.scale_mode = scale;
        c.e.saturate = index % 4 != 1;
        c.e.zero_point = d == DType::I8 && scale != VectorMode::None && index % 2 == 0;
        std::ostringstream label;
        label << "epilogue act=" << activation_name(Activation(act)) << " bias=" << vector_mode_name(bias)
              << " scale=" << vector_mode_name(scale);
        run_case(c, label.str());
        ++index;
      }
}

BOOST_AUTO_TEST_CASE(scalar_modes) {
  for (bool reads_c : {false, true})
    for (ScalarMode mode : {ScalarMode::FromPlan, ScalarMode::Host, ScalarMode::Device}) {
      GemmProblem p = make_problem(12, 10, 8, DType::F16, DType::F16, DType::F32);
      Case c = make_case(p, reads_c ? 0.25f : 0.0f);
      c.e.alpha = 0.5f;
      c.mode = mode;
      c.run_alpha = mode == ScalarMode::Host ? 2.0f : -1.5f;
      c.run_beta = reads_c ? (mode == ScalarMode::Host ? -1.0f : 3.0f) : 0.0f;
      run_case(c, std::string("scalars ") + scalar_mode_name(mode));
    }
}

BOOST_AUTO_TEST_CASE(k_zero_k_one_n_one_m_one) {
  // k = 0: D = act(beta * C + bias); A and B are never read (passed as NULL).
  {
    GemmProblem p = make_problem(9, 12, 0, DType::BF16, DType::BF16, DType::F32);
    Case c = make_case(p, 1.25f);
    c.e.bias_mode = VectorMode::PerRow;
    c.e.activation = Activation::Silu;
    run_case(c, "k=0 with C");
    Case c2 = make_case(p, 0.0f);
    c2.e.bias_mode = VectorMode::PerColumn;
    c2.e.activation = Activation::GeluErf;
    run_case(c2, "k=0 bias only");
    Case c3 = make_case(p, 0.0f);
    run_case(c3, "k=0 zeros");  // D = 0 everywhere, still written
  }
  {
    GemmProblem p = make_problem(9, 12, 0, DType::I8, DType::I32, DType::I32);
    run_case(make_case(p, 1.0f), "k=0 i8");
  }
  for (Order order : {Order::RowMajor, Order::ColMajor}) {
    run_case(make_case([&] { auto p = make_problem(33, 17, 1, DType::F8E5M2, DType::F32, DType::F16); p.order = order; return p; }(), 1.0f), "K=1");
    run_case(make_case([&] { auto p = make_problem(33, 1, 70, DType::F32, DType::F32, DType::F32); p.order = order; return p; }(), 1.0f), "N=1");
    run_case(make_case([&] { auto p = make_problem(1, 40, 70, DType::BF16, DType::F32, DType::BF16); p.order = order; p.op_a = Op::T; return p; }(), 0.0f), "M=1");
    run_case(make_case([&] { auto p = make_problem(1, 1, 1, DType::I8, DType::I8, DType::I8); p.order = order; return p; }(), 1.0f), "1x1x1");
  }
}

BOOST_AUTO_TEST_CASE(c_aliasing_d) {
  struct Types { DType ab, cd; };
  for (Types t : {Types{DType::BF16, DType::BF16}, Types{DType::F32, DType::F32}, Types{DType::I8, DType::I8},
                  Types{DType::I8, DType::I32}, Types{DType::F16, DType::F8E4M3}}) {
    GemmProblem p = make_problem(70, 300, 37, t.ab, t.cd, t.cd);  // several tiles, so several threads
    p.batch_count = 2;
    p.ldc = p.ldd = 300 + 3;
    p.stride_c = p.stride_d = 70 * 303 + 1;
    Case c = make_case(p, -0.5f);
    c.alias_cd = true;
    if (t.cd == DType::I8) {
      c.e.scale_mode = VectorMode::PerRow;
      c.e.zero_point = true;
    }
    run_case(c, "alias");
  }
}

BOOST_AUTO_TEST_CASE(overflow_saturation_and_exact_integers) {
  // Outputs well beyond each format's range: fp8 with and without saturation, f16 to inf.
  for (DType d : {DType::F8E4M3, DType::F8E5M2, DType::F16, DType::I8})
    for (bool sat : {true, false}) {
      GemmProblem p = make_problem(16, 24, 64, DType::F32, DType::F32, d);
      Case c = make_case(p);
      c.e.alpha = d == DType::F8E4M3 ? 100.0f : d == DType::I8 ? 30.0f : 20000.0f;
      c.e.saturate = sat;
      run_case(c, "overflow");
    }
  // Integer sums far beyond i8 x i8 and f32's 24 bits, still exact.
  GemmProblem p = make_problem(8, 8, 4093, DType::I8, DType::I32, DType::I32);
  p.op_b = Op::T;
  run_case(make_case(p), "exact int");
  // Exact ties (half-integers) into i8 with an odd zero point: rounding must happen before the
  // zero point is added (rne(2.5) + 1 = 3, not rne(3.5) = 4).
  for (VectorMode scale : {VectorMode::PerTensor, VectorMode::PerRow, VectorMode::PerColumn}) {
    GemmProblem t = make_problem(24, 20, 4, DType::I8, DType::I8, DType::I8);
    Case c = make_case(t);
    c.e.alpha = 0.5f;
    c.e.scale_mode = scale;
    c.e.zero_point = true;
    c.i8_input_limit = 3;
    c.unit_scale = true;
    run_case(c, "i8 ties with zero point");
  }
  // Large exact integer sums through the f32-output path: they must round once to f32.
  GemmProblem q = make_problem(3, 5, 4093, DType::I8, DType::F32, DType::F32);
  Case c = make_case(q);
  c.e.alpha = 1.0f;
  run_case(c, "int to f32");
}

BOOST_AUTO_TEST_CASE(public_api_on_the_cpu_device) {
  dgemm_context_t ctx = nullptr;
  BOOST_REQUIRE_EQUAL(dgemm_context_create(DGEMM_DEVICE_CPU, 0, &ctx), DGEMM_STATUS_SUCCESS);
  struct ApiCase {
    dgemm_order_t order;
    dgemm_op_t op_a, op_b;
    dgemm_dtype_t ab, c, d;
    float beta;
    dgemm_activation_t act;
    dgemm_scalar_mode_t mode;
  };
  const ApiCase cases[] = {
      {DGEMM_ORDER_COL_MAJOR, DGEMM_OP_N, DGEMM_OP_T, DGEMM_DTYPE_BF16, DGEMM_DTYPE_BF16, DGEMM_DTYPE_BF16, 0.5f,
       DGEMM_ACT_RELU, DGEMM_SCALARS_FROM_PLAN},
      {DGEMM_ORDER_ROW_MAJOR, DGEMM_OP_T, DGEMM_OP_N, DGEMM_DTYPE_F8_E4M3, DGEMM_DTYPE_F32, DGEMM_DTYPE_F16, 0.0f,
       DGEMM_ACT_GELU_ERF, DGEMM_SCALARS_HOST},
      {DGEMM_ORDER_ROW_MAJOR, DGEMM_OP_N, DGEMM_OP_N, DGEMM_DTYPE_I8, DGEMM_DTYPE_I32, DGEMM_DTYPE_I32, 1.0f,
       DGEMM_ACT_NONE, DGEMM_SCALARS_DEVICE},
  };
  std::mt19937_64 rng(42);
  for (const ApiCase& ac : cases) {
    dgemm_problem_t prob;
    BOOST_REQUIRE_EQUAL(dgemm_problem_init(&prob), DGEMM_STATUS_SUCCESS);
    prob.m = 37;
    prob.n = 29;
    prob.k = 45;
    prob.a_type = prob.b_type = ac.ab;
    prob.c_type = ac.c;
    prob.d_type = ac.d;
    prob.compute_type = ac.ab == DGEMM_DTYPE_I8 ? DGEMM_DTYPE_I32 : DGEMM_DTYPE_F32;
    prob.order = ac.order;
    prob.op_a = ac.op_a;
    prob.op_b = ac.op_b;
    dgemm_epilogue_t epi;
    BOOST_REQUIRE_EQUAL(dgemm_epilogue_init(&epi), DGEMM_STATUS_SUCCESS);
    epi.alpha = ac.ab == DGEMM_DTYPE_I8 ? 1.0f : 0.25f;
    epi.beta = ac.beta;
    epi.activation = ac.act;
    epi.bias_mode = DGEMM_VECTOR_PER_COLUMN;
    epi.bias_type = DGEMM_DTYPE_F32;
    if (ac.ab == DGEMM_DTYPE_I8) epi.bias_mode = DGEMM_VECTOR_NONE;
    dgemm_plan_t plan = nullptr;
    BOOST_REQUIRE_MESSAGE(dgemm_create_plan(ctx, &prob, &epi, nullptr, &plan) == DGEMM_STATUS_SUCCESS, dgemm_last_error());

    // The same problem in the internal types, for buffers and the reference.
    GemmProblem p = make_problem(37, 29, 45, DType(ac.ab), DType(ac.c), DType(ac.d));
    p.order = Order(ac.order);
    p.op_a = Op(ac.op_a);
    p.op_b = Op(ac.op_b);
    p.resolve_and_validate();
    Epilogue e;
    e.alpha = epi.alpha;
    e.beta = epi.beta;
    e.activation = Activation(ac.act);
    e.bias_mode = VectorMode(epi.bias_mode);
    const int64_t na = extent(p, p.a_rows(), p.a_cols(), p.lda, 0), nb = extent(p, p.b_rows(), p.b_cols(), p.ldb, 0),
                  nmn = p.m * p.n;
    std::vector<unsigned char> a(std::size_t(na) * dtype_size(p.a_type)), b(std::size_t(nb) * dtype_size(p.b_type)),
        c(std::size_t(nmn) * dtype_size(p.c_type)), d(std::size_t(nmn) * dtype_size(p.d_type), 0xFF);
    std::vector<float> bias(std::size_t(p.n));
    fill_random(p.a_type, a.data(), na, rng, 2.0);
    fill_random(p.b_type, b.data(), nb, rng, 2.0);
    fill_random(p.c_type, c.data(), nmn, rng, 2.0);
    fill_random(DType::F32, bias.data(), p.n, rng, 2.0);

    dgemm_args_t args;
    BOOST_REQUIRE_EQUAL(dgemm_args_init(&args), DGEMM_STATUS_SUCCESS);
    args.scalar_mode = ac.mode;
    const float device_alpha = 1.0f, device_beta = -2.0f;
    double alpha = e.alpha, beta = e.beta;
    if (ac.mode == DGEMM_SCALARS_HOST) {
      args.alpha = alpha = -0.5f;
      args.beta = 0.0f;
      beta = 0.0;
    } else if (ac.mode == DGEMM_SCALARS_DEVICE) {
      args.alpha_ptr = &device_alpha;
      args.beta_ptr = &device_beta;
      alpha = device_alpha;
      beta = device_beta;
    }
    args.bias = e.bias_mode != VectorMode::None ? bias.data() : nullptr;
    size_t ws_size = 0;
    BOOST_REQUIRE_EQUAL(dgemm_plan_workspace_size(plan, &ws_size), DGEMM_STATUS_SUCCESS);
    BOOST_TEST(ws_size > 0u);  // the CPU backend's scratch comes from the workspace
    std::vector<unsigned char> ws(ws_size);
    BOOST_REQUIRE_MESSAGE(dgemm_execute(plan, a.data(), b.data(), c.data(), d.data(), &args, ws.data(), ws_size,
                                        nullptr) == DGEMM_STATUS_SUCCESS,
                          dgemm_last_error());
    ExecArgs rx;
    rx.a = a.data();
    rx.b = b.data();
    rx.c = c.data();
    rx.bias = bias.data();
    int bad = 0;
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        RefValue r = reference_element(p, e, rx, alpha, beta, 0, i, j);
        double lo = reference_quantize(p, e, rx, i, j, r.z - r.tol), hi = reference_quantize(p, e, rx, i, j, r.z + r.tol);
        double got = load_as_double(p.d_type, d.data(), ref_offset(p, i, j, p.ldd));
        if (!(got >= lo && got <= hi)) ++bad;
      }
    BOOST_CHECK_MESSAGE(bad == 0, bad << " wrong elements through the C API: " << p.to_string());

    // A missing D is refused and leaves nothing written.
    BOOST_CHECK_EQUAL(dgemm_execute(plan, a.data(), b.data(), c.data(), nullptr, &args, ws.data(), ws_size, nullptr),
                      DGEMM_STATUS_INVALID_ARGUMENT);
    // Nor does it run without its workspace.
    BOOST_CHECK_EQUAL(dgemm_execute(plan, a.data(), b.data(), c.data(), d.data(), &args, nullptr, 0, nullptr),
                      DGEMM_STATUS_INSUFFICIENT_WORKSPACE);
    BOOST_CHECK_EQUAL(dgemm_destroy_plan(plan), DGEMM_STATUS_SUCCESS);
  }
  // m = 0: success and nothing touched.
  dgemm_problem_t prob;
  dgemm_problem_init(&prob);
  prob.m = 0;
  dgemm_plan_t plan = nullptr;
  BOOST_REQUIRE_EQUAL(dgemm_create_plan(ctx, &prob, nullptr, nullptr, &plan), DGEMM_STATUS_SUCCESS);
  unsigned char sentinel = 0x77;
  BOOST_CHECK_EQUAL(dgemm_execute(plan, nullptr, nullptr, nullptr, &sentinel, nullptr, nullptr, 0, nullptr),
                    DGEMM_STATUS_SUCCESS);
  BOOST_CHECK_EQUAL(sentinel, 0x77);
  dgemm_destroy_plan(plan);
  BOOST_CHECK_EQUAL(dgemm_context_destroy(ctx), DGEMM_STATUS_SUCCESS);
}

// The larger sweep, not run in CI (disabled: Boost.Test reports it skipped); run it by name:
// ./test_cpu_gemm --run_test=cpu_gemm/full_tier_cross_product_of_sizes
BOOST_AUTO_TEST_CASE(full_tier_cross_product_of_sizes,
                     *boost::unit_test::disabled() * boost::unit_test::description("full tier, run by name")) {
  int index = 0, failures = 0;
  for (int64_t m : kFullTierSizes)
    for (int64_t n : kFullTierSizes)
      for (int64_t k : kFullTierSizes) {
        const bool integer = index % 3 == 2;
        GemmProblem p = integer ? make_problem(m, n, k, DType::I8, DType::I32, DType::I32)
                                : make_problem(m, n, k, index % 3 ? DType::F16 : DType::BF16, DType::F32,
                                               index % 2 ? DType::F8E4M3 : DType::BF16);
        p.order = index % 2 ? Order::ColMajor : Order::RowMajor;
        p.op_a = (index / 2) % 2 ? Op::T : Op::N;
        p.op_b = (index / 4) % 2 ? Op::T : Op::N;
        Case c = make_case(p, 0.5f);
        if (!integer) {
          c.e.bias_mode = VectorMode::PerRow;
          c.e.activation = Activation::GeluErf;
        }
        failures += run_case(c, "full tier").failures;
        ++index;
      }
  BOOST_CHECK_EQUAL(failures, 0);
}

BOOST_AUTO_TEST_CASE(concurrent_calls_give_the_same_result_as_sequential_ones) {
  // dgemm_execute may be called from several threads at once; the CPU backend keeps no shared
  // mutable state, so each call must produce exactly what it produces alone.
  GemmProblem p = make_problem(150, 300, 200, DType::F32, DType::F32, DType::BF16);
  p.resolve_and_validate();
  Epilogue e;
  e.activation = Activation::Relu;
  std::mt19937_64 rng(11);
  constexpr int kCalls = 4;
  std::vector<std::vector<float>> a(kCalls, std::vector<float>(150 * 200)), b(kCalls, std::vector<float>(200 * 300));
  std::vector<std::vector<uint16_t>> alone(kCalls, std::vector<uint16_t>(150 * 300, 0xFFFF)), together = alone;
  for (int t = 0; t < kCalls; ++t) {
    fill_random(DType::F32, a[t].data(), 150 * 200, rng, 2.0);
    fill_random(DType::F32, b[t].data(), 200 * 300, rng, 2.0);
  }
  auto call = [&](int t, std::vector<uint16_t>& d) {
    std::vector<unsigned char> workspace(cpu_gemm_workspace_size(p));  // one per concurrent call
    ExecArgs x;
    x.a = a[t].data();
    x.b = b[t].data();
    x.d = d.data();
    x.workspace = workspace.data();
    x.workspace_size = workspace.size();
    cpu_gemm(p, e, x);
  };
  for (int t = 0; t < kCalls; ++t) call(t, alone[t]);
  std::vector<std::thread> threads;
  for (int t = 0; t < kCalls; ++t) threads.emplace_back([&, t] { call(t, together[t]); });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kCalls; ++t) BOOST_CHECK(alone[t] == together[t]);
}

BOOST_AUTO_TEST_CASE(speed_1024_cubed_bf16_with_bias_and_gelu) {
  GemmProblem p = make_problem(1024, 1024, 1024, DType::BF16, DType::BF16, DType::BF16);
  Case c = make_case(p);
  c.e.bias_mode = VectorMode::PerColumn;
  c.e.bias_type = DType::BF16;
  c.e.activation = Activation::GeluTanh;
  c.sample = 2000;  // the naive reference on every element would take longer than the GEMM
  Outcome o = run_case(c, "speed");
  std::cout << "cpu_gemm 1024x1024x1024 bf16 + bias + gelu_tanh: " << o.seconds * 1e3 << " ms ("
            << 2.0 * 1024 * 1024 * 1024 / o.seconds * 1e-9 << " GFLOP/s)" << std::endl;
  // Only optimized, uninstrumented builds are held to the time limit.
#if defined(NDEBUG) && !defined(DGEMM_SANITIZED) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  BOOST_CHECK_LT(o.seconds, 1.0);
#endif
}

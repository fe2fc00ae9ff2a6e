// The repro line the GPU tests print (tests/common/run_command.hpp) round-trips: for problems that
// cover every field the tool can express (every type incl. e4m3/e5m2/i8, transposes, column order,
// padded leading dimensions, packed, gapped and broadcast batches, bias per row/column in every
// bias type, every activation, every scale mode, zero point, no-saturate, alpha/beta values that
// decimal text must carry exactly, every DGEMM_1.1 input scale mode and a block-scaled D in the
// layouts --a-scale/--b-scale/--d-scale make, batched too), the line's flags go through the tool's own parser
// (src/tools/cli_options.cpp, compiled into this test) and the C boundary's conversion, as
// `deepgemm run` does, and must give back the same GemmProblem and Epilogue field by field. What
// the tool cannot express must be named in the line's trailing comment, and the rest still
// round-trips. (test_tool_cli.cpp runs a few such lines through the built `deepgemm` binary.)
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "api/convert.hpp"
#include "api/scaling.hpp"
#include "common/run_command.hpp"
#include "core/error.hpp"
#include "core/problem.hpp"
#include "tools/cli_options.hpp"

namespace {

using namespace dgemm;
using dgemm_test::run_command;
using dgemm_test::RunExtras;

struct Parsed {
  GemmProblem p;
  Epilogue e;
  std::string device, force, note;  // note: the text after "# not expressible:"
};

// Splits the line as a shell would (it holds no quotes), parses its flags exactly as `deepgemm run`
// does, and converts them as the library does. Throws on any refusal.
Parsed parse_line(const std::string& line) {
  Parsed out;
  std::string cmd = line;
  const std::size_t hash = line.find('#');
  if (hash != std::string::npos) {
    const std::string marker = "# not expressible:";
    if (line.compare(hash, marker.size(), marker) != 0) throw std::runtime_error("unexpected comment in: " + line);
    out.note = line.substr(hash + marker.size());
    cmd = line.substr(0, hash);
  }
  std::istringstream is(cmd);
  std::vector<std::string> words;
  for (std::string w; is >> w;) words.push_back(w);
  if (words.size() < 2 || words[0] != "deepgemm" || words[1] != "run")
    throw std::runtime_error("not a `deepgemm run` line: " + line);
  std::vector<char*> argv;
  for (std::size_t i = 2; i < words.size(); ++i) argv.push_back(words[i].data());
  tools::Flags flags(int(argv.size()), argv.data());
  tools::GemmOptions opt = tools::parse_gemm_options(flags);
  const tools::ScalingOptions scaling = tools::parse_scaling_options(flags);
  out.device = flags.get("device", "auto");
  out.force = flags.get("force-kernel", "");
  flags.check_all_used();  // nothing on the line but problem and scale flags, --device and --force-kernel
  out.p = api::convert_problem(&opt.problem);
  out.e = api::convert_epilogue(&opt.epilogue, out.p);
  const dgemm_scaling_t s = scaling.for_problem(opt.problem);
  api::apply_scaling(scaling.active ? &s.header : nullptr, out.p, out.e);
  return out;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// "" when equal, else the first field that differs with both values. Strides only count with
// batches (to_string and the library ignore them otherwise); a NaN scalar only has to stay NaN
// (its sign and payload have no text).
std::string differences(const GemmProblem& a, const Epilogue& ea, const GemmProblem& b, const Epilogue& eb) {
  std::ostringstream os;
  auto field = [&](const char* name, auto x, auto y) {
    if (x != y && os.str().empty()) os << name << ": " << x << " != " << y;
  };
  field("m", a.m, b.m);
  field("n", a.n, b.n);
  field("k", a.k, b.k);
  field("a_type", std::string(dtype_name(a.a_type)), std::string(dtype_name(b.a_type)));
  field("b_type", std::string(dtype_name(a.b_type)), std::string(dtype_name(b.b_type)));
  field("c_type", std::string(dtype_name(a.c_type)), std::string(dtype_name(b.c_type)));
  field("d_type", std::string(dtype_name(a.d_type)), std::string(dtype_name(b.d_type)));
  field("compute_type", std::string(dtype_name(a.compute_type)), std::string(dtype_name(b.compute_type)));
  field("op_a", std::string(op_name(a.op_a)), std::string(op_name(b.op_a)));
  field("op_b", std::string(op_name(a.op_b)), std::string(op_name(b.op_b)));
  field("order", std::string(order_name(a.order)), std::string(order_name(b.order)));
  field("lda", a.lda, b.lda);
  field("ldb", a.ldb, b.ldb);
  field("ldc", a.ldc, b.ldc);
  field("ldd", a.ldd, b.ldd);
  field("batch_count", a.batch_count, b.batch_count);
  if (a.batch_count > 1) {
    field("stride_a", a.stride_a, b.stride_a);
    field("stride_b", a.stride_b, b.stride_b);
    field("stride_c", a.stride_c, b.stride_c);
    field("stride_d", a.stride_d, b.stride_d);
  }
  field("grouping", a.grouping.to_string(), b.grouping.to_string());
  field("a_scale", a.a_scale.to_string(), b.a_scale.to_string());
  field("b_scale", a.b_scale.to_string(), b.b_scale.to_string());
  auto scalar = [&](const char* name, float x, float y) {
    if (!(std::isnan(x) ? std::isnan(y) : same_bits(x, y)) && os.str().empty())
      os << name << ": " << x << " != " << y << " (bit patterns differ)";
  };
  scalar("alpha", ea.alpha, eb.alpha);
  scalar("beta", ea.beta, eb.beta);
  field("bias_mode", std::string(vector_mode_name(ea.bias_mode)), std::string(vector_mode_name(eb.bias_mode)));
  field("bias_type", std::string(dtype_name(ea.bias_type)), std::string(dtype_name(eb.bias_type)));
  field("activation", std::string(activation_name(ea.activation)), std::string(activation_name(eb.activation)));
  field("scale_mode", std::string(vector_mode_name(ea.scale_mode)), std::string(vector_mode_name(eb.scale_mode)));
  field("saturate", ea.saturate, eb.saturate);
  field("zero_point", ea.zero_point, eb.zero_point);
  field("d_scale", ea.d_scale.to_string(), eb.d_scale.to_string());
  field("amax_d", ea.amax_d, eb.amax_d);
  // The printed forms (the plan cache's key today) agree too.
  field("problem to_string", a.to_string(), b.to_string());
  field("epilogue to_string", ea.to_string(), eb.to_string());
  return os.str();
}

struct Sample {
  GemmProblem p;
  Epilogue e;
  RunExtras x;
  std::string what;
};

GemmProblem problem(int64_t m, int64_t n, int64_t k, DType ab, DType d, Op oa = Op::N, Op ob = Op::N,
                    Order order = Order::RowMajor) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a_type = p.b_type = ab;
  p.c_type = p.d_type = d;
  p.compute_type = ab == DType::I8 ? DType::I32 : DType::F32;
  p.op_a = oa;
  p.op_b = ob;
  p.order = order;
  return p;
}

// Every field the tool can express, each in at least one sample; all valid problems.
std::vector<Sample> samples() {
  std::vector<Sample> out;
  auto add = [&](GemmProblem p, Epilogue e, const std::string& what, RunExtras x = {}) {
    p.resolve_and_validate();
    e.validate(p);
    resolve_and_validate_scaling(p, e);
    out.push_back({p, e, x, what});
  };
  const Op ops[] = {Op::N, Op::T};
  const Order orders[] = {Order::RowMajor, Order::ColMajor};
  // Every type combination the tests use, default epilogue.
  struct Types {
    DType a, b, c, d;
  };
  const DType e4 = DType::F8E4M3, e5 = DType::F8E5M2;
  for (Types t : {Types{DType::BF16, DType::BF16, DType::BF16, DType::BF16}, {DType::F16, DType::F16, DType::F16, DType::F32},
                  {DType::F16, DType::F16, DType::F32, DType::F16}, {DType::F32, DType::F32, DType::F32, DType::F32},
                  {DType::BF16, DType::BF16, DType::F32, DType::F8E4M3}, {e4, e4, DType::BF16, DType::BF16},
                  {e4, e5, DType::F32, DType::F32}, {e5, e4, DType::BF16, DType::BF16}, {e5, e5, e5, e5},
                  {DType::I8, DType::I8, DType::I32, DType::I32}, {DType::I8, DType::I8, DType::I8, DType::I8},
                  {DType::I8, DType::I8, DType::BF16, DType::BF16}, {DType::I8, DType::I8, DType::F32, DType::F16}}) {
    GemmProblem p = problem(300, 200, 1008, t.a, t.d);
    p.b_type = t.b;
    p.c_type = t.c;
    add(p, Epilogue{}, "types");
  }
  // Every transpose and order, packed and padded leading dimensions.
  for (Op oa : ops)
    for (Op ob : ops)
      for (Order o : orders)
        for (int pad : {0, 1}) {
          GemmProblem p = problem(65, 67, 259, DType::BF16, DType::BF16, oa, ob, o);
          p.resolve_and_validate();
          if (pad) {
            p.lda += 8;
            p.ldb += 3;
            p.ldc += 5;
            p.ldd += 1;
          }
          add(p, Epilogue{}, pad ? "layout" : "layout packed");
        }
  // Batches: packed (with and without padded lds), gapped, broadcast A / B / C, both orders, K = 0.
  for (Order o : orders)
    for (int kind = 0; kind < 5; ++kind) {
      GemmProblem p = problem(70, 45, 99, DType::F16, DType::F16, Op::N, Op::T, o);
      p.resolve_and_validate();
      if (kind == 1) p.ldb += 8;
      p.batch_count = 3;
      const int64_t a1 = (o == Order::RowMajor ? p.a_rows() : p.a_cols()) * p.lda;
      const int64_t b1 = (o == Order::RowMajor ? p.b_rows() : p.b_cols()) * p.ldb;
      const int64_t d1 = (o == Order::RowMajor ? p.m : p.n) * p.ldd;
      p.stride_a = a1;
      p.stride_b = b1;
      p.stride_c = p.stride_d = d1;
      if (kind == 2) {  // gaps, as the sm80 / sm90 tests' batched cases
        p.stride_a += 8;
        p.stride_b += 16;
        p.stride_c += 3;
        p.stride_d += 5;
      }
      if (kind == 3) p.stride_b = 0;  // one B for every batch
      if (kind == 4) p.stride_a = p.stride_c = 0;
      Epilogue e;
      e.beta = 0.5f;
      add(p, e, kind <= 1 ? "batch packed" : "batch");
    }
  {
    GemmProblem p = problem(16, 8, 0, DType::F32, DType::F32);
    p.batch_count = 2;
    p.stride_d = 128;
    add(p, Epilogue{}, "batch k=0");
    p = problem(16, 8, 0, DType::F32, DType::F32);
    p.batch_count = 2;
    p.stride_c = p.stride_d = 128;
    p.resolve_and_validate();  // lda = 1 for an m x 0 A: the tool's packed stride is m * 0
    add(p, Epilogue{}, "batch k=0 resolved");
  }
  // Every activation, bias mode and type, scale mode.
  for (Activation act : {Activation::None, Activation::Relu, Activation::GeluTanh, Activation::GeluErf, Activation::Silu})
    for (VectorMode bias : {VectorMode::None, VectorMode::PerRow, VectorMode::PerColumn})
      for (DType bt : {DType::F32, DType::F16, DType::BF16}) {
        Epilogue e;
        e.activation = act;
        e.bias_mode = bias;
        e.bias_type = bt;  // also without a bias: the field is part of the epilogue
        add(problem(131, 70, 259, DType::BF16, DType::F32, Op::T, Op::N), e, "act/bias");
      }
  for (VectorMode scale : {VectorMode::None, VectorMode::PerTensor, VectorMode::PerRow, VectorMode::PerColumn})
    for (Order o : orders) {
      Epilogue e;
      e.scale_mode = scale;
      add(problem(131, 70, 259, DType::BF16, DType::F16, Op::T, Op::N, o), e, "scale");
    }
  // Zero point (i8 out, a scale mode), no-saturate (fp8 out).
  for (VectorMode scale : {VectorMode::PerTensor, VectorMode::PerRow, VectorMode::PerColumn}) {
    Epilogue e;
    e.scale_mode = scale;
    e.zero_point = true;
    e.alpha = 8.0f;
    add(problem(300, 200, 1008, DType::I8, DType::I8), e, "zero point");
    GemmProblem p = problem(131, 70, 259, DType::BF16, DType::I8);
    p.c_type = DType::F32;
    add(p, e, "zero point bf16 in");
  }
  for (DType d : {e4, e5}) {
    Epilogue e;
    e.saturate = false;
    e.alpha = 64.0f;
    add(problem(131, 70, 259, DType::BF16, d), e, "no saturate");
    add(problem(131, 70, 259, d, d), e, "no saturate fp8 in");
  }
  // Scalars whose decimal text must be exact: not short decimals, extremes, signed zeros, inf, NaN.
  const float fmax = std::numeric_limits<float>::max(), tiny = std::numeric_limits<float>::denorm_min();
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (auto [alpha, beta] : {std::pair{0.1f, 1.0f / 3.0f}, std::pair{1.5f, -0.5f}, std::pair{-1.0f, 2.0f},
                             std::pair{fmax, -fmax}, std::pair{tiny, -tiny}, std::pair{-0.0f, -0.0f},
                             std::pair{0.0f, 1e-7f}, std::pair{inf, -inf}, std::pair{nan, 1.0f},
                             std::pair{1.0000001f, 0.99999994f}}) {
    Epilogue e;
    e.alpha = alpha;
    e.beta = beta;
    add(problem(64, 64, 64, DType::F16, DType::F16), e, "scalars");
  }
  // DGEMM_1.1 scales as the tool's flags make them: every input mode on A and on B (vec128 with
  // m / n not a multiple of 4: the TMA-aligned ld), and an FP8 D with 1 x 128 scales, batched too.
  for (ScaleMode mode : {ScaleMode::PerTensor, ScaleMode::OuterVec, ScaleMode::Vec128, ScaleMode::Blk128x128})
    for (bool on_a : {true, false}) {
      GemmProblem p = problem(257, 130, 1008, e4, DType::BF16, Op::N, Op::T);
      ScaleDesc& s = on_a ? p.a_scale : p.b_scale;
      s.mode = mode;
      if (mode == ScaleMode::Blk128x128) s.layout = ScaleLayout::KMajor;
      if (mode == ScaleMode::Vec128) s.ld = on_a ? 260 : 132;
      add(p, Epilogue{}, "input scale");
    }
  {
    // The amax of D, with an activation and an output scale (it is taken between them).
    Epilogue e;
    e.bias_mode = VectorMode::PerColumn;
    e.activation = Activation::GeluTanh;
    e.scale_mode = VectorMode::PerTensor;
    e.amax_d = true;
    add(problem(257, 130, 1008, DType::BF16, DType::BF16, Op::N, Op::T), e, "amax of D");
  }
  for (int64_t batch : {1, 3}) {
    // deepgemm-bench's fp8q row: A 1 x 128, B 128 x 128 K-major, e4m3 D with 1 x 128 scales.
    GemmProblem p = problem(257, 384, 1008, e4, e4, Op::N, Op::T);
    p.c_type = DType::BF16;
    p.a_scale.mode = ScaleMode::Vec128;
    p.a_scale.ld = 260;
    p.b_scale.mode = ScaleMode::Blk128x128;
    p.b_scale.layout = ScaleLayout::KMajor;
    if (batch > 1) {
      p.resolve_and_validate();
      p.batch_count = batch;
      p.stride_a = 257 * 1008;
      p.stride_b = 384 * 1008;
      p.stride_c = p.stride_d = 257 * 384;
    }
    Epilogue e;
    e.d_scale.mode = ScaleMode::Vec128;
    e.d_scale.ld = 260;
    e.d_scale.stride = batch > 1 ? 260 * 3 : 0;
    add(p, e, batch > 1 ? "block-scaled D batched" : "block-scaled D");
  }
  // Forced families and configuration names, other devices.
  for (const char* force : {"sm90", "sm80", "small_m", "cpu", "sm90_128x64x64_s6_t384_ck2_p", "sm80_128x128x32_s4_t128_v1"}) {
    RunExtras x;
    x.force = force;
    add(problem(128, 256, 64, DType::BF16, DType::BF16), Epilogue{}, "force", x);
  }
  for (const char* device : {"cpu", "cuda:1", "auto"}) {
    RunExtras x;
    x.device = device;
    add(problem(128, 256, 64, DType::BF16, DType::BF16), Epilogue{}, "device", x);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_expressible_field_round_trips) {
  int checked = 0;
  for (const Sample& s : samples()) {
    const std::string line = run_command(s.p, s.e, s.x);
    BOOST_TEST_CONTEXT(s.what << ": " << s.p.to_string() << " | " << s.e.to_string() << "\n  " << line) {
      BOOST_TEST(line.find('#') == std::string::npos, "a fully expressible case needs no note");
      // What the tool derives by itself stays off the line, so that a reader sees what is special.
      if (s.what == "layout packed") BOOST_TEST(line.find(" --ld") == std::string::npos);
      if (s.what == "batch packed") BOOST_TEST(line.find(" --stride") == std::string::npos);
      try {
        const Parsed got = parse_line(line);
        const std::string diff = differences(s.p, s.e, got.p, got.e);
        BOOST_TEST(diff.empty(), diff);
        BOOST_TEST(got.device == s.x.device);
        BOOST_TEST(got.force == s.x.force);
        ++checked;
      } catch (const std::exception& ex) {
        BOOST_ERROR("the tool refused the line: " << ex.what());
      }
    }
  }
  BOOST_TEST_MESSAGE(checked << " lines round-tripped");
  BOOST_TEST(checked >= 100);
}

BOOST_AUTO_TEST_CASE(what_the_tool_cannot_express_is_named_and_the_rest_round_trips) {
  struct Odd {
    GemmProblem p;
    Epilogue e;
    RunExtras x;
    std::vector<std::string> notes;
    bool parses = true;  // a grouped problem's batch form is refused (stride_d = 0), as its note warns
  };
  std::vector<Odd> odd;
  {
    Odd o{problem(130, 70, 99, DType::BF16, DType::BF16, Op::N, Op::T), {}, {}, {"misalign=1"}};
    o.x.misalign = 1;
    o.x.force = "sm90";
    odd.push_back(o);
  }
  for (auto [mode, text] : {std::pair{ScalarMode::Host, "scalars=host"}, std::pair{ScalarMode::Device, "scalars=device"}}) {
    Odd o{problem(131, 70, 259, DType::BF16, DType::BF16, Op::T, Op::N, Order::ColMajor), {}, {}, {text, "misalign=3"}};
    o.e.beta = 1.0f;
    o.x.scalars = mode;
    o.x.misalign = 3;
    odd.push_back(o);
  }
  {
    // Scales in layouts and types the tool's flags do not make: UE8M0 A scales, an MN-major
    // 128 x 128 B, a packed (not TMA-aligned) D scale tensor (amax of D is expressible: --amax-d).
    Odd o{problem(257, 384, 1008, DType::F8E4M3, DType::F8E4M3, Op::N, Op::T), {}, {}, {}};
    o.p.a_scale.mode = ScaleMode::Vec128;
    o.p.a_scale.type = ScaleType::UE8M0;
    o.p.a_scale.ld = 260;
    o.p.b_scale.mode = ScaleMode::Blk128x128;
    o.p.b_scale.ld = 8;
    o.notes = {"a_scale=" + o.p.a_scale.to_string(), "b_scale=" + o.p.b_scale.to_string()};
    o.e.d_scale.mode = ScaleMode::Vec128;
    o.e.amax_d = true;
    o.notes.push_back("d_scale=" + o.e.d_scale.to_string());
    odd.push_back(o);
  }
  {
    Odd o{problem(512, 256, 128, DType::BF16, DType::BF16, Op::N, Op::T), {}, {}, {}};
    o.p.batch_count = 4;
    o.p.stride_b = 256 * 128;
    o.p.grouping.layout = GroupLayout::Contiguous;
    o.p.grouping.m_alignment = 128;
    o.notes = {o.p.grouping.to_string().substr(1)};
    o.parses = false;
    odd.push_back(o);
  }
  {
    Odd o{problem(64, 64, 64, DType::BF16, DType::F32), {}, {}, {"bias=per_tensor"}};  // invalid: still said
    o.e.bias_mode = VectorMode::PerTensor;
    odd.push_back(o);
  }
  {
    Odd o{problem(64, 64, 64, DType::F16, DType::F32), {}, {}, {"compute=i32"}};  // only the tool's rule is expressible
    o.p.compute_type = DType::I32;
    odd.push_back(o);
  }
  for (Odd& o : odd) {
    const std::string line = run_command(o.p, o.e, o.x);
    BOOST_TEST_CONTEXT(line) {
      const std::size_t hash = line.find("  # not expressible:");
      BOOST_TEST_REQUIRE(hash != std::string::npos, "no note");
      for (const std::string& n : o.notes)
        BOOST_TEST(line.find(" " + n, hash) != std::string::npos, "the note does not name " << n);
      if (!o.parses) continue;
      // Apart from what the note names, the line is the problem: clear those fields and compare.
      GemmProblem want = o.p;
      Epilogue want_e = o.e;
      want.a_scale = want.b_scale = ScaleDesc{};
      want.grouping = Grouping{};
      want.compute_type = want.a_type == DType::I8 ? DType::I32 : DType::F32;
      want_e.d_scale = ScaleDesc{};
      if (want_e.bias_mode == VectorMode::PerTensor) want_e.bias_mode = VectorMode::None;
      try {
        want.resolve_and_validate();
        const Parsed got = parse_line(line);
        const std::string diff = differences(want, want_e, got.p, got.e);
        BOOST_TEST(diff.empty(), diff);
        BOOST_TEST(got.force == o.x.force);
      } catch (const std::exception& ex) {
        BOOST_ERROR("the tool refused the line: " << ex.what());
      }
    }
  }
}

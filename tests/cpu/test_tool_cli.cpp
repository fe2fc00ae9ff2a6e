// The `deepgemm run` output as a user reads it: run's short summary (device,
// kernel, time, TFLOP/s, error against the oracle, PASS), the plan's JSON with --explain, one JSON
// object with --json, the documented exit codes (usage 2, unsupported 3), "gelu" meaning the erf
// form as everywhere else, explicit batch strides, the DGEMM_1.1 scale flags (input scales and a
// block-scaled FP8 D, checked dequantized) and the GPU tests' repro lines run as pasted (warm,
// which needs NVRTC: test_tool_warm.cpp; plan's scale flags: test_planner_cli.cpp).
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/run_command.hpp"
#include "common/tool_run.hpp"
#include "core/problem.hpp"

namespace {

using dgemm_test::Result;
using dgemm_test::sh;
using dgemm_test::tool;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

using dgemm_test::RequireTool;
BOOST_TEST_GLOBAL_FIXTURE(RequireTool);

BOOST_AUTO_TEST_CASE(run_prints_a_short_summary) {
  Result r = sh(tool() + " run --device cpu --m 33 --n 17 --k 65 --dtype f32 --bias col --act gelu");
  BOOST_TEST(r.rc == 0, r.out);
  for (const char* line : {"device    CPU reference backend", "kernel    cpu (family cpu; predicted ", "time      ",
                           " TFLOP/s", "error     ", "relative Frobenius vs the CPU oracle, 33 of 33 rows",
                           "result    PASS", "act=gelu_erf"})
    BOOST_TEST(has(r.out, line), "missing '" << line << "' in:\n" << r.out);
  BOOST_TEST(!has(r.out, "\"rejected\""), "the plan's JSON is not part of the summary");
  BOOST_TEST(!has(r.out, "?"), "a summary field was not found in the plan's JSON:\n" << r.out);
  r = sh(tool() + " run --device cpu --m 8 --n 8 --k 8 --act gelu_tanh");
  BOOST_TEST(has(r.out, "act=gelu_tanh"), r.out);
}

BOOST_AUTO_TEST_CASE(run_explains_and_prints_json_on_request) {
  Result r = sh(tool() + " run --device cpu --m 16 --n 16 --k 16 --explain");
  BOOST_TEST(r.rc == 0);
  BOOST_TEST(has(r.out, "\"chosen\":{"), r.out);
  BOOST_TEST(has(r.out, "result    PASS"), r.out);
  r = sh(tool() + " run --device cpu --m 16 --n 16 --k 16 --dtype f32 --json", false);
  BOOST_TEST(r.rc == 0);
  BOOST_TEST(r.out.front() == '{', r.out);
  for (const char* key : {"\"plan\": {", "\"median_us\": ", "\"tflops\": ", "\"relative_error\": ", "\"rows_checked\": 16",
                          "\"result\": \"PASS\""})
    BOOST_TEST(has(r.out, key), "missing " << key << " in:\n" << r.out);
  BOOST_TEST(!has(r.out, "result    "), "--json prints nothing but the object");
}

BOOST_AUTO_TEST_CASE(exit_codes_are_distinct_and_documented) {
  Result help = sh(tool() + " run --help");
  BOOST_TEST(help.rc == 0);
  BOOST_TEST(has(help.out, "exit status: 0 success; 1 the result failed its check; 2 usage error"), help.out);
  BOOST_TEST(has(sh(tool() + " --help").out, "3 unsupported"));
  BOOST_TEST(sh(tool() + " run --no-such-flag").rc == 2);
  BOOST_TEST(sh(tool() + " run --dtype f64").rc == 2);
  BOOST_TEST(sh(tool() + " run --device cpu --m 8 --n 8 --k 8 --lda 2").rc == 2);  // INVALID_ARGUMENT
  Result r = sh(tool() + " run --device cpu --m 8 --n 8 --k 8 --dtype f32 --b-dtype f16");
  BOOST_TEST(r.rc == 3, r.out);  // NOT_SUPPORTED
  BOOST_TEST(has(r.out, "NOT_SUPPORTED"), r.out);
  r = sh(tool() + " run --device cuda:99 --m 8 --n 8 --k 8");
  BOOST_TEST(r.rc == 3, r.out);  // NO_DEVICE: no machine has 100 GPUs
  BOOST_TEST(sh(tool() + " nonsense").rc == 2);
}

BOOST_AUTO_TEST_CASE(run_takes_explicit_batch_strides) {
  const std::string base = tool() + " run --device cpu --m 20 --n 12 --k 9 --dtype f32 ";
  Result r = sh(base + "--batch 3 --stride-a 200 --stride-b 0 --stride-c 250 --stride-d 247 --beta 0.5");
  BOOST_TEST(r.rc == 0, r.out);
  BOOST_TEST(has(r.out, "batch=3 strides=200,0,250,247"), r.out);
  BOOST_TEST(has(r.out, "result    PASS"), r.out);
  r = sh(base + "--batch 2");  // packed without the flags: each matrix right after the previous
  BOOST_TEST(has(r.out, "batch=2 strides=180,108,240,240"), r.out);
  r = sh(base + "--batch 2 --order col --lda 24 --stride-c 0");
  BOOST_TEST(has(r.out, "batch=2 strides=216,108,0,240"), r.out);
  for (auto [flags, message] :
       {std::pair{"--stride-a 5", "--stride-a = 5: a batch stride needs --batch B > 1"},
        std::pair{"--batch 2 --stride-b -1", "--stride-b = -1: batch strides must be >= 0"},
        std::pair{"--batch 2 --stride-c", "--stride-c needs a value"},
        std::pair{"--batch 2 --stride-d x", "--stride-d = 'x' is not an integer"},
        std::pair{"--batch 2 --stride-d 100", "stride_d = 100: smaller than one D matrix (240 elements)"}}) {
    r = sh(base + flags);
    BOOST_TEST(r.rc == 2, flags << ": " << r.out);
    BOOST_TEST(has(r.out, message), flags << ": " << r.out);
  }
  BOOST_TEST(has(sh(tool() + " run --help").out, "--stride-a S --stride-b S"));
}

// --a-scale/--b-scale (every mode) and --d-scale vec128 on the CPU backend: the run creates the
// scale tensors, passes them through dgemm_execute_ext and checks against the oracle, a
// block-scaled D dequantized; bad values are usage errors naming the flag and the value.
BOOST_AUTO_TEST_CASE(run_takes_the_scale_flags) {
  const std::string base = tool() + " run --device cpu --reps 1 --warmup 0 --trans-b --dtype e4m3 ";
  struct Case {
    const char* flags;
    const char* problem;  // in the printed problem / epilogue lines
  };
  const Case cases[] = {
      {"--m 1100 --n 2048 --k 512 --out-dtype bf16 --a-scale tensor --b-scale tensor",
       "a_scale=per_tensor(f32,mn,ld=1,stride=0) b_scale=per_tensor(f32,mn,ld=1,stride=0)"},
      {"--m 130 --n 200 --k 300 --out-dtype f32 --a-scale outer --b-scale vec128",
       "a_scale=outer_vec(f32,mn,ld=130,stride=0) b_scale=vec128(f32,mn,ld=200,stride=0)"},
      {"--m 130 --n 200 --k 300 --out-dtype bf16 --a-scale blk128 --b-scale outer --check sample --trans-a",
       "a_scale=blk128x128(f32,k,ld=3,stride=0) b_scale=outer_vec(f32,mn,ld=200,stride=0)"},
      // deepgemm-bench's fp8q row: m not a multiple of 4 gives the TMA-aligned ld 260.
      {"--m 257 --n 300 --k 260 --out-dtype e4m3 --c-dtype bf16 --a-scale vec128 --b-scale blk128 --d-scale vec128",
       "d_scale=vec128(f32,mn,ld=260,stride=0)"},
      {"--m 70 --n 130 --k 140 --out-dtype e5m2 --batch 2 --beta 0.5 --bias row --act relu --d-scale vec128 --check sample",
       "d_scale=vec128(f32,mn,ld=72,stride=144)"},
  };
  for (const Case& c : cases) {
    const Result r = sh(base + c.flags);
    BOOST_TEST_CONTEXT(c.flags << "\n" << r.out) {
      BOOST_TEST(r.rc == 0);
      BOOST_TEST(has(r.out, c.problem));
      BOOST_TEST(has(r.out, "result    PASS"));
      BOOST_TEST(has(r.out, "D dequantized with its block scales") == has(c.flags, "--d-scale vec128"));
    }
  }
  for (auto [flags, message] :
       {std::pair{"--a-scale vec64", "--a-scale = 'vec64': expected one of none, tensor, outer, vec128, blk128"},
        std::pair{"--b-scale", "--b-scale = '': expected one of none, tensor, outer, vec128, blk128"},
        std::pair{"--d-scale blk128", "--d-scale = 'blk128': expected one of none, vec128"}}) {
    const Result r = sh(base + "--m 8 --n 8 --k 8 " + flags);
    BOOST_TEST(r.rc == 2, flags << ": " << r.out);
    BOOST_TEST(has(r.out, message), flags << ": " << r.out);
  }
  // A block-scaled D must be FP8: the library's NOT_SUPPORTED, with its reason.
  const Result r = sh(base + "--m 8 --n 8 --k 8 --out-dtype bf16 --d-scale vec128");
  BOOST_TEST(r.rc == 3, r.out);
  BOOST_TEST(has(r.out, "a block-scaled output is e4m3 or e5m2"), r.out);
  const std::string help = sh(tool() + " run --help").out;
  BOOST_TEST(has(help, "--a-scale/--b-scale none|tensor|outer|vec128|blk128"), help);
  BOOST_TEST(has(help, "--d-scale none|vec128"), help);
}

// The GPU tests' repro lines (tests/common/run_command.hpp) run as pasted, with the "# not
// expressible" note as a shell comment: the tool runs the same problem (its printed problem line)
// and passes. test_run_command.cpp checks every field of such lines through the parser.
BOOST_AUTO_TEST_CASE(gpu_test_repro_lines_run) {
  using namespace dgemm;
  struct Line {
    GemmProblem p;
    Epilogue e;
    dgemm_test::RunExtras x;
  };
  std::vector<Line> lines(4);
  for (Line& l : lines) l.x.device = "cpu";
  {
    GemmProblem& p = lines[0].p;  // f32 NT column-major, padded lda; gapped A, shared B, gapped C and D
    p.m = 20, p.n = 12, p.k = 9;
    p.a_type = p.b_type = p.c_type = p.d_type = DType::F32;
    p.op_a = Op::T;
    p.order = Order::ColMajor;
    p.lda = 11;
    p.batch_count = 3;
    p.stride_a = 9 * 11 + 7;
    p.stride_c = 20 * 12 + 3;
    p.stride_d = 20 * 12 + 5;
    Epilogue& e = lines[0].e;
    e.alpha = 0.1f;
    e.beta = -0.5f;
    e.bias_mode = VectorMode::PerRow;
    e.bias_type = DType::BF16;
    e.activation = Activation::GeluErf;
  }
  {
    GemmProblem& p = lines[1].p;  // i8 requantized with a zero point; misaligned host scalars noted
    p.m = 17, p.n = 33, p.k = 40;
    p.a_type = p.b_type = p.c_type = p.d_type = DType::I8;
    p.compute_type = DType::I32;
    p.op_b = Op::T;
    lines[1].e.scale_mode = VectorMode::PerColumn;
    lines[1].e.zero_point = true;
    lines[1].e.activation = Activation::Relu;
    lines[1].x.force = "cpu";
    lines[1].x.misalign = 1;
    lines[1].x.scalars = ScalarMode::Host;
  }
  {
    GemmProblem& p = lines[2].p;  // mixed fp8 in, e5m2 out without saturation, f32 C
    p.m = 9, p.n = 16, p.k = 32;
    p.a_type = DType::F8E4M3;
    p.b_type = p.d_type = DType::F8E5M2;
    p.c_type = DType::F32;
    lines[2].e.saturate = false;
    lines[2].e.scale_mode = VectorMode::PerTensor;
    lines[2].e.activation = Activation::GeluTanh;
  }
  {
    GemmProblem& p = lines[3].p;  // the 8-bit test's block-scaled problem with an e4m3 D (sm90_8bit)
    p.m = 130, p.n = 200, p.k = 300;
    p.a_type = p.b_type = p.c_type = p.d_type = DType::F8E4M3;
    p.op_b = Op::T;
    p.a_scale.mode = ScaleMode::Vec128;
    p.a_scale.ld = 132;
    p.b_scale.mode = ScaleMode::Blk128x128;
    p.b_scale.layout = ScaleLayout::KMajor;
    lines[3].e.d_scale.mode = ScaleMode::Vec128;
    lines[3].e.d_scale.ld = 132;
    lines[3].x.force = "cpu";
  }
  for (Line& l : lines) {
    l.p.resolve_and_validate();
    resolve_and_validate_scaling(l.p, l.e);
    const std::string line = dgemm_test::run_command(l.p, l.e, l.x);
    const std::string prefix = "deepgemm run ";
    BOOST_TEST_REQUIRE(line.rfind(prefix, 0) == 0, line);
    const Result r = sh(tool() + " run " + line.substr(prefix.size()));
    BOOST_TEST_CONTEXT(line << "\n" << r.out) {
      BOOST_TEST(r.rc == 0);
      BOOST_TEST(has(r.out, "problem   " + l.p.to_string() + "\n"), "the tool ran another problem");
      BOOST_TEST(has(r.out, "epilogue  " + l.e.to_string() + "\n"), "the tool ran another epilogue");
      BOOST_TEST(has(r.out, "result    PASS"));
      BOOST_TEST(has(line, "#") == (l.x.misalign != 0));
    }
  }
}

// Bad input at the C boundary: every invalid argument gets its specific status and a message that
// names the argument and its value, nothing crashes, and no output is touched.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "api/handles.hpp"
#include "deepgemm/deepgemm.h"

namespace {

// Checks status and that the thread's last error mentions every fragment.
void expect_error(dgemm_status_t got, dgemm_status_t want, std::initializer_list<const char*> fragments) {
  BOOST_TEST_CONTEXT("status " << dgemm_status_string(got) << ", message \"" << dgemm_last_error() << "\"") {
    BOOST_TEST(got == want);
    for (const char* f : fragments) {
      BOOST_TEST(std::string(dgemm_last_error()).find(f) != std::string::npos, "message lacks \"" << f << "\"");
    }
  }
}

struct CpuFixture {
  dgemm_context_t ctx = nullptr;
  dgemm_problem_t prob;
  dgemm_epilogue_t epi;
  dgemm_plan_t const kSentinel = reinterpret_cast<dgemm_plan_t>(uintptr_t(0x5e47));
  dgemm_plan_t plan = kSentinel;
  CpuFixture() {
    BOOST_REQUIRE(dgemm_context_create(DGEMM_DEVICE_CPU, 0, &ctx) == DGEMM_STATUS_SUCCESS);
    dgemm_problem_init(&prob);
    dgemm_epilogue_init(&epi);
    prob.m = 4;
    prob.n = 6;
    prob.k = 8;
    prob.a_type = prob.b_type = prob.c_type = prob.d_type = DGEMM_DTYPE_F32;
  }
  ~CpuFixture() { dgemm_context_destroy(ctx); }
  // Creation must fail with `want`, name the fragments, and leave *plan untouched.
  void expect_plan_error(dgemm_status_t want, std::initializer_list<const char*> fragments,
                         const dgemm_plan_options_t* options = nullptr, bool with_epilogue = true) {
    dgemm_status_t st = dgemm_create_plan(ctx, &prob, with_epilogue ? &epi : nullptr, options, &plan);
    expect_error(st, want, fragments);
    BOOST_TEST((plan == kSentinel), "plan output was written on failure");
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(api_errors)

BOOST_AUTO_TEST_CASE(status_strings_and_version) {
  BOOST_TEST(std::string(dgemm_status_string(DGEMM_STATUS_INVALID_ARGUMENT)) == "DGEMM_STATUS_INVALID_ARGUMENT");
  BOOST_TEST(std::string(dgemm_status_string(static_cast<dgemm_status_t>(999))) == "DGEMM_STATUS_UNKNOWN");
  BOOST_TEST(dgemm_version() == unsigned(DGEMM_VERSION_NUMBER));
  BOOST_TEST(std::string(dgemm_version_string()) == std::to_string(DGEMM_VERSION_MAJOR) + "." +
                                                     std::to_string(DGEMM_VERSION_MINOR) + "." +
                                                     std::to_string(DGEMM_VERSION_PATCH));
}

BOOST_AUTO_TEST_CASE(init_functions_reject_null) {
  expect_error(dgemm_problem_init(nullptr), DGEMM_STATUS_INVALID_ARGUMENT, {"p is NULL"});
  expect_error(dgemm_epilogue_init(nullptr), DGEMM_STATUS_INVALID_ARGUMENT, {"e is NULL"});
  expect_error(dgemm_plan_options_init(nullptr), DGEMM_STATUS_INVALID_ARGUMENT, {"o is NULL"});
  expect_error(dgemm_args_init(nullptr), DGEMM_STATUS_INVALID_ARGUMENT, {"a is NULL"});
}

BOOST_AUTO_TEST_CASE(context_arguments) {
  dgemm_context_t const sentinel = reinterpret_cast<dgemm_context_t>(uintptr_t(0xc7c7));
  dgemm_context_t ctx = sentinel;
  expect_error(dgemm_context_create(DGEMM_DEVICE_CPU, 0, nullptr), DGEMM_STATUS_INVALID_ARGUMENT, {"ctx is NULL"});
  expect_error(dgemm_context_create(static_cast<dgemm_device_kind_t>(7), 0, &ctx), DGEMM_STATUS_INVALID_ARGUMENT,
               {"kind = 7"});
  expect_error(dgemm_context_create(DGEMM_DEVICE_CUDA, -1, &ctx), DGEMM_STATUS_INVALID_ARGUMENT,
               {"device_index = -1"});
  expect_error(dgemm_context_create(DGEMM_DEVICE_CPU, 2, &ctx), DGEMM_STATUS_INVALID_ARGUMENT, {"device_index = 2"});
  // No machine has 1000 GPUs: either there is no driver or the index is out of range.
  expect_error(dgemm_context_create(DGEMM_DEVICE_CUDA, 1000, &ctx), DGEMM_STATUS_NO_DEVICE, {"device_index = 1000"});
  BOOST_TEST((ctx == sentinel));
  BOOST_TEST(dgemm_context_destroy(nullptr) == DGEMM_STATUS_SUCCESS);
  expect_error(dgemm_context_device(nullptr, nullptr, nullptr), DGEMM_STATUS_INVALID_ARGUMENT, {"ctx is NULL"});
}

BOOST_FIXTURE_TEST_CASE(plan_null_arguments, CpuFixture) {
  expect_error(dgemm_create_plan(nullptr, &prob, &epi, nullptr, &plan), DGEMM_STATUS_INVALID_ARGUMENT, {"ctx is NULL"});
  expect_error(dgemm_create_plan(ctx, nullptr, &epi, nullptr, &plan), DGEMM_STATUS_INVALID_ARGUMENT,
               {"problem is NULL"});
  expect_error(dgemm_create_plan(ctx, &prob, &epi, nullptr, nullptr), DGEMM_STATUS_INVALID_ARGUMENT, {"plan is NULL"});
  BOOST_TEST((plan == kSentinel));
}

BOOST_FIXTURE_TEST_CASE(plan_struct_versioning, CpuFixture) {
  prob.struct_size = 12;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"problem->struct_size = 12"});
  dgemm_problem_init(&prob);
  prob.reserved[3] = 1;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"problem->reserved[3] = 1"});
  dgemm_problem_init(&prob);
  epi.struct_size = 0;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"epilogue->struct_size = 0"});
  dgemm_epilogue_init(&epi);
  epi.flags = 0x80;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"epilogue->flags = 0x80"});
  dgemm_epilogue_init(&epi);
  dgemm_plan_options_t opt;
  dgemm_plan_options_init(&opt);
  opt.flags = 0x40;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"options->flags = 0x40"}, &opt);
  dgemm_plan_options_init(&opt);
  opt.force_kernel = "warp_drive";
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"force_kernel = \"warp_drive\""}, &opt);
}

BOOST_FIXTURE_TEST_CASE(plan_sizes, CpuFixture) {
  prob.m = -1;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"m = -1"});
  prob.m = 4;
  prob.n = -7;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"n = -7"});
  prob.n = 6;
  prob.k = -2;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"k = -2"});
  prob.k = 8;
  prob.batch_count = 0;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"batch_count = 0"});
  prob.batch_count = 1;
  // 2^40 x 2^40 outputs cannot be addressed with 64-bit byte offsets.
  prob.m = prob.n = int64_t(1) << 40;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"64-bit"});
}

BOOST_FIXTURE_TEST_CASE(plan_leading_dimensions, CpuFixture) {
  prob.lda = 7;  // row-major A is 4 x 8: lda >= 8
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"lda = 7", ">= 8"});
  prob.lda = 0;
  prob.op_b = DGEMM_OP_T;  // B stored 6 x 8
  prob.ldb = 6;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"ldb = 6", ">= 8"});
  prob.ldb = 0;
  prob.ldc = 5;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"ldc = 5"});
  prob.ldc = 0;
  prob.order = DGEMM_ORDER_COL_MAJOR;
  prob.ldd = 3;  // column-major D is 4 x 6: ldd >= 4
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"ldd = 3", ">= 4"});
  prob.ldd = -4;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"problem->ldd = -4"});
}

BOOST_FIXTURE_TEST_CASE(plan_batches, CpuFixture) {
  prob.batch_count = 3;
  prob.stride_d = 0;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"stride_d = 0"});
  prob.stride_d = 10;  // one D is 24 elements
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"stride_d = 10"});
  prob.stride_d = 24;
  prob.stride_a = -1;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"stride_a = -1"});
}

BOOST_FIXTURE_TEST_CASE(plan_bad_enums, CpuFixture) {
  prob.a_type = static_cast<dgemm_dtype_t>(42);
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"a_type = 42"});
  dgemm_problem_init(&prob);
  prob.op_b = static_cast<dgemm_op_t>(5);
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"op_b = 5"});
  dgemm_problem_init(&prob);
  prob.order = static_cast<dgemm_order_t>(-3);
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"order = -3"});
  dgemm_problem_init(&prob);
  epi.activation = static_cast<dgemm_activation_t>(9);
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"activation = 9"});
  dgemm_epilogue_init(&epi);
  epi.bias_mode = static_cast<dgemm_vector_mode_t>(11);
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"bias_mode = 11"});
  dgemm_epilogue_init(&epi);
  epi.bias_mode = DGEMM_VECTOR_PER_TENSOR;
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"bias_mode = PER_TENSOR"});
  dgemm_epilogue_init(&epi);
  epi.scale_mode = static_cast<dgemm_vector_mode_t>(4);
  expect_plan_error(DGEMM_STATUS_INVALID_ARGUMENT, {"scale_mode = 4"});
}

BOOST_FIXTURE_TEST_CASE(plan_unsupported_combinations, CpuFixture) {
  prob.a_type = DGEMM_DTYPE_I8;  // i8 with f32 compute
  expect_plan_error(DGEMM_STATUS_NOT_SUPPORTED, {"A=i8", "compute=f32"});
  prob.a_type = DGEMM_DTYPE_BF16;
  prob.b_type = DGEMM_DTYPE_F16;
  expect_plan_error(DGEMM_STATUS_NOT_SUPPORTED, {"A=bf16 B=f16"});
  prob.b_type = DGEMM_DTYPE_BF16;
  prob.d_type = DGEMM_DTYPE_I32;
  expect_plan_error(DGEMM_STATUS_NOT_SUPPORTED, {"D=i32"});
  prob.d_type = DGEMM_DTYPE_BF16;
  prob.compute_type = DGEMM_DTYPE_F16;
  expect_plan_error(DGEMM_STATUS_NOT_SUPPORTED, {"compute=f16"});
  prob.compute_type = DGEMM_DTYPE_F32;
  epi.bias_mode = DGEMM_VECTOR_PER_ROW;
  epi.bias_type = DGEMM_DTYPE_I8;
  expect_plan_error(DGEMM_STATUS_NOT_SUPPORTED, {"bias_type = i8"});
  dgemm_epilogue_init(&epi);
  epi.flags |= DGEMM_EPILOGUE_ZERO_POINT;
  epi.scale_mode = DGEMM_VECTOR_PER_TENSOR;
  expect_plan_error(DGEMM_STATUS_NOT_SUPPORTED, {"ZERO_POINT", "d_type = bf16"});
  dgemm_plan_options_t opt;
  dgemm_plan_options_init(&opt);
  opt.force_kernel = "sm90";  // a CPU context has no Hopper kernels
  dgemm_epilogue_init(&epi);
  expect_plan_error(DGEMM_STATUS_NOT_SUPPORTED, {"force_kernel = \"sm90\""}, &opt);
}

BOOST_FIXTURE_TEST_CASE(plan_arch_file_missing, CpuFixture) {
  dgemm_plan_options_t opt;
  dgemm_plan_options_init(&opt);
  opt.arch_file = "/nonexistent/machine.yaml";
  expect_plan_error(DGEMM_STATUS_ARCH_FILE_ERROR, {"/nonexistent/machine.yaml"}, &opt);
}

BOOST_FIXTURE_TEST_CASE(context_destroy_with_live_plan, CpuFixture) {
  BOOST_REQUIRE(dgemm_create_plan(ctx, &prob, &epi, nullptr, &plan) == DGEMM_STATUS_SUCCESS);
  expect_error(dgemm_context_destroy(ctx), DGEMM_STATUS_INVALID_ARGUMENT, {"1 live plan"});
  BOOST_TEST(dgemm_destroy_plan(plan) == DGEMM_STATUS_SUCCESS);
  BOOST_TEST(dgemm_destroy_plan(nullptr) == DGEMM_STATUS_SUCCESS);
}

BOOST_FIXTURE_TEST_CASE(plan_queries, CpuFixture) {
  expect_error(dgemm_plan_workspace_size(nullptr, nullptr), DGEMM_STATUS_INVALID_ARGUMENT, {"plan is NULL"});
  expect_error(dgemm_plan_describe(nullptr, nullptr, 0, nullptr), DGEMM_STATUS_INVALID_ARGUMENT, {"plan is NULL"});
  BOOST_REQUIRE(dgemm_create_plan(ctx, &prob, &epi, nullptr, &plan) == DGEMM_STATUS_SUCCESS);
  expect_error(dgemm_plan_workspace_size(plan, nullptr), DGEMM_STATUS_INVALID_ARGUMENT, {"bytes is NULL"});
  expect_error(dgemm_plan_describe(plan, nullptr, 16, nullptr), DGEMM_STATUS_INVALID_ARGUMENT, {"size = 16"});
  size_t need = 0;
  BOOST_TEST(dgemm_plan_describe(plan, nullptr, 0, &need) == DGEMM_STATUS_SUCCESS);
  BOOST_TEST(need > 10u);
  std::vector<char> small(8, 'x');
  BOOST_TEST(dgemm_plan_describe(plan, small.data(), small.size(), &need) == DGEMM_STATUS_SUCCESS);
  BOOST_TEST(small[7] == '\0');  // truncated, still terminated
  std::string full(need, 'x');
  BOOST_TEST(dgemm_plan_describe(plan, full.data(), full.size(), nullptr) == DGEMM_STATUS_SUCCESS);
  BOOST_TEST(full.find("\"family\":\"cpu\"") != std::string::npos);
  dgemm_destroy_plan(plan);
}

BOOST_FIXTURE_TEST_CASE(execute_arguments_leave_outputs_untouched, CpuFixture) {
  epi.beta = 1.0f;
  epi.bias_mode = DGEMM_VECTOR_PER_COLUMN;
  epi.scale_mode = DGEMM_VECTOR_PER_ROW;
  BOOST_REQUIRE(dgemm_create_plan(ctx, &prob, &epi, nullptr, &plan) == DGEMM_STATUS_SUCCESS);
  std::vector<float> a(32, 0.5f), b(48, -0.25f), c(24, 2.0f), bias(6, 1.0f), scale(4, 3.0f);
  std::vector<float> d(25, -7.0f);  // one spare element to misalign D
  const std::vector<float> poisoned = d;
  dgemm_args_t args;
  dgemm_args_init(&args);
  args.bias = bias.data();
  args.scale = scale.data();

  auto run = [&](const void* A, const void* B, const void* C, void* D, const dgemm_args_t* x, dgemm_status_t want,
                 std::initializer_list<const char*> fragments, void* ws = nullptr, size_t ws_size = 0) {
    expect_error(dgemm_execute(plan, A, B, C, D, x, ws, ws_size, nullptr), want, fragments);
    BOOST_TEST((d == poisoned), "D was written by a failing call");
  };
  expect_error(dgemm_execute(nullptr, a.data(), b.data(), c.data(), d.data(), &args, nullptr, 0, nullptr),
               DGEMM_STATUS_INVALID_ARGUMENT, {"plan is NULL"});
  run(nullptr, b.data(), c.data(), d.data(), &args, DGEMM_STATUS_INVALID_ARGUMENT, {"A is NULL"});
  run(a.data(), nullptr, c.data(), d.data(), &args, DGEMM_STATUS_INVALID_ARGUMENT, {"B is NULL"});
  run(a.data(), b.data(), nullptr, d.data(), &args, DGEMM_STATUS_INVALID_ARGUMENT, {"C is NULL"});
  run(a.data(), b.data(), c.data(), nullptr, &args, DGEMM_STATUS_INVALID_ARGUMENT, {"D is NULL"});
  run(a.data(), b.data(), c.data(), d.data(), nullptr, DGEMM_STATUS_INVALID_ARGUMENT, {"args->bias is NULL"});
  {
    auto* misaligned = reinterpret_cast<char*>(d.data()) + 2;
    run(a.data(), b.data(), c.data(), misaligned, &args, DGEMM_STATUS_INVALID_ARGUMENT, {"D = ", "not aligned"});
  }
  dgemm_args_t x = args;
  x.scale = nullptr;
  run(a.data(), b.data(), c.data(), d.data(), &x, DGEMM_STATUS_INVALID_ARGUMENT, {"args->scale is NULL"});
  x = args;
  x.struct_size = 4;
  run(a.data(), b.data(), c.data(), d.data(), &x, DGEMM_STATUS_INVALID_ARGUMENT, {"args->struct_size = 4"});
  x = args;
  x.reserved[0] = 9;
  run(a.data(), b.data(), c.data(), d.data(), &x, DGEMM_STATUS_INVALID_ARGUMENT, {"args->reserved[0] = 9"});
  x = args;
  x.scalar_mode = static_cast<dgemm_scalar_mode_t>(5);
  run(a.data(), b.data(), c.data(), d.data(), &x, DGEMM_STATUS_INVALID_ARGUMENT, {"args->scalar_mode = 5"});
  x = args;
  x.scalar_mode = DGEMM_SCALARS_DEVICE;
  run(a.data(), b.data(), c.data(), d.data(), &x, DGEMM_STATUS_INVALID_ARGUMENT, {"args->alpha_ptr"});
  dgemm_destroy_plan(plan);

  // A plan made with beta = 0 does not read C: a per-call beta cannot switch that on.
  dgemm_epilogue_init(&epi);
  BOOST_REQUIRE(dgemm_create_plan(ctx, &prob, &epi, nullptr, &plan) == DGEMM_STATUS_SUCCESS);
  x = args;
  x.scalar_mode = DGEMM_SCALARS_HOST;
  x.beta = 0.5f;
  run(a.data(), b.data(), c.data(), d.data(), &x, DGEMM_STATUS_INVALID_ARGUMENT, {"args->beta = 0.5"});
  dgemm_destroy_plan(plan);

  // An i8-output plan with a zero point needs args->zero_point.
  prob.d_type = DGEMM_DTYPE_I8;
  prob.c_type = DGEMM_DTYPE_F32;
  epi.flags |= DGEMM_EPILOGUE_ZERO_POINT;
  epi.scale_mode = DGEMM_VECTOR_PER_TENSOR;
  BOOST_REQUIRE(dgemm_create_plan(ctx, &prob, &epi, nullptr, &plan) == DGEMM_STATUS_SUCCESS);
  x = args;
  run(a.data(), b.data(), nullptr, d.data(), &x, DGEMM_STATUS_INVALID_ARGUMENT, {"args->zero_point is NULL"});
  dgemm_destroy_plan(plan);
}

namespace {
// A stand-in executable that needs a workspace, to exercise the workspace check without a GPU.
class NeedsWorkspace final : public dgemm::Executable {
 public:
  std::size_t workspace_size() const override { return 256; }
  void run(const dgemm::ExecArgs&) const override { ++runs; }
  mutable int runs = 0;
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(execute_insufficient_workspace, CpuFixture) {
  auto entry = std::make_shared<dgemm::PlanEntry>();
  auto exe = std::make_unique<NeedsWorkspace>();
  NeedsWorkspace* raw = exe.get();
  entry->executable = std::move(exe);
  dgemm_plan fake;
  fake.ctx = ctx;
  fake.entry = entry;
  fake.problem.a_type = fake.problem.b_type = fake.problem.c_type = fake.problem.d_type = dgemm::DType::F32;
  float a[1] = {1}, b[1] = {2}, d[1] = {3};
  std::vector<char> ws(256);
  expect_error(dgemm_execute(&fake, a, b, nullptr, d, nullptr, ws.data(), 255, nullptr),
               DGEMM_STATUS_INSUFFICIENT_WORKSPACE, {"workspace_size = 255", "needs 256"});
  expect_error(dgemm_execute(&fake, a, b, nullptr, d, nullptr, nullptr, 256, nullptr),
               DGEMM_STATUS_INSUFFICIENT_WORKSPACE, {"workspace = "});
  BOOST_TEST(raw->runs == 0);
  BOOST_TEST(dgemm_execute(&fake, a, b, nullptr, d, nullptr, ws.data(), 256, nullptr) == DGEMM_STATUS_SUCCESS);
  BOOST_TEST(raw->runs == 1);
}

BOOST_FIXTURE_TEST_CASE(empty_output_is_a_no_op, CpuFixture) {
  prob.m = 0;
  BOOST_REQUIRE(dgemm_create_plan(ctx, &prob, &epi, nullptr, &plan) == DGEMM_STATUS_SUCCESS);
  // Nothing to compute: NULL operands are fine and nothing is written.
  BOOST_TEST(dgemm_execute(plan, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, nullptr) ==
             DGEMM_STATUS_SUCCESS);
  BOOST_TEST(std::string(dgemm_last_error()).empty());
  dgemm_destroy_plan(plan);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(api_autotune)

// The CPU backend has nothing to time: the flag is accepted and the plan says so.
BOOST_FIXTURE_TEST_CASE(autotune_on_cpu_is_explained, CpuFixture) {
  dgemm_plan_options_t opt;
  dgemm_plan_options_init(&opt);
  opt.flags = DGEMM_PLAN_AUTOTUNE;
  BOOST_REQUIRE(dgemm_create_plan(ctx, &prob, &epi, &opt, &plan) == DGEMM_STATUS_SUCCESS);
  size_t need = 0;
  dgemm_plan_describe(plan, nullptr, 0, &need);
  std::string text(need, '\0');
  dgemm_plan_describe(plan, text.data(), text.size(), nullptr);
  BOOST_TEST(text.find("autotune requested, but the cpu backend has nothing to time") != std::string::npos, text);
  dgemm_destroy_plan(plan);
}

// DGEMM_1.1 extension chains: the walker's own rules, before any extension is interpreted.
BOOST_FIXTURE_TEST_CASE(extension_chain_rules, CpuFixture) {
  // NULL chain: exactly dgemm_create_plan / dgemm_execute.
  BOOST_REQUIRE(dgemm_create_plan_ext(ctx, &prob, &epi, nullptr, nullptr, &plan) == DGEMM_STATUS_SUCCESS);
  std::vector<float> a(4 * 8, 1.0f), b(8 * 6, 2.0f), d(4 * 6, -1.0f);
  size_t ws_size = 0;
  BOOST_REQUIRE(dgemm_plan_workspace_size(plan, &ws_size) == DGEMM_STATUS_SUCCESS);
  std::vector<unsigned char> ws(ws_size);
  BOOST_TEST(dgemm_execute_ext(plan, a.data(), b.data(), nullptr, d.data(), nullptr, nullptr, ws.data(), ws_size,
                               nullptr) == DGEMM_STATUS_SUCCESS);
  BOOST_TEST(d[0] == 16.0f);
  dgemm_destroy_plan(plan);
  plan = kSentinel;

  dgemm_ext_header_t unknown{};
  unknown.type = 999;
  unknown.struct_size = sizeof unknown;
  expect_error(dgemm_create_plan_ext(ctx, &prob, &epi, nullptr, &unknown, &plan), DGEMM_STATUS_NOT_SUPPORTED,
               {"ext[0]->type = 999"});
  BOOST_TEST((plan == kSentinel));

  dgemm_ext_header_t small{};
  small.type = DGEMM_EXT_SCALING;
  small.struct_size = 4;
  expect_error(dgemm_create_plan_ext(ctx, &prob, &epi, nullptr, &small, &plan), DGEMM_STATUS_INVALID_ARGUMENT,
               {"ext[0]->struct_size = 4"});

  // An execute-time extension at plan time, second in the chain.
  dgemm_ext_header_t first{}, second{};
  first.type = DGEMM_EXT_SCALING;
  first.struct_size = sizeof first;
  first.next = &second;
  second.type = DGEMM_EXT_SCALE_ARGS;
  second.struct_size = sizeof second;
  expect_error(dgemm_create_plan_ext(ctx, &prob, &epi, nullptr, &first, &plan), DGEMM_STATUS_INVALID_ARGUMENT,
               {"ext[1]->type = DGEMM_EXT_SCALE_ARGS", "execute-time"});

  // The same type twice, and a cycle.
  second.type = DGEMM_EXT_SCALING;
  expect_error(dgemm_create_plan_ext(ctx, &prob, &epi, nullptr, &first, &plan), DGEMM_STATUS_INVALID_ARGUMENT,
               {"ext[1]", "twice"});
  first.type = DGEMM_EXT_SCALING;
  first.next = &first;
  expect_error(dgemm_create_plan_ext(ctx, &prob, &epi, nullptr, &first, &plan), DGEMM_STATUS_INVALID_ARGUMENT,
               {"twice"});
  BOOST_TEST((plan == kSentinel));

  // A plan-time extension at execute leaves D untouched.
  BOOST_REQUIRE(dgemm_create_plan(ctx, &prob, &epi, nullptr, &plan) == DGEMM_STATUS_SUCCESS);
  std::fill(d.begin(), d.end(), -1.0f);
  first.next = nullptr;
  expect_error(dgemm_execute_ext(plan, a.data(), b.data(), nullptr, d.data(), nullptr, &first, nullptr, 0, nullptr),
               DGEMM_STATUS_INVALID_ARGUMENT, {"ext[0]->type = DGEMM_EXT_SCALING", "plan-time"});
  BOOST_TEST(d[0] == -1.0f);
  dgemm_destroy_plan(plan);
  plan = kSentinel;
}

BOOST_AUTO_TEST_SUITE_END()

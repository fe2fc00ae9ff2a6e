// Promises of the C boundary that an outside tester (libFuzzer, UBSan, hostile inputs) found
// broken once, each pinned by a test: exact plan-cache keys, bounded caches, aligned execute-time
// vectors, forward-compatible struct sizes and enum fields read as integers.
#include <boost/test/unit_test.hpp>

#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "api/convert.hpp"
#include "api/handles.hpp"
#include "common/cpu_api.hpp"
#include "deepgemm/deepgemm.h"

using dgemm_test::CpuContext;
using dgemm_test::f32_problem;
using dgemm_test::workspace_for;

namespace {

void expect_invalid(dgemm_status_t got, const char* fragment) {
  BOOST_TEST_CONTEXT("message \"" << dgemm_last_error() << "\"") {
    BOOST_TEST(got == DGEMM_STATUS_INVALID_ARGUMENT);
    BOOST_TEST(std::string(dgemm_last_error()).find(fragment) != std::string::npos, "message lacks " << fragment);
  }
}

// D of a 1x1x1 f32 plan with A = a, B = b and the epilogue's alpha.
float one_element(dgemm_context_t ctx, float alpha, float a, float b) {
  dgemm_problem_t p = f32_problem(1, 1, 1);
  dgemm_epilogue_t e;
  dgemm_epilogue_init(&e);
  e.alpha = alpha;
  dgemm_plan_t plan = nullptr;
  BOOST_REQUIRE_MESSAGE(dgemm_create_plan(ctx, &p, &e, nullptr, &plan) == DGEMM_STATUS_SUCCESS, dgemm_last_error());
  std::vector<unsigned char> ws = workspace_for(plan);
  float d = -1.0f;
  BOOST_REQUIRE_MESSAGE(dgemm_execute(plan, &a, &b, nullptr, &d, nullptr, ws.data(), ws.size(), nullptr) ==
                            DGEMM_STATUS_SUCCESS,
                        dgemm_last_error());
  dgemm_destroy_plan(plan);
  return d;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(plan_cache)

// The key printed alpha to 6 significant digits, so this plan reused alpha = 1's plan.
BOOST_FIXTURE_TEST_CASE(alpha_differing_in_the_last_bit_gets_its_own_plan, CpuContext) {
  const float alpha = 1.0000049f;
  BOOST_TEST(one_element(ctx, 1.0f, 1.0f, 1e6f) == 1e6f);
  BOOST_TEST(one_element(ctx, alpha, 1.0f, 1e6f) == alpha * 1e6f);
  BOOST_TEST(one_element(ctx, 1.0f, 1.0f, 1e6f) == 1e6f);
  // -0 and +0 are different bit patterns but compute the same: both are fine, neither may leak.
  BOOST_TEST(one_element(ctx, -0.0f, 1.0f, 1e6f) == 0.0f);
  BOOST_TEST(std::signbit(one_element(ctx, -0.0f, 1.0f, 1e6f)));
}

// Every field of the epilogue is part of its key (the DGEMM_1.1 output scaling was missing once:
// a plan made for F32 block scales then served a UE8M0 request).
BOOST_AUTO_TEST_CASE(every_epilogue_field_is_in_the_key) {
  const dgemm::Epilogue base;
  std::vector<dgemm::Epilogue> variants(10, base);
  variants[0].alpha = 1.0000001f;
  variants[1].beta = -0.0f;
  variants[2].bias_mode = dgemm::VectorMode::PerRow;
  variants[3].activation = dgemm::Activation::Silu;
  variants[4].scale_mode = dgemm::VectorMode::PerTensor;
  variants[5].saturate = false;
  variants[6].zero_point = true;
  variants[7].d_scale.mode = dgemm::ScaleMode::Vec128;
  variants[8].d_scale = variants[7].d_scale;
  variants[8].d_scale.type = dgemm::ScaleType::UE8M0;
  variants[9].amax_d = true;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    BOOST_TEST(variants[i].key() != base.key(), "field " << i << " is not in the key");
    for (std::size_t j = 0; j < i; ++j) BOOST_TEST(variants[i].key() != variants[j].key(), i << " vs " << j);
  }
}

// Creating and destroying many distinct shapes must not grow the context without bound; a live
// plan whose cache entry was forgotten keeps working.
BOOST_FIXTURE_TEST_CASE(the_plan_cache_is_bounded_and_live_plans_survive_eviction, CpuContext) {
  const std::size_t capacity = dgemm_context::kPlanCacheCapacity;
  dgemm_problem_t p = f32_problem(2, 3, 4);
  dgemm_plan_t keep = nullptr;
  BOOST_REQUIRE(dgemm_create_plan(ctx, &p, nullptr, nullptr, &keep) == DGEMM_STATUS_SUCCESS);
  for (std::size_t i = 0; i < 3 * capacity; ++i) {
    dgemm_problem_t q = f32_problem(int64_t(10 + i), 5, 3);
    dgemm_plan_t plan = nullptr;
    BOOST_REQUIRE(dgemm_create_plan(ctx, &q, nullptr, nullptr, &plan) == DGEMM_STATUS_SUCCESS);
    dgemm_destroy_plan(plan);
    BOOST_REQUIRE_LE(ctx->plan_cache.size(), capacity);
  }
  BOOST_TEST(ctx->plan_cache.size() == capacity);
  std::vector<float> a(8, 1.0f), b(12, 2.0f), d(6, -1.0f);
  std::vector<unsigned char> ws = workspace_for(keep);
  BOOST_REQUIRE(dgemm_execute(keep, a.data(), b.data(), nullptr, d.data(), nullptr, ws.data(), ws.size(), nullptr) ==
                DGEMM_STATUS_SUCCESS);
  for (float v : d) BOOST_TEST(v == 8.0f);
  dgemm_destroy_plan(keep);
}

BOOST_FIXTURE_TEST_CASE(the_arch_file_cache_is_bounded, CpuContext) {
  dgemm_problem_t p = f32_problem(2, 3, 4);
  dgemm_plan_options_t o;
  dgemm_plan_options_init(&o);
  // Built-in names resolve without a file; each distinct spelling is a distinct cache entry.
  const char* names[] = {"h100", "h200", "a100", "l40s", "H100", "H200", "A100", "L40S",
                         "h100.yaml", "h200.yaml", "a100.yaml", "l40s.yaml", "H100.yaml", "H200.yaml",
                         "A100.yaml", "L40S.yaml", "h100.YAML", "h200.YAML", "a100.YAML", "l40s.YAML"};
  for (const char* name : names) {
    o.arch_file = name;
    dgemm_plan_t plan = nullptr;
    // A CPU context planning for a GPU description finds no kernel it can run: that is fine here.
    (void)dgemm_create_plan(ctx, &p, nullptr, &o, &plan);
    if (plan) dgemm_destroy_plan(plan);
    BOOST_REQUIRE_LE(ctx->arch_cache.size(), dgemm_context::kArchCacheCapacity);
  }
  BOOST_TEST(ctx->arch_cache.size() == dgemm_context::kArchCacheCapacity);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(struct_versions)

namespace {

// A struct as a newer header would declare it: ours followed by `extra` more bytes.
template <class Struct>
struct Grown {
  Struct s;
  unsigned char extra[24];
};

template <class Struct>
Grown<Struct> grown(const Struct& s, unsigned char tail_byte = 0) {
  Grown<Struct> g;
  std::memset(&g, 0, sizeof g);
  g.s = s;
  g.s.struct_size = uint32_t(sizeof g);
  g.extra[5] = tail_byte;
  return g;
}

}  // namespace

// A caller built against a later 1.x header passes larger structs: accepted, as long as the
// fields this library does not know are zero (unused).
BOOST_FIXTURE_TEST_CASE(larger_structs_from_newer_callers_are_accepted_when_their_tail_is_zero, CpuContext) {
  dgemm_problem_t p = f32_problem(2, 3, 4);
  dgemm_epilogue_t e;
  dgemm_epilogue_init(&e);
  e.alpha = 2.0f;
  dgemm_plan_options_t o;
  dgemm_plan_options_init(&o);
  auto gp = grown(p);
  auto ge = grown(e);
  auto go = grown(o);
  dgemm_plan_t plan = nullptr;
  BOOST_REQUIRE_MESSAGE(dgemm_create_plan(ctx, &gp.s, &ge.s, &go.s, &plan) == DGEMM_STATUS_SUCCESS, dgemm_last_error());
  dgemm_args_t a;
  dgemm_args_init(&a);
  a.scalar_mode = DGEMM_SCALARS_HOST;
  a.alpha = 3.0f;
  auto ga = grown(a);
  std::vector<float> A(8, 1.0f), B(12, 1.0f), D(6, -1.0f);
  std::vector<unsigned char> ws = workspace_for(plan);
  BOOST_REQUIRE_MESSAGE(dgemm_execute(plan, A.data(), B.data(), nullptr, D.data(), &ga.s, ws.data(), ws.size(),
                                      nullptr) == DGEMM_STATUS_SUCCESS,
                        dgemm_last_error());
  for (float v : D) BOOST_TEST(v == 12.0f);
  dgemm_destroy_plan(plan);

  // A non-zero byte this library does not know is a request it cannot honour.
  plan = nullptr;
  auto bad = grown(p, 7);
  expect_invalid(dgemm_create_plan(ctx, &bad.s, nullptr, nullptr, &plan), "problem byte 205 = 7");
  BOOST_TEST(plan == nullptr);
  auto bad_args = grown(a, 1);
  BOOST_REQUIRE(dgemm_create_plan(ctx, &p, nullptr, nullptr, &plan) == DGEMM_STATUS_SUCCESS);
  expect_invalid(dgemm_execute(plan, A.data(), B.data(), nullptr, D.data(), &bad_args.s, ws.data(), ws.size(), nullptr),
                 "args byte 125 = 1");
  dgemm_destroy_plan(plan);
}

// The same rule for DGEMM_1.1's extension structs, whose size is in their header.
BOOST_FIXTURE_TEST_CASE(larger_extension_structs_are_accepted_when_their_tail_is_zero, CpuContext) {
  dgemm_problem_t p = f32_problem(2, 3, 4);
  dgemm_scaling_t s;
  BOOST_REQUIRE(dgemm_scaling_init(&s) == DGEMM_STATUS_SUCCESS);
  struct {
    dgemm_scaling_t s;
    unsigned char extra[24];
  } grown_scaling;
  std::memset(&grown_scaling, 0, sizeof grown_scaling);
  grown_scaling.s = s;
  grown_scaling.s.header.struct_size = uint32_t(sizeof grown_scaling);
  dgemm_plan_t plan = nullptr;
  BOOST_TEST_REQUIRE(dgemm_create_plan_ext(ctx, &p, nullptr, nullptr, &grown_scaling.s, &plan) == DGEMM_STATUS_SUCCESS,
                     dgemm_last_error());
  dgemm_destroy_plan(plan);
  plan = nullptr;
  grown_scaling.extra[3] = 9;
  expect_invalid(dgemm_create_plan_ext(ctx, &p, nullptr, nullptr, &grown_scaling.s, &plan),
                 ("scaling byte " + std::to_string(sizeof(dgemm_scaling_t) + 3) + " = 9").c_str());
  BOOST_TEST(plan == nullptr);
}

BOOST_FIXTURE_TEST_CASE(sizes_below_the_first_release_or_absurdly_large_are_refused, CpuContext) {
  dgemm_problem_t p = f32_problem(2, 3, 4);
  dgemm_plan_t plan = nullptr;
  p.struct_size = 199;
  expect_invalid(dgemm_create_plan(ctx, &p, nullptr, nullptr, &plan), "problem->struct_size = 199");
  p.struct_size = 1u << 20;  // garbage: reading that far would fault
  expect_invalid(dgemm_create_plan(ctx, &p, nullptr, nullptr, &plan), "problem->struct_size = 1048576");
  BOOST_TEST(plan == nullptr);
}

// The general rule, on a struct that grew: a caller built against the first release passes only
// the first release's bytes; the library reads exactly those and sees zero in the added field.
namespace {
struct Grows {
  uint32_t struct_size;
  uint32_t flags;
  uint64_t reserved[2];
  uint64_t added_later;  // a 1.1 field
};
}  // namespace

BOOST_AUTO_TEST_CASE(a_first_release_sized_struct_reads_only_its_own_bytes) {
  constexpr std::size_t first = offsetof(Grows, added_later);
  // Exactly `first` bytes on the heap, so a sanitizer sees any read beyond them.
  std::vector<unsigned char> old_caller(first, 0);
  const uint32_t size = first, flags = 5;
  std::memcpy(old_caller.data(), &size, 4);
  std::memcpy(old_caller.data() + 4, &flags, 4);
  auto* view = reinterpret_cast<const Grows*>(old_caller.data());
  Grows g = dgemm::api::read_struct(view, "grows", first);
  BOOST_TEST(g.flags == 5u);
  BOOST_TEST(g.added_later == 0u);
  Grows too_small{};
  too_small.struct_size = first - 8;
  BOOST_CHECK_THROW(dgemm::api::read_struct(&too_small, "grows", first), dgemm::Error);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(enum_fields)

// Every enum field and parameter with values outside its enumerators, including the extremes: a
// status naming the field, and (under UBSan, the sanitizer tier) no load of an invalid enum.
BOOST_FIXTURE_TEST_CASE(out_of_range_enum_values_are_read_as_integers, CpuContext) {
  const int values[] = {-1, 7, 8, 1000, INT32_MIN, INT32_MAX};
  for (int v : values) {
    BOOST_TEST_CONTEXT("value " << v) {
      dgemm_plan_t plan = nullptr;
      for (int field = 0; field < 8; ++field) {
        dgemm_problem_t p = f32_problem(2, 3, 4);
        int32_t* slots[] = {reinterpret_cast<int32_t*>(&p.a_type), reinterpret_cast<int32_t*>(&p.b_type),
                            reinterpret_cast<int32_t*>(&p.c_type), reinterpret_cast<int32_t*>(&p.d_type),
                            reinterpret_cast<int32_t*>(&p.compute_type), reinterpret_cast<int32_t*>(&p.op_a),
                            reinterpret_cast<int32_t*>(&p.op_b), reinterpret_cast<int32_t*>(&p.order)};
        if (v >= 0 && v < 7 && field < 5) continue;  // a valid dtype
        std::memcpy(slots[field], &v, 4);
        BOOST_TEST(dgemm_create_plan(ctx, &p, nullptr, nullptr, &plan) == DGEMM_STATUS_INVALID_ARGUMENT);
        BOOST_TEST(std::string(dgemm_last_error()).find(std::to_string(v)) != std::string::npos);
      }
      for (int field = 0; field < 4; ++field) {
        dgemm_problem_t p = f32_problem(2, 3, 4);
        dgemm_epilogue_t e;
        dgemm_epilogue_init(&e);
        int32_t* slots[] = {reinterpret_cast<int32_t*>(&e.bias_mode), reinterpret_cast<int32_t*>(&e.bias_type),
                            reinterpret_cast<int32_t*>(&e.activation), reinterpret_cast<int32_t*>(&e.scale_mode)};
        std::memcpy(slots[field], &v, 4);
        BOOST_TEST(dgemm_create_plan(ctx, &p, &e, nullptr, &plan) == DGEMM_STATUS_INVALID_ARGUMENT);
      }
      BOOST_TEST(plan == nullptr);
      // By value, as a C caller passes any int (a prvalue: no load of an invalid enum here).
      dgemm_context_t other = nullptr;
      BOOST_TEST(dgemm_context_create(static_cast<dgemm_device_kind_t>(v), 0, &other) == DGEMM_STATUS_INVALID_ARGUMENT);
      if (v < 0 || v > DGEMM_STATUS_INTERNAL_ERROR)
        BOOST_TEST(std::string(dgemm_status_string(static_cast<dgemm_status_t>(v))) == "DGEMM_STATUS_UNKNOWN");
      dgemm_problem_t p = f32_problem(2, 3, 4);
      BOOST_REQUIRE(dgemm_create_plan(ctx, &p, nullptr, nullptr, &plan) == DGEMM_STATUS_SUCCESS);
      dgemm_args_t a;
      dgemm_args_init(&a);
      std::memcpy(&a.scalar_mode, &v, 4);
      std::vector<float> A(8, 1.0f), B(12, 1.0f), D(6, -1.0f);
      std::vector<unsigned char> ws = workspace_for(plan);
      BOOST_TEST(dgemm_execute(plan, A.data(), B.data(), nullptr, D.data(), &a, ws.data(), ws.size(), nullptr) ==
                 DGEMM_STATUS_INVALID_ARGUMENT);
      for (float d : D) BOOST_TEST(d == -1.0f);
      dgemm_destroy_plan(plan);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(execute_vectors)

// Execute-time vectors and scalars the plan reads must be aligned to their element size, like the
// matrices: a misaligned one is refused (it returned SUCCESS, and the CPU backend then loaded
// misaligned floats, which UBSan reports).
BOOST_FIXTURE_TEST_CASE(misaligned_scale_zero_point_and_scalar_pointers_are_refused, CpuContext) {
  dgemm_problem_t p = f32_problem(2, 3, 4);
  p.d_type = DGEMM_DTYPE_I8;
  dgemm_epilogue_t e;
  dgemm_epilogue_init(&e);
  e.beta = 1.0f;
  e.scale_mode = DGEMM_VECTOR_PER_ROW;
  e.flags |= DGEMM_EPILOGUE_ZERO_POINT;
  dgemm_plan_t plan = nullptr;
  BOOST_REQUIRE_MESSAGE(dgemm_create_plan(ctx, &p, &e, nullptr, &plan) == DGEMM_STATUS_SUCCESS, dgemm_last_error());
  std::vector<float> A(8, 1.0f), B(12, 1.0f), C(6, 1.0f);
  std::vector<int8_t> D(6, 99);
  alignas(16) unsigned char buf[64] = {};
  const float one = 1.0f;
  const int32_t zero[2] = {0, 0};
  const float scale[2] = {1.0f, 1.0f};
  std::vector<unsigned char> ws = workspace_for(plan);
  auto run = [&](const dgemm_args_t& a, const char* fragment) {
    dgemm_status_t st = dgemm_execute(plan, A.data(), B.data(), C.data(), D.data(), &a, ws.data(), ws.size(), nullptr);
    expect_invalid(st, fragment);
    BOOST_TEST(std::string(dgemm_last_error()).find("not aligned") != std::string::npos);
    for (int8_t d : D) BOOST_TEST(d == 99);
  };
  dgemm_args_t good;
  dgemm_args_init(&good);
  good.scale = scale;
  good.zero_point = zero;
  dgemm_args_t a = good;
  a.scale = reinterpret_cast<const float*>(buf + 1);
  run(a, "args->scale");
  a = good;
  a.zero_point = reinterpret_cast<const int32_t*>(buf + 2);
  run(a, "args->zero_point");
  a = good;
  a.scalar_mode = DGEMM_SCALARS_DEVICE;
  a.alpha_ptr = reinterpret_cast<const float*>(buf + 3);
  a.beta_ptr = &one;
  run(a, "args->alpha_ptr");
  a.alpha_ptr = &one;
  a.beta_ptr = reinterpret_cast<const float*>(buf + 1);
  run(a, "args->beta_ptr");
  a.beta_ptr = &one;
  BOOST_TEST(dgemm_execute(plan, A.data(), B.data(), C.data(), D.data(), &a, ws.data(), ws.size(), nullptr) ==
             DGEMM_STATUS_SUCCESS);
  for (int8_t d : D) BOOST_TEST(d == 5);  // 4 + beta * 1
  dgemm_destroy_plan(plan);
}

BOOST_AUTO_TEST_SUITE_END()

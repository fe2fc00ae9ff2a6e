// dgemm_execute allocates nothing: this executable interposes malloc and its relatives (operator
// new ends in malloc) and counts every call made while an execute runs, on any thread (OpenMP
// workers included). The CPU backend's scratch comes from the workspace the plan asks for.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/cpu_api.hpp"
#include "deepgemm/deepgemm.h"

// glibc's own allocator entry points, which the interposed functions forward to.
extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* ptr);
}

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

void count() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" {
void* malloc(size_t size) {
  count();
  return __libc_malloc(size);
}
void* calloc(size_t n, size_t size) {
  count();
  return __libc_calloc(n, size);
}
void* realloc(void* ptr, size_t size) {
  count();
  return __libc_realloc(ptr, size);
}
void* memalign(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  count();
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
void free(void* ptr) { __libc_free(ptr); }
}

namespace {

struct Case {
  const char* name;
  int64_t m, n, k, batch;
  dgemm_dtype_t ab, d;
  bool epilogue;  // bias + GELU (+ scale and zero point for i8 outputs), beta = 1
};

// Allocations made by one dgemm_execute of the case, after one warm-up call (the first parallel
// region starts OpenMP's thread pool, a one-time cost of the process, not of execute).
long allocations_during_execute(const Case& c) {
  dgemm_context_t ctx = nullptr;
  BOOST_REQUIRE(dgemm_context_create(DGEMM_DEVICE_CPU, 0, &ctx) == DGEMM_STATUS_SUCCESS);
  dgemm_problem_t p;
  dgemm_problem_init(&p);
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.a_type = p.b_type = c.ab;
  p.d_type = p.c_type = c.d;
  p.compute_type = c.ab == DGEMM_DTYPE_I8 ? DGEMM_DTYPE_I32 : DGEMM_DTYPE_F32;
  p.batch_count = c.batch;
  p.stride_a = c.m * c.k;
  p.stride_b = c.k * c.n;
  p.stride_c = p.stride_d = c.m * c.n;
  dgemm_epilogue_t e;
  dgemm_epilogue_init(&e);
  if (c.epilogue) {
    e.beta = 1.0f;
    e.bias_mode = DGEMM_VECTOR_PER_COLUMN;
    e.activation = DGEMM_ACT_GELU_ERF;
    e.scale_mode = DGEMM_VECTOR_PER_ROW;
    if (c.d == DGEMM_DTYPE_I8) e.flags |= DGEMM_EPILOGUE_ZERO_POINT;
  }
  dgemm_plan_t plan = nullptr;
  BOOST_REQUIRE_MESSAGE(dgemm_create_plan(ctx, &p, &e, nullptr, &plan) == DGEMM_STATUS_SUCCESS, dgemm_last_error());
  size_t ws_size = 0;
  BOOST_REQUIRE(dgemm_plan_workspace_size(plan, &ws_size) == DGEMM_STATUS_SUCCESS);
  const std::size_t mk = std::size_t(c.m * c.k * c.batch), kn = std::size_t(c.k * c.n * c.batch),
                    mn = std::size_t(c.m * c.n * c.batch);
  std::vector<double> a(mk, 0.5), b(kn, 0.25), cd(mn, 1.0), d(mn, 0.0);  // doubles: room for any type
  std::vector<float> bias(std::size_t(c.n), 0.5f), scale(std::size_t(c.m), 0.5f);
  std::vector<int32_t> zero(std::size_t(c.m), 3);
  std::vector<unsigned char> ws(ws_size + 1);
  dgemm_args_t args;
  dgemm_args_init(&args);
  args.bias = bias.data();
  args.scale = scale.data();
  args.zero_point = zero.data();
  auto execute = [&] {
    // One byte in: the workspace may sit at any address.
    return dgemm_execute(plan, a.data(), b.data(), cd.data(), d.data(), &args, ws.data() + 1, ws_size, nullptr);
  };
  BOOST_REQUIRE_MESSAGE(execute() == DGEMM_STATUS_SUCCESS, dgemm_last_error());
  g_allocations = 0;
  g_counting = true;
  const dgemm_status_t st = execute();
  g_counting = false;
  BOOST_REQUIRE_MESSAGE(st == DGEMM_STATUS_SUCCESS, dgemm_last_error());
  // Less workspace than asked for is refused, not made up for by allocating.
  if (ws_size > 0) {
    BOOST_TEST(dgemm_execute(plan, a.data(), b.data(), cd.data(), d.data(), &args, ws.data(), ws_size - 1, nullptr) ==
               DGEMM_STATUS_INSUFFICIENT_WORKSPACE);
  }
  dgemm_destroy_plan(plan);
  dgemm_context_destroy(ctx);
  return g_allocations.load();
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_interposer_counts) {
  g_allocations = 0;
  g_counting = true;
  std::vector<int>* v = new std::vector<int>(100);
  g_counting = false;
  delete v;
  BOOST_TEST(g_allocations.load() >= 2);  // the vector object and its elements
}

BOOST_AUTO_TEST_CASE(cpu_execute_allocates_nothing) {
  const Case cases[] = {
      {"32^3 f32", 32, 32, 32, 1, DGEMM_DTYPE_F32, DGEMM_DTYPE_F32, false},
      {"1x1x1 bf16", 1, 1, 1, 1, DGEMM_DTYPE_BF16, DGEMM_DTYPE_BF16, false},
      {"k = 0 with epilogue", 17, 9, 0, 1, DGEMM_DTYPE_F16, DGEMM_DTYPE_F32, true},
      {"300x600x300 bf16 + epilogue (several threads)", 300, 600, 300, 1, DGEMM_DTYPE_BF16, DGEMM_DTYPE_BF16, true},
      {"batched i8 -> i8 with scale and zero point", 75, 260, 40, 3, DGEMM_DTYPE_I8, DGEMM_DTYPE_I8, true},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.name) { BOOST_TEST(allocations_during_execute(c) == 0); }
  }
}

// The DGEMM_1.1 paths too: a grouped problem (contiguous groups, rows read at execute), and a
// block-scaled FP8 output with its amax.
namespace {
template <class Execute>
long allocations_of(Execute execute) {
  BOOST_REQUIRE_MESSAGE(execute() == DGEMM_STATUS_SUCCESS, std::string(dgemm_last_error()));  // warm-up
  g_allocations = 0;
  g_counting = true;
  const dgemm_status_t st = execute();
  g_counting = false;
  BOOST_REQUIRE_MESSAGE(st == DGEMM_STATUS_SUCCESS, std::string(dgemm_last_error()));
  return g_allocations.load();
}

}  // namespace

BOOST_AUTO_TEST_CASE(grouped_and_block_scaled_cpu_execute_allocates_nothing) {
  dgemm_context_t ctx = nullptr;
  BOOST_REQUIRE(dgemm_context_create(DGEMM_DEVICE_CPU, 0, &ctx) == DGEMM_STATUS_SUCCESS);
  const int64_t groups = 3, m = 96, n = 130, k = 40;
  const dgemm_problem_t p = dgemm_test::f32_problem(m, n, k);
  std::vector<float> a(std::size_t(m * k), 0.5f), b(std::size_t(groups * k * n), 0.25f), d(std::size_t(m * n));

  {  // grouped: group g multiplies its rows of A by its own B
    dgemm_problem_t q = p;
    q.batch_count = groups;
    q.stride_b = k * n;
    dgemm_grouped_t grouped;
    BOOST_REQUIRE(dgemm_grouped_init(&grouped) == DGEMM_STATUS_SUCCESS);
    dgemm_plan_t plan = nullptr;
    const dgemm_status_t created = dgemm_create_plan_ext(ctx, &q, nullptr, nullptr, &grouped, &plan);
    BOOST_REQUIRE_MESSAGE(created == DGEMM_STATUS_SUCCESS, std::string(dgemm_last_error()));
    std::vector<unsigned char> ws = dgemm_test::workspace_for(plan);
    const int32_t offsets[] = {0, 32, 32, 96};
    uint32_t status = 0xffffffffu;
    dgemm_group_args_t ga;
    dgemm_group_args_init(&ga);
    ga.offsets = offsets;
    ga.status = &status;
    BOOST_TEST(allocations_of([&] {
      return dgemm_execute_ext(plan, a.data(), b.data(), nullptr, d.data(), nullptr, &ga, ws.data(), ws.size(), nullptr);
    }) == 0);
    BOOST_TEST(status == 0u);
    dgemm_destroy_plan(plan);
  }
  {  // FP8 output quantized in 1 x 128 blocks, and the amax of D
    dgemm_problem_t q = p;
    q.d_type = DGEMM_DTYPE_F8_E4M3;
    dgemm_scaling_t scaling;
    BOOST_REQUIRE(dgemm_scaling_init(&scaling) == DGEMM_STATUS_SUCCESS);
    scaling.d_scale.mode = DGEMM_SCALE_VEC128;
    scaling.flags = DGEMM_SCALING_AMAX_D;
    dgemm_plan_t plan = nullptr;
    const dgemm_status_t created = dgemm_create_plan_ext(ctx, &q, nullptr, nullptr, &scaling, &plan);
    BOOST_REQUIRE_MESSAGE(created == DGEMM_STATUS_SUCCESS, std::string(dgemm_last_error()));
    std::vector<unsigned char> ws = dgemm_test::workspace_for(plan);
    std::vector<float> d_scales(std::size_t(m * 2));
    std::vector<unsigned char> d8(std::size_t(m * n));
    float amax = -1;
    dgemm_scale_args_t sa;
    dgemm_scale_args_init(&sa);
    sa.d_scale = d_scales.data();
    sa.amax_d = &amax;
    BOOST_TEST(allocations_of([&] {
      return dgemm_execute_ext(plan, a.data(), b.data(), nullptr, d8.data(), nullptr, &sa, ws.data(), ws.size(), nullptr);
    }) == 0);
    BOOST_TEST(amax == 0.5f * 0.25f * float(k));
    dgemm_destroy_plan(plan);
  }
  dgemm_context_destroy(ctx);
}

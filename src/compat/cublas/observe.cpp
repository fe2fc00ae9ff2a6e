// Settings, counters and the call-shape log (see observe.hpp), and the library's own C functions
// declared in deepgemm/deepgemm_cublas.h.
#include "compat/cublas/observe.hpp"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_set>

namespace dgemm_cublas {
namespace {

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, value) == 0;
}

// At exit, with the log on: what happened overall, so a run ends with the answer to "was it routed".
void print_summary() {
  const Counters& c = counters();
  if (c.calls.load() == 0) return;
  std::string reasons;
  for (int r = 1; r < DEEPGEMM_CUBLAS_REASON_COUNT; ++r) {
    if (const uint64_t n = c.by_reason[r].load())
      reasons += std::string(reasons.empty() ? "" : ", ") + reason_name(r) + " " + std::to_string(n);
  }
  std::fprintf(stderr, "deepgemm_cublas: %llu GEMM calls: %llu routed to DeepGEMM, %llu to cuBLAS%s%s%s; %llu plans\n",
               (unsigned long long)c.calls.load(), (unsigned long long)c.routed.load(),
               (unsigned long long)c.fallback.load(), reasons.empty() ? "" : " (", reasons.c_str(),
               reasons.empty() ? "" : ")", (unsigned long long)c.plans_created.load());
}

}  // namespace

const Settings& settings() {
  static const Settings s = [] {
    Settings out;
    out.enabled = !(env_is("DEEPGEMM_CUBLAS", "off") || env_is("DEEPGEMM_CUBLAS", "0"));
    out.log = env_is("DEEPGEMM_CUBLAS_LOG", "1");
    out.cpu = env_is("DEEPGEMM_CUBLAS_DEVICE", "cpu");
    if (const char* v = std::getenv("DEEPGEMM_CUBLAS_PLAN_CACHE")) {
      const long n = std::strtol(v, nullptr, 10);
      if (n >= 1) out.plan_cache = std::size_t(n);
    }
    // Registered after the counters exist (they are made first below), so it runs before they go.
    counters();
    if (out.log) std::atexit(print_summary);
    return out;
  }();
  return s;
}

Counters& counters() {
  static Counters c;
  return c;
}

void count(deepgemm_cublas_reason_t reason) {
  Counters& c = counters();
  (reason == DEEPGEMM_CUBLAS_ROUTED ? c.routed : c.fallback).fetch_add(1, std::memory_order_relaxed);
  if (int(reason) >= 0 && int(reason) < DEEPGEMM_CUBLAS_MAX_REASONS)
    c.by_reason[reason].fetch_add(1, std::memory_order_relaxed);
}

bool first_time(uint64_t shape) {
  if (!settings().log) return false;
  static std::mutex mu;
  static std::unordered_set<uint64_t> seen;
  std::lock_guard<std::mutex> lock(mu);
  return seen.insert(shape).second;
}

void log_line(const std::string& text) { std::fprintf(stderr, "deepgemm_cublas: %s\n", text.c_str()); }

const char* reason_name(int reason) {
  static const char* const names[] = {"ROUTED", "DISABLED", "UNKNOWN_HANDLE", "INVALID", "EMPTY", "TYPE",
                                      "COMPUTE_TYPE", "MATH_MODE", "POINTER_MODE", "LAYOUT", "ALIGNMENT",
                                      "EPILOGUE", "NO_DEVICE", "PLAN", "WORKSPACE", "CAPTURE", "EXECUTE",
                                      "INTERNAL"};
  static_assert(sizeof(names) / sizeof(names[0]) == DEEPGEMM_CUBLAS_REASON_COUNT, "one name per reason");
  return reason >= 0 && reason < DEEPGEMM_CUBLAS_REASON_COUNT ? names[reason] : "UNKNOWN";
}

}  // namespace dgemm_cublas

using namespace dgemm_cublas;

extern "C" DGEMM_API int deepgemm_cublas_counters(deepgemm_cublas_counters_t* out) {
  // The first version of the struct ends with reserved[]: a caller from any version has at least it.
  if (out == nullptr || out->struct_size < sizeof(deepgemm_cublas_counters_t)) return -1;
  const Counters& c = counters();
  deepgemm_cublas_counters_t v;
  std::memset(&v, 0, sizeof(v));
  const std::size_t n = out->struct_size < sizeof(v) ? out->struct_size : sizeof(v);  // a later, larger caller struct
  v.struct_size = uint32_t(n);
  v.calls = c.calls.load();
  v.routed = c.routed.load();
  v.fallback = c.fallback.load();
  v.plans_created = c.plans_created.load();
  v.plans_refused = c.plans_refused.load();
  v.plan_cache_hits = c.plan_cache_hits.load();
  v.plans_evicted = c.plans_evicted.load();
  v.pool_bytes = c.pool_bytes.load();
  for (int r = 0; r < DEEPGEMM_CUBLAS_MAX_REASONS; ++r) v.by_reason[r] = c.by_reason[r].load();
  std::memcpy(out, &v, n);
  return 0;
}

extern "C" DGEMM_API void deepgemm_cublas_reset_counters(void) {
  Counters& c = counters();
  for (auto* a : {&c.calls, &c.routed, &c.fallback, &c.plans_created, &c.plans_refused, &c.plan_cache_hits,
                  &c.plans_evicted})
    a->store(0);
  for (auto& a : c.by_reason) a.store(0);
}

extern "C" DGEMM_API const char* deepgemm_cublas_reason_string(int reason) { return reason_name(reason); }
